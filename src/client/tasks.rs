//! Tasks from the client: a `tools/call` that runs as a task, followed
//! until it ends (basic/utilities/tasks in 2025-11-25; the
//! `io.modelcontextprotocol/tasks` extension, SEP-2663, in 2026-07-28),
//! and the `tasks/*` requests themselves.
//!
//! A call is a task when the tool requires one, or when the caller asks
//! ([`CallOptions::task`]) and the tool allows one, and only when the
//! server offers tasks. In 2025-11-25 the client learns each tool's
//! `execution.taskSupport` from the tool lists it reads (a call that asks
//! for a task of a tool not seen yet lists them once); a tool not seen is
//! called plainly, and the server's `-32601` for a tool that runs only as
//! a task (TASK-2) makes it list the tools and call again as a task. In
//! 2026-07-28 tools carry no `execution`: a call that asks declares the
//! extension and takes what the server answers (a task or a result), and
//! the server's `-32021` naming the extension, for a tool that runs only
//! as a task, makes the client remember that and call again with it. The
//! task is then polled with `tasks/get` at the server's interval (bounded
//! by [`POLL_FLOOR`] and [`POLL_CAP`]); in 2026-07-28 its input requests
//! are answered by the program's closures with `tasks/update`, in
//! 2025-11-25 they arrive as server requests, answered as any other. The
//! result is `tasks/result` (2025-11-25) or the one `tasks/get` inlines
//! (2026-07-28). The call's timeout bounds the whole; a cancel or a
//! timeout sends `tasks/cancel`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::link::Wait;
use super::options::CancelToken;
use super::{meta_of, CallOptions, Client};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonObject};
use crate::protocol::{
    extensions, meta, methods, CallToolResult, Era, ListTasksResult, Task, TaskStatus, TaskSupport,
    Tool,
};

/// The shortest wait between two polls, whatever the server suggests.
pub(crate) const POLL_FLOOR: Duration = Duration::from_millis(50);
/// The longest wait between two polls, whatever the server suggests.
pub(crate) const POLL_CAP: Duration = Duration::from_secs(5);
/// The wait between two polls when the server suggests none.
const POLL_DEFAULT: Duration = Duration::from_millis(500);
/// How long the `tasks/cancel` sent for a cancelled or timed-out call may
/// take.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// Tools whose task support is remembered at most.
const MAX_TOOLS: usize = 10_000;

/// Each listed tool's `execution.taskSupport`, by name.
#[derive(Debug, Default)]
pub(crate) struct Known {
    tools: Mutex<HashMap<String, TaskSupport>>,
    /// Set once a `tools/list` page was read.
    listed: AtomicBool,
}

impl Known {
    /// Remembers what `tools` say (up to [`MAX_TOOLS`] names).
    pub(crate) fn learn(&self, tools: &[Tool]) {
        self.listed.store(true, Ordering::SeqCst);
        let mut known = self.tools.lock();
        for tool in tools {
            if known.len() < MAX_TOOLS || known.contains_key(&tool.name) {
                known.insert(tool.name.clone(), tool.task_support());
            }
        }
    }

    /// Remembers that `name` runs only as a task (the server said so).
    fn require(&self, name: &str) {
        let mut known = self.tools.lock();
        if known.len() < MAX_TOOLS || known.contains_key(name) {
            known.insert(name.to_string(), TaskSupport::Required);
        }
    }

    /// Whether a `tools/list` page was read.
    fn listed(&self) -> bool {
        self.listed.load(Ordering::SeqCst)
    }

    fn support(&self, name: &str) -> Option<TaskSupport> {
        self.tools.lock().get(name).copied()
    }
}

/// What a call may still spend: its deadline and its token; `method`
/// names it in a timeout.
struct Budget<'a> {
    wait: Wait<'a>,
    method: &'static str,
}

impl Budget<'_> {
    fn new<'a>(client: &Client, options: &'a CallOptions, method: &'static str) -> Budget<'a> {
        Budget {
            wait: client.wait_for(options),
            method,
        }
    }

    /// The options of one request made within the budget.
    fn options(&self) -> CallOptions {
        let mut options = CallOptions::new().timeout(self.wait.remaining());
        options.cancel = self.wait.cancel.cloned();
        options
    }

    /// The call's error once its token fired or its time is up.
    fn stopped(&self) -> Option<Error> {
        if self.wait.cancel.map_or(false, CancelToken::is_cancelled) {
            Some(Error::cancelled(None))
        } else if Instant::now() >= self.wait.deadline {
            Some(self.wait.timed_out(self.method))
        } else {
            None
        }
    }

    /// Waits `interval` (or until the token fires, or the deadline).
    fn pause(&self, interval: Duration) -> Result<(), Error> {
        let (wake, woken) = crossbeam_channel::bounded::<()>(1);
        let _guard = self.wait.cancel.map(|token| {
            let wake = wake.clone();
            token.on_cancel(move || {
                let _ = wake.try_send(());
            })
        });
        let _ = woken.recv_timeout(interval.min(self.wait.remaining()));
        match self.stopped() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Client {
    /// `tools/call` with `params`, as a task when it should be one.
    pub(super) fn call_tool_tasked(
        &self,
        name: &str,
        params: JsonObject,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let budget = Budget::new(self, options, methods::TOOLS_CALL);
        let as_task = self.call_as_task(name, options)?;
        // Kept for a second try only where the server may ask for a task.
        let spare = Some(&params)
            .filter(|_| !as_task && self.offers_tasks())
            .cloned();
        let first = self.start_call(name, params, as_task, options, &budget);
        let answer = match (first, spare) {
            (Err(e), Some(params)) if self.only_as_task(&e, name)? => {
                self.start_call(name, params, true, options, &budget)?
            }
            (other, _) => other?,
        };
        let task = match answer {
            Started::Done(result) => return Ok(result),
            Started::Task(task) => task,
        };
        let task_id = task.task_id.clone();
        self.follow(task, None, &budget, options).map_err(|e| {
            match budget.stopped() {
                Some(stopped) => {
                    self.cancel_quietly(&task_id, &e);
                    // A poll cut short by the call's deadline names the
                    // call and its timeout, not the poll and what was left.
                    match e.kind() {
                        ErrorKind::Timeout { .. } | ErrorKind::Cancelled { .. } => stopped,
                        _ => e,
                    }
                }
                None => e,
            }
        })
    }

    /// Whether a call of `name` asks for a task: the server offers tasks,
    /// and the tool requires one, or allows one and the caller asks. In
    /// 2025-11-25 a tool not yet seen is looked up with one `tools/list`
    /// when the caller asks, or when the tools were never listed: some
    /// servers (the TypeScript SDK's) refuse a plain call of a tool that
    /// requires a task with an `isError` result, not an error the client
    /// could retry on.
    fn call_as_task(&self, name: &str, options: &CallOptions) -> Result<bool, Error> {
        if !self.offers_tasks() {
            return Ok(false);
        }
        if self.server.era == Era::V2026_07_28 {
            let required = self.task_support.support(name) == Some(TaskSupport::Required);
            return Ok(options.task || required);
        }
        let support = match self.task_support.support(name) {
            Some(support) => support,
            None if options.task || !self.task_support.listed() => {
                self.list_tools()?;
                self.task_support
                    .support(name)
                    .unwrap_or(TaskSupport::Forbidden)
            }
            None => TaskSupport::Forbidden,
        };
        Ok(match support {
            TaskSupport::Required => true,
            TaskSupport::Optional => options.task,
            TaskSupport::Forbidden => false,
        })
    }

    /// `capabilities.tasks.requests.tools.call` (2025-11-25), or the tasks
    /// extension (2026-07-28).
    fn offers_tasks(&self) -> bool {
        let capabilities = &self.server.capabilities;
        match self.server.era {
            Era::V2025_11_25 => capabilities
                .tasks
                .as_ref()
                .and_then(|t| t.get("requests"))
                .and_then(|r| r.get("tools"))
                .and_then(|t| t.get("call"))
                .is_some(),
            Era::V2026_07_28 => capabilities.declares_extension(extensions::TASKS),
        }
    }

    /// Whether `e`, the answer to a plain call of `name`, says that the
    /// tool runs only as a task: `-32021` naming the tasks extension
    /// (2026-07-28, SEP-2663 "Capability Negotiation"; remembered), or
    /// `-32601` (2025-11-25, TASK-2) for a tool that a fresh list then
    /// shows as `required`.
    fn only_as_task(&self, e: &Error, name: &str) -> Result<bool, Error> {
        let error = match e.kind() {
            ErrorKind::Peer(error) if self.offers_tasks() => error,
            _ => return Ok(false),
        };
        match self.server.era {
            Era::V2025_11_25 => {
                if error.code != ErrorCode::METHOD_NOT_FOUND {
                    return Ok(false);
                }
                self.list_tools()?;
                Ok(self.task_support.support(name) == Some(TaskSupport::Required))
            }
            Era::V2026_07_28 => {
                let named = error.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                    && error
                        .data
                        .as_ref()
                        .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
                        .and_then(|x| x.get(extensions::TASKS))
                        .is_some();
                if named {
                    self.task_support.require(name);
                }
                Ok(named)
            }
        }
    }

    /// The `tools/call` itself: its result, or the task it became.
    fn start_call(
        &self,
        name: &str,
        mut params: JsonObject,
        as_task: bool,
        options: &CallOptions,
        budget: &Budget<'_>,
    ) -> Result<Started, Error> {
        let mut first = budget.options();
        first.progress = options.progress.clone();
        first.no_retry_on_new_session = options.no_retry_on_new_session;
        if as_task {
            match self.server.era {
                Era::V2025_11_25 => {
                    let mut task = JsonObject::new();
                    if let Some(ttl) = options.task_ttl {
                        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
                        task.insert("ttl".into(), Value::from(millis));
                    }
                    params.insert("task".into(), Value::Object(task));
                }
                Era::V2026_07_28 => self.declare_tasks(&mut params),
            }
        }
        let answer = self.call_tool_once(name, params, &first)?;
        let task = match (as_task, self.server.era) {
            (false, _) => None,
            (true, Era::V2025_11_25) => answer.get("task").cloned(),
            (true, Era::V2026_07_28) => {
                let is_task = answer.get("resultType").and_then(Value::as_str) == Some("task");
                Some(answer.clone()).filter(|_| is_task)
            }
        };
        match task {
            Some(task) => Ok(Started::Task(shaped(methods::TOOLS_CALL, task)?)),
            None => shaped(methods::TOOLS_CALL, answer).map(Started::Done),
        }
    }

    /// 2026-07-28: the request declares the tasks extension in its own
    /// client capabilities (SEP-2663; EXT-2: read per request).
    fn declare_tasks(&self, params: &mut JsonObject) {
        if self.server.era != Era::V2026_07_28 {
            return;
        }
        let mut capabilities = match &self.envelope_json.0 {
            Value::Object(capabilities) => capabilities.clone(),
            _ => JsonObject::new(),
        };
        let declared = capabilities
            .entry("extensions")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if !declared.is_object() {
            *declared = Value::Object(JsonObject::new());
        }
        if let Value::Object(declared) = declared {
            declared.insert(extensions::TASKS.into(), Value::Object(JsonObject::new()));
        }
        meta_of(params).insert(
            meta::CLIENT_CAPABILITIES.into(),
            Value::Object(capabilities),
        );
    }

    /// Polls the task until it ends, answering its input requests
    /// (2026-07-28), and returns its result.
    /// `detail` is the 2026-07-28 `DetailedTask` that `task` was read
    /// from, if it came from `tasks/get`.
    fn follow(
        &self,
        task: Task,
        mut detail: Option<Value>,
        budget: &Budget<'_>,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut watch = Watch::new(options);
        let mut current = task;
        loop {
            watch.report(&current);
            let v2026 = self.server.era == Era::V2026_07_28;
            match (current.status, &detail) {
                (TaskStatus::Cancelled, _) => return Err(cancelled(&current)),
                (status, Some(detail)) if v2026 && status.is_terminal() => {
                    return outcome_2026(&current, detail)
                }
                (status, _) if status.is_terminal() && !v2026 => {
                    return self.fetch_result(&current.task_id, budget)
                }
                (status, _) if status.is_terminal() => {}
                (TaskStatus::InputRequired, Some(detail)) if v2026 => {
                    if !self.answer_task_inputs(&current.task_id, detail, &mut watch, budget)? {
                        budget.pause(interval(&current))?;
                    }
                }
                _ => budget.pause(interval(&current))?,
            }
            let answer = self.task_request(methods::TASKS_GET, &current.task_id, budget)?;
            current = shaped(methods::TASKS_GET, answer.clone())?;
            detail = Some(answer);
        }
    }

    /// Answers the input requests of a 2026-07-28 task not answered yet,
    /// with `tasks/update`; `false` when there were none.
    fn answer_task_inputs(
        &self,
        task_id: &str,
        detail: &Value,
        watch: &mut Watch,
        budget: &Budget<'_>,
    ) -> Result<bool, Error> {
        // Inserted one by one: a collect into the map would sort first.
        let mut fresh = JsonObject::new();
        if let Some(Value::Object(requests)) = detail.get("inputRequests") {
            for (key, request) in requests {
                if !watch.answered.contains(key) {
                    fresh.insert(key.clone(), request.clone());
                }
            }
        }
        if fresh.is_empty() {
            return Ok(false);
        }
        let responses = super::rounds::answer_inputs(self, Some(&Value::Object(fresh)))?;
        watch.answered.extend(responses.keys().cloned());
        let mut params = task_params(task_id);
        params.insert("inputResponses".into(), Value::Object(responses));
        self.declare_tasks(&mut params);
        self.send(
            methods::TASKS_UPDATE,
            params,
            Some(task_id.to_string()),
            &budget.options(),
        )?;
        Ok(true)
    }

    /// `tasks/result` (2025-11-25): what the call would have answered.
    fn fetch_result(&self, task_id: &str, budget: &Budget<'_>) -> Result<CallToolResult, Error> {
        let answer = self.task_request(methods::TASKS_RESULT, task_id, budget)?;
        shaped(methods::TASKS_RESULT, answer)
    }

    /// A `tasks/*` request naming `task_id`, within `budget`.
    fn task_request(
        &self,
        method: &str,
        task_id: &str,
        budget: &Budget<'_>,
    ) -> Result<Value, Error> {
        let mut params = task_params(task_id);
        self.declare_tasks(&mut params);
        self.send(method, params, Some(task_id.to_string()), &budget.options())
    }

    /// `tasks/cancel` for a call that was cancelled or timed out; a failure
    /// is only logged (the call's own error is what the caller gets).
    fn cancel_quietly(&self, task_id: &str, why: &Error) {
        log::debug!("cancelling task {}: {}", task_id, why);
        let options = CallOptions::new().timeout(CANCEL_TIMEOUT.min(self.request_timeout));
        let mut params = task_params(task_id);
        self.declare_tasks(&mut params);
        let sent = self.send(
            methods::TASKS_CANCEL,
            params,
            Some(task_id.to_string()),
            &options,
        );
        if let Err(e) = sent {
            log::debug!("tasks/cancel of {} failed: {}", task_id, e);
        }
    }

    /// The task `task_id`: `tasks/get`.
    ///
    /// # Errors
    ///
    /// See [`Client`]; a task that never existed, has expired or belongs
    /// to another client is the server's `-32602`.
    ///
    /// Spec: basic/utilities/tasks (2025-11-25) "Getting Tasks"; SEP-2663.
    pub fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        let options = CallOptions::new();
        let answer = self.task_request(
            methods::TASKS_GET,
            task_id,
            &Budget::new(self, &options, methods::TASKS_GET),
        )?;
        shaped(methods::TASKS_GET, answer)
    }

    /// Waits for task `task_id` to end and returns its result, as
    /// [`call_tool_with`](Self::call_tool_with) does for a call that became
    /// a task: polling `tasks/get`, answering a 2026-07-28 task's input
    /// requests with the program's closures, then `tasks/result`
    /// (2025-11-25) or the result `tasks/get` inlines (2026-07-28).
    /// `options` gives the timeout, the token and the status callback;
    /// when they end the wait, the task itself runs on (see
    /// [`cancel_task`](Self::cancel_task)).
    ///
    /// # Errors
    ///
    /// See [`Client`]. A failed task is its JSON-RPC error
    /// ([`ErrorKind::Peer`]); a cancelled one [`ErrorKind::Cancelled`].
    ///
    /// Spec: basic/utilities/tasks (2025-11-25) "Retrieving Task Results";
    /// SEP-2663.
    pub fn task_result(
        &self,
        task_id: &str,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let budget = Budget::new(self, options, methods::TASKS_GET);
        let answer = self.task_request(methods::TASKS_GET, task_id, &budget)?;
        let task = shaped(methods::TASKS_GET, answer.clone())?;
        self.follow(task, Some(answer), &budget, options)
    }

    /// Cancels task `task_id`: `tasks/cancel`. The server moves it to
    /// `cancelled` before it answers.
    ///
    /// # Errors
    ///
    /// See [`Client`]; in 2025-11-25 a task that already ended is the
    /// server's `-32602` (2026-07-28 acknowledges it all the same).
    ///
    /// Spec: basic/utilities/tasks (2025-11-25) "Cancelling Tasks";
    /// SEP-2663.
    pub fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        let options = CallOptions::new();
        let budget = Budget::new(self, &options, methods::TASKS_CANCEL);
        self.task_request(methods::TASKS_CANCEL, task_id, &budget)
            .map(|_| ())
    }

    /// Every task of this client, following `nextCursor`: `tasks/list`.
    ///
    /// # Errors
    ///
    /// See [`Client`]. In 2026-07-28, which removed it (EXT-3),
    /// [`ErrorKind::Message`].
    ///
    /// Spec: basic/utilities/tasks (2025-11-25) "Listing Tasks".
    pub fn list_tasks(&self) -> Result<Vec<Task>, Error> {
        if self.server.era == Era::V2026_07_28 {
            return Err(Error::msg(
                "tasks/list does not exist in 2026-07-28 (the tasks extension removed it)",
            ));
        }
        self.all_pages(|cursor| {
            self.page::<ListTasksResult>(methods::TASKS_LIST, cursor)
                .map(|p| (p.tasks, p.next_cursor))
        })
    }
}

/// What a `tools/call` answered.
enum Started {
    /// A result.
    Done(CallToolResult),
    /// A task to follow.
    Task(Task),
}

/// What the caller has seen of a task: the last status reported, and the
/// input requests answered (2026-07-28 keys are never reused in a task).
struct Watch {
    status: Option<(TaskStatus, Option<String>)>,
    callback: Option<super::options::TaskStatusFn>,
    answered: HashSet<String>,
}

impl Watch {
    fn new(options: &CallOptions) -> Watch {
        Watch {
            status: None,
            callback: options.task_status.clone(),
            answered: HashSet::new(),
        }
    }

    /// Calls the status callback when the status or its message changed.
    fn report(&mut self, task: &Task) {
        let now = (task.status, task.status_message.clone());
        if self.status.as_ref() != Some(&now) {
            self.status = Some(now);
            if let Some(callback) = &self.callback {
                callback(task);
            }
        }
    }
}

/// The wait before the next poll: the server's suggestion, bounded.
fn interval(task: &Task) -> Duration {
    task.poll_interval
        .map_or(POLL_DEFAULT, Duration::from_millis)
        .max(POLL_FLOOR)
        .min(POLL_CAP)
}

fn task_params(task_id: &str) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("taskId".into(), Value::from(task_id));
    params
}

/// A 2026-07-28 terminal task's outcome, as `tasks/get` inlines it.
fn outcome_2026(task: &Task, detail: &Value) -> Result<CallToolResult, Error> {
    match task.status {
        TaskStatus::Failed => {
            let error = detail.get("error").cloned().unwrap_or(Value::Null);
            let error: ErrorObject = shaped(methods::TASKS_GET, error)?;
            Err(Error::new(ErrorKind::Peer(error)))
        }
        TaskStatus::Cancelled => Err(cancelled(task)),
        _ => {
            let result = detail.get("result").cloned().unwrap_or(Value::Null);
            shaped(methods::TASKS_GET, result)
        }
    }
}

/// The error of a task that someone cancelled.
fn cancelled(task: &Task) -> Error {
    let why = task.status_message.as_deref().unwrap_or("no reason given");
    Error::cancelled(Some(format!(
        "task {} was cancelled: {}",
        task.task_id, why
    )))
}

/// `value` read as `R`, or a protocol error naming `method`.
fn shaped<R: DeserializeOwned>(method: &str, value: Value) -> Result<R, Error> {
    serde_json::from_value(value).map_err(|e| {
        Error::new(ErrorKind::Protocol(format!(
            "the {} result has the wrong shape: {}",
            method, e
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polled(millis: Option<u64>) -> Duration {
        let mut task: Task = serde_json::from_value(serde_json::json!({
            "taskId": "t", "status": "working", "ttl": null
        }))
        .unwrap();
        task.poll_interval = millis;
        interval(&task)
    }

    // basic/utilities/tasks (2025-11-25) `pollInterval` is a suggestion:
    // followed within a floor and a cap, 500 ms when absent.
    #[test]
    fn polls_follow_the_server_within_bounds() {
        assert_eq!(polled(Some(1)), POLL_FLOOR);
        assert_eq!(polled(Some(200)), Duration::from_millis(200));
        assert_eq!(polled(Some(3_600_000)), POLL_CAP);
        assert_eq!(polled(None), POLL_DEFAULT);
    }
}
