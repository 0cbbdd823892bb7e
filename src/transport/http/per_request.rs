//! The 2026-07-28 path of the HTTP endpoint: per-request POSTs, with the
//! routing-header checks of that era.
//!
//! No session is minted or needed; every POST is served on a short-lived
//! session of its own. The routing headers must agree with the body
//! (`-32020`), checked in the order of HTTP-6: envelope, headers, version,
//! `Mcp-Param-*`, then dispatch. A request whose handler emits nothing
//! before its result is answered with JSON; otherwise the response turns
//! into an SSE stream, and the client closing it cancels the request
//! (MHTTP-7). `subscriptions/listen` is always a stream.

use std::sync::Arc;

use serde_json::Value;

use super::answer::{
    not_acceptable, status_of, Accepts, Answer, EventStream, Framing, ListenGuard, OnClose,
};
use super::sse::{Stream, StreamSink};
use super::wire::{HttpRequest, HttpResponse};
use super::Shared;
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Request};
use crate::protocol::Era;
use crate::server::session::{Closing, Session};
use crate::server::{dispatch, envelope, methods as table, Caller, Envelope, Received, Sink};

fn mismatch(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, message)
}

/// HTTP-3: decodes a `=?base64?…?=` header value; plain values are literal.
pub(crate) fn decode_header_value(value: &str) -> Result<String, ErrorObject> {
    let value = value.trim();
    let inner = match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(inner) => inner,
        None => {
            if value.chars().any(|c| c.is_control()) {
                return Err(mismatch("a header value has invalid characters"));
            }
            if !value.is_ascii() {
                return Err(mismatch(
                    "a header value has non-ASCII characters: send it base64-encoded as =?base64?…?=",
                ));
            }
            return Ok(value.to_string());
        }
    };
    let bytes = crate::base64::decode_padded(inner)
        .ok_or_else(|| mismatch("invalid base64 in a header value"))?;
    String::from_utf8(bytes).map_err(|_| mismatch("a base64 header value is not UTF-8"))
}

/// The one value of a header; `Err` when it appears more than once (HTTP-5).
fn single<'a>(request: &'a HttpRequest, name: &'a str) -> Result<Option<&'a str>, ErrorObject> {
    let mut values = request.headers.get_all(name);
    let first = values.next();
    if values.next().is_some() {
        return Err(mismatch(format!(
            "the {} header appears more than once",
            name
        )));
    }
    Ok(first)
}

/// HTTP-6 steps 7, 9 and 11 for one request.
fn check_headers(
    shared: &Shared,
    http: &HttpRequest,
    request: &Request,
    version: &str,
) -> Result<(), ErrorObject> {
    let header_version = single(http, "mcp-protocol-version")?;
    let header_method = single(http, "mcp-method")?;
    let header_name = single(http, "mcp-name")?;
    match header_version {
        Some(v) if v == version => {}
        Some(v) => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version {} does not match the request's {}",
                v, version
            )))
        }
        None => return Err(mismatch("missing MCP-Protocol-Version header")),
    }
    match header_method {
        Some(m) if m == request.method => {}
        Some(m) => {
            return Err(mismatch(format!(
                "Mcp-Method {} does not match the request's method {}",
                m, request.method
            )))
        }
        None => return Err(mismatch("missing Mcp-Method header")),
    }
    let params = request.params.as_ref();
    if let Some(field) = table::mcp_name_field(&request.method) {
        let expected = params.and_then(|p| p.get(field)).and_then(Value::as_str);
        match header_name {
            None => return Err(mismatch("missing Mcp-Name header")),
            Some(raw) => {
                let decoded = decode_header_value(raw)?;
                if Some(decoded.as_str()) != expected {
                    return Err(mismatch(format!(
                        "Mcp-Name {} does not match the request's {}",
                        decoded, field
                    )));
                }
            }
        }
    }
    if table::has_mcp_params(&request.method) {
        check_param_headers(shared, http, params)?;
    }
    Ok(())
}

/// HTTP-4 / MHTTP-15: `Mcp-Param-{Name}` headers of `x-mcp-header`
/// properties must agree with the arguments.
fn check_param_headers(
    shared: &Shared,
    http: &HttpRequest,
    params: Option<&Value>,
) -> Result<(), ErrorObject> {
    let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
    let headers = match name {
        Some(name) => shared.server.param_headers(name),
        None => return Ok(()),
    };
    let arguments = params.and_then(|p| p.get("arguments"));
    for (property, header) in headers {
        let argument = arguments
            .and_then(|a| a.get(&property))
            .filter(|v| !v.is_null());
        let sent = single(http, &header)?;
        match (argument, sent) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!("{} sent without its argument", header)))
            }
            (Some(_), None) => return Err(mismatch(format!("missing {} header", header))),
            (Some(value), Some(raw)) => {
                let decoded = decode_header_value(raw)?;
                let agrees = match value {
                    Value::String(s) => *s == decoded,
                    Value::Bool(b) => decoded == b.to_string(),
                    Value::Number(n) => decoded
                        .parse::<f64>()
                        .ok()
                        .zip(n.as_f64())
                        .map_or(false, |(a, b)| a == b),
                    _ => false,
                };
                if !agrees {
                    return Err(mismatch(format!(
                        "{} does not match argument {}",
                        header, property
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Decides the answer to one POST on the 2026-07-28 path (HTTP-6: Accept,
/// the body's kind, envelope, headers, version, then dispatch).
pub(super) fn post(
    shared: &Arc<Shared>,
    http: &HttpRequest,
    message: Message,
    accepts: Accepts,
    caller: Caller,
) -> Answer {
    let request = match message {
        _ if !(accepts.json && accepts.sse) => {
            // HTTP-6 step 3.
            let id = match &message {
                Message::Request(r) => Some(r.id.clone()),
                _ => None,
            };
            return not_acceptable(id, "application/json and text/event-stream");
        }
        Message::Response(_) => {
            let error =
                ErrorObject::invalid_request("clients do not send responses in the 2026-07-28 era");
            return Answer::error(400, None, error);
        }
        Message::Notification(_) => {
            // HTTP-6 step 5; CANCEL-2: a cancel by id is ignored over HTTP.
            let version = http.header("mcp-protocol-version").unwrap_or("");
            if Era::of(version) != Some(Era::V2026_07_28) {
                return Answer::error(400, None, envelope::unsupported_version(version));
            }
            return Answer::status(202);
        }
        Message::Request(request) => request,
    };
    let id = Some(request.id.clone());
    // HTTP-6 step 7 before step 8: a repeated routing header wins over a
    // bad envelope.
    let repeated = ["mcp-protocol-version", "mcp-method", "mcp-name"]
        .iter()
        .try_for_each(|name| single(http, name).map(|_| ()));
    if let Err(error) = repeated {
        return Answer::error(status_of(error.code), id, error);
    }
    let checked = envelope::read_envelope(request.params.as_ref()).and_then(|envelope| {
        check_headers(shared, http, &request, &envelope.version)?;
        envelope::check_version(&envelope.version)?;
        Ok(envelope)
    });
    match checked {
        // REM-1: `initialize` included, a method the 2026-07-28 rows lack
        // is -32601, which is 404 here (HTTP-7).
        Ok(envelope) => dispatch(shared, request, envelope, caller),
        Err(error) => Answer::error(status_of(error.code), id, error),
    }
}

/// Runs a checked request on a session of its own: JSON when it is
/// answered at once or its handler's first message is its response,
/// otherwise an SSE stream whose closing cancels it (MHTTP-7); a listen
/// stream is always SSE.
fn dispatch(shared: &Arc<Shared>, request: Request, envelope: Envelope, caller: Caller) -> Answer {
    let core = Session::per_request(&shared.server);
    let id = request.id.clone();
    let is_listen = table::opens_listen(&request.method);
    let stream = Arc::new(Stream::new(
        1,
        Some(id.clone()),
        shared.config.stream_queue_len,
        0,
    ));
    let attached = stream.attach(None);
    let writer = Some((Arc::clone(&stream), attached.token));
    let receiver = attached.receiver;
    let sink: Arc<dyn Sink> = Arc::new(StreamSink(stream));
    let (on_close, json_if_first, guard) =
        match dispatch::receive_checked(&core, request, envelope, &sink, caller) {
            Received::Answered(response) => {
                let status = match &response.outcome {
                    // LISTEN-14: a refused listen (at the stream limit) is 503.
                    Err(e) if is_listen && e.code == ErrorCode::INTERNAL_ERROR => 503,
                    Err(e) => status_of(e.code),
                    Ok(_) => 200,
                };
                let json = Message::Response(response).to_json_string();
                return Answer::Whole(HttpResponse::json(status, json.into_bytes()));
            }
            Received::Run(job) => {
                if !shared.pool.schedule(job) {
                    let error = ErrorObject::internal("the server is shutting down");
                    return Answer::error(503, Some(id), error);
                }
                (OnClose::Cancel(Arc::clone(&core), id), true, None)
            }
            Received::Listening(key) => {
                shared
                    .listening
                    .lock()
                    .insert(core.key(), Arc::clone(&core));
                let guard = ListenGuard {
                    shared: Arc::clone(shared),
                    key: core.key(),
                };
                if shared.stopping() {
                    // Shutdown began meanwhile: end it with its result now.
                    core.close("the server is shutting down", Closing::ServerEnds);
                }
                (
                    OnClose::ForgetListen(Arc::clone(&core), key),
                    false,
                    Some(guard),
                )
            }
            Received::Consumed => return Answer::status(202),
        };
    Answer::Stream(EventStream {
        receiver,
        replay: Vec::new(),
        framing: Framing::Plain { json_if_first },
        on_close,
        headers: Vec::new(),
        guard,
        writer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // HTTP-3: the base64 sentinel is decoded; bad payloads are -32020.
    #[test]
    fn header_values() {
        assert_eq!(decode_header_value("=?base64?aGVsbG8=?=").unwrap(), "hello");
        assert_eq!(decode_header_value("plain").unwrap(), "plain");
        assert_eq!(decode_header_value("=?base64?w6k=?=").unwrap(), "é");
        assert!(
            decode_header_value("=?base64?aGVsbG8?=").is_err(),
            "missing padding"
        );
        assert!(
            decode_header_value("=?base64?a*==?=").is_err(),
            "not the alphabet"
        );
    }

    #[test]
    fn statuses() {
        assert_eq!(status_of(ErrorCode::METHOD_NOT_FOUND), 404);
        assert_eq!(status_of(ErrorCode::HEADER_MISMATCH), 400);
        assert_eq!(status_of(ErrorCode::INTERNAL_ERROR), 200);
    }
}
