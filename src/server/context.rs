//! `RequestContext`: what a handler knows about its request and can do with
//! the client.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use serde::de::DeserializeOwned;
use serde_json::Value;

use parking_lot::Mutex;

use super::caller::{Caller, HttpHeaders, Principal, TraceContext};
use super::envelope::Envelope;
use super::handle::ServerHandle;
use super::input::answer_check::{
    check_answer, check_answers, requested_schema, requested_schemas,
};
use super::input::{InputRequest, InputResponses, Rounds};
use super::metrics::ToolSlot;
use super::sink::Sink;
use super::tasks::{self, TaskRun, TaskSlot};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{JsonObject, Message, RequestId};
use crate::protocol::{
    notifications, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Era, ListRootsResult, LoggingLevel, ProgressToken,
};
use crate::server::cancel::CancellationFlag;
use crate::server::session::Session;

mod client;
mod wait;

/// The context of one request, passed first to every handler.
///
/// Everything the handler sends (progress, log messages, requests to the
/// client) is related to this request, and the transport routes it: on
/// stdio to stdout, on Streamable HTTP to this request's response stream.
///
/// Blocking calls to the client ([`create_message`](Self::create_message),
/// [`elicit`](Self::elicit), [`list_roots`](Self::list_roots)) check the
/// client's declared capability first, wait at most the server's
/// client-request timeout, and return [`ErrorKind::Cancelled`] as soon as
/// this request is cancelled. They work in both eras ([`era`](Self::era)):
/// in 2025-11-25 they send a request and wait; in 2026-07-28 they take
/// their answer from the client's retry or end the run with
/// `input_required`.
pub struct RequestContext {
    pub(crate) session: Arc<Session>,
    pub(crate) request_id: RequestId,
    pub(crate) method: MethodTraits,
    pub(crate) flag: CancellationFlag,
    pub(crate) sink: Arc<dyn Sink>,
    pub(crate) link: ClientLink,
    /// Who sent the request and what came with it.
    pub(crate) caller: Caller,
    /// A quick tool's call, run on the thread that reads the client: it
    /// cannot wait for an answer from the client.
    pub(crate) quick: bool,
    /// Whether the request may become a task, or is one.
    pub(crate) task: Mutex<TaskSlot>,
    /// The metrics label of the tool a `tools/call` found (DESIGN.md §29).
    pub(crate) tool_label: ToolSlot,
    /// The method's name when its row has none: a method the crate does
    /// not know, forwarded to an [`Upstream`](crate::Upstream).
    pub(crate) unnamed: Option<String>,
}

/// What a run needs of its request's row of the method table
/// ([`methods`](super::methods)): the name, and the two columns read once
/// the handler returns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MethodTraits {
    /// As the spec spells it, e.g. `tools/call`.
    pub(crate) name: &'static str,
    /// Its 2026-07-28 result carries `ttlMs` and `cacheScope` (CACHE-1).
    pub(crate) cacheable: bool,
    /// Its handler may answer `input_required` (MRTR-1).
    pub(crate) asks_input: bool,
}

/// How a request reaches its client, chosen once per request (DESIGN.md
/// §14): each context method that depends on the era matches on it once.
// One per request, built once and never moved around: boxing would only
// add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ClientLink {
    /// 2025-11-25: a live connection that can send a request and wait for
    /// its answer. Client info, capabilities and log level are the
    /// session's.
    Connection {
        /// The request's `params._meta`.
        meta: Option<JsonObject>,
        /// The handler's state (one run, one round).
        state: Mutex<Option<Value>>,
        /// The highest progress sent for this request.
        progress: Mutex<Option<f64>>,
    },
    /// 2026-07-28: everything comes with the request (its envelope), and
    /// input is asked for by `input_required` and a retry with its rounds.
    Retry { envelope: Envelope, rounds: Rounds },
}

impl ClientLink {
    /// The link of a 2025-11-25 request with these params.
    pub(crate) fn connection(params: Option<&Value>) -> ClientLink {
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .cloned();
        ClientLink::Connection {
            meta,
            state: Mutex::new(None),
            progress: Mutex::new(None),
        }
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("request_id", &self.request_id)
            .field("method", &self.method.name)
            .field("era", &self.era())
            .field("cancelled", &self.flag.is_cancelled())
            .finish()
    }
}

impl RequestContext {
    /// The id of the request being handled, with its JSON type.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// The method being handled, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        self.unnamed.as_deref().unwrap_or(self.method.name)
    }

    /// The `Mcp-Session-Id` on Streamable HTTP; `None` on stdio.
    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_deref()
    }

    /// Who is calling, as the HTTP transport's token verifier established
    /// it ([`HttpServerBuilder::protect`](crate::HttpServerBuilder::protect)):
    /// subject, client id, scopes, audience, expiry and claims. `None` on
    /// stdio, in memory and on a server without a verifier.
    ///
    /// Spec: basic/authorization (2025-11-25), "Access Token Usage".
    pub fn principal(&self) -> Option<&Principal> {
        self.caller.principal.as_deref()
    }

    /// The headers of the HTTP POST that carried this request, read-only
    /// (names in lowercase). `None` on stdio and in memory.
    pub fn http_headers(&self) -> Option<&HttpHeaders> {
        self.caller.headers.as_ref()
    }

    /// The W3C trace context (`traceparent`, `tracestate`, `baggage`) the
    /// client sent in the request's `_meta` (SEP-414), else in the HTTP
    /// request's headers of the same names, if any.
    pub fn trace(&self) -> Option<&TraceContext> {
        self.caller.trace.as_ref()
    }

    /// The request's `params._meta`, if it had one.
    pub fn meta(&self) -> Option<&JsonObject> {
        match &self.link {
            ClientLink::Connection { meta, .. } => meta.as_ref(),
            ClientLink::Retry { envelope, .. } => Some(&envelope.meta),
        }
    }

    /// The era of this request: [`Era::V2025_11_25`] on a session opened by
    /// `initialize` (the server can send requests to the client and wait),
    /// and for every request of the 2025-11-25 stateless HTTP mode
    /// ([`HttpServerBuilder::stateless`](crate::HttpServerBuilder::stateless));
    /// [`Era::V2026_07_28`] for a request that carries its own envelope
    /// (the server asks for input with `input_required` instead).
    pub fn era(&self) -> Era {
        match &self.link {
            ClientLink::Connection { .. } => Era::V2025_11_25,
            ClientLink::Retry { .. } => Era::V2026_07_28,
        }
    }

    /// Turns this `tools/call` into a task, if it may become one: the
    /// client is answered at once with a `CreateTaskResult`, and what the
    /// handler returns from now on is kept as the task's result, for
    /// `tasks/get` (2026-07-28) or `tasks/result` (2025-11-25). Calls to the
    /// client still block: inside a task they wait for `tasks/update`
    /// (2026-07-28) or the client's answer (2025-11-25).
    ///
    /// Calls of a tool with task support become tasks before the handler
    /// runs, unless it was registered with
    /// [`ServerBuilder::tasks_start_in_handler`](crate::ServerBuilder::tasks_start_in_handler);
    /// then the handler calls this when it wants (after asking the client
    /// in the request itself, say). Returns `Ok(true)` once the call is a
    /// task, `Ok(false)` when it cannot be one (the tool has no task
    /// support, the client did not ask for one in 2025-11-25 or did not
    /// declare the tasks extension in 2026-07-28, a quick tool): the
    /// handler then goes on as a plain call.
    ///
    /// # Errors
    ///
    /// When the task store or the running tasks are at their limit
    /// ([`TaskLimits`](crate::TaskLimits)), or the request was cancelled.
    ///
    /// Spec: basic/utilities/tasks (2025-11-25); SEP-2663 "Task Creation".
    pub fn start_task(&self) -> Result<bool, Error> {
        tasks::start(self)
    }

    /// The id of the task this call became, if it became one.
    pub fn task_id(&self) -> Option<String> {
        self.running_task().map(|run| run.id.clone())
    }

    /// The task this call runs as.
    pub(crate) fn running_task(&self) -> Option<Arc<TaskRun>> {
        match &*self.task.lock() {
            TaskSlot::Running(run) => Some(Arc::clone(run)),
            _ => None,
        }
    }

    /// Where the handler's messages go: the request's sink, or once it is
    /// a task, the task's.
    fn out(&self) -> Arc<dyn Sink> {
        match self.running_task() {
            Some(run) => Arc::clone(&run.sink),
            None => Arc::clone(&self.sink),
        }
    }

    /// A handle to the server, to change what it offers or notify clients.
    pub fn server(&self) -> ServerHandle {
        ServerHandle::new(Arc::clone(&self.session.server))
    }

    // The cancellation methods (`is_cancelled`, `check_cancelled`,
    // `sleep`, `wait_for`, `cancellation_flag`) are in `context/wait.rs`.

    /// The request's `_meta.progressToken`, with its JSON type.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.meta()
            .and_then(|m| m.get("progressToken"))
            .and_then(RequestId::from_value)
    }

    /// Sends `notifications/progress` for this request; a no-op when the
    /// request carried no `progressToken` or was cancelled.
    ///
    /// Shape: `{"progressToken", "progress", "total"?, "message"?}`.
    /// `progress` must grow from one call to the next (PROG-2).
    ///
    /// Spec: basic/utilities/progress (2025-11-25).
    pub fn notify_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let token = match self.progress_token() {
            Some(token) => token,
            None => return,
        };
        if self.flag.is_cancelled() || !self.progress_increases(progress) {
            return;
        }
        let mut params = JsonObject::new();
        params.insert("progressToken".into(), token.to_value());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::from(message));
        }
        self.out().send(Message::notification(
            notifications::PROGRESS,
            Some(Value::Object(params)),
        ));
    }

    /// PROG-2: progress increases with each notification. A value not above
    /// the last one sent for this request (in 2026-07-28 over all its
    /// rounds, which re-run the handler) is dropped.
    fn progress_increases(&self, progress: f64) -> bool {
        let cell = match &self.link {
            ClientLink::Connection { progress, .. } => progress,
            ClientLink::Retry { rounds, .. } => &rounds.progress,
        };
        let mut last = cell.lock();
        match *last {
            Some(before) if progress <= before => false,
            _ => {
                *last = Some(progress);
                true
            }
        }
    }

    /// Which run of the handler this is: 0 on the first, and always in
    /// 2025-11-25; in 2026-07-28, how many `input_required` retries came
    /// before this one. A handler that asks for input runs again from the
    /// top on each retry, so work before the asking call repeats: use this
    /// (or [`request_state`](Self::request_state)) to skip what an earlier
    /// round did.
    pub fn round(&self) -> u64 {
        match &self.link {
            ClientLink::Connection { .. } => 0,
            ClientLink::Retry { rounds, .. } => rounds.round,
        }
    }

    /// Sends `notifications/message` at `level` with `data`, unless the
    /// client asked for a higher level with `logging/setLevel`.
    ///
    /// Spec: server/utilities/logging (2025-11-25).
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        self.log_with_logger(level, None, data)
    }

    /// Like [`log`](Self::log), naming the `logger`.
    pub fn log_with_logger(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: impl Into<Value>,
    ) {
        let allowed = match &self.link {
            ClientLink::Connection { .. } => {
                !matches!(self.session.state.lock().log_level, Some(min) if level < min)
            }
            // LOG-1 (2026-07-28): only when this request opted in.
            ClientLink::Retry { envelope, .. } => {
                matches!(envelope.log_level, Some(min) if level >= min)
            }
        };
        if !allowed || self.flag.is_cancelled() {
            return;
        }
        let mut params = JsonObject::new();
        params.insert("level".into(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data.into());
        self.out().send(Message::notification(
            notifications::MESSAGE,
            Some(Value::Object(params)),
        ));
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// In the 2026-07-28 era this takes its answer from the client's retry,
    /// or records the request and returns [`ErrorKind::InputRequired`] (see
    /// [`request_inputs`](Self::request_inputs)); the same holds for
    /// [`elicit`](Self::elicit) and [`list_roots`](Self::list_roots). The
    /// handler then runs again, from the top, on the retry: code before
    /// this call runs once per round ([`round`](Self::round) says which).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] if the client did not declare
    /// `sampling` (SAMP-1); otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: client/sampling (2025-11-25).
    pub fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        if !self.client_capabilities().supports_sampling() {
            return Err(missing("sampling"));
        }
        self.ask(InputRequest::create_message(params))
    }

    /// Asks the user for input (`elicitation/create`), in form or URL mode.
    ///
    /// In 2026-07-28 the handler runs again on the client's retry, from the
    /// top, so code before this call repeats: see
    /// [`create_message`](Self::create_message) and [`round`](Self::round).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] naming `elicitation.form` or
    /// `elicitation.url` if the client did not declare that mode (ELIC-1);
    /// [`ErrorKind::InvalidParams`] naming the field and the rule when the
    /// client accepts a form with content its `requestedSchema` refuses
    /// (ELIC-8); otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: client/elicitation (2025-11-25).
    pub fn elicit(&self, params: impl Into<ElicitRequestParams>) -> Result<ElicitResult, Error> {
        let params = params.into();
        let caps = self.client_capabilities();
        match &params {
            ElicitRequestParams::Form(_) if !caps.supports_elicitation_form() => {
                return Err(missing("elicitation.form"))
            }
            ElicitRequestParams::Url(_) if !caps.supports_elicitation_url() => {
                return Err(missing("elicitation.url"))
            }
            _ => {}
        }
        self.ask(InputRequest::elicit(params))
    }

    /// Tells the client a URL-mode elicitation finished
    /// (`notifications/elicitation/complete {elicitationId}`, ELIC-5).
    /// A no-op in the 2026-07-28 era, which has no such notification.
    pub fn notify_elicitation_complete(&self, elicitation_id: &str) {
        if let ClientLink::Retry { .. } = self.link {
            return;
        }
        self.out().send(Message::notification(
            notifications::ELICITATION_COMPLETE,
            Some(serde_json::json!({ "elicitationId": elicitation_id })),
        ));
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// In 2026-07-28 the handler runs again on the client's retry, from the
    /// top: see [`create_message`](Self::create_message).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] if the client did not declare
    /// `roots` (ROOT-1); otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: client/roots (2025-11-25).
    pub fn list_roots(&self) -> Result<ListRootsResult, Error> {
        if !self.client_capabilities().supports_roots() {
            return Err(missing("roots"));
        }
        self.ask(InputRequest::list_roots())
    }

    /// Asks the client for several inputs at once, under keys the handler
    /// chooses, and returns the answers by key.
    ///
    /// In the 2025-11-25 era the requests are sent to the client one by
    /// one and answered before this returns. In the 2026-07-28 era, the
    /// answers come from the client's retry: when one is missing (or does
    /// not parse), this records the requests and returns
    /// [`ErrorKind::InputRequired`], which the handler passes on with `?`;
    /// the request is answered with `input_required` and the handler runs
    /// again on the retry. Answers from earlier rounds stay available in
    /// later rounds (they travel in `requestState`), so a multi-round
    /// handler simply calls this once per round.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] if the client did not declare a
    /// capability a request needs (MRTR-2; `-32021` in the 2026-07-28 era);
    /// [`ErrorKind::InputRequired`] as above; as [`elicit`](Self::elicit)
    /// for a form's answer; otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: SEP-2322 multi round-trip requests (2026-07-28).
    pub fn request_inputs(
        &self,
        requests: Vec<(String, InputRequest)>,
    ) -> Result<InputResponses, Error> {
        let caps = self.client_capabilities();
        for (_, request) in &requests {
            let declared = match request.capability() {
                "sampling" => caps.supports_sampling(),
                "roots" => caps.supports_roots(),
                "elicitation.url" => caps.supports_elicitation_url(),
                _ => caps.supports_elicitation_form(),
            };
            if !declared {
                return Err(missing(request.capability()));
            }
        }
        // ELIC-8: accepted forms are checked before the handler sees them.
        let schemas = requested_schemas(&requests);
        if let (Some(run), Era::V2026_07_28) = (self.running_task(), self.era()) {
            let answers = tasks::ask_inputs(self, &run, requests)?;
            return check_answers(&schemas, &answers).map(|()| InputResponses(answers));
        }
        let rounds = match &self.link {
            ClientLink::Retry { rounds, .. } => rounds,
            ClientLink::Connection { .. } => {
                let timeout = self.session.server.config.client_request_timeout;
                let mut answers = JsonObject::new();
                for (key, request) in requests {
                    let answer =
                        self.send_request(&request.method, Some(request.params), timeout)?;
                    answers.insert(key, answer);
                }
                return check_answers(&schemas, &answers).map(|()| InputResponses(answers));
            }
        };
        let mut answers = JsonObject::new();
        for (key, request) in requests {
            match rounds.answers.get(&key) {
                Some(answer @ Value::Object(_)) => {
                    answers.insert(key, answer.clone());
                }
                _ => rounds.ask(&key, request),
            }
        }
        check_answers(&schemas, &answers)?;
        if !rounds.asked_anything() {
            Ok(InputResponses(answers))
        } else {
            Err(Error::new(ErrorKind::InputRequired))
        }
    }

    /// The handler's own state: what it set with
    /// [`set_request_state`](Self::set_request_state) in this run, else, in
    /// the 2026-07-28 era, what it set in the previous round (verified by
    /// the server's [`RequestStateCodec`](crate::RequestStateCodec)).
    pub fn request_state(&self) -> Option<Value> {
        match &self.link {
            ClientLink::Connection { state, .. } => state.lock().clone(),
            ClientLink::Retry { rounds, .. } => rounds.current_user_state(),
        }
    }

    /// Sets the state to carry into the next round (2026-07-28: sent in
    /// `requestState`, protected by the server's codec).
    pub fn set_request_state(&self, state: Value) {
        match &self.link {
            ClientLink::Connection { state: own, .. } => *own.lock() = Some(state),
            ClientLink::Retry { rounds, .. } => *rounds.new_user_state.lock() = Some(state),
        }
    }

    /// A blocking call to the client: sent and awaited on a connection;
    /// in the 2026-07-28 era, its answer from the retry, or `InputRequired`
    /// after recording it under the next positional key.
    /// An accepted form's answer is checked against the form's schema
    /// before it is returned (ELIC-8).
    fn ask<T: DeserializeOwned>(&self, request: InputRequest) -> Result<T, Error> {
        let schema = requested_schema(&request).cloned();
        let check = |answer: &Value| match &schema {
            Some(schema) => check_answer(schema, answer, None),
            None => Ok(()),
        };
        let rounds = match &self.link {
            ClientLink::Retry { rounds, .. } => rounds,
            ClientLink::Connection { .. } => {
                let timeout = self.session.server.config.client_request_timeout;
                let answer = self.send_request(&request.method, Some(request.params), timeout)?;
                check(&answer)?;
                return Ok(serde_json::from_value(answer)?);
            }
        };
        let key = rounds.next_key();
        if let Some(run) = self.running_task() {
            let mut answers = tasks::ask_inputs(self, &run, vec![(key.clone(), request)])?;
            let answer = answers.remove(&key).unwrap_or(Value::Null);
            check(&answer)?;
            return Ok(serde_json::from_value(answer)?);
        }
        if let Some(answer) = rounds.answers.get(&key) {
            if let Ok(parsed) = serde_json::from_value(answer.clone()) {
                check(answer)?;
                return Ok(parsed);
            }
        }
        rounds.ask(&key, request);
        Err(Error::new(ErrorKind::InputRequired))
    }

    /// Sends a request to the client and blocks until it answers.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::Cancelled`] when this request is cancelled meanwhile
    ///   (the client is sent `notifications/cancelled` for ours);
    /// - [`ErrorKind::Timeout`] after `timeout` (likewise, LC-6);
    /// - [`ErrorKind::Peer`] when the client answers with an error;
    /// - [`ErrorKind::Closed`] when the connection is gone;
    /// - [`ErrorKind::Message`] in the 2026-07-28 era, where servers send
    ///   no requests (use [`request_inputs`](Self::request_inputs)).
    pub fn send_request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, Error> {
        self.check_cancelled()?;
        if self.quick {
            // Its answer would arrive on the thread that runs this call.
            return Err(Error::msg(format!(
                "{} cannot be sent from a quick tool (ServerBuilder::quick_tool): \
                 register the tool with `tool` to ask the client",
                method
            )));
        }
        crate::server::waiting::check_answerable(method)?;
        if let (Some(run), ClientLink::Connection { .. }) = (self.running_task(), &self.link) {
            return tasks::send_request(self, &run, method, params);
        }
        if let ClientLink::Retry { .. } = self.link {
            // GEN-5: no requests to the client in the 2026-07-28 era.
            return Err(Error::msg(format!(
                "{} cannot be sent in the 2026-07-28 era; use request_inputs",
                method
            )));
        }
        let session = &self.session;
        let id = session.next_request_id();
        let (sender, receiver) = crossbeam_channel::bounded(1);
        session.pending.lock().insert(id.clone(), sender);
        if !session.in_flight.add_nested(&self.request_id, id.clone()) {
            // Cancelled between the check above and now.
            session.pending.lock().remove(&id);
            return Err(Error::cancelled(self.flag.reason()));
        }
        let sent = self.sink.send(Message::request(id.clone(), method, params));
        let outcome = if sent {
            crate::server::waiting::await_answer(&receiver, timeout)
        } else {
            Err(RecvTimeoutError::Disconnected)
        };
        session.in_flight.remove_nested(&self.request_id, &id);
        match outcome {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => {
                session.cancel_nested(vec![id], Some("timed out"), Some(&self.sink));
                Err(Error::new(ErrorKind::Timeout {
                    method: method.to_string(),
                    after: timeout,
                }))
            }
            Err(RecvTimeoutError::Disconnected) => {
                session.pending.lock().remove(&id);
                Err(Error::new(ErrorKind::Closed))
            }
        }
    }
}

fn missing(capability: &str) -> Error {
    Error::new(ErrorKind::CapabilityMissing {
        capability: capability.to_string(),
    })
}

/// A JSON number, written as an integer when it is one (`50`, not `50.0`).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}
