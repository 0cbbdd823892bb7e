//! Running a handler on a worker (the `Runs::Worker` rows of the method
//! table): the four handler calls, the TOOL-6 rule for tool failures, and
//! writing the response unless a cancel won.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use serde_json::Value;

use super::caller::Caller;
use super::context::{ClientLink, RequestContext};
use super::dispatch::{Arrival, Job, Started};
use super::inline::{parse_params, to_value};
use super::methods::{Failure, Reply, WorkerFn};
use super::registry::{Resolved, ToolEntry};
use super::tasks::{self, TaskSlot};
use super::{input, intercept};
use super::{RequestOutcome, RequestStatus};
use crate::cancel::CancellationFlag;
use crate::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use crate::protocol::{
    CallToolRequestParams, CallToolResult, Era, GetPromptRequestParams, ReadResourceRequestParams,
};
use crate::server::{Sink, ToolAnswer};
use crate::session::Session;
use crate::{Error, ErrorKind};

impl Job {
    /// Runs the handler and writes the response, unless a cancel won.
    pub(crate) fn run(self) {
        let Job {
            session,
            method,
            call,
            mut request,
            flag,
            sink,
            arrival,
            envelope,
            quick,
            tracked,
        } = self;
        let ticket = (&flag, tracked);
        let Arrival { started, caller } = arrival;
        if flag.is_cancelled() {
            // Cancelled while it waited for a worker: the handler never
            // runs, and the cancel already won (no response).
            return finish(
                &session,
                request,
                ticket,
                &sink,
                (started, caller),
                Ok(Reply::Value(Value::Null)),
            );
        }
        let link = match envelope {
            Some(envelope) => match input::read_rounds(&session, &request, &caller) {
                Ok(rounds) => ClientLink::Retry {
                    envelope: *envelope,
                    rounds,
                },
                Err(error) => {
                    let arrival = (started, caller);
                    return finish(&session, request, ticket, &sink, arrival, Err(error));
                }
            },
            None => ClientLink::connection(request.params.as_ref()),
        };
        let params = request.params.take();
        if let ClientLink::Retry { .. } = link {
            // `input_required` binds its state to these (2026-07-28).
            request.params = input::binding_params(params.as_ref());
        }
        let ctx = RequestContext {
            session: Arc::clone(&session),
            request_id: request.id.clone(),
            method,
            flag: flag.clone(),
            sink: Arc::clone(&sink),
            link,
            caller,
            quick,
            task: parking_lot::Mutex::new(TaskSlot::No),
        };
        let running = Running::enter(session.key(), &request.id);
        let outcome = invoke(&ctx, call, params);
        drop(running);
        let answer = conclude(&ctx, &request, outcome);
        if let Some(run) = ctx.running_task() {
            // Answered when the task started: the result is the task's.
            return tasks::settle(&ctx, &run, answer);
        }
        let caller = ctx.caller.clone();
        drop(ctx);
        finish(&session, request, ticket, &sink, (started, caller), answer);
    }
}

/// Runs the handler through the interceptors; a panic is `-32603`.
fn invoke(ctx: &RequestContext, call: WorkerFn, params: Option<Value>) -> Result<Reply, Failure> {
    let interceptors = &ctx.session.server.interceptors;
    catch_unwind(AssertUnwindSafe(|| {
        if interceptors.is_empty() {
            return call(ctx, params);
        }
        // Interceptors see the result as a value.
        let handler = |params| {
            let reply = call(ctx, params)?;
            reply.into_value().map_err(Failure::Rpc)
        };
        intercept::around(interceptors, ctx, params, handler, |e| failure(ctx, e)).map(Reply::Value)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        log::error!("handler for {} panicked: {}", ctx.method.name, what);
        Err(Failure::Rpc(ErrorObject::internal(
            "the handler failed unexpectedly",
        )))
    })
}

thread_local! {
    /// The request whose handler runs on this thread: (session key, id).
    static CURRENT: std::cell::RefCell<Option<(u64, RequestId)>> = const { std::cell::RefCell::new(None) };
}

/// Marks a handler run on this thread for [`current_request`].
struct Running;

impl Running {
    fn enter(session: u64, id: &RequestId) -> Running {
        CURRENT.with(|current| *current.borrow_mut() = Some((session, id.clone())));
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        CURRENT.with(|current| current.borrow_mut().take());
    }
}

/// The request whose handler runs on the calling thread, as (session key,
/// request id): a transport stopping the server from inside a handler
/// spares that request, so that it still answers.
pub(crate) fn current_request() -> Option<(u64, RequestId)> {
    CURRENT.with(|current| current.borrow().clone())
}

/// The answer a handler run gives in the request's era: 2026-07-28 results
/// are decorated, and `input_required` carries the request's state.
fn conclude(
    ctx: &RequestContext,
    request: &Request,
    outcome: Result<Reply, Failure>,
) -> Result<Reply, ErrorObject> {
    let server = &ctx.session.server;
    match (outcome, &ctx.link) {
        (Ok(reply), ClientLink::Retry { rounds, .. }) => {
            if rounds.asked_anything() {
                log::warn!(
                    "the {} handler asked the client for input but returned a result; \
                     pass ErrorKind::InputRequired on with `?`",
                    request.method
                );
            }
            match reply {
                Reply::Tool { mut result, .. } if !ctx.method.cacheable => {
                    server.stamp(result.meta.get_or_insert_with(Default::default));
                    Ok(Reply::Tool {
                        result,
                        complete: true,
                    })
                }
                reply => Ok(Reply::Value(
                    server.decorate(reply.into_value()?, ctx.method),
                )),
            }
        }
        (Ok(reply), ClientLink::Connection { .. }) => Ok(reply),
        (Err(Failure::Rpc(error)), _) => Err(error),
        (Err(Failure::InputRequired), ClientLink::Retry { rounds, .. }) => {
            input::input_required(&ctx.session, request, (rounds, &ctx.caller)).map(Reply::Value)
        }
        (Err(Failure::InputRequired), ClientLink::Connection { .. }) => Err(ErrorObject::internal(
            "the handler asked for input outside the 2026-07-28 era",
        )),
    }
}

/// Writes the response unless a cancel won, and reports the outcome.
/// The ticket is the request's flag and whether it is in the in-flight
/// table (a request that is not, `Job::tracked`, always answers).
fn finish(
    session: &Arc<Session>,
    request: Request,
    (flag, tracked): (&CancellationFlag, bool),
    sink: &Arc<dyn Sink>,
    (started, caller): (Started, Caller),
    answer: Result<Reply, ErrorObject>,
) {
    let answers = !tracked || session.in_flight.finish(&request.id).is_some();
    let status = if answers {
        log::debug!("> response {} {}", request.id, request.method);
        respond(sink, request.id, answer)
    } else {
        // The cancel won: no response (CAN-1).
        sink.end();
        RequestStatus::Cancelled {
            reason: flag.reason(),
        }
    };
    session.server.report(|| RequestOutcome {
        method: request.method,
        duration: started.elapsed(),
        status,
        principal: caller.principal,
        trace: caller.trace,
    });
}

/// Sends the response to request `id`: a tool's result as it is where the
/// sink takes one, else as a value.
fn respond(
    sink: &Arc<dyn Sink>,
    id: RequestId,
    answer: Result<Reply, ErrorObject>,
) -> RequestStatus {
    let answer = match answer {
        Ok(Reply::Tool { result, complete }) => {
            let answer = ToolAnswer {
                result: &result,
                complete,
            };
            match sink.send_tool_result(&id, &answer) {
                Some(_) => return RequestStatus::Ok,
                None => super::inline::to_value(answer),
            }
        }
        Ok(reply) => reply.into_value(),
        Err(error) => Err(error),
    };
    let status = match &answer {
        Ok(_) => RequestStatus::Ok,
        Err(e) => RequestStatus::Error(e.code),
    };
    sink.send(Message::Response(Response {
        id: Some(id),
        outcome: answer,
    }));
    status
}

/// `tools/call` (TOOL-3..6): the arguments are checked against the top
/// level of `inputSchema` before the handler runs.
pub(crate) fn call_tool(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params = call_params(params)?;
    let entry = ctx.session.server.registry.read().tool(&params.name);
    let entry = entry
        .ok_or_else(|| ErrorObject::invalid_params(format!("unknown tool: {}", params.name)))?;
    let arguments = params.arguments.unwrap_or_default();
    let slot = tasks::plan(ctx, &entry.tool, params.task.as_ref())?;
    let eager = matches!(slot, TaskSlot::Possible { eager: true, .. });
    *ctx.task.lock() = slot;
    if eager {
        tasks::start(ctx).map_err(|e| Failure::Rpc(e.to_wire(ctx.era())))?;
    }
    let result = match entry.input.check_arguments(&arguments) {
        Err(problem) => CallToolResult::error(format!(
            "invalid arguments for tool {}: {}",
            params.name, problem
        )),
        Ok(()) => match entry.handler.call(ctx, arguments) {
            Ok(result) => kept_promise(&entry, result),
            Err(e) => tool_error(ctx, e)?,
        },
    };
    Ok(Reply::tool(result))
}

/// `tools/call`'s params. The usual shape (a string `name`, `arguments`
/// and `_meta` objects or absent, no `task`) is taken apart by hand, so
/// that the arguments move into the handler's map as they were read;
/// anything else is read as every method's params are ([`parse_params`]),
/// with its messages. Other members are ignored, as there.
fn call_params(params: Option<Value>) -> Result<CallToolRequestParams, ErrorObject> {
    let object = match params {
        Some(Value::Object(object)) if is_plain_call(&object) => object,
        params => return parse_params(params),
    };
    let mut call = CallToolRequestParams {
        name: String::new(),
        arguments: None,
        task: None,
        meta: None,
    };
    for (key, value) in object {
        match (key.as_str(), value) {
            ("name", Value::String(name)) => call.name = name,
            ("arguments", Value::Object(map)) => call.arguments = Some(map),
            ("_meta", Value::Object(map)) => call.meta = Some(map),
            _ => {}
        }
    }
    Ok(call)
}

/// See [`call_params`]: one look at each member.
fn is_plain_call(object: &crate::jsonrpc::JsonObject) -> bool {
    let mut named = false;
    for (key, value) in object {
        match (key.as_str(), value) {
            ("name", Value::String(_)) => named = true,
            ("name", _) | ("task", _) => return false,
            ("arguments" | "_meta", Value::Object(_)) => {}
            ("arguments" | "_meta", _) => return false,
            _ => {}
        }
    }
    named
}

/// A tool that declares an `outputSchema` must return `structuredContent`
/// that conforms to it (server/tools "Output Schema": servers MUST provide
/// structured results that conform); a result that does not is replaced
/// by an `isError` result saying why, and logged, rather than passed on
/// to a client that would reject it. Failed results (`isError`) pass.
fn kept_promise(entry: &ToolEntry, result: CallToolResult) -> CallToolResult {
    let tool = &entry.tool;
    let schema = match &entry.output {
        Some(schema) if result.is_error != Some(true) => schema,
        _ => return result,
    };
    let problem = match &result.structured_content {
        None => "declares an outputSchema but returned no structuredContent".to_string(),
        Some(value) => match schema.check_output(value) {
            Ok(()) => return result,
            Err(problem) => format!(
                "returned structuredContent that breaks its outputSchema: {}",
                problem
            ),
        },
    };
    log::warn!("tool {} {}", tool.name, problem);
    CallToolResult::error(format!("tool {} {}", tool.name, problem))
}

/// `prompts/get` (PRM-3): required arguments are checked first.
pub(crate) fn get_prompt(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params: GetPromptRequestParams = parse_params(params)?;
    let entry = ctx.session.server.registry.read().prompt(&params.name);
    let entry = entry
        .ok_or_else(|| ErrorObject::invalid_params(format!("unknown prompt: {}", params.name)))?;
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
        .map_err(|e| failure(ctx, e))?;
    Ok(Reply::Value(to_value(result)?))
}

/// `resources/read` (RES-4): a fixed resource, else the first provider
/// that knows the URI, else the first template that matches; none is
/// `-32002` (`-32602` in 2026-07-28).
pub(crate) fn read_resource(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params: ReadResourceRequestParams = parse_params(params)?;
    let uri = params.uri.as_str();
    let (resolved, providers) = {
        let registry = ctx.session.server.registry.read();
        (registry.resolve(uri), registry.providers.clone())
    };
    let result = match resolved {
        Some(Resolved::Resource(entry)) => entry.handler.read(ctx, uri),
        other => match providers.iter().find_map(|p| p.read(ctx, uri)) {
            Some(result) => result,
            None => match other {
                Some(Resolved::Template(entry, vars)) => entry.handler.read(ctx, uri, &vars),
                _ => Err(Error::resource_not_found(uri)),
            },
        },
    };
    Ok(Reply::Value(to_value(
        result.map_err(|e| failure(ctx, e))?,
    )?))
}

/// A handler's error as the failure this request sends: `input_required`
/// where the method's row allows it in the 2026-07-28 era (MRTR-1), else
/// the JSON-RPC error of [`Error::to_wire`].
pub(super) fn failure(ctx: &RequestContext, error: Error) -> Failure {
    let era = ctx.era();
    if error.is_input_required() && era == Era::V2026_07_28 && ctx.method.asks_input {
        Failure::InputRequired
    } else {
        Failure::Rpc(error.to_wire(era))
    }
}

/// TOOL-6: a tool's failure is a result with `isError: true`, except the
/// errors that must reach the client otherwise: JSON-RPC errors the handler
/// chose, `-32042` in the 2025-11-25 era, and in the 2026-07-28 era
/// `input_required` and `-32021`.
fn tool_error(ctx: &RequestContext, error: Error) -> Result<CallToolResult, Failure> {
    let modern = ctx.era() == Era::V2026_07_28;
    match error.kind() {
        ErrorKind::Rpc(_) => Err(failure(ctx, error)),
        ErrorKind::UrlElicitationRequired(_) if !modern => Err(failure(ctx, error)),
        ErrorKind::InputRequired | ErrorKind::CapabilityMissing { .. } if modern => {
            Err(failure(ctx, error))
        }
        _ => Ok(CallToolResult::error(error.wire_message())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // TOOL-3: `tools/call`'s params read by hand agree with the general
    // reading, in the usual shape and in every unusual one (a `task`, a
    // null or misshapen member, a missing or non-string name).
    #[test]
    fn call_params_agree_with_the_general_reading() {
        let shapes = [
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            json!({"name": "echo", "arguments": {"a": 1}, "_meta": {"progressToken": 3}, "x": 1}),
            json!({"name": "echo"}),
            json!({"name": "echo", "arguments": null}),
            json!({"name": "echo", "_meta": null}),
            json!({"name": "echo", "task": {"ttl": 1000}}),
            json!({"name": "echo", "arguments": [1]}),
            json!({"name": 7}),
            json!({"arguments": {}}),
            json!([1]),
        ];
        for shape in shapes {
            let general = parse_params::<CallToolRequestParams>(Some(shape.clone()));
            let by_hand = call_params(Some(shape.clone()));
            assert_eq!(by_hand, general, "{}", shape);
        }
        assert!(call_params(None).is_err(), "a name is required");
    }
}
