//! The 2026-07-28 path of the HTTP endpoint: stateless POSTs.
//!
//! No session is minted or needed; every POST is served on a short-lived
//! session of its own. The routing headers must agree with the body
//! (`-32020`), checked in the order of HTTP-6: envelope, headers, version,
//! `Mcp-Param-*`, then dispatch. A request whose handler emits nothing
//! before its result is answered with JSON; otherwise the response turns
//! into an SSE stream, and the client closing it cancels the request
//! (MHTTP-7). `subscriptions/listen` is always a stream.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::Value;

use super::conn::{rpc_error, Reply};
use super::sse::{self, Kind, Outgoing, Stream, StreamSink};
use super::wire::{self, HttpRequest, HttpResponse};
use super::Shared;
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Request};
use crate::protocol::{methods, versions};
use crate::server::modern as era;
use crate::session::{Era, Session};
use crate::transport::Sink;

/// How often an open stream checks whether its client is gone.
const LIVENESS_CHECK: Duration = Duration::from_millis(250);

/// HTTP-7: the status of an error body.
fn status_of(code: ErrorCode) -> u16 {
    match code {
        ErrorCode::METHOD_NOT_FOUND => 404,
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::INVALID_PARAMS => 400,
        _ => 200,
    }
}

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
            return Ok(value.to_string());
        }
    };
    let bytes = base64_decode(inner).ok_or_else(|| mismatch("invalid base64 in a header value"))?;
    String::from_utf8(bytes).map_err(|_| mismatch("a base64 header value is not UTF-8"))
}

/// Standard base64 with required padding.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some((c - b'A') as u32),
            b'a'..=b'z' => Some((c - b'a') as u32 + 26),
            b'0'..=b'9' => Some((c - b'0') as u32 + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let chunks = bytes.chunks(4);
    let n = chunks.len();
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != n) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | value(c)?;
        }
        acc <<= 6 * pad as u32;
        let three = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Some(out)
}

/// The one value of a header; `Err` when it appears more than once (HTTP-5).
fn single<'a>(request: &'a HttpRequest, name: &str) -> Result<Option<&'a str>, ErrorObject> {
    let mut values = request
        .headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str());
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
    let name_field = match request.method.as_str() {
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
        methods::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
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
    if request.method == methods::TOOLS_CALL {
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
    let tool = match name.and_then(|n| shared.server.registry.read().tool(n)) {
        Some(entry) => entry,
        None => return Ok(()),
    };
    let properties = match tool.tool.input_schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Ok(()),
    };
    let arguments = params.and_then(|p| p.get("arguments"));
    for (property, schema) in properties {
        let header = match schema.get("x-mcp-header").and_then(Value::as_str) {
            Some(h) => format!("mcp-param-{}", h.to_ascii_lowercase()),
            None => continue,
        };
        let argument = arguments
            .and_then(|a| a.get(property))
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

/// Serves one POST on the 2026-07-28 path.
pub(super) fn post(
    shared: &Arc<Shared>,
    http: &HttpRequest,
    message: Message,
    reply: Reply<'_>,
) -> io::Result<()> {
    let keep_alive = reply.keep_alive;
    let header_version = http.header("mcp-protocol-version").unwrap_or("");
    // HTTP-6 step 3.
    if !(reply.takes_json && reply.takes_sse) {
        let id = match &message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let error = ErrorObject::invalid_request(
            "Not Acceptable: the client must accept application/json and text/event-stream",
        );
        return rpc_error(406, id, error).write_to(reply.out, keep_alive);
    }
    let request = match message {
        Message::Response(_) => {
            let error =
                ErrorObject::invalid_request("clients do not send responses in the 2026-07-28 era");
            return rpc_error(400, None, error).write_to(reply.out, keep_alive);
        }
        Message::Notification(_) => {
            // HTTP-6 step 5; CANCEL-2: a cancel by id is ignored over HTTP.
            if !versions::is_modern(header_version) {
                return rpc_error(400, None, era::unsupported_version(header_version))
                    .write_to(reply.out, keep_alive);
            }
            return HttpResponse::new(202).write_to(reply.out, keep_alive);
        }
        Message::Request(request) => request,
    };
    let id = Some(request.id.clone());
    let checked = era::read_envelope(request.params.as_ref()).and_then(|envelope| {
        check_headers(shared, http, &request, &envelope.version)?;
        era::check_version(&envelope.version)
    });
    if let Err(error) = checked {
        let status = status_of(error.code);
        return rpc_error(status, id, error).write_to(reply.out, keep_alive);
    }
    if request.method == methods::INITIALIZE {
        // REM-1: removed in 2026-07-28 (HTTP 404, -32601).
        return rpc_error(404, id, ErrorObject::method_not_found(methods::INITIALIZE))
            .write_to(reply.out, keep_alive);
    }
    let core = Session::new(&shared.server, None, None);
    core.lock_era(Era::Modern);
    let is_listen = request.method == methods::SUBSCRIPTIONS_LISTEN;
    let stream = Arc::new(Stream::new(
        1,
        Some(request.id.clone()),
        shared.config.stream_queue_len,
        0,
    ));
    let (receiver, _, _) = stream.attach(None);
    let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&stream)));
    let request_id = request.id.clone();
    let job = core.receive(Message::Request(request), &sink);
    let listen_key = core.listen_keys.lock().first().copied();
    if let Some(job) = job {
        if !shared.pool.execute(move || job.run()) {
            let error = ErrorObject::internal("the server is shutting down");
            return rpc_error(503, id, error).write_to(reply.out, keep_alive);
        }
    } else if !(is_listen && listen_key.is_some()) {
        // Answered at once, or refused.
        return match receiver.try_recv() {
            Ok(Outgoing::Event { json, kind, .. }) if is_listen => {
                // A refused listen: at the stream limit it is 503 (LISTEN-14).
                let status = match kind {
                    Kind::Error(ErrorCode::INTERNAL_ERROR) => 503,
                    other => status_for(other),
                };
                HttpResponse::json(status, json.as_bytes().to_vec()).write_to(reply.out, keep_alive)
            }
            Ok(Outgoing::Event { json, kind, .. }) => write_json(reply, &json, kind),
            _ => HttpResponse::new(202).write_to(reply.out, keep_alive),
        };
    }
    if let Some(key) = listen_key {
        shared.listen_owners.lock().insert(core.key);
        let result = if shared.stopping() {
            Ok(())
        } else {
            stream_out(
                shared,
                &receiver,
                reply.out,
                wire::sse_head(&[], keep_alive),
                None,
            )
        };
        shared.listen_owners.lock().remove(&core.key);
        if result.is_err() {
            // LISTEN-10: the client went away; that stream only is freed.
            shared.server.listen.close(key);
        }
        return result;
    }
    let cancel = || {
        let reason = "the client closed the stream";
        if let Some(entry) = core.in_flight.cancel(&request_id, Some(reason.into())) {
            core.cancel_nested(entry.nested, Some(reason), None);
        }
    };
    // A handler runs: JSON if its first message is the response, else SSE.
    // MHTTP-7: while waiting, a client that goes away cancels the request.
    let first = loop {
        match receiver.recv_timeout(LIVENESS_CHECK) {
            Ok(Outgoing::Event { json, kind, .. }) => break (json, kind),
            Ok(Outgoing::End) | Err(RecvTimeoutError::Disconnected) => {
                return HttpResponse::new(204).write_to(reply.out, keep_alive);
            }
            Err(RecvTimeoutError::Timeout) => {
                if peer_closed(reply.out) {
                    cancel();
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "client closed the connection",
                    ));
                }
            }
        }
    };
    let (first, kind) = first;
    if kind != Kind::Other {
        return write_json(reply, &first, kind);
    }
    let mut pending = wire::sse_head(&[], keep_alive);
    wire::push_chunk(&mut pending, &sse::frame_event_plain(&first));
    let result = stream_out(shared, &receiver, reply.out, pending, Some(&cancel));
    if result.is_err() {
        // MHTTP-7: the client closing the stream cancels the request.
        cancel();
    }
    result
}

/// The status of a response event.
fn status_for(kind: Kind) -> u16 {
    match kind {
        Kind::Error(code) => status_of(code),
        _ => 200,
    }
}

fn write_json(reply: Reply<'_>, json: &str, kind: Kind) -> io::Result<()> {
    HttpResponse::json(status_for(kind), json.as_bytes().to_vec())
        .write_to(reply.out, reply.keep_alive)
}

/// Streams events (without ids: MHTTP-6) with keepalive comments; checks
/// between events whether the client closed the connection.
fn stream_out(
    shared: &Shared,
    receiver: &Receiver<Outgoing>,
    out: &mut TcpStream,
    mut pending: Vec<u8>,
    on_close: Option<&dyn Fn()>,
) -> io::Result<()> {
    let mut last_write = Instant::now();
    // Request streams check often that their client is still there (its
    // leaving cancels the request); listen streams only when idle.
    let tick = if on_close.is_some() {
        shared.config.sse_keep_alive.min(LIVENESS_CHECK)
    } else {
        shared.config.sse_keep_alive
    };
    loop {
        let mut ended = false;
        match receiver.recv_timeout(tick) {
            Ok(item) => {
                let mut next = Some(item);
                while let Some(item) = next.take() {
                    match item {
                        Outgoing::Event { json, .. } => {
                            wire::push_chunk(&mut pending, &sse::frame_event_plain(&json));
                            next = receiver.try_recv().ok();
                        }
                        Outgoing::End => ended = true,
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => ended = true,
            Err(RecvTimeoutError::Timeout) => {
                if peer_closed(out) {
                    if let Some(on_close) = on_close {
                        on_close();
                    }
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "client closed the stream",
                    ));
                }
                if last_write.elapsed() >= shared.config.sse_keep_alive {
                    wire::push_chunk(&mut pending, sse::KEEPALIVE);
                }
            }
        }
        if ended {
            wire::push_last_chunk(&mut pending);
        }
        if !pending.is_empty() {
            out.write_all(&pending)?;
            out.flush()?;
            pending.clear();
            last_write = Instant::now();
        }
        if ended {
            return Ok(());
        }
    }
}

/// `true` when the peer has closed its side (a read would return EOF).
fn peer_closed(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let mut byte = [0u8; 1];
    let closed = matches!(stream.peek(&mut byte), Ok(0));
    let _ = stream.set_nonblocking(false);
    closed
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
