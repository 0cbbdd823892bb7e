//! Routing of incoming messages and the lifecycle state machine.
//!
//! [`Session::receive`] is called by a transport on its reading thread for
//! every message from the client. Cheap requests (`ping`, the list methods,
//! `logging/setLevel`, subscriptions) are answered right there. Requests
//! that run a program's handler (`tools/call`, `prompts/get`,
//! `resources/read`, `completion/complete`) are entered in the in-flight
//! table on the reading thread, so that a cancel arriving next finds them,
//! and returned as a [`Job`] for the transport to run on a worker.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::listen::SubscriptionFilter;
use super::modern::{self, Envelope};
use super::mrtr::Rounds;
use super::registry::{Registry, Resolved};
use super::{RequestContext, RequestOutcome, RequestStatus};
use crate::cancel::{BeginError, CancellationFlag};
use crate::jsonrpc::{ErrorObject, JsonObject, Message, Request, RequestId, Response};
use crate::protocol::{
    methods, notifications, versions, CallToolRequestParams, CallToolResult,
    CancelledNotificationParams, CompleteRequestParams, GetPromptRequestParams,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    SetLevelRequestParams,
};
use crate::session::{Era, Session};
use crate::transport::Sink;
use crate::{Error, ErrorKind};

/// A request whose handler must run; `run` it on any thread.
pub(crate) struct Job {
    session: Arc<Session>,
    request: Request,
    flag: CancellationFlag,
    sink: Arc<dyn Sink>,
    started: Instant,
    /// The envelope of a 2026-07-28 request.
    modern: Option<Arc<Envelope>>,
}

type Answer = Result<Value, ErrorObject>;

/// How a handler run ended, short of a result.
enum Failure {
    /// Send this error.
    Rpc(ErrorObject),
    /// Answer `input_required` (2026-07-28).
    InputRequired,
}

impl From<ErrorObject> for Failure {
    fn from(e: ErrorObject) -> Self {
        Failure::Rpc(e)
    }
}

impl Session {
    /// Handles one message from the client. Responses go to `sink`.
    ///
    /// Returns a [`Job`] when a handler must run; the caller runs it.
    pub(crate) fn receive(self: &Arc<Self>, message: Message, sink: &Arc<dyn Sink>) -> Option<Job> {
        match message {
            Message::Request(request) => self.receive_request(request, sink),
            Message::Notification(notification) => {
                self.receive_notification(&notification.method, notification.params);
                None
            }
            Message::Response(response) => {
                self.receive_response(response);
                None
            }
        }
    }

    fn receive_request(self: &Arc<Self>, request: Request, sink: &Arc<dyn Sink>) -> Option<Job> {
        let started = Instant::now();
        log::debug!("< request {} {}", request.id, request.method);
        let claim = modern::is_modern_claim(&request);
        let era = {
            let mut state = self.state.lock();
            *state
                .era
                .get_or_insert(if claim { Era::Modern } else { Era::Legacy })
        };
        if era == Era::Modern {
            return self.receive_modern(request, sink, started);
        }
        let method = request.method.as_str();
        let answer: Answer = if claim {
            // ERA-6: a modern request on a handshake-era connection.
            Err(ErrorObject::invalid_request(
                "this connection uses the 2025-11-25 handshake era (initialize); \
                 requests with a 2026-07-28 _meta envelope are not accepted on it",
            ))
        } else if method == methods::INITIALIZE {
            self.initialize(request.params)
        } else if method == methods::PING {
            Ok(empty())
        } else if !self.is_initialized() {
            Err(ErrorObject::invalid_request(format!(
                "{} before initialize: send initialize first",
                method
            )))
        } else {
            match method {
                methods::TOOLS_CALL
                | methods::PROMPTS_GET
                | methods::RESOURCES_READ
                | methods::COMPLETION_COMPLETE => {
                    if method == methods::COMPLETION_COMPLETE && self.server.completion.is_none() {
                        Err(ErrorObject::method_not_found(method))
                    } else {
                        match self.in_flight.begin(&request.id, Arc::clone(sink)) {
                            Ok(flag) => {
                                return Some(Job {
                                    session: Arc::clone(self),
                                    request,
                                    flag,
                                    sink: Arc::clone(sink),
                                    started,
                                    modern: None,
                                })
                            }
                            Err(BeginError::Duplicate) => Err(ErrorObject::invalid_request(
                                format!("request id {} is already in flight", request.id),
                            )),
                            Err(BeginError::Full) => Err(ErrorObject::internal(
                                "too many requests in flight; retry later",
                            )),
                        }
                    }
                }
                methods::TOOLS_LIST => self.list_tools(request.params),
                methods::PROMPTS_LIST => self.list_prompts(request.params),
                methods::RESOURCES_LIST => self.list_resources(request.params),
                methods::RESOURCES_TEMPLATES_LIST => self.list_templates(request.params),
                methods::LOGGING_SET_LEVEL => self.set_level(request.params),
                methods::RESOURCES_SUBSCRIBE => self.subscribe(request.params, true),
                methods::RESOURCES_UNSUBSCRIBE => self.subscribe(request.params, false),
                _ => Err(ErrorObject::method_not_found(method)),
            }
        };
        self.respond(sink, request.id, request.method, started, answer);
        None
    }

    /// Sends an inline answer and reports it.
    fn respond(
        &self,
        sink: &Arc<dyn Sink>,
        id: RequestId,
        method: String,
        started: Instant,
        answer: Answer,
    ) {
        let status = match &answer {
            Ok(_) => RequestStatus::Ok,
            Err(e) => RequestStatus::Error(e.code),
        };
        sink.send(Message::Response(Response {
            id: Some(id),
            outcome: answer,
        }));
        self.server.report(&RequestOutcome {
            method,
            duration: started.elapsed(),
            status,
        });
    }

    /// A request of the 2026-07-28 era (MOD-*, VER-*, META-*).
    fn receive_modern(
        self: &Arc<Self>,
        request: Request,
        sink: &Arc<dyn Sink>,
        started: Instant,
    ) -> Option<Job> {
        let answer = match self.modern_answer(&request, sink) {
            Ok(Some(envelope)) => {
                // A handler must run.
                return match self.in_flight.begin(&request.id, Arc::clone(sink)) {
                    Ok(flag) => Some(Job {
                        session: Arc::clone(self),
                        request,
                        flag,
                        sink: Arc::clone(sink),
                        started,
                        modern: Some(Arc::new(envelope)),
                    }),
                    Err(BeginError::Duplicate) => {
                        let message = format!("request id {} is already in flight", request.id);
                        self.respond(
                            sink,
                            request.id,
                            request.method,
                            started,
                            Err(ErrorObject::invalid_request(message)),
                        );
                        None
                    }
                    Err(BeginError::Full) => {
                        let error =
                            ErrorObject::internal("too many requests in flight; retry later");
                        self.respond(sink, request.id, request.method, started, Err(error));
                        None
                    }
                };
            }
            // A listen stream is open; its answer comes when it ends.
            Ok(None) => return None,
            Err(answer) => answer,
        };
        self.respond(sink, request.id, request.method, started, answer);
        None
    }

    /// Checks a modern request and answers what needs no handler.
    /// `Ok(Some(envelope))`: run the handler; `Ok(None)`: a listen stream
    /// was opened; `Err(answer)`: send `answer`.
    fn modern_answer(
        self: &Arc<Self>,
        request: &Request,
        sink: &Arc<dyn Sink>,
    ) -> Result<Option<Envelope>, Answer> {
        let method = request.method.as_str();
        if method == methods::INITIALIZE {
            // ERA-5: initialize on a connection locked to 2026-07-28.
            let requested = request
                .params
                .as_ref()
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(Err(modern::unsupported_version(requested)));
        }
        let envelope = modern::read_envelope(request.params.as_ref()).map_err(Err)?;
        modern::check_version(&envelope.version).map_err(Err)?;
        let server = &self.server;
        let caps = &server.capabilities;
        let info = &server.info;
        let cache = Some(server.cache);
        let gate = |offered: bool| {
            if offered {
                Ok(())
            } else {
                Err(Err(ErrorObject::method_not_found(method)))
            }
        };
        let params = request.params.clone();
        let listed = |answer: Answer| -> Result<Option<Envelope>, Answer> {
            Err(answer.map(|v| modern::decorate(v, info, cache)))
        };
        match method {
            methods::SERVER_DISCOVER => {
                let mut result = serde_json::json!({
                    "supportedVersions": crate::protocol::versions::MODERN,
                    "capabilities": caps,
                });
                if let Some(instructions) = &server.instructions {
                    result["instructions"] = Value::from(instructions.as_str());
                }
                Err(Ok(modern::decorate(result, info, cache)))
            }
            methods::TOOLS_LIST => {
                gate(caps.tools.is_some())?;
                listed(self.list_tools(params))
            }
            methods::PROMPTS_LIST => {
                gate(caps.prompts.is_some())?;
                listed(self.list_prompts(params))
            }
            methods::RESOURCES_LIST => {
                gate(caps.resources.is_some())?;
                listed(self.list_resources(params))
            }
            methods::RESOURCES_TEMPLATES_LIST => {
                gate(caps.resources.is_some())?;
                listed(self.list_templates(params))
            }
            methods::TOOLS_CALL => gate(caps.tools.is_some()).map(|()| Some(envelope)),
            methods::PROMPTS_GET => gate(caps.prompts.is_some()).map(|()| Some(envelope)),
            methods::RESOURCES_READ => gate(caps.resources.is_some()).map(|()| Some(envelope)),
            methods::COMPLETION_COMPLETE => {
                gate(caps.completions.is_some() && server.completion.is_some())
                    .map(|()| Some(envelope))
            }
            methods::SUBSCRIPTIONS_LISTEN => {
                let filter: SubscriptionFilter = params
                    .as_ref()
                    .and_then(|p| p.get("notifications"))
                    .ok_or_else(|| {
                        Err(ErrorObject::invalid_params(
                            "subscriptions/listen needs params.notifications",
                        ))
                    })
                    .and_then(|n| {
                        serde_json::from_value(n.clone()).map_err(|e| {
                            Err(ErrorObject::invalid_params(format!(
                                "invalid notifications: {}",
                                e
                            )))
                        })
                    })?;
                let honoured = filter.honoured(caps);
                match server
                    .listen
                    .open(self.key, request.id.clone(), honoured, Arc::clone(sink))
                {
                    Some(key) => {
                        self.listen_keys.lock().push(key);
                        Ok(None)
                    }
                    None => Err(Err(ErrorObject::internal(
                        "too many listen streams; try again later",
                    ))),
                }
            }
            // REM-1: removed in 2026-07-28, and anything unknown.
            _ => Err(Err(ErrorObject::method_not_found(method))),
        }
    }

    fn receive_notification(&self, method: &str, params: Option<Value>) {
        log::debug!("< notification {}", method);
        match method {
            notifications::CANCELLED => {
                // CAN-2: malformed cancels are ignored silently.
                let params: CancelledNotificationParams = match params.map(serde_json::from_value) {
                    Some(Ok(p)) => p,
                    _ => return,
                };
                let id = match params.request_id.as_ref().and_then(RequestId::from_value) {
                    Some(id) => id,
                    None => return,
                };
                if self.server.listen.cancel(self.key, &id) {
                    // LISTEN-10: a listen stream ends without a word.
                    return;
                }
                if let Some(entry) = self.in_flight.cancel(&id, params.reason.clone()) {
                    log::debug!(
                        "request {} cancelled: {}",
                        id,
                        params.reason.as_deref().unwrap_or("no reason given")
                    );
                    self.cancel_nested(entry.nested, params.reason.as_deref(), Some(&entry.sink));
                }
            }
            notifications::INITIALIZED | notifications::ROOTS_LIST_CHANGED => {}
            _ => log::debug!("ignoring notification {}", method),
        }
    }

    fn receive_response(&self, response: Response) {
        let id = match response.id {
            Some(id) => id,
            None => {
                log::warn!(
                    "the client sent an error without an id: {:?}",
                    response.outcome
                );
                return;
            }
        };
        let waiter = self.pending.lock().remove(&id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(
                    response
                        .outcome
                        .map_err(|e| Error::new(ErrorKind::Client(e))),
                );
            }
            None => log::debug!("dropping an answer to {}, which no one waits for", id),
        }
    }

    /// LC-1, LC-2, LC-8: negotiate once; a second `initialize` changes nothing.
    fn initialize(&self, params: Option<Value>) -> Answer {
        let params: InitializeRequestParams = parse_params(params)?;
        let protocol_version = if versions::is_supported(&params.protocol_version) {
            params.protocol_version.clone()
        } else {
            versions::LATEST.to_string()
        };
        {
            let mut state = self.state.lock();
            if state.initialized {
                return Err(ErrorObject::invalid_request(
                    "the session is already initialized",
                ));
            }
            state.initialized = true;
            state.protocol_version = protocol_version.clone();
            state.client_info = Some(params.client_info);
            state.client_capabilities = params.capabilities;
        }
        let server = &self.server;
        to_value(InitializeResult {
            protocol_version,
            capabilities: server.capabilities.clone(),
            server_info: server.info.clone(),
            instructions: server.instructions.clone(),
            meta: None,
        })
    }

    fn list_tools(&self, params: Option<Value>) -> Answer {
        let (tools, next_cursor) = self.list(params, |r| &r.tools, |e| e.tool.clone())?;
        to_value(ListToolsResult { tools, next_cursor })
    }

    fn list_prompts(&self, params: Option<Value>) -> Answer {
        let (prompts, next_cursor) = self.list(params, |r| &r.prompts, |e| e.prompt.clone())?;
        to_value(ListPromptsResult {
            prompts,
            next_cursor,
        })
    }

    fn list_resources(&self, params: Option<Value>) -> Answer {
        let (resources, next_cursor) =
            self.list(params, |r| &r.resources, |e| e.resource.clone())?;
        to_value(ListResourcesResult {
            resources,
            next_cursor,
        })
    }

    fn list_templates(&self, params: Option<Value>) -> Answer {
        let (resource_templates, next_cursor) =
            self.list(params, |r| &r.templates, |e| e.template.clone())?;
        to_value(ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
        })
    }

    /// One page of a registry list, read under the registry's lock.
    fn list<E, T>(
        &self,
        params: Option<Value>,
        items: impl Fn(&Registry) -> &Vec<Arc<E>>,
        map: impl Fn(&E) -> T,
    ) -> Result<(Vec<T>, Option<String>), ErrorObject> {
        let cursor = cursor(params)?;
        let registry = self.server.registry.read();
        page(items(&registry), cursor, self.server.config.page_size, map)
    }

    /// LOG-2: store the level; an unknown level is `-32602`.
    fn set_level(&self, params: Option<Value>) -> Answer {
        let params: SetLevelRequestParams = parse_params(params)?;
        self.state.lock().log_level = Some(params.level);
        Ok(empty())
    }

    /// RES-3: remember or forget a subscribed URI for this session.
    fn subscribe(&self, params: Option<Value>, on: bool) -> Answer {
        if self.server.capabilities.resources.is_none() {
            return Err(ErrorObject::method_not_found(if on {
                methods::RESOURCES_SUBSCRIBE
            } else {
                methods::RESOURCES_UNSUBSCRIBE
            }));
        }
        let params: ReadResourceRequestParams = parse_params(params)?;
        let mut state = self.state.lock();
        if on {
            if state.subscriptions.len() >= self.server.config.max_subscriptions
                && !state.subscriptions.contains(&params.uri)
            {
                return Err(ErrorObject::invalid_params(
                    "too many resource subscriptions for this session",
                ));
            }
            state.subscriptions.insert(params.uri);
        } else {
            state.subscriptions.remove(&params.uri);
        }
        Ok(empty())
    }
}

impl Job {
    /// Runs the handler and writes the response, unless a cancel won.
    pub(crate) fn run(self) {
        let Job {
            session,
            mut request,
            flag,
            sink,
            started,
            modern,
        } = self;
        let meta = request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .cloned();
        let rounds = match &modern {
            Some(_) => match read_rounds(&session, &request) {
                Ok(rounds) => Some(rounds),
                Err(error) => {
                    finish(&session, request, &flag, &sink, started, Err(error));
                    return;
                }
            },
            None => None,
        };
        let ctx = RequestContext {
            session: Arc::clone(&session),
            request_id: request.id.clone(),
            method: request.method.clone(),
            flag: flag.clone(),
            sink: Arc::clone(&sink),
            meta,
            modern: modern.zip(rounds),
            legacy_state: parking_lot::Mutex::new(None),
        };
        // The modern era still needs the params for `input_required`.
        let params = if ctx.modern.is_some() {
            request.params.clone()
        } else {
            request.params.take()
        };
        let outcome =
            catch_unwind(AssertUnwindSafe(|| run_handler(&ctx, params))).unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                log::error!("handler for {} panicked: {}", request.method, what);
                Err(Failure::Rpc(ErrorObject::internal(
                    "the handler failed unexpectedly",
                )))
            });
        let answer = match (outcome, &ctx.modern) {
            (Ok(value), Some((_, rounds))) => {
                if !rounds.asked.lock().is_empty() {
                    log::warn!(
                        "the {} handler asked the client for input but returned a result; \
                         pass ErrorKind::InputRequired on with `?`",
                        request.method
                    );
                }
                let cache = if request.method == methods::RESOURCES_READ {
                    Some(session.server.cache)
                } else {
                    None
                };
                Ok(modern::decorate(value, &session.server.info, cache))
            }
            (Ok(value), None) => Ok(value),
            (Err(Failure::Rpc(error)), _) => Err(error),
            (Err(Failure::InputRequired), Some((_, rounds))) => {
                input_required(&session, &request, rounds)
            }
            (Err(Failure::InputRequired), None) => Err(ErrorObject::internal(
                "the handler asked for input outside the 2026-07-28 era",
            )),
        };
        drop(ctx);
        finish(&session, request, &flag, &sink, started, answer);
    }
}

/// Writes the response unless a cancel won, and reports the outcome.
fn finish(
    session: &Arc<Session>,
    request: Request,
    flag: &CancellationFlag,
    sink: &Arc<dyn Sink>,
    started: Instant,
    answer: Answer,
) {
    let status = if session.in_flight.finish(&request.id).is_some() {
        let status = match &answer {
            Ok(_) => RequestStatus::Ok,
            Err(e) => RequestStatus::Error(e.code),
        };
        log::debug!("> response {} {}", request.id, request.method);
        sink.send(Message::Response(Response {
            id: Some(request.id),
            outcome: answer,
        }));
        status
    } else {
        // The cancel won: no response (CAN-1).
        sink.end();
        RequestStatus::Cancelled {
            reason: flag.reason(),
        }
    };
    session.server.report(&RequestOutcome {
        method: request.method,
        duration: started.elapsed(),
        status,
    });
}

/// The name a request's `requestState` is bound to: the tool or prompt
/// name, or the resource URI.
fn request_target(request: &Request) -> Value {
    let params = request.params.as_ref();
    params
        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
        .cloned()
        .unwrap_or(Value::Null)
}

/// MRTR-3, MRTR-5: the answers and state a retry carries.
fn read_rounds(session: &Session, request: &Request) -> Result<Rounds, ErrorObject> {
    let params = request.params.as_ref();
    let mut answers = match params.and_then(|p| p.get("inputResponses")) {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object",
            ))
        }
    };
    let mut user_state = None;
    match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => {}
        Some(Value::String(token)) => {
            let state =
                session.server.state_codec.decode(token).map_err(|e| {
                    ErrorObject::invalid_params(format!("invalid requestState: {}", e))
                })?;
            if state.get("method").and_then(Value::as_str) != Some(request.method.as_str())
                || state.get("target") != Some(&request_target(request))
            {
                return Err(ErrorObject::invalid_params(
                    "requestState belongs to another request",
                ));
            }
            if let Some(Value::Object(earlier)) = state.get("answers") {
                for (key, value) in earlier {
                    answers.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            user_state = state.get("user").cloned().filter(|v| !v.is_null());
        }
        Some(_) => return Err(ErrorObject::invalid_params("requestState must be a string")),
    }
    Ok(Rounds::new(answers, user_state))
}

/// MRTR-1..3: `{"resultType": "input_required", "inputRequests",
/// "requestState"}`, the state carrying every answer so far.
fn input_required(session: &Session, request: &Request, rounds: &Rounds) -> Answer {
    let mut input_requests = JsonObject::new();
    for (key, input) in rounds.asked.lock().iter() {
        input_requests.insert(
            key.clone(),
            serde_json::json!({ "method": input.method, "params": input.params }),
        );
    }
    let user = rounds
        .new_user_state
        .lock()
        .clone()
        .or_else(|| rounds.user_state.clone());
    let state = serde_json::json!({
        "method": request.method,
        "target": request_target(request),
        "answers": rounds.answers,
        "user": user,
    });
    let token = session
        .server
        .state_codec
        .encode(&state)
        .map_err(|e| ErrorObject::internal(format!("cannot encode requestState: {}", e)))?;
    let mut result = JsonObject::new();
    result.insert("resultType".into(), Value::from("input_required"));
    if !input_requests.is_empty() {
        result.insert("inputRequests".into(), Value::Object(input_requests));
    }
    result.insert("requestState".into(), Value::from(token));
    modern::stamp(&mut result, &session.server.info);
    Ok(Value::Object(result))
}

fn run_handler(ctx: &RequestContext, params: Option<Value>) -> Result<Value, Failure> {
    let server = &ctx.session.server;
    match ctx.method.as_str() {
        methods::TOOLS_CALL => {
            let params: CallToolRequestParams = parse_params(params)?;
            let entry = server.registry.read().tool(&params.name);
            let entry = entry.ok_or_else(|| {
                ErrorObject::invalid_params(format!("unknown tool: {}", params.name))
            })?;
            let arguments = params.arguments.unwrap_or_default();
            let result =
                match super::validate::check_arguments(&entry.tool.input_schema, &arguments) {
                    Err(problem) => CallToolResult::error(format!(
                        "invalid arguments for tool {}: {}",
                        params.name, problem
                    )),
                    Ok(()) => match entry.handler.call(ctx, arguments) {
                        Ok(result) => result,
                        Err(e) => tool_error(ctx, e)?,
                    },
                };
            Ok(to_value(result)?)
        }
        methods::PROMPTS_GET => {
            let params: GetPromptRequestParams = parse_params(params)?;
            let entry = server.registry.read().prompt(&params.name);
            let entry = entry.ok_or_else(|| {
                ErrorObject::invalid_params(format!("unknown prompt: {}", params.name))
            })?;
            let arguments: BTreeMap<String, String> = params.arguments.unwrap_or_default();
            for argument in entry.prompt.arguments.iter().flatten() {
                if argument.required == Some(true) && !arguments.contains_key(&argument.name) {
                    return Err(ErrorObject::invalid_params(format!(
                        "missing required argument {} for prompt {}",
                        argument.name, params.name
                    ))
                    .into());
                }
            }
            let result = entry
                .handler
                .get(ctx, arguments)
                .map_err(|e| handler_error(ctx, e))?;
            Ok(to_value(result)?)
        }
        methods::RESOURCES_READ => {
            let params: ReadResourceRequestParams = parse_params(params)?;
            let resolved = server.registry.read().resolve(&params.uri);
            let result = match resolved {
                Some(Resolved::Resource(entry)) => entry.handler.read(ctx, &params.uri),
                Some(Resolved::Template(entry, vars)) => {
                    entry.handler.read(ctx, &params.uri, &vars)
                }
                None => Err(Error::resource_not_found(params.uri.clone())),
            };
            Ok(to_value(result.map_err(|e| handler_error(ctx, e))?)?)
        }
        methods::COMPLETION_COMPLETE => {
            let params: CompleteRequestParams = parse_params(params)?;
            let handler = server
                .completion
                .as_ref()
                .ok_or_else(|| ErrorObject::method_not_found(methods::COMPLETION_COMPLETE))?;
            let result = handler
                .complete(ctx, params)
                .map_err(|e| handler_error(ctx, e))?;
            Ok(to_value(result)?)
        }
        other => Err(ErrorObject::method_not_found(other).into()),
    }
}

/// A handler's error as the failure this era sends.
fn handler_error(ctx: &RequestContext, error: Error) -> Failure {
    // MRTR-1: only these methods may answer input_required.
    let may_ask = matches!(
        ctx.method.as_str(),
        methods::TOOLS_CALL | methods::PROMPTS_GET | methods::RESOURCES_READ
    );
    match (error.kind(), ctx.is_stateless()) {
        (ErrorKind::InputRequired, true) if may_ask => Failure::InputRequired,
        (_, true) => Failure::Rpc(modern::error_object(&error)),
        (_, false) => Failure::Rpc(error.to_error_object()),
    }
}

/// TOOL-6: a tool's failure is a result with `isError: true`, except the
/// errors that must reach the client otherwise: JSON-RPC errors the handler
/// chose, `-32042`, and in the 2026-07-28 era `input_required` and
/// `-32021`.
fn tool_error(ctx: &RequestContext, error: Error) -> Result<CallToolResult, Failure> {
    match error.kind() {
        ErrorKind::Rpc(_) => Err(handler_error(ctx, error)),
        ErrorKind::UrlElicitationRequired(_) if !ctx.is_stateless() => {
            Err(handler_error(ctx, error))
        }
        ErrorKind::InputRequired | ErrorKind::CapabilityMissing { .. } if ctx.is_stateless() => {
            Err(handler_error(ctx, error))
        }
        _ => Ok(CallToolResult::error(error.to_string())),
    }
}

fn empty() -> Value {
    Value::Object(JsonObject::new())
}

fn to_value<T: Serialize>(value: T) -> Answer {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot serialize the result: {}", e)))
}

/// Reads params; absent params read as `{}`.
pub(crate) fn parse_params<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(params.unwrap_or_else(empty))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params: {}", e)))
}

fn cursor(params: Option<Value>) -> Result<Option<String>, ErrorObject> {
    let params: PaginatedRequestParams = parse_params(params)?;
    Ok(params.cursor)
}

/// One page of `items` from the opaque `cursor` (PAG-1, PAG-2).
fn page<E, T>(
    items: &[Arc<E>],
    cursor: Option<String>,
    size: usize,
    map: impl Fn(&E) -> T,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => match c.strip_prefix("o:").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n <= items.len() => n,
            _ => {
                return Err(ErrorObject::invalid_params(format!(
                    "invalid cursor: {}",
                    c
                )))
            }
        },
    };
    let end = (start + size).min(items.len());
    let next = if end < items.len() {
        Some(format!("o:{}", end))
    } else {
        None
    };
    Ok((items[start..end].iter().map(|e| map(e)).collect(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    // PAG-1, PAG-2: pages follow the cursor; a bad cursor is -32602.
    #[test]
    fn pages_and_cursors() {
        let items: Vec<Arc<u32>> = (0..5).map(Arc::new).collect();
        let (first, next) = page(&items, None, 2, |x| *x).unwrap();
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next, 2, |x| *x).unwrap();
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next, 2, |x| *x).unwrap();
        assert_eq!((last, next), (vec![4], None));
        let err = page(&items, Some("nope".into()), 2, |x| *x).unwrap_err();
        assert_eq!(err.code, crate::jsonrpc::ErrorCode::INVALID_PARAMS);
        assert!(page(&items, Some("o:9".into()), 2, |x| *x).is_err());
    }
}
