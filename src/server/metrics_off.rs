//! The crate-internal names of `metrics.rs`, inert: the feature `metrics`
//! is off, nothing is counted and no clock is read for it.

use std::sync::Arc;
use std::time::Duration;

use super::outcome::RequestStatus;

#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorType;

impl ErrorType {
    pub(crate) fn of(_status: &RequestStatus, _tool_error: bool) -> ErrorType {
        ErrorType
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Transport {
    Pipe,
    Tcp,
}

impl Transport {
    /// `network.transport` (the span's attribute, feature `tracing`).
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

// Built by the callers as with the feature; nothing reads it.
#[allow(dead_code)]
pub(crate) struct Operation {
    pub(crate) method: &'static str,
    pub(crate) tool: u32,
    pub(crate) error: ErrorType,
    pub(crate) version: &'static str,
    pub(crate) transport: Transport,
}

pub(crate) struct MetricsCore {
    pub(crate) workers: Arc<WorkerGauges>,
}

#[derive(Default)]
pub(crate) struct WorkerGauges;

impl WorkerGauges {
    pub(crate) fn started(&self, _delta: i64) {}

    pub(crate) fn busy(&self, _delta: i64) {}
}

#[derive(Default)]
pub(crate) struct ToolSlot(());

impl ToolSlot {
    pub(crate) fn set(&self, _label: u32) {}

    pub(crate) fn get(&self) -> u32 {
        0
    }
}

pub(crate) struct OpenMark;

#[derive(Default)]
pub(crate) struct SessionMark(());

impl MetricsCore {
    pub(crate) fn new(_on: bool, _max_tools: usize) -> MetricsCore {
        MetricsCore {
            workers: Arc::new(WorkerGauges),
        }
    }

    pub(crate) fn is_on(&self) -> bool {
        false
    }

    pub(crate) fn tool(&self, _name: &str) -> u32 {
        0
    }

    pub(crate) fn request(&self, _operation: Operation, _duration: Duration) {}

    pub(crate) fn http_refusal(&self, _status: u16) {}

    pub(crate) fn connection(self: &Arc<Self>) -> OpenMark {
        OpenMark
    }

    pub(crate) fn stream(self: &Arc<Self>) -> OpenMark {
        OpenMark
    }

    pub(crate) fn session(self: &Arc<Self>, _transport: Transport) -> SessionMark {
        SessionMark(())
    }
}
