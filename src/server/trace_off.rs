//! The crate-internal names of `trace.rs`, inert: the feature `tracing`
//! is off, no span is made.

use super::caller::TraceContext;
use super::outcome::RequestStatus;
use super::session::Session;
use crate::jsonrpc::Request;

pub(crate) struct RequestSpan(());

impl RequestSpan {
    pub(crate) fn open(_: &Session, _: &Request, _: Option<&TraceContext>) -> RequestSpan {
        RequestSpan(())
    }

    pub(crate) fn in_scope<R>(&self, run: impl FnOnce() -> R) -> R {
        run()
    }

    pub(crate) fn end(self, _: &RequestStatus, _: bool) {}
}
