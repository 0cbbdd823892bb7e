//! Where Redis is, and how long a connection may take.

use std::time::Duration;

use crate::error::Error;

/// A Redis server named by a URL, with the timeouts every connection gets.
#[derive(Clone)]
pub(crate) struct Endpoint {
    client: redis::Client,
    /// How long connecting, one write or one reply may take.
    pub(crate) timeout: Duration,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may hold a password.
        let info = self.client.get_connection_info();
        f.debug_struct("Endpoint")
            .field("addr", &info.addr().to_string())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Endpoint {
    /// The server of `url`: `redis://[[user]:password@]host[:port][/db]`,
    /// or `rediss://` with the `tls` feature.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for a
    /// URL the redis crate does not take (its text is not repeated: it may
    /// hold a password).
    pub(crate) fn open(url: &str) -> Result<Endpoint, Error> {
        if url.starts_with("rediss://") && !cfg!(feature = "tls") {
            return Err(Error::invalid_params(
                "a rediss:// URL needs tiny-mcp's `tls` feature",
            ));
        }
        let client = redis::Client::open(url).map_err(|e| {
            Error::invalid_params(format!(
                "not a Redis URL (redis://[[user]:password@]host[:port][/db], or rediss://): {}",
                e.category()
            ))
        })?;
        Ok(Endpoint {
            client,
            timeout: Duration::from_secs(2),
        })
    }

    /// A new connection whose every write and reply is bounded by
    /// `read_timeout` (`None`: reads wait, as a subscriber's do).
    pub(crate) fn connect(
        &self,
        read_timeout: Option<Duration>,
    ) -> redis::RedisResult<redis::Connection> {
        let connection = self.client.get_connection_with_timeout(self.timeout)?;
        connection.set_write_timeout(Some(self.timeout))?;
        connection.set_read_timeout(read_timeout)?;
        Ok(connection)
    }
}
