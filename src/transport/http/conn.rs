//! One connection: read requests, route them, write responses.

use std::io::{self, BufReader, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::media::{accepts, check_host_and_origin, is_json};
use super::sse::{self, Kind, Outgoing, Stream, StreamSink};
use super::wire::{self, HttpRequest, HttpResponse, ReadError};
use super::{HttpSession, Lookup, Shared};
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Request, RequestId, Response};
use crate::protocol::{methods, versions};
use crate::session::Session;
use crate::transport::{ChannelSink, Sink};

/// Header names, as the spec spells them.
pub(crate) mod headers {
    /// `Mcp-Session-Id`
    pub(crate) const MCP_SESSION_ID: &str = "Mcp-Session-Id";
}

pub(crate) fn serve_connection(shared: &Arc<Shared>, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(shared.config.connection_idle_timeout));
    let read_half = match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    loop {
        if shared.stopping() {
            return;
        }
        let request = match wire::read_request(&mut reader, shared.config.max_body_bytes) {
            Ok(request) => request,
            Err(ReadError::Closed) => return,
            Err(ReadError::Io(e)) => {
                log::debug!("connection dropped inside a request: {}", e);
                return;
            }
            Err(ReadError::Malformed(why)) => {
                let _ = rpc_error(400, None, ErrorObject::invalid_request(why))
                    .write_to(&mut out, false);
                return;
            }
            Err(ReadError::HeadTooLarge) => {
                let _ = HttpResponse::new(431).write_to(&mut out, false);
                return;
            }
            Err(ReadError::BodyTooLarge) => {
                let error = ErrorObject::invalid_request(format!(
                    "request body too large: the limit is {} bytes",
                    shared.config.max_body_bytes
                ));
                let _ = rpc_error(413, None, error).write_to(&mut out, false);
                return;
            }
        };
        let keep_alive = request.keep_alive && !shared.stopping();
        match route(shared, &request, &mut out, keep_alive) {
            Ok(()) if keep_alive => continue,
            _ => return,
        }
    }
}

/// A JSON-RPC error as an HTTP response.
pub(crate) fn rpc_error(status: u16, id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    let body = Message::Response(Response::error(id, error)).to_json_string();
    HttpResponse::json(status, body.into_bytes())
}

fn route(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    out: &mut TcpStream,
    keep_alive: bool,
) -> io::Result<()> {
    if request.path != shared.config.endpoint {
        return HttpResponse::new(404).write_to(out, keep_alive);
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
            return rpc_error(403, None, ErrorObject::new(ErrorCode(-32000), why))
                .write_to(out, keep_alive);
        }
    }
    let allow = if shared.config.stateless {
        "POST"
    } else {
        "GET, POST, DELETE"
    };
    match request.method.as_str() {
        "POST" => post(shared, request, out, keep_alive),
        "GET" if !shared.config.stateless => get(shared, request, out, keep_alive),
        "DELETE" if !shared.config.stateless => delete(shared, request, out, keep_alive),
        _ => HttpResponse::new(405)
            .header("Allow", allow)
            .write_to(out, keep_alive),
    }
}

fn post(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    out: &mut TcpStream,
    keep_alive: bool,
) -> io::Result<()> {
    let (takes_json, takes_sse) = accepts(request.header("accept"));
    if !takes_json && !takes_sse {
        let error = ErrorObject::invalid_request(
            "Not Acceptable: the client must accept application/json or text/event-stream",
        );
        return rpc_error(406, None, error).write_to(out, keep_alive);
    }
    if !request.header("content-type").map_or(false, is_json) {
        let error = ErrorObject::invalid_request(
            "Unsupported Media Type: Content-Type must be application/json",
        );
        return rpc_error(415, None, error).write_to(out, keep_alive);
    }
    let message = match Message::parse(&request.body) {
        Ok(message) => message,
        Err(e) => return rpc_error(400, e.id, e.error).write_to(out, keep_alive),
    };
    let request_id = match &message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let is_initialize = matches!(&message, Message::Request(r) if r.method == methods::INITIALIZE);
    // ERA-3 and REM-1: under a 2026-07-28 header, an `initialize` shaped as
    // a 2026 request (no `protocolVersion` param) is a removed method there;
    // one shaped for the handshake still goes to the legacy path.
    let modern_initialize = is_initialize
        && request.header("mcp-session-id").is_none()
        && request
            .header("mcp-protocol-version")
            .map_or(false, |v| !v.is_empty() && !versions::is_supported(v))
        && matches!(&message, Message::Request(r)
            if r.params.as_ref().and_then(|p| p.get("protocolVersion")).is_none());
    let reply = Reply {
        out,
        keep_alive,
        takes_json,
        takes_sse,
    };
    if modern_initialize {
        return super::modern::post(shared, request, message, reply);
    }
    if is_initialize {
        if let Some(id) = request.header("mcp-session-id") {
            // LC-8: an initialize on a live session changes nothing.
            return match shared.lookup(id) {
                Lookup::Found(_) => rpc_error(
                    400,
                    request_id,
                    ErrorObject::invalid_request("the session is already initialized"),
                ),
                Lookup::NotFound => rpc_error(
                    404,
                    request_id,
                    ErrorObject::invalid_request("session not found"),
                ),
            }
            .write_to(reply.out, keep_alive);
        }
        return initialize(shared, message, reply);
    }
    let header_version = request.header("mcp-protocol-version");
    // ERA-3: a version header that is not a handshake version takes the
    // 2026-07-28 path (an unknown one too, so that it gets -32022), unless
    // the request names a legacy session: then it stays that session's.
    if let Some(version) = header_version {
        let legacy_session = request.header("mcp-session-id").is_some();
        if !version.is_empty() && !versions::is_supported(version) && !legacy_session {
            return super::modern::post(shared, request, message, reply);
        }
    }
    // ERA-4: a 2026-07-28 request without the version header.
    if header_version.is_none() && request.header("mcp-session-id").is_none() {
        if let Message::Request(r) = &message {
            if crate::server::modern::is_modern_claim(r) {
                let error = ErrorObject::new(
                    ErrorCode::HEADER_MISMATCH,
                    "missing MCP-Protocol-Version header",
                );
                return rpc_error(400, request_id, error).write_to(reply.out, keep_alive);
            }
        }
    }
    // HTTP-21: an unsupported version header is a 400.
    if let Some(version) = header_version {
        if versions::is_modern(version) {
            // ERA-6: a legacy session does not take 2026-07-28 requests.
            let error = ErrorObject::invalid_request(format!(
                "this session uses the 2025-11-25 handshake era; send {} requests without Mcp-Session-Id",
                version
            ));
            return rpc_error(400, request_id, error).write_to(reply.out, keep_alive);
        }
        if !versions::is_supported(version) {
            let error = ErrorObject::invalid_request(format!(
                "unsupported MCP-Protocol-Version: {} (supported: {})",
                version,
                versions::SUPPORTED.join(", ")
            ));
            return rpc_error(400, request_id, error).write_to(reply.out, keep_alive);
        }
    }
    if shared.config.stateless {
        let core = Session::new(&shared.server, None, None);
        {
            let mut state = core.state.lock();
            state.initialized = true;
            state.protocol_version = header_version.unwrap_or(versions::V2025_03_26).to_string();
        }
        return match message {
            Message::Request(r) => serve_request(shared, &core, None, r, reply),
            other => {
                let sink: Arc<dyn Sink> = Arc::new(NullSink);
                core.receive(other, &sink);
                HttpResponse::new(202).write_to(reply.out, keep_alive)
            }
        };
    }
    let session = match session_for(shared, request, request_id) {
        Ok(session) => session,
        Err(response) => return response.write_to(reply.out, keep_alive),
    };
    match message {
        Message::Request(r) => {
            let core = Arc::clone(&session.core);
            serve_request(shared, &core, Some(&session), r, reply)
        }
        other => {
            // HTTP-3: notifications and the client's answers get 202.
            let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&session.get_stream)));
            session.core.receive(other, &sink);
            HttpResponse::new(202).write_to(reply.out, keep_alive)
        }
    }
}

/// How to answer one POST.
pub(crate) struct Reply<'a> {
    pub(crate) out: &'a mut TcpStream,
    pub(crate) keep_alive: bool,
    pub(crate) takes_json: bool,
    pub(crate) takes_sse: bool,
}

impl Reply<'_> {
    /// Writes one message as the whole response: JSON when the client takes
    /// it, else a one-event SSE stream.
    fn single(self, status: u16, json: &str, extra: Vec<(&'static str, String)>) -> io::Result<()> {
        if self.takes_json {
            let mut response = HttpResponse::json(status, json.as_bytes().to_vec());
            response.headers.extend(extra);
            response.write_to(self.out, self.keep_alive)
        } else {
            let mut buf = wire::sse_head(&extra, self.keep_alive);
            wire::push_chunk(&mut buf, &sse::frame_event(0, 0, json));
            wire::push_last_chunk(&mut buf);
            self.out.write_all(&buf)?;
            self.out.flush()
        }
    }
}

/// A sink for messages with nowhere to go (stateless notifications).
struct NullSink;

impl Sink for NullSink {
    fn send(&self, _: Message) -> bool {
        false
    }
}

fn initialize(shared: &Arc<Shared>, message: Message, reply: Reply<'_>) -> io::Result<()> {
    let (sender, receiver) = crossbeam_channel::bounded(4);
    let sink: Arc<dyn Sink> = Arc::new(ChannelSink(sender));
    let session = if shared.config.stateless {
        None
    } else {
        Some(shared.new_session())
    };
    let transient;
    let core = match &session {
        Some(s) => &s.core,
        None => {
            transient = Session::new(&shared.server, None, None);
            &transient
        }
    };
    core.receive(message, &sink);
    let response = match receiver.try_recv() {
        Ok(Message::Response(response)) => response,
        _ => {
            return rpc_error(
                500,
                None,
                ErrorObject::internal("initialize produced no response"),
            )
            .write_to(reply.out, reply.keep_alive)
        }
    };
    if response.outcome.is_err() {
        // No session is left behind (HTTP-16).
        return reply.single(
            400,
            &Message::Response(response).to_json_string(),
            Vec::new(),
        );
    }
    let mut extra = Vec::new();
    if let Some(session) = &session {
        if !shared.register(session) {
            let error = ErrorObject::internal("too many sessions; try again later");
            return rpc_error(503, response.id, error).write_to(reply.out, reply.keep_alive);
        }
        extra.push((headers::MCP_SESSION_ID, session.id.clone()));
    }
    reply.single(200, &Message::Response(response).to_json_string(), extra)
}

fn serve_request(
    shared: &Arc<Shared>,
    core: &Arc<Session>,
    session: Option<&Arc<HttpSession>>,
    request: Request,
    reply: Reply<'_>,
) -> io::Result<()> {
    let id = request.id.clone();
    let stream = match session {
        Some(s) => match s.open_stream(&shared.config, id.clone()) {
            Some(stream) => stream,
            None => {
                let error = ErrorObject::internal("too many open streams in this session");
                return rpc_error(429, Some(id), error).write_to(reply.out, reply.keep_alive);
            }
        },
        None => Arc::new(Stream::new(
            1,
            Some(id.clone()),
            shared.config.stream_queue_len,
            0,
        )),
    };
    let (receiver, _, priming_seq) = stream.attach(None);
    let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&stream)));
    let job = match core.receive(Message::Request(request), &sink) {
        Some(job) => job,
        None => {
            // Answered at once (ping, lists, …): one JSON response.
            return match receiver.try_recv() {
                Ok(Outgoing::Event { json, .. }) => reply.single(200, &json, Vec::new()),
                _ => HttpResponse::new(202).write_to(reply.out, reply.keep_alive),
            };
        }
    };
    if !shared.pool.execute(move || job.run()) {
        let error = ErrorObject::internal("the server is shutting down");
        return rpc_error(503, Some(id), error).write_to(reply.out, reply.keep_alive);
    }
    if !reply.takes_sse || shared.config.json_response {
        return answer_json(&receiver, reply);
    }
    let negotiated = core.state.lock().protocol_version.clone();
    let mut pending = wire::sse_head(&[], reply.keep_alive);
    if negotiated.as_str() >= versions::V2025_11_25 {
        let retry = shared.config.sse_retry.as_millis() as u64;
        wire::push_chunk(
            &mut pending,
            &sse::frame_priming(stream.id, priming_seq, retry),
        );
    }
    match pump(shared, stream.id, &receiver, reply.out, pending) {
        Ok(delivered) => {
            if let (true, Some(session)) = (delivered, session) {
                // Delivered whole: nothing left to replay.
                session.forget_stream(stream.id);
            }
            Ok(())
        }
        Err(e) => {
            // HTTP-9: a dropped connection is not a cancellation; the stream
            // keeps buffering for a resuming GET.
            stream.detach_writer(priming_seq);
            Err(e)
        }
    }
}

/// JSON mode: wait for the response, drop what comes before it.
fn answer_json(receiver: &Receiver<Outgoing>, reply: Reply<'_>) -> io::Result<()> {
    let mut last = None;
    // Ends with the stream: after the response, on a cancel, or when the
    // session closes.
    while let Ok(Outgoing::Event { json, kind, .. }) = receiver.recv() {
        if kind != Kind::Other {
            last = Some(json);
        }
    }
    match last {
        Some(json) => {
            HttpResponse::json(200, json.as_bytes().to_vec()).write_to(reply.out, reply.keep_alive)
        }
        // Cancelled: no JSON-RPC response exists (CAN-1).
        None => HttpResponse::new(204).write_to(reply.out, reply.keep_alive),
    }
}

/// How long a new stream's head waits to go out together with its first
/// event (one write instead of two).
const HEAD_COALESCE: Duration = Duration::from_millis(5);

/// Writes `pending` and then a stream's events as they come, batching what
/// is queued into one write, with keepalive comments, until the stream
/// ends or its writer is detached; then ends the response. Returns `true`
/// when the stream ended with its response delivered.
fn pump(
    shared: &Shared,
    stream_id: u64,
    receiver: &Receiver<Outgoing>,
    out: &mut TcpStream,
    mut pending: Vec<u8>,
) -> io::Result<bool> {
    let keep_alive = shared.config.sse_keep_alive;
    let mut wait = if pending.is_empty() {
        keep_alive
    } else {
        HEAD_COALESCE.min(keep_alive)
    };
    loop {
        let mut ended = None;
        match receiver.recv_timeout(wait) {
            Ok(item) => {
                ended = push_item(&mut pending, stream_id, item);
                while ended.is_none() {
                    match receiver.try_recv() {
                        Ok(item) => ended = push_item(&mut pending, stream_id, item),
                        Err(_) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => ended = Some(false),
            Err(RecvTimeoutError::Timeout) => {
                if pending.is_empty() {
                    wire::push_chunk(&mut pending, sse::KEEPALIVE);
                }
            }
        }
        if ended.is_some() {
            wire::push_last_chunk(&mut pending);
        }
        if !pending.is_empty() {
            out.write_all(&pending)?;
            out.flush()?;
            pending.clear();
        }
        if let Some(delivered) = ended {
            return Ok(delivered);
        }
        wait = keep_alive;
    }
}

/// Appends one item as a chunk; `Some(true)` when it is the end.
fn push_item(buf: &mut Vec<u8>, stream_id: u64, item: Outgoing) -> Option<bool> {
    match item {
        Outgoing::Event { seq, json, .. } => {
            wire::push_chunk(buf, &sse::frame_event(stream_id, seq, &json));
            None
        }
        Outgoing::End => Some(true),
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
            id.clone(),
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
fn get(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    out: &mut TcpStream,
    keep_alive: bool,
) -> io::Result<()> {
    let (_, takes_sse) = accepts(request.header("accept"));
    if !takes_sse {
        let error = ErrorObject::invalid_request(
            "Not Acceptable: the client must accept text/event-stream",
        );
        return rpc_error(406, None, error).write_to(out, keep_alive);
    }
    let session = match session_for(shared, request, None) {
        Ok(s) => s,
        Err(response) => return response.write_to(out, keep_alive),
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
                return rpc_error(409, None, error).write_to(out, keep_alive);
            }
            (Arc::clone(&session.get_stream), None)
        }
    };
    let (receiver, replay, priming_seq) = stream.attach(after);
    let negotiated = session.core.state.lock().protocol_version.clone();
    let mut pending = wire::sse_head(&[], keep_alive);
    if negotiated.as_str() >= versions::V2025_11_25 {
        let retry = shared.config.sse_retry.as_millis() as u64;
        wire::push_chunk(
            &mut pending,
            &sse::frame_priming(stream.id, priming_seq, retry),
        );
    }
    let mut ended = false;
    for item in replay {
        if push_item(&mut pending, stream.id, item).is_some() {
            ended = true;
            break;
        }
    }
    let result = if ended {
        // The resumed stream had finished: replay it whole and end.
        wire::push_last_chunk(&mut pending);
        out.write_all(&pending).and_then(|()| out.flush())
    } else {
        pump(shared, stream.id, &receiver, out, pending).map(|_| ())
    };
    if result.is_err() {
        stream.detach_writer(priming_seq);
    }
    result
}

/// HTTP-19: `DELETE` ends the session.
fn delete(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    out: &mut TcpStream,
    keep_alive: bool,
) -> io::Result<()> {
    match request.header("mcp-session-id") {
        None => rpc_error(
            400,
            None,
            ErrorObject::invalid_request("Bad Request: missing Mcp-Session-Id header"),
        )
        .write_to(out, keep_alive),
        Some(id) => {
            if shared.remove(id) {
                HttpResponse::new(200).write_to(out, keep_alive)
            } else {
                rpc_error(404, None, ErrorObject::invalid_request("session not found"))
                    .write_to(out, keep_alive)
            }
        }
    }
}
