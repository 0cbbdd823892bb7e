//! Tasks: a `tools/call` answered at once with a task handle while its
//! handler runs on, its result kept for the client to fetch
//! (basic/utilities/tasks, 2025-11-25, experimental; the
//! `io.modelcontextprotocol/tasks` extension of 2026-07-28, SEP-2663).
//!
//! A task is a handler run that outlives its request. The worker that runs
//! the `tools/call` sends the `CreateTaskResult` as the request's response
//! (before the handler, or when the handler calls
//! [`RequestContext::start_task`]), then goes on running the handler; what
//! the handler returns goes into the [`TaskStore`] instead of onto a
//! stream. Inside a task, `ctx.elicit` and the other calls to the client
//! block as they do in a 2025-11-25 request: in 2026-07-28 the task moves
//! to `input_required`, its requests are shown by `tasks/get`, and the call
//! returns when `tasks/update` brings the answers; in 2025-11-25 the
//! request is sent to the client (tagged with the task, TASK-7) and the
//! task is `input_required` until it answers.

mod command;
mod exchange;
mod methods;
mod share;
mod store;
mod wire;

use super::waiting;
pub use command::TaskCommand;
pub(crate) use exchange::{ask_inputs, send_request};
pub(crate) use methods::{cancel_2025, cancel_2026, get_2025, get_2026, list, result, update};
use share::owner_of;
pub use store::{MemoryTaskStore, TaskRecord, TaskStore};

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use serde_json::Value;

use super::context::RequestContext;
use super::reply::Reply;
use super::sink::{NullSink, Sink};
use crate::error::to_json_bytes;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, JsonObject, Message, RequestId, Response};
use crate::protocol::{
    extensions, notifications, Era, TaskMetadata, TaskStatus, TaskSupport, Tool,
};
use crate::server::cancel::CancellationFlag;
use crate::server::session::Session;

/// The bounds of tasks: how many are kept and run, for how long, and how
/// large a result may be. Set with
/// [`ServerBuilder::task_limits`](crate::ServerBuilder::task_limits);
/// build one with `..TaskLimits::default()` for the fields you keep.
///
/// ```
/// use std::time::Duration;
/// use tiny_mcp::{Server, TaskLimits};
///
/// let limits = TaskLimits { max_ttl: Duration::from_secs(300), ..TaskLimits::default() };
/// let server = Server::builder("jobs", "1").task_limits(limits).build();
/// assert!(server.capabilities().tasks.is_some());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TaskLimits {
    /// Tasks kept at once, running or finished (default 10,000). A
    /// `tools/call` that would make one more gets `-32603`.
    pub max_tasks: usize,
    /// Tasks kept at once for one caller (default 100): a principal
    /// (issuer, subject and client id), else a 2025-11-25 session or a
    /// connection, else a peer address (2026-07-28 HTTP without a
    /// principal, which has no session: one host's stateless calls
    /// together, DESIGN.md §26). The `tools/call` that would make one more
    /// gets `-32603` naming the limit; other callers are not affected.
    pub max_tasks_per_owner: usize,
    /// Tasks kept at once for every client without a principal or session
    /// together (2026-07-28 HTTP, which has no session; default 1,000), so
    /// that they cannot fill the store for the others. Within it each
    /// peer address holds at most
    /// [`max_tasks_per_owner`](Self::max_tasks_per_owner); when per-peer
    /// shares are off
    /// ([`per_peer_shares(false)`](crate::HttpServerBuilder::per_peer_shares))
    /// this total is their only bound.
    pub max_anonymous_tasks: usize,
    /// Tasks kept at once for the callers without a principal of one peer
    /// address together, however many sessions it opens (default 1,000,
    /// DESIGN.md §26). The `tools/call` that would make one more gets
    /// `-32603` naming `max_tasks_per_peer`. Not counted when per-peer
    /// shares are off
    /// ([`per_peer_shares(false)`](crate::HttpServerBuilder::per_peer_shares))
    /// nor for a principal's tasks, which its own share bounds.
    pub max_tasks_per_peer: usize,
    /// Bytes of results, errors and input requests kept at once (default
    /// 64 MiB); past it the oldest finished tasks are forgotten.
    pub max_stored_bytes: usize,
    /// Tasks whose handlers run at once (default 64). A running task holds
    /// a worker thread (of [`max_workers`](crate::ServerBuilder::max_workers),
    /// 256 by default), so keep this below that.
    pub max_running: usize,
    /// Tasks of one caller whose handlers run at once (default 8, at
    /// least 1): a principal, a session or connection, or a peer address
    /// (as [`max_tasks_per_owner`](Self::max_tasks_per_owner) counts), so
    /// that one caller's tasks waiting for input cannot hold every one of
    /// [`max_running`](Self::max_running) for the
    /// [`input_timeout`](Self::input_timeout). The `tools/call` that would
    /// start one more gets `-32603` naming `max_running_per_owner`;
    /// clients the server cannot tell apart (no principal, no session,
    /// per-peer shares off) are bounded by `max_running` alone, and so is
    /// the one client of a stdio or in-memory connection.
    pub max_running_per_owner: usize,
    /// Tasks of the callers without a principal of one peer address whose
    /// handlers run at once, together (default 16, at least 1), so that one
    /// host opening many sessions cannot hold every running slot. The
    /// `tools/call` that would start one more gets `-32603` naming
    /// `max_running_per_peer`. Counted as
    /// [`max_tasks_per_peer`](Self::max_tasks_per_peer) is.
    pub max_running_per_peer: usize,
    /// Time to live when the client asks for none (default 10 minutes).
    pub default_ttl: Duration,
    /// The longest time to live a 2025-11-25 client may ask for (default
    /// 1 hour); longer requests are shortened to it.
    pub max_ttl: Duration,
    /// The longest time to live of the tasks of a caller without a
    /// principal (no token verifier, or none on this request; default
    /// 10 minutes, at most [`max_ttl`](Self::max_ttl)): its longer
    /// requests, and a longer [`default_ttl`](Self::default_ttl), are
    /// shortened to it, so that unauthenticated callers' finished tasks
    /// leave the store sooner. The client sees the shortened `ttl` in the
    /// `CreateTaskResult`; after it, `tasks/get` gets `-32602`.
    pub max_ttl_anonymous: Duration,
    /// The poll interval suggested to clients (default 500 ms).
    pub poll_interval: Duration,
    /// The largest result kept, serialized (default 4 MiB); a larger one
    /// fails the task with `-32603`.
    pub max_result_bytes: usize,
    /// How long a task waits for the client's input (default 10 minutes);
    /// then the call to the client fails with a timeout.
    pub input_timeout: Duration,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_tasks: 10_000,
            max_tasks_per_owner: 100,
            max_anonymous_tasks: 1_000,
            max_tasks_per_peer: 1_000,
            max_stored_bytes: 64 << 20,
            max_running: 64,
            max_running_per_owner: 8,
            max_running_per_peer: 16,
            default_ttl: Duration::from_secs(600),
            max_ttl: Duration::from_secs(3600),
            max_ttl_anonymous: Duration::from_secs(600),
            poll_interval: Duration::from_millis(500),
            max_result_bytes: 4 << 20,
            input_timeout: Duration::from_secs(600),
        }
    }
}

/// The server's tasks: the store and the handler runs of this instance.
pub(crate) struct Tasks {
    pub(crate) store: Box<dyn TaskStore>,
    pub(crate) limits: TaskLimits,
    /// What every task id starts with (`ServerBuilder::task_id_prefix`).
    id_prefix: String,
    runs: Mutex<share::Runs>,
}

impl Tasks {
    pub(crate) fn new(
        store: Option<Box<dyn TaskStore>>,
        limits: TaskLimits,
        id_prefix: String,
    ) -> Tasks {
        let store = store.unwrap_or_else(|| {
            Box::new(
                MemoryTaskStore::new(limits.max_tasks, limits.max_tasks_per_owner)
                    .with_max_anonymous(limits.max_anonymous_tasks)
                    .with_max_per_peer(limits.max_tasks_per_peer)
                    .with_max_bytes(limits.max_stored_bytes),
            )
        });
        Tasks {
            store,
            limits,
            id_prefix,
            runs: Mutex::new(share::Runs::default()),
        }
    }

    /// The running task `id` of this instance.
    pub(crate) fn run(&self, id: &str) -> Option<Arc<TaskRun>> {
        self.runs.lock().get(id).cloned()
    }

    /// How many tasks run on this instance now (the metrics' gauge).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn running_count(&self) -> usize {
        self.runs.lock().all().count()
    }

    /// Cancels the running tasks tied to session `key` (it ended: nobody
    /// can fetch their results), or all when `key` is `None` (shutdown).
    pub(crate) fn cancel_where(&self, key: Option<u64>, reason: &str) {
        let runs: Vec<Arc<TaskRun>> = self
            .runs
            .lock()
            .all()
            .filter(|run| key.is_none() || run.session_key == key)
            .cloned()
            .collect();
        for run in runs {
            self.cancel(&run, reason);
        }
    }

    /// Cancels a running task: `cancelled` in the store first (TASK-9),
    /// then the handler's flag, its waits and its calls to the client.
    pub(crate) fn cancel(&self, run: &TaskRun, reason: &str) {
        self.store.update(&run.id, &mut |record| {
            record.move_to(TaskStatus::Cancelled, Some(reason.to_string()));
        });
        run.flag.cancel(Some(reason.to_string()));
        run.wake();
        let nested = std::mem::take(&mut *run.nested.lock());
        if let Some(session) = &run.session {
            session.cancel_nested(nested, Some(reason), Some(&run.sink));
        }
    }
}

/// A handler running as a task on this instance.
pub(crate) struct TaskRun {
    pub(crate) id: String,
    pub(crate) era: Era,
    /// Whom its running slot is counted against (`share::share_of`; `""`
    /// on a connection, whose one client no share applies to).
    share: String,
    /// The peer address it counts against besides (`share::peer_of`).
    peer: String,
    /// The request's flag, set by `tasks/cancel`.
    pub(crate) flag: CancellationFlag,
    /// Where its messages go: the session's unrelated stream (2025-11-25)
    /// or nowhere (2026-07-28: no notifications on tasks).
    pub(crate) sink: Arc<dyn Sink>,
    /// The 2025-11-25 session or connection it ends with.
    session_key: Option<u64>,
    session: Option<Arc<Session>>,
    /// The input it waits for (2026-07-28) and whether it ended.
    pub(crate) exchange: Mutex<exchange::Exchange>,
    changed: Condvar,
    /// Our requests to the client it waits on (2025-11-25).
    pub(crate) nested: Mutex<Vec<RequestId>>,
}

impl TaskRun {
    /// Wakes whoever waits on the exchange (input arrived, cancel, end).
    pub(crate) fn wake(&self) {
        self.changed.notify_all();
    }

    /// Waits until `done` says so, the task is cancelled or `timeout`
    /// passes; `true` when `done`.
    pub(crate) fn wait_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&mut exchange::Exchange) -> bool,
    ) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        // Serving single-threaded, this thread reads what would wake it.
        let pumping = waiting::pumps_here();
        let mut exchange = self.exchange.lock();
        loop {
            if done(&mut exchange) {
                return true;
            }
            if self.flag.is_cancelled() || exchange.ended {
                return false;
            }
            if pumping {
                let more = std::time::Instant::now() < deadline
                    && parking_lot::MutexGuard::unlocked(&mut exchange, waiting::pump_input)
                        == Some(true);
                if !more {
                    return done(&mut exchange);
                }
            } else if self.changed.wait_until(&mut exchange, deadline).timed_out() {
                return done(&mut exchange);
            }
        }
    }
}

/// Whether a request may become a task, decided before its handler runs.
#[derive(Clone)]
pub(crate) enum TaskSlot {
    /// It may not.
    No,
    /// It may: at once (`eager`) or when the handler asks; `ttl` is what a
    /// 2025-11-25 client asked for, in ms.
    Possible { eager: bool, ttl: Option<u64> },
    /// It is one.
    Running(Arc<TaskRun>),
}

/// Declares tasks: `capabilities.tasks` for 2025-11-25 (`list`, `cancel`,
/// `requests.tools.call`; every task is bound to its session or principal,
/// TASK-10) and the tasks extension for 2026-07-28.
pub(crate) fn declare(capabilities: &mut crate::protocol::ServerCapabilities) {
    capabilities.tasks = Some(
        serde_json::json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let extensions = capabilities.extensions.get_or_insert_with(JsonObject::new);
    extensions.insert(extensions::TASKS.into(), Value::Object(JsonObject::new()));
}

/// Decides whether a `tools/call` of `tool` may become a task (TASK-1,
/// TASK-2; SEP-2663 "Capability Negotiation"); `Err` is the answer for a
/// call that cannot run as the tool requires.
pub(crate) fn plan(
    ctx: &RequestContext,
    tool: &Tool,
    task: Option<&TaskMetadata>,
) -> Result<TaskSlot, ErrorObject> {
    if ctx.quick {
        // Runs where it is read, never as a task.
        return Ok(TaskSlot::No);
    }
    let support = tool.task_support();
    let offered = ctx.session.server.with_capabilities(|c| match ctx.era() {
        Era::V2025_11_25 => c.tasks.is_some(),
        Era::V2026_07_28 => c.declares_extension(extensions::TASKS),
    });
    if !offered {
        return Ok(TaskSlot::No);
    }
    let eager = !ctx
        .session
        .server
        .registry
        .read()
        .starts_tasks_late(&tool.name);
    let wanted = match ctx.era() {
        Era::V2025_11_25 => task.is_some(),
        Era::V2026_07_28 => ctx
            .client_capabilities()
            .supports_extension(extensions::TASKS),
    };
    match (support, wanted, ctx.era()) {
        (TaskSupport::Forbidden, true, Era::V2025_11_25) => {
            Err(ErrorObject::method_not_found(&format!(
                "tools/call as a task: tool {} does not run as a task",
                tool.name
            )))
        }
        (TaskSupport::Forbidden, _, _) => Ok(TaskSlot::No),
        (TaskSupport::Required, false, Era::V2025_11_25) => {
            Err(ErrorObject::method_not_found(&format!(
                "tools/call without a task: tool {} runs only as a task",
                tool.name
            )))
        }
        (TaskSupport::Required, false, Era::V2026_07_28) => Err(missing_extension()),
        (_, false, _) => Ok(TaskSlot::No),
        (_, true, _) => Ok(TaskSlot::Possible {
            eager,
            ttl: task.and_then(|t| t.ttl),
        }),
    }
}

/// `-32021` naming the tasks extension (SEP-2663 "Capability Negotiation").
pub(crate) fn missing_extension() -> ErrorObject {
    let mut wanted = JsonObject::new();
    wanted.insert(extensions::TASKS.into(), Value::Object(JsonObject::new()));
    ErrorObject::new(
        crate::jsonrpc::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "this request needs the client extension {}",
            extensions::TASKS
        ),
    )
    .with_data(serde_json::json!({
        "requiredCapabilities": { "extensions": wanted }
    }))
}

/// Turns the request into a task, if it may be one: keeps the task, sends
/// the `CreateTaskResult` as the response, and from then on the handler's
/// result goes to the store. `Ok(false)`: it may not (the handler goes on
/// as a plain request).
pub(crate) fn start(ctx: &RequestContext) -> Result<bool, Error> {
    let mut slot = ctx.task.lock();
    let ttl = match &*slot {
        TaskSlot::Running(_) => return Ok(true),
        TaskSlot::No => return Ok(false),
        TaskSlot::Possible { ttl, .. } => *ttl,
    };
    let session = &ctx.session;
    let tasks = &session.server.tasks;
    let era = ctx.era();
    let limits = &tasks.limits;
    let longest = match ctx.caller.principal {
        Some(_) => limits.max_ttl,
        None => limits.max_ttl_anonymous.min(limits.max_ttl),
    };
    let ttl = ttl
        .map(Duration::from_millis)
        .unwrap_or(limits.default_ttl)
        .min(longest)
        .max(Duration::from_millis(1));
    let id = format!("{}{}", tasks.id_prefix, uuid::Uuid::new_v4());
    let owner = share::owner_of(session, &ctx.caller, era);
    let mut record = TaskRecord::new(id.clone(), owner, era, ttl);
    record.share = share::share_of(session, &ctx.caller, era);
    record.peer = share::peer_of(&ctx.caller);
    record.instance = session.server.instance_id.clone();
    record.poll_interval = limits.poll_interval;
    let created = wire::create_result(&record, &session.server);
    // A stdio or in-memory connection is its server's one client: no
    // per-caller share of the running slots applies (DESIGN.md §26).
    let running_share = if session.is_connection() {
        String::new()
    } else {
        record.share.clone()
    };
    let mut run = new_run(ctx, id.clone(), running_share);
    run.peer = record.peer.clone();
    let run = Arc::new(run);
    // Counted and taken under one lock: concurrent starts cannot pass the
    // limits together.
    tasks.runs.lock().claim(Arc::clone(&run), limits)?;
    if let Err(e) = tasks.store.insert(record) {
        tasks.runs.lock().release(&id);
        return Err(e);
    }
    if session.in_flight.finish(&ctx.request_id).is_none() {
        // Cancelled just now: the cancel won, and the task with it.
        tasks.cancel(&run, "cancelled before the task started");
        tasks.runs.lock().release(&id);
        return Err(Error::cancelled(ctx.flag.reason()));
    }
    ctx.sink.send(Message::Response(Response {
        id: Some(ctx.request_id.clone()),
        outcome: Ok(created),
    }));
    log::debug!("> task {} for {} {}", id, ctx.request_id, ctx.method.name);
    *slot = TaskSlot::Running(run);
    Ok(true)
}

fn new_run(ctx: &RequestContext, id: String, share: String) -> TaskRun {
    let session = &ctx.session;
    let v2025 = ctx.era() == Era::V2025_11_25;
    let tied = v2025 || session.is_connection();
    let sink: Arc<dyn Sink> = if v2025 {
        Arc::new(UnrelatedSink(Arc::clone(session)))
    } else {
        Arc::new(NullSink)
    };
    TaskRun {
        id,
        era: ctx.era(),
        share,
        peer: String::new(),
        flag: ctx.flag.clone(),
        sink,
        session_key: if tied { Some(session.key()) } else { None },
        session: if v2025 {
            Some(Arc::clone(session))
        } else {
            None
        },
        exchange: Mutex::new(exchange::Exchange::default()),
        changed: Condvar::new(),
        nested: Mutex::new(Vec::new()),
    }
}

/// Keeps what the task's handler ended with: `completed` with its result
/// (a tool's `isError` result too), or `failed` with a JSON-RPC error;
/// nothing once the task is terminal (a cancel won). The run ends.
pub(crate) fn settle(ctx: &RequestContext, run: &Arc<TaskRun>, answer: Result<Reply, ErrorObject>) {
    let tasks = &ctx.session.server.tasks;
    let max = tasks.limits.max_result_bytes;
    let outcome = answer.and_then(Reply::into_value).and_then(|value| {
        let size = to_json_bytes("a task's result", &value)
            .map_err(|e| e.to_error_object())?
            .len();
        if size > max {
            Err(ErrorObject::internal(format!(
                "the task's result is {} bytes, over the limit of {}",
                size, max
            )))
        } else {
            Ok(value)
        }
    });
    // The change may run more than once (a shared store retries it on the
    // latest record: `TaskStore::update`), so it copies the outcome in.
    let mut moved = false;
    let record = tasks.store.update(&run.id, &mut |record| {
        let (status, message) = match &outcome {
            Ok(_) => (TaskStatus::Completed, None),
            Err(e) => (TaskStatus::Failed, Some(e.message.clone())),
        };
        moved = record.move_to(status, message);
        if moved {
            match &outcome {
                Ok(value) => record.result = Some(value.clone()),
                Err(error) => record.error = Some(error.clone()),
            }
        }
    });
    // Only a task that moved is announced: one cancelled (by the client,
    // or because its session ended) is not announced again. The status
    // goes out before a waiting `tasks/result` is woken, so that a client
    // sees `completed` no later than the result.
    match record {
        Some(record) if moved => notify_status(run, &record),
        _ => {}
    }
    run.exchange.lock().ended = true;
    run.wake();
    tasks.runs.lock().release(&run.id);
}

/// `notifications/tasks/status` with the task (2025-11-25; optional).
pub(crate) fn notify_status(run: &TaskRun, record: &TaskRecord) {
    if run.era == Era::V2025_11_25 {
        let params = Value::Object(wire::task_2025(record));
        run.sink.send(Message::notification(
            notifications::TASKS_STATUS,
            Some(params),
        ));
    }
}

/// The session's stream for messages related to no request: where a
/// 2025-11-25 task's messages go once its request was answered.
struct UnrelatedSink(Arc<Session>);

impl Sink for UnrelatedSink {
    fn send(&self, message: Message) -> bool {
        self.0.send_unrelated(message)
    }
}
