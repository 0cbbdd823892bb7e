//! Interceptors: code around every handler call (DESIGN.md §15).
//!
//! They run on the worker that runs the handler, in the order they were
//! added: each one's [`before`](Interceptor::before) in turn, then the
//! handler, then each one's [`after`](Interceptor::after). On HTTP they
//! run after authorization, the pre-request hooks and the scope checks, so
//! a refused request never reaches them.

use serde_json::Value;

use super::context::RequestContext;
use super::reply::Failure;
use crate::error::Error;
use crate::jsonrpc::ErrorObject;

/// Code around every handler call: `tools/call`, `prompts/get`,
/// `resources/read` and `completion/complete` (the methods that run a
/// program's handler on a worker). Add one with
/// [`ServerBuilder::intercept`](crate::ServerBuilder::intercept).
///
/// Both methods see the request through its [`RequestContext`]: its
/// method, principal, headers, trace context and `_meta`. Both have
/// defaults that do nothing.
///
/// ```
/// use serde_json::Value;
/// use tiny_mcp::{Error, HandlerOutcome, Interceptor, RequestContext};
///
/// /// Refuses calls from one subject, and logs every outcome.
/// struct Audit;
///
/// impl Interceptor for Audit {
///     fn before(&self, ctx: &RequestContext, _: Option<&Value>) -> Option<Result<Value, Error>> {
///         match ctx.principal() {
///             Some(p) if p.subject == "mallory" => Some(Err(Error::invalid_params("not you"))),
///             _ => None,
///         }
///     }
///
///     fn after(&self, ctx: &RequestContext, outcome: HandlerOutcome<'_>) {
///         let trace = ctx.trace().and_then(|t| t.traceparent.clone());
///         eprintln!("{} -> {:?} (trace {:?})", ctx.method(), outcome, trace);
///     }
/// }
/// ```
pub trait Interceptor: Send + Sync + 'static {
    /// Called before the handler with the request's params (`_meta`
    /// included). `None` lets the call go on; `Some(result)` ends it here:
    /// the handler and the later interceptors' `before` do not run, and
    /// `result` is the answer (a value as the method's result, e.g. a
    /// `CallToolResult` as JSON; an error mapped by
    /// [`Error::to_wire`](crate::Error::to_wire)).
    fn before(&self, ctx: &RequestContext, params: Option<&Value>) -> Option<Result<Value, Error>> {
        let _ = (ctx, params);
        None
    }

    /// Called with the outcome, before the response is sent, by every
    /// interceptor whose `before` ran.
    fn after(&self, ctx: &RequestContext, outcome: HandlerOutcome<'_>) {
        let _ = (ctx, outcome);
    }
}

/// How a handler call ended, as [`Interceptor::after`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum HandlerOutcome<'a> {
    /// The result (for `tools/call`, also one with `isError: true`).
    Result(&'a Value),
    /// The JSON-RPC error that will be sent.
    Error(&'a ErrorObject),
    /// The handler asked the client for input (2026-07-28
    /// `input_required`).
    InputRequired,
}

/// Runs `call` inside `interceptors`; `failure` maps a short-circuiting
/// error onto the request's wire.
pub(crate) fn around(
    interceptors: &[Box<dyn Interceptor>],
    ctx: &RequestContext,
    params: Option<Value>,
    call: impl FnOnce(Option<Value>) -> Result<Value, Failure>,
    failure: impl Fn(Error) -> Failure,
) -> Result<Value, Failure> {
    if interceptors.is_empty() {
        return call(params);
    }
    let mut ran = 0;
    let mut outcome = None;
    for interceptor in interceptors {
        ran += 1;
        if let Some(answer) = interceptor.before(ctx, params.as_ref()) {
            outcome = Some(answer.map_err(&failure));
            break;
        }
    }
    let outcome = match outcome {
        Some(outcome) => outcome,
        None => call(params),
    };
    let seen = match &outcome {
        Ok(value) => HandlerOutcome::Result(value),
        Err(Failure::Rpc(error)) => HandlerOutcome::Error(error),
        Err(Failure::InputRequired) => HandlerOutcome::InputRequired,
    };
    for interceptor in &interceptors[..ran] {
        interceptor.after(ctx, seen);
    }
    outcome
}
