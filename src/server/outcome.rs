//! [`RequestOutcome`]: how a request ended, as the program's
//! `on_request_finished` hook is told.

use std::sync::Arc;
use std::time::Duration;

use super::caller::{Principal, TraceContext};
use crate::jsonrpc::ErrorCode;

/// How a request ended, as reported to
/// [`ServerBuilder::on_request_finished`](crate::ServerBuilder::on_request_finished).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestOutcome {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// From receipt to the response (or the cancel).
    pub duration: Duration,
    /// What happened.
    pub status: RequestStatus,
    /// Who called, when a token verifier established it (HTTP).
    pub principal: Option<Arc<Principal>>,
    /// The trace context of the request's `_meta`, else of its HTTP
    /// headers, if it had one.
    pub trace: Option<TraceContext>,
}

/// The end of a request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RequestStatus {
    /// A result was sent (for `tools/call`, also one with `isError: true`).
    Ok,
    /// A JSON-RPC error was sent with this code.
    Error(ErrorCode),
    /// The request was cancelled; no response was sent.
    Cancelled {
        /// The reason the canceller gave.
        reason: Option<String>,
    },
}
