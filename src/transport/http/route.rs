//! HTTP routing: a function from a parsed request to an [`Answer`], with
//! no socket in sight (DESIGN.md §11). The steps, in order: the endpoint
//! path, DNS-rebinding protection, the HTTP method, the body's media types,
//! the era ([`choose_path`]), then the 2025-11-25 session rules here or the
//! 2026-07-28 rules in `per_request.rs`.
//!
//! Spec: basic/transports "Streamable HTTP" (2025-11-25), HTTP-1 to
//! HTTP-21, SEC-1, SEC-2.

use std::sync::Arc;

use super::answer::{rpc_error, Answer, EventStream, Framing, OnClose, Resumable};
use super::media::{accepts, check_host_and_origin, is_json};
use super::sse::{self, Outgoing, Stream, StreamSink};
use super::wire::{HttpRequest, HttpResponse};
use super::{per_request, HttpSession, Lookup, Shared};
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Request, RequestId};
use crate::protocol::{methods, versions};
use crate::server::{envelope, NullSink, Received, Sink};
use crate::session::Session;

/// Header names, as the spec spells them.
pub(crate) mod headers {
    /// `Mcp-Session-Id`
    pub(crate) const MCP_SESSION_ID: &str = "Mcp-Session-Id";
}

/// What the client accepts (`Accept`, HTTP-2).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// Decides the answer to one request.
pub(crate) fn route(shared: &Arc<Shared>, request: &HttpRequest) -> Answer {
    if request.path != shared.config.endpoint {
        return Answer::status(404);
    }
    if shared.config.dns_rebinding_protection {
        if let Err(why) = check_host_and_origin(
            request.header("host"),
            request.header("origin"),
            shared.loopback,
            &shared.config.allowed_hosts,
            &shared.config.allowed_origins,
        ) {
            log::warn!("refused a request: {}", why);
            return Answer::error(403, None, ErrorObject::new(ErrorCode(-32000), why));
        }
    }
    let stateless = shared.config.stateless;
    match request.method.as_str() {
        "POST" => post(shared, request),
        "GET" if !stateless => get(shared, request),
        "DELETE" if !stateless => delete(shared, request),
        _ => {
            let allow = if stateless {
                "POST"
            } else {
                "GET, POST, DELETE"
            };
            Answer::Whole(HttpResponse::new(405).header("Allow", allow))
        }
    }
}

/// The paths a POST can take.
#[derive(Debug)]
pub(crate) enum Path {
    /// The 2026-07-28 rules (`per_request.rs`).
    PerRequest,
    /// A 2025-11-25 `initialize` that opens a session.
    Initialize,
    /// A 2025-11-25 request on a session (or in the stateless mode).
    Session,
    /// Refused before any MCP handling.
    Refuse(u16, ErrorObject),
}

/// The era chooser (ERA-3, ERA-4, ERA-6, HTTP-21, LC-8), in this order:
///
/// | `Mcp-Session-Id` | `MCP-Protocol-Version` | body | path |
/// | --- | --- | --- | --- |
/// | none | set, not a handshake version | `initialize` without `protocolVersion` | 2026-07-28 (`-32601`, REM-1) |
/// | names a live session | any | `initialize` | 400, already initialized |
/// | names no live session | any | `initialize` | 404 |
/// | none | any | `initialize` | the handshake |
/// | none | set, not a handshake version (unknown ones too) | anything else | 2026-07-28 |
/// | none | none | a request with a 2026-07-28 `_meta` claim | 400, `-32020` |
/// | set | 2026-07-28 | anything else | 400 (a session takes no 2026-07-28 requests) |
/// | any | set, not supported | anything else | 400 |
/// | otherwise | | | the session (or the stateless mode) |
pub(crate) fn choose_path(shared: &Shared, request: &HttpRequest, message: &Message) -> Path {
    let session_id = request.header("mcp-session-id");
    let version = request.header("mcp-protocol-version");
    let not_handshake = version.map_or(false, |v| !v.is_empty() && !versions::is_supported(v));
    let body = match message {
        Message::Request(r) => Some(r),
        _ => None,
    };
    if let Some(r) = body.filter(|r| r.method == methods::INITIALIZE) {
        let handshake_shaped = r
            .params
            .as_ref()
            .and_then(|p| p.get("protocolVersion"))
            .is_some();
        return match session_id {
            None if not_handshake && !handshake_shaped => Path::PerRequest,
            None => Path::Initialize,
            Some(id) => match shared.lookup(id) {
                Lookup::Found(_) => Path::Refuse(
                    400,
                    ErrorObject::invalid_request("the session is already initialized"),
                ),
                Lookup::NotFound => {
                    Path::Refuse(404, ErrorObject::invalid_request("session not found"))
                }
            },
        };
    }
    if session_id.is_none() && not_handshake {
        return Path::PerRequest;
    }
    if session_id.is_none() && version.is_none() && body.map_or(false, envelope::is_claim) {
        let error = ErrorObject::new(
            ErrorCode::HEADER_MISMATCH,
            "missing MCP-Protocol-Version header",
        );
        return Path::Refuse(400, error);
    }
    match version {
        Some(v) if versions::is_modern(v) => Path::Refuse(
            400,
            ErrorObject::invalid_request(format!(
                "this session uses the 2025-11-25 handshake era; send {} requests without Mcp-Session-Id",
                v
            )),
        ),
        Some(v) if !versions::is_supported(v) => Path::Refuse(
            400,
            ErrorObject::invalid_request(format!(
                "unsupported MCP-Protocol-Version: {} (supported: {})",
                v,
                versions::SUPPORTED.join(", ")
            )),
        ),
        _ => Path::Session,
    }
}

/// HTTP-2, HTTP-3: media types, the body, then the era's rules.
fn post(shared: &Arc<Shared>, request: &HttpRequest) -> Answer {
    let (json, sse) = accepts(request.header("accept"));
    let accepts = Accepts { json, sse };
    if !json && !sse {
        return not_acceptable(None, "application/json or text/event-stream");
    }
    if !request.header("content-type").map_or(false, is_json) {
        let error = ErrorObject::invalid_request(
            "Unsupported Media Type: Content-Type must be application/json",
        );
        return Answer::error(415, None, error);
    }
    let message = match Message::parse(&request.body) {
        Ok(message) => message,
        Err(e) => return Answer::error(400, e.id, e.error),
    };
    let id = match &message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    match choose_path(shared, request, &message) {
        Path::PerRequest => per_request::post(shared, request, message, accepts),
        Path::Initialize => initialize(shared, message, accepts),
        Path::Refuse(status, error) => Answer::error(status, id, error),
        Path::Session => on_session(shared, request, message, accepts),
    }
}

/// A 406 naming what the client must accept.
pub(crate) fn not_acceptable(id: Option<RequestId>, what: &str) -> Answer {
    let error =
        ErrorObject::invalid_request(format!("Not Acceptable: the client must accept {}", what));
    Answer::error(406, id, error)
}

/// A 2025-11-25 message on its session, or in the stateless mode on a
/// session of its own. Notifications and the client's answers get 202
/// (HTTP-3).
fn on_session(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    message: Message,
    accepts: Accepts,
) -> Answer {
    if shared.config.stateless {
        let version = request.header("mcp-protocol-version");
        let core = Session::stateless_post(&shared.server, version);
        return match message {
            Message::Request(r) => serve_request(shared, &core, None, r, accepts),
            other => {
                let sink: Arc<dyn Sink> = Arc::new(NullSink);
                let _ = core.receive(other, &sink);
                Answer::status(202)
            }
        };
    }
    let id = match &message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let session = match session_for(shared, request, id) {
        Ok(session) => session,
        Err(response) => return Answer::Whole(response),
    };
    match message {
        Message::Request(r) => {
            let core = Arc::clone(&session.core);
            serve_request(shared, &core, Some(&session), r, accepts)
        }
        other => {
            let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&session.get_stream)));
            let _ = session.core.receive(other, &sink);
            Answer::status(202)
        }
    }
}

/// One message as the whole answer: JSON when the client takes it, else a
/// one-event SSE stream.
fn single(
    accepts: Accepts,
    status: u16,
    json: String,
    headers: Vec<(&'static str, String)>,
) -> Answer {
    if accepts.json {
        let mut response = HttpResponse::json(status, json.into_bytes());
        response.headers.extend(headers);
        return Answer::Whole(response);
    }
    Answer::Stream(EventStream {
        receiver: crossbeam_channel::never(),
        replay: vec![
            Outgoing::Event {
                seq: 0,
                json: Arc::from(json),
                kind: sse::Kind::Other,
            },
            Outgoing::End,
        ],
        framing: Framing::WithIds {
            stream_id: 0,
            priming: None,
            resumable: None,
        },
        on_close: OnClose::Nothing,
        headers,
        guard: None,
    })
}

/// LC-1, HTTP-16: the handshake; a session is kept only when it succeeds.
fn initialize(shared: &Arc<Shared>, message: Message, accepts: Accepts) -> Answer {
    let session = if shared.config.stateless {
        None
    } else {
        Some(shared.new_session())
    };
    let core = match &session {
        Some(s) => Arc::clone(&s.core),
        None => Session::stateless_initialize(&shared.server),
    };
    let sink: Arc<dyn Sink> = Arc::new(NullSink);
    let response = match core.receive(message, &sink) {
        Received::Answered(response) => response,
        _ => {
            let error = ErrorObject::internal("initialize produced no response");
            return Answer::error(500, None, error);
        }
    };
    if response.outcome.is_err() {
        // No session is left behind (HTTP-16).
        return single(accepts, 400, response_json(response), Vec::new());
    }
    let mut headers = Vec::new();
    if let Some(session) = &session {
        if !shared.register(session) {
            let error = ErrorObject::internal("too many sessions; try again later");
            return Answer::error(503, response.id, error);
        }
        headers.push((headers::MCP_SESSION_ID, session.id.clone()));
    }
    single(accepts, 200, response_json(response), headers)
}

fn response_json(response: crate::jsonrpc::Response) -> String {
    Message::Response(response).to_json_string()
}

/// A 2025-11-25 request: answered at once as one JSON response, or its
/// handler's messages as an SSE stream of its own (HTTP-4, HTTP-5).
fn serve_request(
    shared: &Arc<Shared>,
    core: &Arc<Session>,
    session: Option<&Arc<HttpSession>>,
    request: Request,
    accepts: Accepts,
) -> Answer {
    let id = request.id.clone();
    let config = &shared.config;
    let stream = match session {
        Some(s) => match s.open_stream(config, id.clone()) {
            Some(stream) => stream,
            None => {
                let error = ErrorObject::internal("too many open streams in this session");
                return Answer::error(429, Some(id), error);
            }
        },
        None => Arc::new(Stream::new(1, Some(id.clone()), config.stream_queue_len, 0)),
    };
    let (receiver, _, token) = stream.attach(None);
    let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&stream)));
    match core.receive(Message::Request(request), &sink) {
        Received::Answered(response) => {
            if let Some(s) = session {
                // The stream was never shown to the client.
                s.discard_stream(stream.id);
            }
            return single(accepts, 200, response_json(response), Vec::new());
        }
        Received::Run(job) => {
            if !shared.pool.execute(move || job.run()) {
                let error = ErrorObject::internal("the server is shutting down");
                return Answer::error(503, Some(id), error);
            }
        }
        Received::Listening(_) | Received::Consumed => return Answer::status(202),
    }
    let framing = if !accepts.sse || config.json_response {
        Framing::JsonWhenDone
    } else {
        Framing::WithIds {
            stream_id: stream.id,
            priming: priming(shared, core, token),
            resumable: Some(Resumable {
                stream: Arc::clone(&stream),
                token,
                forget_in: session.cloned(),
            }),
        }
    };
    Answer::Stream(EventStream {
        receiver,
        replay: Vec::new(),
        framing,
        on_close: OnClose::Nothing,
        headers: Vec::new(),
        guard: None,
    })
}

/// HTTP-5: a priming event with `retry:` for sessions on 2025-11-25.
fn priming(shared: &Shared, core: &Session, seq: u64) -> Option<(u64, u64)> {
    if core.protocol_version().as_str() >= versions::V2025_11_25 {
        Some((seq, shared.config.sse_retry.as_millis() as u64))
    } else {
        None
    }
}

/// The session a request names: 400 without `Mcp-Session-Id`, 404 for an
/// unknown, deleted or expired one (HTTP-17, HTTP-18).
fn session_for(
    shared: &Shared,
    request: &HttpRequest,
    id: Option<RequestId>,
) -> Result<Arc<HttpSession>, HttpResponse> {
    match request.header("mcp-session-id") {
        None => Err(rpc_error(
            400,
            id,
            ErrorObject::invalid_request("Bad Request: missing Mcp-Session-Id header"),
        )),
        Some(session_id) => match shared.lookup(session_id) {
            Lookup::Found(session) => Ok(session),
            Lookup::NotFound => Err(rpc_error(
                404,
                id,
                ErrorObject::invalid_request("session not found"),
            )),
        },
    }
}

/// HTTP-10 to HTTP-15: the standalone stream, or a resumed one.
fn get(shared: &Arc<Shared>, request: &HttpRequest) -> Answer {
    let (_, takes_sse) = accepts(request.header("accept"));
    if !takes_sse {
        return not_acceptable(None, "text/event-stream");
    }
    let session = match session_for(shared, request, None) {
        Ok(s) => s,
        Err(response) => return Answer::Whole(response),
    };
    let resume = request
        .header("last-event-id")
        .and_then(sse::parse_event_id)
        .and_then(|(stream, seq)| session.stream(stream).map(|s| (s, seq)));
    let (stream, after) = match resume {
        Some((stream, seq)) => (stream, Some(seq)),
        None => {
            if session.get_stream.is_live() {
                let error = ErrorObject::invalid_request(
                    "Conflict: only one GET stream per session is allowed",
                );
                return Answer::error(409, None, error);
            }
            (Arc::clone(&session.get_stream), None)
        }
    };
    let (receiver, replay, token) = stream.attach(after);
    Answer::Stream(EventStream {
        receiver,
        replay,
        framing: Framing::WithIds {
            stream_id: stream.id,
            priming: priming(shared, &session.core, token),
            resumable: Some(Resumable {
                stream: Arc::clone(&stream),
                token,
                forget_in: None,
            }),
        },
        on_close: OnClose::Nothing,
        headers: Vec::new(),
        guard: None,
    })
}

/// HTTP-19: `DELETE` ends the session.
fn delete(shared: &Arc<Shared>, request: &HttpRequest) -> Answer {
    match request.header("mcp-session-id") {
        None => Answer::error(
            400,
            None,
            ErrorObject::invalid_request("Bad Request: missing Mcp-Session-Id header"),
        ),
        Some(id) if shared.remove(id) => Answer::status(200),
        Some(_) => Answer::error(404, None, ErrorObject::invalid_request("session not found")),
    }
}
