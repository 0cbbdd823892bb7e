//! The `tasks/*` methods, one function per row of the method table:
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of
//! 2025-11-25 (basic/utilities/tasks), and `tasks/get`, `tasks/update`
//! and `tasks/cancel` of the 2026-07-28 extension (SEP-2663). A task is
//! found only by its owner (TASK-10); any other id is `-32602` (TASK-8).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{missing_extension, owner_of, wire, TaskCommand, TaskRecord};
use crate::error::ErrorKind;
use crate::jsonrpc::{ErrorObject, JsonObject};
use crate::protocol::{extensions, meta, Era, TaskStatus};
use crate::server::caller::Caller;
use crate::server::context::RequestContext;
use crate::server::inline::parse_params;
use crate::server::reply::{Answer, Failure, Reply};
use crate::server::session::Session;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskParams {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: String,
    input_responses: JsonObject,
}

#[derive(Deserialize, Default)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

/// The tasks in one `tasks/list` page.
const PAGE: usize = 50;

/// The task `id` as its owner sees it; `-32602` otherwise, `-32603` when
/// the store could not be read.
fn find(session: &Session, caller: &Caller, era: Era, id: &str) -> Result<TaskRecord, ErrorObject> {
    let owner = owner_of(session, caller, era);
    let found = session.server.tasks.store.try_get(id).map_err(|e| {
        log::warn!("task {}: {}", id, e);
        ErrorObject::internal(format!("task {} could not be read; try again", id))
    })?;
    match found {
        Some(record) if record.owner == owner && record.era == era => Ok(record),
        _ => Err(ErrorObject::invalid_params(format!(
            "unknown task {}: it never existed, has expired or is not yours",
            id
        ))),
    }
}

/// SEP-2663: the `tasks/*` methods need the extension in the request's
/// own client capabilities; `-32021` otherwise.
fn check_declared(params: Option<&Value>) -> Result<(), ErrorObject> {
    let declared = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(meta::CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(extensions::TASKS))
        .is_some();
    if declared {
        Ok(())
    } else {
        Err(missing_extension())
    }
}

/// `tasks/get` (2025-11-25): the task (TASK-5).
pub(crate) fn get_2025(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    let params: TaskParams = parse_params(params)?;
    let record = find(session, caller, Era::V2025_11_25, &params.task_id)?;
    Ok(Value::Object(wire::task_2025(&record)))
}

/// `tasks/get` (2026-07-28): the `DetailedTask`.
pub(crate) fn get_2026(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    check_declared(params.as_ref())?;
    let params: TaskParams = parse_params(params)?;
    let record = find(session, caller, Era::V2026_07_28, &params.task_id)?;
    Ok(Value::Object(wire::detailed_task(&record)))
}

/// `tasks/cancel` (2025-11-25): `cancelled` before the answer, which is
/// the task (TASK-9); a terminal task is `-32602` (TASK-8).
pub(crate) fn cancel_2025(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    let params: TaskParams = parse_params(params)?;
    let record = find(session, caller, Era::V2025_11_25, &params.task_id)?;
    if record.status.is_terminal() {
        return Err(ErrorObject::invalid_params(format!(
            "task {} is already {}",
            record.task_id,
            record.status.as_str()
        )));
    }
    let record = cancel(session, record)?;
    Ok(Value::Object(wire::task_2025(&record)))
}

/// `tasks/cancel` (2026-07-28): an empty acknowledgement, also for a
/// terminal task.
pub(crate) fn cancel_2026(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    check_declared(params.as_ref())?;
    let params: TaskParams = parse_params(params)?;
    let record = find(session, caller, Era::V2026_07_28, &params.task_id)?;
    if !record.status.is_terminal() {
        cancel(session, record)?;
    }
    Ok(Value::Object(JsonObject::new()))
}

/// Cancels a task: its run on this instance, else its run on the instance
/// that runs it (through the store), else the record alone (its run is
/// gone, or the store cannot reach it).
fn cancel(session: &Session, record: TaskRecord) -> Result<TaskRecord, ErrorObject> {
    let tasks = &session.server.tasks;
    let reason = "cancelled by the client";
    if let Some(run) = tasks.run(&record.task_id) {
        tasks.cancel(&run, reason);
    } else {
        let command = TaskCommand::Cancel {
            task_id: record.task_id.clone(),
        };
        if forward(session, &record, &command)? != Forwarded::Taken {
            tasks.store.update(&record.task_id, &mut |r| {
                r.move_to(TaskStatus::Cancelled, Some(reason.to_string()));
            });
        }
    }
    Ok(tasks.store.get(&record.task_id).unwrap_or(record))
}

/// What became of a command for a task whose handler does not run here.
#[derive(PartialEq)]
enum Forwarded {
    /// Its instance applied it.
    Taken,
    /// No other instance runs it (it ran here and ended, or the record
    /// names no instance), or it ended on its instance just now.
    NotRunning,
    /// The store does not carry commands between instances.
    CannotCarry,
}

/// Hands `command` to the store for the instance that runs `record`, when
/// that is another one; `-32603` when that instance did not take it
/// (DESIGN.md §21).
fn forward(
    session: &Session,
    record: &TaskRecord,
    command: &TaskCommand,
) -> Result<Forwarded, ErrorObject> {
    let server = &session.server;
    if record.instance.is_empty() || record.instance == server.instance_id {
        return Ok(Forwarded::NotRunning);
    }
    match server.tasks.store.forward(record, command) {
        Ok(true) => Ok(Forwarded::Taken),
        Ok(false) => Ok(Forwarded::CannotCarry),
        // It ended just now on its instance: what the store holds is final.
        Err(e) if matches!(e.kind(), ErrorKind::InvalidParams(_)) => Ok(Forwarded::NotRunning),
        Err(e) => {
            log::warn!("task {}: {}", record.task_id, e);
            Err(ErrorObject::internal(format!(
                "the instance that runs task {} did not take the request; try again",
                record.task_id
            )))
        }
    }
}

/// `tasks/update` (2026-07-28): answers for the task's outstanding input
/// requests; answers for other keys are ignored. An empty acknowledgement.
pub(crate) fn update(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    check_declared(params.as_ref())?;
    let params: UpdateParams = parse_params(params)?;
    let record = find(session, caller, Era::V2026_07_28, &params.task_id)?;
    for (key, answer) in &params.input_responses {
        if !answer.is_object() {
            return Err(ErrorObject::invalid_params(format!(
                "inputResponses.{} must be an object (the result of the request)",
                key
            )));
        }
    }
    let run = match session.server.tasks.run(&record.task_id) {
        Some(run) => run,
        None => return update_elsewhere(session, record, params.input_responses),
    };
    {
        // The record follows the exchange under the exchange's lock (see
        // `exchange::ask_inputs`).
        let mut exchange = run.exchange.lock();
        if !exchange.answer(&params.input_responses) {
            return Ok(Value::Object(JsonObject::new()));
        }
        super::exchange::show_outstanding(&*session.server.tasks.store, &run.id, &exchange);
    }
    run.wake();
    Ok(Value::Object(JsonObject::new()))
}

/// `tasks/update` for a task whose handler does not run here: carried to
/// its instance; a terminal task's update is acknowledged (there is nobody
/// to answer), and one that cannot be carried is `-32603`, never silently
/// dropped.
fn update_elsewhere(session: &Session, record: TaskRecord, answers: JsonObject) -> Answer {
    if record.status.is_terminal() {
        return Ok(Value::Object(JsonObject::new()));
    }
    let command = TaskCommand::Update {
        task_id: record.task_id.clone(),
        input_responses: answers,
    };
    if forward(session, &record, &command)? != Forwarded::CannotCarry {
        // Taken, or its run just ended: nothing waits for input.
        return Ok(Value::Object(JsonObject::new()));
    }
    Err(ErrorObject::internal(format!(
        "task {} runs on another instance, and this server's task store cannot carry \
         tasks/update to it: route Mcp-Name to the task's instance (docs/deploy.md)",
        record.task_id
    )))
}

/// `tasks/list` (2025-11-25): the caller's tasks, in pages (`nextCursor`).
pub(crate) fn list(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    let params: ListParams = match params {
        None | Some(Value::Null) => ListParams::default(),
        params => parse_params(params)?,
    };
    let owner = owner_of(session, caller, Era::V2025_11_25);
    let store = &session.server.tasks.store;
    let (page, next) = store
        .list(&owner, params.cursor.as_deref(), PAGE)
        .map_err(|e| e.to_wire(Era::V2025_11_25))?;
    let tasks: Vec<Value> = page
        .iter()
        .filter(|r| r.era == Era::V2025_11_25)
        .map(|r| Value::Object(wire::task_2025(r)))
        .collect();
    let mut result = serde_json::json!({ "tasks": tasks });
    if let Some(next) = next {
        result["nextCursor"] = Value::from(next);
    }
    Ok(result)
}

/// `tasks/result` (2025-11-25): blocks until the task is terminal, then
/// answers what its request would have (TASK-6), tagged with the task
/// (TASK-7). Runs on a worker.
pub(crate) fn result(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params: TaskParams = parse_params(params)?;
    let session = &ctx.session;
    let tasks = &session.server.tasks;
    let mut record = find(session, &ctx.caller, Era::V2025_11_25, &params.task_id)?;
    while !record.status.is_terminal() {
        if let Some(run) = tasks.run(&record.task_id) {
            let flag = ctx.cancellation_flag();
            run.wait_until(Duration::from_millis(250), |e| {
                e.ended || flag.is_cancelled()
            });
        } else {
            // Its run is on another instance: poll the shared store.
            std::thread::sleep(record.poll_interval.min(Duration::from_secs(1)));
        }
        ctx.check_cancelled()
            .map_err(|e| e.to_wire(Era::V2025_11_25))?;
        record = find(session, &ctx.caller, Era::V2025_11_25, &params.task_id)?;
    }
    // A run of this instance that is settling announces its status first
    // (`settle`): wait for that, so the result follows the notification.
    if let Some(run) = tasks.run(&record.task_id) {
        run.wait_until(Duration::from_secs(1), |e| e.ended);
    }
    let tag = serde_json::json!({ "taskId": record.task_id });
    match (record.status, record.result, record.error) {
        (TaskStatus::Completed, Some(mut result), _) => {
            if let Value::Object(result) = &mut result {
                let meta_object = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let Value::Object(meta_object) = meta_object {
                    meta_object.insert(meta::RELATED_TASK.into(), tag);
                }
            }
            Ok(Reply::Value(result))
        }
        (TaskStatus::Failed, _, Some(error)) => Err(Failure::Rpc(error)),
        _ => Err(Failure::Rpc(ErrorObject::invalid_params(format!(
            "task {} was cancelled: it has no result",
            record.task_id
        )))),
    }
}
