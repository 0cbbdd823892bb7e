//! The crate's one error type.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::challenge::BearerChallenge;
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonObject};
use crate::protocol::{ElicitRequestUrlParams, Era};

/// An error from tiny-mcp, or one a handler returns.
///
/// Handlers return `Result<T, Error>` and use `?`. How a handler's error
/// reaches the client depends on its [`ErrorKind`] and on the method (see
/// [`ErrorKind`]).
pub struct Error(Box<ErrorKind>);

/// What went wrong.
///
/// The kinds, grouped by the side that sees them:
///
/// - both sides: [`Io`](Self::Io), [`Json`](Self::Json),
///   [`Cancelled`](Self::Cancelled), [`Timeout`](Self::Timeout),
///   [`Peer`](Self::Peer), [`Closed`](Self::Closed),
///   [`Message`](Self::Message);
/// - the server (what a handler returns, and what serving reports):
///   [`InvalidParams`](Self::InvalidParams),
///   [`CapabilityMissing`](Self::CapabilityMissing), [`Rpc`](Self::Rpc),
///   [`UrlElicitationRequired`](Self::UrlElicitationRequired),
///   [`ResourceNotFound`](Self::ResourceNotFound),
///   [`InputRequired`](Self::InputRequired),
///   [`ThreadPanicked`](Self::ThreadPanicked);
/// - the [`Client`](crate::Client): [`Protocol`](Self::Protocol),
///   [`Http`](Self::Http), [`SessionExpired`](Self::SessionExpired),
///   [`Authorization`](Self::Authorization).
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    // Both sides.
    /// Reading or writing a stream failed.
    Io(io::Error),
    /// A value did not have the expected JSON shape.
    Json(serde_json::Error),
    /// The request was cancelled (by `notifications/cancelled`, end of input,
    /// or shutdown). Its response is not sent. For the
    /// [`Client`](crate::Client): the call's
    /// [`CancelToken`](crate::CancelToken) was cancelled. Match it with
    /// `ErrorKind::Cancelled { .. }` or [`Error::is_cancelled`].
    Cancelled {
        /// The reason the client gave, if any.
        reason: Option<String>,
    },
    /// A request to the client got no answer in time; for the
    /// [`Client`](crate::Client), a request to the server (its
    /// `request_timeout` or the call's `CallOptions::timeout`).
    Timeout {
        /// The method of the request, e.g. `sampling/createMessage`.
        method: String,
        /// How long it waited.
        after: Duration,
    },
    /// The other side answered a request of ours with this JSON-RPC error
    /// (code, message, data as sent): the client, for a server's request
    /// (sampling, elicitation, roots…); the server, for a
    /// [`Client`](crate::Client)'s call.
    Peer(ErrorObject),
    /// The connection or transport is gone.
    Closed,
    /// A failure described by a message. For `tools/call` it becomes a
    /// result with `isError: true`; elsewhere `-32603`.
    Message(String),

    // The server: what a handler returns, and what serving reports.
    /// The request's arguments are wrong. For `tools/call` this becomes a
    /// result with `isError: true`; elsewhere JSON-RPC `-32602`.
    InvalidParams(String),
    /// The client did not declare the capability a call needs, e.g.
    /// `sampling` or `elicitation.url`.
    CapabilityMissing {
        /// The capability, written as a dotted path (`elicitation.form`).
        capability: String,
    },
    /// A handler wants exactly this JSON-RPC error sent as the response.
    Rpc(ErrorObject),
    /// The request needs URL-mode elicitations first: sent as `-32042` with
    /// `data.elicitations` (2025-11-25) to a client that declared
    /// `elicitation.url`. Any other client (and every client in
    /// 2026-07-28, which has no `-32042`) gets the messages and URLs as
    /// text: a tool's `isError` result, else a `-32603` error (ELIC-1).
    /// [`RequestContext::supports_url_elicitation`](crate::RequestContext::supports_url_elicitation)
    /// says which a handler's client gets.
    UrlElicitationRequired(Vec<ElicitRequestUrlParams>),
    /// `resources/read` of a URI the handler does not know (`-32002`).
    ResourceNotFound(String),
    /// The handler needs the client's input first (2026-07-28 era): the
    /// request is answered with an `input_required` result and the handler
    /// runs again on the client's retry. Returned by the blocking client
    /// calls and [`RequestContext::request_inputs`](crate::RequestContext::request_inputs);
    /// pass it on with `?`.
    InputRequired,
    /// A thread of the crate's panicked (the stdio writer, an HTTP
    /// connection, a worker outside a handler): a bug of ours, reported to
    /// the caller of `serve_io` or `HttpServer::join`. Names the thread.
    ThreadPanicked(String),

    // The Client.
    /// [`Client`](crate::Client): the server broke the protocol (a reply
    /// that is not JSON-RPC, a result of the wrong shape, a message over
    /// the size limit, an HTTP answer of the wrong media type). The text
    /// says what it sent.
    Protocol(String),
    /// [`Client`](crate::Client) over HTTP: an HTTP status without a
    /// JSON-RPC answer. For `401` and `403` the `WWW-Authenticate`
    /// challenge is parsed (MCP authorization, RFC 6750 §3, RFC 9728 §5.1).
    Http {
        /// The status code, e.g. `401`.
        status: u16,
        /// The `Bearer` challenge of a `401` or `403`, if there was one.
        challenge: Option<BearerChallenge>,
        /// The start of the body, for the message.
        body: String,
    },
    /// [`Client`](crate::Client) over HTTP: the server answered `404` to a
    /// request carrying the session id, so the session is gone
    /// (2025-11-25 transports, "Session Management"); a new `initialize`
    /// starts another one.
    SessionExpired,
    /// [`Client`](crate::Client) over HTTP with [`OAuth`](crate::oauth::OAuth):
    /// logging in failed. `step` names where, in the spec's words
    /// (`"protected resource metadata"`, `"authorization server metadata"`,
    /// `"client registration"`, `"authorization"`, `"token request"`,
    /// `"token refresh"`, `"step-up authorization"`); `message` says what
    /// was wrong, never with a token or secret in it.
    ///
    /// Spec: basic/authorization (2025-11-25, 2026-07-28).
    Authorization {
        /// The step of the login that failed.
        step: &'static str,
        /// What was wrong.
        message: String,
    },
}

impl Error {
    /// Makes an error of the given kind.
    pub fn new(kind: ErrorKind) -> Error {
        Error(Box::new(kind))
    }

    /// A handler failure described by `message`.
    pub fn msg(message: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Message(message.to_string()))
    }

    /// Wrong arguments or params.
    pub fn invalid_params(message: impl fmt::Display) -> Error {
        Error::new(ErrorKind::InvalidParams(message.to_string()))
    }

    /// A request to send as exactly this JSON-RPC error.
    pub fn rpc(error: ErrorObject) -> Error {
        Error::new(ErrorKind::Rpc(error))
    }

    /// `resources/read` of an unknown URI.
    pub fn resource_not_found(uri: impl Into<String>) -> Error {
        Error::new(ErrorKind::ResourceNotFound(uri.into()))
    }

    /// The `-32042` error: these URL-mode elicitations must be completed
    /// first. Sent as such only to a client that declared
    /// `elicitation.url` in the 2025-11-25 era; see
    /// [`ErrorKind::UrlElicitationRequired`].
    pub fn url_elicitation_required(elicitations: Vec<ElicitRequestUrlParams>) -> Error {
        Error::new(ErrorKind::UrlElicitationRequired(elicitations))
    }

    /// A cancelled request.
    pub fn cancelled(reason: Option<String>) -> Error {
        Error::new(ErrorKind::Cancelled { reason })
    }

    /// The kind of this error.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The kind of this error, by value.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    /// `true` for [`ErrorKind::Cancelled`].
    pub fn is_cancelled(&self) -> bool {
        matches!(*self.0, ErrorKind::Cancelled { .. })
    }

    /// `true` for [`ErrorKind::InputRequired`]: a handler that catches the
    /// errors of `elicit`, `create_message`, `list_roots` or
    /// `request_inputs` must return this one (with `?`), not turn it into a
    /// result, or the 2026-07-28 client is never asked.
    pub fn is_input_required(&self) -> bool {
        matches!(*self.0, ErrorKind::InputRequired)
    }

    /// The JSON-RPC error this becomes in the 2025-11-25 era, when it
    /// answers a request that has no `isError` result form (everything but
    /// `tools/call`). The same as [`to_wire`](Self::to_wire) with
    /// [`Era::V2025_11_25`].
    pub fn to_error_object(&self) -> ErrorObject {
        self.to_wire(Era::V2025_11_25)
    }

    /// The JSON-RPC error this becomes on the wire in `era`: the one
    /// mapping of handler errors onto the wire.
    ///
    /// | kind | 2025-11-25 | 2026-07-28 |
    /// | --- | --- | --- |
    /// | [`ErrorKind::InvalidParams`], [`ErrorKind::Json`] | `-32602` | `-32602` |
    /// | [`ErrorKind::Rpc`] | as given | as given |
    /// | [`ErrorKind::ResourceNotFound`] | `-32002`, `data: {uri}` | `-32602`, `data: {uri}` (ERR-2) |
    /// | [`ErrorKind::UrlElicitationRequired`] | `-32042`, `data: {elicitations}` | `-32603` with the messages and URLs (ERR-2: no `-32042`) |
    /// | [`ErrorKind::CapabilityMissing`] | `-32603` | `-32021`, `data: {requiredCapabilities}` (ERR-3) |
    /// | [`ErrorKind::Peer`] | `-32603`, "the client answered with an error: …" | the same |
    /// | anything else | `-32603` with the message | the same |
    ///
    /// Whether an error becomes a JSON-RPC error at all is decided before:
    /// a `tools/call` failure is a result with `isError: true` (TOOL-6), and
    /// [`ErrorKind::InputRequired`] becomes an `input_required` result where
    /// the method allows it (MRTR-1). And `-32042` goes only to a client
    /// that declared `elicitation.url` (ELIC-1): for any other the server
    /// sends `-32603` with the messages and URLs instead, as in 2026-07-28
    /// (and `tools/call` an `isError` result with that text).
    ///
    /// Spec: basic/index "Error codes" and server/tools "Error Handling"
    /// (2025-11-25); basic/index "Errors" (2026-07-28).
    pub fn to_wire(&self, era: Era) -> ErrorObject {
        let v2026 = era == Era::V2026_07_28;
        match &*self.0 {
            ErrorKind::InvalidParams(m) => ErrorObject::invalid_params(m.clone()),
            ErrorKind::Json(e) => ErrorObject::invalid_params(format!("invalid params: {}", e)),
            ErrorKind::Rpc(e) => e.clone(),
            ErrorKind::ResourceNotFound(uri) => {
                let code = if v2026 {
                    ErrorCode::INVALID_PARAMS
                } else {
                    ErrorCode::RESOURCE_NOT_FOUND
                };
                ErrorObject::new(code, "resource not found")
                    .with_data(serde_json::json!({ "uri": uri }))
            }
            ErrorKind::UrlElicitationRequired(_) if v2026 => {
                ErrorObject::internal(self.wire_message())
            }
            ErrorKind::UrlElicitationRequired(list) => match to_json("URL elicitations", list) {
                Ok(elicitations) => ErrorObject::new(
                    ErrorCode::URL_ELICITATION_REQUIRED,
                    "this request requires more information",
                )
                .with_data(serde_json::json!({ "elicitations": elicitations })),
                Err(e) => ErrorObject::internal(e.to_string()),
            },
            ErrorKind::CapabilityMissing { capability } if v2026 => missing_capability(capability),
            _ => ErrorObject::internal(self.wire_message()),
        }
    }

    /// This error's text in what the server sends (a `-32603` message, a
    /// tool's `isError` result): its [`Display`](fmt::Display), except that
    /// an [`ErrorKind::Peer`] names the client, a server's one peer, and an
    /// [`ErrorKind::UrlElicitationRequired`] says what to open, for a
    /// client that cannot take it as `-32042` (ELIC-1):
    /// `this request requires a URL elicitation: MESSAGE (URL); …`.
    pub(crate) fn wire_message(&self) -> String {
        match &*self.0 {
            ErrorKind::Peer(e) => format!("the client answered with an error: {}", e),
            ErrorKind::UrlElicitationRequired(list) => {
                let mut text = String::from("this request requires a URL elicitation");
                for (i, elicitation) in list.iter().enumerate() {
                    text.push_str(if i == 0 { ": " } else { "; " });
                    text.push_str(&format!("{} ({})", elicitation.message, elicitation.url));
                }
                text
            }
            _ => self.to_string(),
        }
    }
}

/// `value` as JSON, for a message of ours. Serializing fails only on a bug
/// of ours (a `Serialize` that errs, a map whose keys are not strings):
/// logged, and an internal error naming `what` (`-32603` on the wire), the
/// value itself neither logged nor sent.
pub(crate) fn to_json<T: Serialize + ?Sized>(what: &str, value: &T) -> Result<Value, Error> {
    serde_json::to_value(value).map_err(|e| not_serialized(what, &e))
}

/// `value` as JSON text, as [`to_json`] (for a size).
pub(crate) fn to_json_bytes<T: Serialize + ?Sized>(
    what: &str,
    value: &T,
) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(value).map_err(|e| not_serialized(what, &e))
}

/// Logs that `what`, a value of ours, could not be serialized (a bug),
/// and gives the internal error that stands for it; the value is neither
/// logged nor sent.
#[cold]
pub(crate) fn not_serialized(what: &str, error: &serde_json::Error) -> Error {
    log::error!("cannot serialize {}: {}", what, error);
    Error::msg(format!("cannot serialize {}", what))
}

/// `-32021` naming the capability (dotted path, e.g. `elicitation.form`)
/// as a `ClientCapabilities` object (ERR-3).
fn missing_capability(capability: &str) -> ErrorObject {
    let mut required = JsonObject::new();
    let mut parts = capability.split('.');
    let top = parts.next().unwrap_or(capability);
    let inner = match parts.next() {
        Some(sub) => serde_json::json!({ sub: {} }),
        None => Value::Object(JsonObject::new()),
    };
    required.insert(top.to_string(), inner);
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("this request needs the client capability {}", capability),
    )
    .with_data(serde_json::json!({ "requiredCapabilities": required }))
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            ErrorKind::Io(e) => write!(f, "i/o error: {}", e),
            ErrorKind::Json(e) => write!(f, "invalid JSON value: {}", e),
            ErrorKind::InvalidParams(m) => write!(f, "{}", m),
            ErrorKind::Cancelled { reason: Some(r) } => write!(f, "request cancelled: {}", r),
            ErrorKind::Cancelled { reason: None } => write!(f, "request cancelled"),
            ErrorKind::Timeout { method, after } => {
                write!(f, "{} got no answer within {:?}", method, after)
            }
            ErrorKind::CapabilityMissing { capability } => {
                write!(
                    f,
                    "the client did not declare the {} capability",
                    capability
                )
            }
            ErrorKind::Peer(e) => write!(f, "the peer answered with an error: {}", e),
            ErrorKind::Rpc(e) => write!(f, "{}", e.message),
            ErrorKind::UrlElicitationRequired(_) => {
                write!(f, "URL-mode elicitation required")
            }
            ErrorKind::ResourceNotFound(uri) => write!(f, "resource not found: {}", uri),
            ErrorKind::Closed => write!(f, "connection closed"),
            ErrorKind::ThreadPanicked(name) => write!(f, "thread {} panicked", name),
            ErrorKind::InputRequired => write!(f, "input required from the client"),
            ErrorKind::Message(m) => write!(f, "{}", m),
            ErrorKind::Protocol(m) => write!(f, "protocol error: {}", m),
            ErrorKind::Http {
                status,
                challenge,
                body,
            } => {
                write!(f, "HTTP {}", status)?;
                if let Some(c) = challenge {
                    write!(f, " ({})", c)?;
                }
                if !body.is_empty() {
                    write!(f, ": {}", body)?;
                }
                Ok(())
            }
            ErrorKind::SessionExpired => write!(f, "the server ended the session (HTTP 404)"),
            ErrorKind::Authorization { step, message } => {
                write!(f, "authorization failed ({}): {}", step, message)
            }
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &*self.0 {
            ErrorKind::Io(e) => Some(e),
            ErrorKind::Json(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::new(ErrorKind::Io(e))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::new(ErrorKind::Json(e))
    }
}

impl From<ErrorObject> for Error {
    fn from(e: ErrorObject) -> Self {
        Error::rpc(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ELIC-6: -32042 lists the URL elicitations in data.elicitations.
    #[test]
    fn url_elicitation_required_shape() {
        let err = Error::url_elicitation_required(vec![ElicitRequestUrlParams::new(
            "Sign in",
            "https://example.com/auth",
            "e-1",
        )]);
        let obj = err.to_error_object();
        assert_eq!(obj.code, ErrorCode::URL_ELICITATION_REQUIRED);
        let data = obj.data.unwrap();
        assert_eq!(data["elicitations"][0]["mode"], "url");
        assert_eq!(data["elicitations"][0]["elicitationId"], "e-1");
    }

    // RES-4: an unknown resource is -32002 with data.uri.
    #[test]
    fn resource_not_found_shape() {
        let obj = Error::resource_not_found("test://nope").to_error_object();
        assert_eq!(obj.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(obj.data.unwrap()["uri"], "test://nope");
    }

    // ERR-2, ERR-3 (2026-07-28): no -32002 or -32042; -32021 names the
    // missing capability as a ClientCapabilities object.
    #[test]
    fn era_2026_mapping() {
        let v2026 = Era::V2026_07_28;
        let obj = Error::resource_not_found("test://nope").to_wire(v2026);
        assert_eq!(obj.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(obj.data.unwrap()["uri"], "test://nope");
        let url = Error::url_elicitation_required(Vec::new()).to_wire(v2026);
        assert_eq!(url.code, ErrorCode::INTERNAL_ERROR);
        let missing = |c: &str| {
            Error::new(ErrorKind::CapabilityMissing {
                capability: c.into(),
            })
            .to_wire(v2026)
        };
        let err = missing("sampling");
        assert_eq!(err.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            err.data.unwrap()["requiredCapabilities"],
            serde_json::json!({"sampling": {}})
        );
        assert_eq!(
            missing("elicitation.url").data.unwrap()["requiredCapabilities"],
            serde_json::json!({"elicitation": {"url": {}}})
        );
    }

    // A client's error answer to a server's request reaches the wire as
    // -32603 naming the client (and so does a tool's isError result).
    #[test]
    fn peer_error_names_the_client_on_the_wire() {
        let err = Error::new(ErrorKind::Peer(ErrorObject::invalid_params("no")));
        let obj = err.to_wire(Era::V2026_07_28);
        assert_eq!(obj.code, ErrorCode::INTERNAL_ERROR);
        assert!(obj
            .message
            .starts_with("the client answered with an error: "));
        assert_eq!(obj.message, err.wire_message());
        assert!(err
            .to_string()
            .starts_with("the peer answered with an error: "));
    }

    // A value of ours that cannot be serialized is an internal error that
    // names what it was, not null.
    #[test]
    fn a_serialization_failure_is_an_internal_error() {
        let mut bad = std::collections::HashMap::new();
        bad.insert((1, 2), "a secret");
        let err = to_json("the thing", &bad).unwrap_err();
        let obj = err.to_error_object();
        assert_eq!(obj.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(obj.message, "cannot serialize the thing");
        assert!(to_json_bytes("the thing", &bad).is_err());
        assert_eq!(to_json("a number", &1).unwrap(), serde_json::json!(1));
    }

    #[test]
    fn display_is_short_and_lowercase() {
        assert_eq!(Error::cancelled(None).to_string(), "request cancelled");
        assert_eq!(
            Error::new(ErrorKind::Closed).to_string(),
            "connection closed"
        );
    }
}
