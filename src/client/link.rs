//! The client's port to its transports: send a request and wait for its
//! answer, send a notification, close.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::options::CancelToken;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::RequestId;
use crate::protocol::Era;

/// One request on its way out.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) params: Value,
    /// `Mcp-Name` on 2026-07-28 HTTP: the tool or prompt name, or the URI.
    pub(crate) name: Option<String>,
}

/// How long a request may wait, and what may end its wait.
#[derive(Debug)]
pub(crate) struct Wait<'a> {
    pub(crate) deadline: Instant,
    pub(crate) timeout: Duration,
    pub(crate) cancel: Option<&'a CancelToken>,
}

impl Wait<'_> {
    /// The time left, zero once the deadline has passed.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    pub(crate) fn timed_out(&self, method: &str) -> Error {
        Error::new(ErrorKind::Timeout {
            method: method.to_string(),
            after: self.timeout,
        })
    }
}

/// A transport as the client sees it. Every method is safe to call from
/// several threads at once; requests from different threads run
/// concurrently.
pub(crate) trait Link: Send + Sync {
    /// Sends `out` and waits for its result; the server's error answer is
    /// [`ErrorKind::Peer`]. Notifications and server requests that
    /// arrive meanwhile go to the inbox.
    fn request(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error>;

    /// [`request`](Self::request) for a request that must never be
    /// cancelled (`initialize`, and the `server/discover` probe): a
    /// timeout abandons it without `notifications/cancelled`
    /// (basic/lifecycle; basic/utilities/cancellation, 2025-11-25: "The
    /// initialize request MUST NOT be cancelled by clients"). Links that
    /// send no cancel on a timeout need not override it.
    fn request_uncancelled(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error> {
        self.request(out, wait)
    }

    /// Sends a notification.
    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error>;

    /// The era and version settled on (HTTP sends them in headers).
    fn settle(&self, era: Era, version: &str);

    /// Ends the connection: fails what still waits with
    /// [`ErrorKind::Closed`], ends the session on HTTP, reaps a child.
    fn close(&self);
}
