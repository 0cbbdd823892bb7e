//! What a row of the method table answers with: the types every row
//! shares ([`Answer`], [`Reply`], [`Failure`]) and the two shapes of a
//! row's function ([`InlineFn`], [`WorkerFn`]). The rows import this
//! module; the table ([`methods`](super::methods)) imports the rows, and
//! nothing here imports the table back.

use serde::Serialize;
use serde_json::Value;

use super::caller::Caller;
use super::context::RequestContext;
use super::session::Session;
use super::sink::ToolAnswer;
use crate::error::{not_serialized, Error, ErrorKind};
use crate::jsonrpc::ErrorObject;
use crate::protocol::{CallToolResult, Era};

/// What an inline answer or a handler run produced.
pub(crate) type Answer = Result<Value, ErrorObject>;

/// A handler run's result on its way to the client.
pub(crate) enum Reply {
    /// A result as a JSON value.
    Value(Value),
    /// A tool's result, made a value only where something needs one
    /// (an interceptor, the 2026-07-28 decoration, a sink that takes only
    /// messages); the stdout and HTTP stream sinks are given it as it is
    /// ([`Sink::send_tool_result`](super::Sink::send_tool_result)).
    Tool {
        result: CallToolResult,
        /// Decorated for 2026-07-28: `_meta` stamped, `resultType` due.
        complete: bool,
    },
}

impl Reply {
    /// A tool's result, not decorated yet.
    pub(crate) fn tool(result: CallToolResult) -> Reply {
        Reply::Tool {
            result,
            complete: false,
        }
    }

    /// The result as a JSON value.
    pub(crate) fn into_value(self) -> Answer {
        match self {
            Reply::Value(value) => Ok(value),
            Reply::Tool { result, complete } => {
                let answer = ToolAnswer {
                    result: &result,
                    complete,
                };
                to_value(answer)
            }
        }
    }
}

/// How a handler run ended, short of a result.
pub(crate) enum Failure {
    /// Send this error.
    Rpc(ErrorObject),
    /// Answer `input_required` (2026-07-28, MRTR-1).
    InputRequired,
}

impl From<ErrorObject> for Failure {
    fn from(e: ErrorObject) -> Self {
        Failure::Rpc(e)
    }
}

/// A method answered on the reading thread; the caller matters to the
/// lists, which may be filtered by scope.
pub(crate) type InlineFn = fn(&Session, &Caller, Option<Value>) -> Answer;

/// A handler call run on a worker.
pub(crate) type WorkerFn = fn(&RequestContext, Option<Value>) -> Result<Reply, Failure>;

/// A handler's error as the failure this request sends: `input_required`
/// where the method's row allows it in the 2026-07-28 era (MRTR-1), else
/// the JSON-RPC error of [`Error::to_wire`], except that `-32042` goes only
/// to a client that declared `elicitation.url` (ELIC-1): any other gets
/// `-32603` naming the URLs, as a 2026-07-28 client does.
pub(super) fn failure(ctx: &RequestContext, error: Error) -> Failure {
    let era = ctx.era();
    if error.is_input_required() && era == Era::V2026_07_28 && ctx.method.asks_input {
        Failure::InputRequired
    } else if matches!(error.kind(), ErrorKind::UrlElicitationRequired(_))
        && !ctx.supports_url_elicitation()
    {
        Failure::Rpc(ErrorObject::internal(error.wire_message()))
    } else {
        Failure::Rpc(error.to_wire(era))
    }
}

/// A result serialized for the wire; a failure to serialize is logged
/// and answered `-32603` ([`not_serialized`]).
pub(crate) fn to_value<T: Serialize>(value: T) -> Answer {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::internal(not_serialized("the result", &e).to_string()))
}
