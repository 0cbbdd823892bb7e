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

    fn put_back(&self, connection: Connection) {
        let mut idle = self.idle.lock();
        if idle.len() < self.max {
            idle.push(connection);
        }
    }

    /// Runs `work` on a pooled connection whose replies may take `read`
    /// (`None`: the endpoint's timeout); a Redis error is an [`Error`]
    /// naming `what`. A pooled connection that Redis had closed (it
    /// restarted, or dropped idle clients) fails before anything ran on
    /// it: `work` then runs once more on a new connection.
    pub(crate) fn run<T>(
        &self,
        what: &str,
        read: Option<Duration>,
        work: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Error> {
        self.attempt(what, read, work, true)
    }

    /// [`run`](Self::run) without the second try: for a wait whose answer
    /// can only come on the connection it began on (`forward`'s BLPOP: a
    /// second wait would pass its bound, and nothing could arrive).
    pub(crate) fn run_once<T>(
        &self,
        what: &str,
        read: Option<Duration>,
        work: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Error> {
        self.attempt(what, read, work, false)
    }

    /// `work` on a pooled connection, else a new one; with `again`, once
    /// more on a new one when the pooled one turns out closed.
    fn attempt<T>(
        &self,
        what: &str,
        read: Option<Duration>,
        mut work: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
        again: bool,
    ) -> Result<T, Error> {
        let fail = |e: redis::RedisError| unavailable(what, &e);
        let pooled = self.idle.lock().pop();
        if let Some(connection) = pooled {
            match self.run_on(connection, read, &mut work) {
                Err(e) if again && (e.is_connection_dropped() || e.is_connection_refusal()) => {
                    log::debug!("Redis, {}: {}; on a new connection", what, e);
                }
                outcome => return outcome.map_err(fail),
            }
        }
        let connection = self
            .endpoint
            .connect(Some(self.endpoint.timeout))
            .map_err(fail)?;
        self.run_on(connection, read, &mut work).map_err(fail)
    }

    /// `work` on `connection`, which goes back to the pool if it worked.
    fn run_on<T>(
        &self,
        mut connection: Connection,
        read: Option<Duration>,
        work: &mut impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        if let Some(read) = read {
            connection.set_read_timeout(Some(read))?;
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
        outcome
    }
}

/// What a caller (and through it, a client) is told when Redis failed:
/// that the store is unavailable, and nothing of Redis's own words; those
/// go to the log.
fn unavailable(what: &str, error: &redis::RedisError) -> Error {
    log::warn!("Redis task store, {}: {}", what, error);
    Error::msg(format!(
        "the task store is unavailable ({}); try again",
        what
    ))
}
