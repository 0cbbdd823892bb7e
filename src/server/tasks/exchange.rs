//! A task's calls to the client. In 2026-07-28 the requests wait in the
//! task (`input_required`, shown by `tasks/get` as `inputRequests`) until
//! `tasks/update` brings their answers (SEP-2663 "Task Update Requests");
//! in 2025-11-25 each is sent to the client as a request tagged with the
//! task (TASK-7) while the task is `input_required`.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::TaskRun;
use crate::error::to_json;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{JsonObject, Message, RequestId};
use crate::protocol::{meta, TaskStatus};
use crate::server::context::RequestContext;
use crate::server::input::InputRequest;

/// The input a task waits for.
#[derive(Debug, Default)]
pub(crate) struct Exchange {
    /// Requests not answered yet, by their key on the wire.
    pub(crate) outstanding: JsonObject,
    /// Answers not taken by the handler yet, by key.
    pub(crate) answers: JsonObject,
    /// Every key used so far: keys are unique over the task's life.
    used: HashSet<String>,
    /// The handler returned.
    pub(crate) ended: bool,
}

impl Exchange {
    /// A key for `wanted` never used in this task before.
    fn fresh_key(&mut self, wanted: &str) -> String {
        let mut key = wanted.to_string();
        let mut n = 1;
        while self.used.contains(&key) {
            n += 1;
            key = format!("{}-{}", wanted, n);
        }
        self.used.insert(key.clone());
        key
    }

    /// Takes the answers of `tasks/update` for outstanding keys; others are
    /// ignored (SEP-2663). `true` when one was taken.
    pub(crate) fn answer(&mut self, responses: &JsonObject) -> bool {
        let mut taken = false;
        for (key, answer) in responses {
            if self.outstanding.remove(key).is_some() {
                self.answers.insert(key.clone(), answer.clone());
                taken = true;
            }
        }
        taken
    }
}

/// 2026-07-28: asks the client for `requests` through the task and waits
/// for every answer; the answers come back under the handler's keys.
///
/// # Errors
///
/// [`ErrorKind::Cancelled`] when the task is cancelled meanwhile;
/// [`ErrorKind::Timeout`] after the input timeout.
pub(crate) fn ask_inputs(
    ctx: &RequestContext,
    run: &Arc<TaskRun>,
    requests: Vec<(String, InputRequest)>,
) -> Result<JsonObject, Error> {
    let tasks = &ctx.session.server.tasks;
    let requests = requests
        .into_iter()
        .map(|(wanted, request)| Ok((wanted, to_json("an input request", &request)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut keys = Vec::with_capacity(requests.len());
    {
        // The record follows the exchange under the exchange's lock, so
        // that concurrent updates cannot leave it showing stale keys.
        let mut exchange = run.exchange.lock();
        for (wanted, value) in requests {
            let key = exchange.fresh_key(&wanted);
            exchange.outstanding.insert(key.clone(), value);
            keys.push((wanted, key));
        }
        let message = "waiting for the client's input".to_string();
        tasks.store.update(&run.id, &mut |record| {
            if record.move_to(TaskStatus::InputRequired, Some(message.clone())) {
                record.input_requests = exchange.outstanding.clone();
            }
        });
    }
    let timeout = tasks.limits.input_timeout;
    let answered = run.wait_until(timeout, |exchange| {
        keys.iter()
            .all(|(_, key)| exchange.answers.contains_key(key))
    });
    let mut exchange = run.exchange.lock();
    let mut answers = JsonObject::new();
    for (wanted, key) in &keys {
        exchange.outstanding.remove(key);
        if let Some(answer) = exchange.answers.remove(key) {
            answers.insert(wanted.clone(), answer);
        }
    }
    // Answered or not (a timeout), these requests are no longer waiting.
    show_outstanding(&*tasks.store, &run.id, &exchange);
    drop(exchange);
    ctx.check_cancelled()?;
    if !answered {
        return Err(Error::new(ErrorKind::Timeout {
            method: crate::protocol::methods::TASKS_UPDATE.into(),
            after: timeout,
        }));
    }
    Ok(answers)
}

/// Shows what `exchange` still waits for in the task's record: the
/// outstanding requests, or `working` when none is left. Called under the
/// exchange's lock, so that the record never shows stale keys.
pub(crate) fn show_outstanding(store: &dyn super::TaskStore, id: &str, exchange: &Exchange) {
    store.update(id, &mut |record| {
        if record.status != TaskStatus::InputRequired {
            return;
        }
        if exchange.outstanding.is_empty() {
            record.move_to(TaskStatus::Working, None);
        } else {
            record.input_requests = exchange.outstanding.clone();
        }
    });
}

/// 2025-11-25: sends a request to the client from a task, tagged with the
/// task (TASK-7), and waits for its answer; the task is `input_required`
/// meanwhile.
///
/// # Errors
///
/// As [`RequestContext::send_request`].
pub(crate) fn send_request(
    ctx: &RequestContext,
    run: &Arc<TaskRun>,
    method: &str,
    params: Option<Value>,
) -> Result<Value, Error> {
    let session = &ctx.session;
    let tasks = &session.server.tasks;
    let mut params = match params {
        Some(Value::Object(params)) => params,
        _ => JsonObject::new(),
    };
    let tag = serde_json::json!({ "taskId": run.id });
    match params.get_mut("_meta") {
        Some(Value::Object(meta_object)) => {
            meta_object.insert(meta::RELATED_TASK.into(), tag);
        }
        _ => {
            params.insert(
                "_meta".into(),
                serde_json::json!({ meta::RELATED_TASK: tag }),
            );
        }
    }
    let id = session.next_request_id();
    let (sender, receiver) = crossbeam_channel::bounded(1);
    session.pending.lock().insert(id.clone(), sender);
    run.nested.lock().push(id.clone());
    if ctx.is_cancelled() {
        forget(ctx, run, &id);
        return Err(Error::cancelled(ctx.cancellation_flag().reason()));
    }
    set_status(ctx, run, TaskStatus::InputRequired);
    let sent = run.sink.send(Message::request(
        id.clone(),
        method,
        Some(Value::Object(params)),
    ));
    let timeout = tasks.limits.input_timeout;
    let outcome = if sent {
        crate::server::waiting::await_answer(&receiver, timeout).ok()
    } else {
        None
    };
    forget(ctx, run, &id);
    set_status(ctx, run, TaskStatus::Working);
    match outcome {
        Some(answer) => answer,
        None if !sent => Err(Error::new(ErrorKind::Closed)),
        None => Err(Error::new(ErrorKind::Timeout {
            method: method.to_string(),
            after: timeout,
        })),
    }
}

fn forget(ctx: &RequestContext, run: &TaskRun, id: &RequestId) {
    run.nested.lock().retain(|nested| nested != id);
    ctx.session.pending.lock().remove(id);
}

/// Moves the task (unless it is terminal) and tells the client.
fn set_status(ctx: &RequestContext, run: &TaskRun, status: TaskStatus) {
    let store = &ctx.session.server.tasks.store;
    let mut moved = false;
    let record = store.update(&run.id, &mut |record| moved = record.move_to(status, None));
    match record {
        Some(record) if moved => super::notify_status(run, &record),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SEP-2663: keys are unique over a task's life, and answers for keys
    // not outstanding are ignored.
    #[test]
    fn keys_are_fresh_and_stray_answers_ignored() {
        let mut exchange = Exchange::default();
        let first = exchange.fresh_key("name");
        exchange.outstanding.insert(first.clone(), Value::Null);
        assert_eq!(exchange.fresh_key("name"), "name-2");
        let stray = serde_json::json!({"other": {}, "name": {"action": "accept"}});
        assert!(exchange.answer(stray.as_object().unwrap()));
        assert!(exchange.outstanding.is_empty());
        assert_eq!(exchange.answers.len(), 1);
        let again = serde_json::json!({"name": {"action": "decline"}});
        assert!(!exchange.answer(again.as_object().unwrap()));
        assert_eq!(exchange.answers["name"]["action"], "accept");
    }
}
