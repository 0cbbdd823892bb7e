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

use super::registry::Resolved;
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
use crate::session::Session;
use crate::transport::Sink;
use crate::{Error, ErrorKind};

/// A request whose handler must run; `run` it on any thread.
pub(crate) struct Job {
    session: Arc<Session>,
    request: Request,
    flag: CancellationFlag,
    sink: Arc<dyn Sink>,
    started: Instant,
}

type Answer = Result<Value, ErrorObject>;

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
        let method = request.method.as_str();
        let answer: Answer = if method == methods::INITIALIZE {
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
        let status = match &answer {
            Ok(_) => RequestStatus::Ok,
            Err(e) => RequestStatus::Error(e.code),
        };
        sink.send(Message::Response(Response {
            id: Some(request.id),
            outcome: answer,
        }));
        self.server.report(&RequestOutcome {
            method: request.method,
            duration: started.elapsed(),
            status,
        });
        None
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
        let cursor = cursor(params)?;
        let registry = self.server.registry.read();
        let (tools, next_cursor) =
            page(&registry.tools, cursor, self.server.config.page_size, |e| {
                e.tool.clone()
            })?;
        drop(registry);
        to_value(ListToolsResult { tools, next_cursor })
    }

    fn list_prompts(&self, params: Option<Value>) -> Answer {
        let cursor = cursor(params)?;
        let registry = self.server.registry.read();
        let (prompts, next_cursor) = page(
            &registry.prompts,
            cursor,
            self.server.config.page_size,
            |e| e.prompt.clone(),
        )?;
        drop(registry);
        to_value(ListPromptsResult {
            prompts,
            next_cursor,
        })
    }

    fn list_resources(&self, params: Option<Value>) -> Answer {
        let cursor = cursor(params)?;
        let registry = self.server.registry.read();
        let (resources, next_cursor) = page(
            &registry.resources,
            cursor,
            self.server.config.page_size,
            |e| e.resource.clone(),
        )?;
        drop(registry);
        to_value(ListResourcesResult {
            resources,
            next_cursor,
        })
    }

    fn list_templates(&self, params: Option<Value>) -> Answer {
        let cursor = cursor(params)?;
        let registry = self.server.registry.read();
        let (resource_templates, next_cursor) = page(
            &registry.templates,
            cursor,
            self.server.config.page_size,
            |e| e.template.clone(),
        )?;
        drop(registry);
        to_value(ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
        })
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
            request,
            flag,
            sink,
            started,
        } = self;
        let meta = request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .cloned();
        let ctx = RequestContext {
            session: Arc::clone(&session),
            request_id: request.id.clone(),
            method: request.method.clone(),
            flag: flag.clone(),
            sink: Arc::clone(&sink),
            meta,
        };
        let params = request.params;
        let answer =
            catch_unwind(AssertUnwindSafe(|| run_handler(&ctx, params))).unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                log::error!("handler for {} panicked: {}", request.method, what);
                Err(ErrorObject::internal("the handler failed unexpectedly"))
            });
        drop(ctx);
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
}

fn run_handler(ctx: &RequestContext, params: Option<Value>) -> Answer {
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
                        Err(e) => tool_error(e)?,
                    },
                };
            to_value(result)
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
                    )));
                }
            }
            let result = entry
                .handler
                .get(ctx, arguments)
                .map_err(|e| e.to_error_object())?;
            to_value(result)
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
            to_value(result.map_err(|e| e.to_error_object())?)
        }
        methods::COMPLETION_COMPLETE => {
            let params: CompleteRequestParams = parse_params(params)?;
            let handler = server
                .completion
                .as_ref()
                .ok_or_else(|| ErrorObject::method_not_found(methods::COMPLETION_COMPLETE))?;
            to_value(
                handler
                    .complete(ctx, params)
                    .map_err(|e| e.to_error_object())?,
            )
        }
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// TOOL-6: a tool's failure is a result with `isError: true`, except the
/// errors that must reach the client as JSON-RPC errors.
fn tool_error(error: Error) -> Result<CallToolResult, ErrorObject> {
    match error.kind() {
        ErrorKind::Rpc(_) | ErrorKind::UrlElicitationRequired(_) => Err(error.to_error_object()),
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
