//! Tasks left out: the crate built without its `tasks` feature. The same
//! crate-internal names as `tasks/`, inert: no call becomes a task, tasks
//! are never declared, so the `tasks/*` rows stay closed (`-32601`).

use std::sync::Arc;

use serde_json::Value;

use super::caller::Caller;
use super::context::RequestContext;
use super::reply::{Answer, Failure, Reply};
use super::sink::Sink;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, JsonObject};
use crate::protocol::{TaskMetadata, Tool};
use crate::server::input::InputRequest;
use crate::server::session::Session;

/// No store, no runs.
pub(crate) struct Tasks;

impl Tasks {
    pub(crate) fn cancel_where(&self, _: Option<u64>, _: &str) {}

    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn running_count(&self) -> usize {
        0
    }
}

/// Never made.
pub(crate) struct TaskRun {
    pub(crate) id: String,
    pub(crate) sink: Arc<dyn Sink>,
}

/// Only `No` is ever made.
#[allow(dead_code)]
pub(crate) enum TaskSlot {
    No,
    Possible { eager: bool, ttl: Option<u64> },
    Running(Arc<TaskRun>),
}

pub(crate) fn plan(
    _: &RequestContext,
    _: &Tool,
    _: Option<&TaskMetadata>,
) -> Result<TaskSlot, ErrorObject> {
    Ok(TaskSlot::No)
}

pub(crate) fn start(_: &RequestContext) -> Result<bool, Error> {
    Ok(false)
}

pub(crate) fn settle(_: &RequestContext, _: &Arc<TaskRun>, _: Result<Reply, ErrorObject>) {}

fn not_built() -> Error {
    Error::msg("tasks are not built in (the `tasks` feature of tiny-mcp)")
}

pub(crate) fn ask_inputs(
    _: &RequestContext,
    _: &Arc<TaskRun>,
    _: Vec<(String, InputRequest)>,
) -> Result<JsonObject, Error> {
    Err(not_built())
}

pub(crate) fn send_request(
    _: &RequestContext,
    _: &Arc<TaskRun>,
    _: &str,
    _: Option<Value>,
) -> Result<Value, Error> {
    Err(not_built())
}

pub(crate) fn declare(_: &mut crate::protocol::ServerCapabilities) {}

pub(crate) fn closed(_: &Session, _: &Caller, _: Option<Value>) -> Answer {
    Err(ErrorObject::method_not_found("tasks/*"))
}

pub(crate) use closed as get_2025;
pub(crate) use closed as get_2026;
pub(crate) use closed as list;
pub(crate) use closed as cancel_2025;
pub(crate) use closed as cancel_2026;
pub(crate) use closed as update;

pub(crate) fn result(_: &RequestContext, _: Option<Value>) -> Result<Reply, Failure> {
    Err(Failure::Rpc(ErrorObject::method_not_found("tasks/result")))
}
