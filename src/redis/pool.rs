//! A small pool of blocking connections to one Redis.

use std::time::Duration;

use parking_lot::Mutex;
use redis::Connection;

use super::endpoint::Endpoint;
use crate::error::Error;

/// Connections kept open between calls, at most `max` of them; a call
/// that finds none idle opens one (so callers never wait for each other),
/// and a connection that failed is dropped, so the next call reconnects.
pub(crate) struct Pool {
    pub(crate) endpoint: Endpoint,
    idle: Mutex<Vec<Connection>>,
    pub(crate) max: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("endpoint", &self.endpoint)
            .field("idle", &self.idle.lock().len())
            .field("max", &self.max)
            .finish()
    }
}

impl Pool {
    pub(crate) fn new(endpoint: Endpoint, max: usize) -> Pool {
        Pool {
            endpoint,
            idle: Mutex::new(Vec::new()),
            max,
        }
    }

    /// [`run`](Self::run) for a command that only reads: when a pooled
    /// connection fails (Redis restarted, or closed it), once more on a
    /// fresh one.
    pub(crate) fn read<T>(
        &self,
        what: &str,
        mut work: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Error> {
        let pooled = self.idle.lock().pop();
        if let Some(mut connection) = pooled {
            match work(&mut connection) {
                Ok(value) => {
                    self.put_back(connection);
                    return Ok(value);
                }
                Err(e) => log::debug!("Redis, {}: {}; on a new connection", what, e),
            }
        }
        self.run(what, None, work)
    }

    fn put_back(&self, connection: Connection) {
        let mut idle = self.idle.lock();
        if idle.len() < self.max {
            idle.push(connection);
        }
    }

    /// Runs `work` on a pooled connection whose replies may take `read`
    /// (`None`: the endpoint's timeout); a Redis error is an [`Error`]
    /// naming `what`.
    pub(crate) fn run<T>(
        &self,
        what: &str,
        read: Option<Duration>,
        work: impl FnOnce(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Error> {
        let fail = |e: redis::RedisError| Error::msg(format!("Redis, {}: {}", what, e));
        let pooled = self.idle.lock().pop();
        let mut connection = match pooled {
            Some(connection) => connection,
            None => self
                .endpoint
                .connect(Some(self.endpoint.timeout))
                .map_err(fail)?,
        };
        if let Some(read) = read {
            connection.set_read_timeout(Some(read)).map_err(fail)?;
        }
        let outcome = work(&mut connection);
        if outcome.is_ok() {
            let reset = read.is_none()
                || connection
                    .set_read_timeout(Some(self.endpoint.timeout))
                    .is_ok();
            if reset {
                self.put_back(connection);
            }
        }
        outcome.map_err(fail)
    }
}
