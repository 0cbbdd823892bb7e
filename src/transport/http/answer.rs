//! What the HTTP routing decides, and the one writer that puts it on the
//! socket.
//!
//! Routing (`route.rs`, `per_request.rs`) is a function from a parsed
//! request to an [`Answer`]: a whole response, or an [`EventStream`] with
//! its [`Framing`] and what closing it means ([`OnClose`]). [`write`] is
//! the only place that writes an answer to a socket, and
//! [`write_events`] the one SSE writer, for both eras (DESIGN.md §13).
//! They write to an [`Out`]: a connection's socket, or (feature
//! `tiny_http`) the raw writer of a tiny_http request.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::hangup::{self, Watch};
use super::sse::{self, Kind, Outgoing, Stream};
use super::wire::{self, HttpResponse};
use super::{HttpConfig, HttpSession, Shared};
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId, Response};
use crate::server::session::Session;

/// How often a stream whose closing cancels a request checks that its
/// client is still there (MHTTP-7).
const LIVENESS_CHECK: Duration = Duration::from_millis(250);

/// How often any other idle stream (a listen stream, a 2025-11-25 GET or
/// POST stream) looks at its socket for the client's close when the
/// kernel cannot tell it (`hangup.rs`: not Linux): a client that left
/// frees what its stream holds (a place under `max_listen_streams`, its
/// session's one GET stream, its connection) within this, not at the next
/// keepalive write (issue 28). That costs a wake-up and three system calls
/// per stream and check (about 20 µs, `docs/perf.md` §20).
const CLOSE_CHECK: Duration = Duration::from_millis(500);

/// How long a new stream's head waits to go out together with its first
/// event (one write instead of two).
const HEAD_COALESCE: Duration = Duration::from_millis(5);

/// The answer to one HTTP request.
pub(crate) enum Answer {
    /// A whole response.
    Whole(HttpResponse),
    /// A stream of messages as they come.
    Stream(EventStream),
}

/// A stream of messages and how to frame it.
pub(crate) struct EventStream {
    /// Messages as they are produced; ends with `Outgoing::End` or when
    /// the sending side goes away.
    pub(crate) receiver: Receiver<Outgoing>,
    /// Messages to write before those of `receiver` (a resumed stream's
    /// replay, or a single answer).
    pub(crate) replay: Vec<Outgoing>,
    pub(crate) framing: Framing,
    pub(crate) on_close: OnClose,
    /// Extra response headers (`Mcp-Session-Id`).
    pub(crate) headers: Vec<(&'static str, String)>,
    /// Held while the stream is written (a listen stream's registration).
    pub(crate) guard: Option<ListenGuard>,
    /// The stream written and its writer's token, when not in `framing`'s
    /// `Resumable`: the kernel's word that the client left reaches the
    /// writer through it, as a probe.
    pub(crate) writer: Option<(Arc<Stream>, u64)>,
}

/// How the messages of a stream go out.
pub(crate) enum Framing {
    /// SSE events with ids `<stream>-<seq>` (2025-11-25, HTTP-14), after a
    /// priming event `(seq, retry in ms)` when given (HTTP-5).
    WithIds {
        stream_id: u64,
        priming: Option<(u64, u64)>,
        resumable: Option<Resumable>,
    },
    /// SSE events without ids (2026-07-28 has no resumption, MHTTP-6);
    /// with `json_if_first`, a plain JSON response instead when the first
    /// message is the response (MHTTP-3).
    Plain { json_if_first: bool },
    /// Wait for the response and send it alone as JSON (the JSON response
    /// mode, or a client that takes no SSE); 204 when there is none (the
    /// request was cancelled, CAN-1).
    JsonWhenDone,
}

/// A 2025-11-25 stream that lives on after its connection.
pub(crate) struct Resumable {
    pub(crate) stream: Arc<Stream>,
    /// The writer's token from `Stream::attach`.
    pub(crate) token: u64,
    /// The session to forget the stream in once delivered whole (POST
    /// streams; a GET stream stays).
    pub(crate) forget_in: Option<Arc<HttpSession>>,
}

/// What the client closing the stream means.
pub(crate) enum OnClose {
    /// Nothing: the stream keeps buffering for a resuming GET (HTTP-9: a
    /// dropped connection is not a cancellation).
    Nothing,
    /// Cancel this request (MHTTP-7).
    Cancel(Arc<Session>, RequestId),
    /// Forget this listen stream, and only it (LISTEN-10).
    ForgetListen(Arc<Session>, u64),
}

/// Keeps a listen stream's session in the server's list while the stream
/// is written, so that shutdown can end it with its result (LISTEN-11).
pub(crate) struct ListenGuard {
    pub(crate) shared: Arc<Shared>,
    pub(crate) key: u64,
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        self.shared.listening.lock().remove(&self.key);
    }
}

impl Answer {
    /// A whole response with this status and no body.
    pub(crate) fn status(status: u16) -> Answer {
        Answer::Whole(HttpResponse::new(status))
    }

    /// A JSON-RPC error response with this status.
    pub(crate) fn error(status: u16, id: Option<RequestId>, error: ErrorObject) -> Answer {
        Answer::Whole(rpc_error(status, id, error))
    }
}

/// What the client accepts (`Accept`, HTTP-2).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// A 406 naming what the client must accept.
pub(crate) fn not_acceptable(id: Option<RequestId>, what: &str) -> Answer {
    let error =
        ErrorObject::invalid_request(format!("Not Acceptable: the client must accept {}", what));
    Answer::error(406, id, error)
}

/// HTTP-7: the status of an error body.
pub(crate) fn status_of(code: ErrorCode) -> u16 {
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

/// A JSON-RPC error as an HTTP response.
pub(crate) fn rpc_error(status: u16, id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    let body = Message::Response(Response::error(id, error)).to_json_string();
    HttpResponse::json(status, body.into_bytes())
}

/// Where an answer is written: a writer whose every `flush` puts what was
/// written on the wire, and that may know whether its peer has left.
pub(crate) trait Out: Write {
    /// `true` when the peer is known to have closed its side (a read would
    /// return EOF) or reset the connection. An output that cannot look at
    /// its socket answers `false`: a client that left is then noticed when
    /// a write fails.
    fn peer_closed(&self) -> bool;

    /// `true` when [`peer_closed`](Out::peer_closed) can see anything: an
    /// output that cannot is not asked while a stream is idle.
    fn sees_peer(&self) -> bool;

    /// Has the kernel tell when the peer closes (`tell` is called), while
    /// the stream is written; `None` when it cannot (the stream then looks
    /// itself).
    fn watch_hangup(&self, _tell: hangup::Tell) -> Option<Watch> {
        None
    }
}

impl Out for &TcpStream {
    fn peer_closed(&self) -> bool {
        peer_closed(self)
    }

    fn sees_peer(&self) -> bool {
        true
    }

    fn watch_hangup(&self, tell: hangup::Tell) -> Option<Watch> {
        hangup::watch(self, tell)
    }
}

/// Writes `answer` on `out`; `keep_alive` false ends the connection after
/// it. Returns an error when the client went away.
pub(crate) fn write(
    answer: Answer,
    out: &mut impl Out,
    peer: Peer,
    config: &HttpConfig,
    on_status: impl FnOnce(u16),
) -> io::Result<()> {
    match answer {
        Answer::Whole(response) => {
            response.write_to(out, peer.keep_alive, &config.response_headers)
        }
        Answer::Stream(stream) => write_events(stream, out, peer.for_stream(), config, on_status),
    }
}

/// What the peer's HTTP version allows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer {
    /// Keep the connection open after this answer.
    pub(crate) keep_alive: bool,
    /// HTTP/1.1: a stream's body is chunked. HTTP/1.0 has no chunked
    /// coding: the body then ends when the connection closes.
    pub(crate) chunked: bool,
}

impl Peer {
    /// An answer after which the connection closes.
    pub(crate) fn closing() -> Peer {
        Peer {
            keep_alive: false,
            chunked: true,
        }
    }

    /// A stream without chunked coding can only end with the connection.
    fn for_stream(self) -> Peer {
        Peer {
            keep_alive: self.keep_alive && self.chunked,
            chunked: self.chunked,
        }
    }

    fn sse_head(self, headers: &[(&'static str, String)], config: &HttpConfig) -> Vec<u8> {
        let common = &config.response_headers;
        wire::sse_head(headers, common, self.keep_alive, self.chunked)
    }

    fn chunk(self, buf: &mut Vec<u8>, data: &[u8]) {
        if self.chunked {
            wire::push_chunk(buf, data);
        } else {
            buf.extend_from_slice(data);
        }
    }

    fn last(self, buf: &mut Vec<u8>) {
        if self.chunked {
            wire::push_last_chunk(buf);
        }
    }
}

/// Writes a whole response with the program's headers of every response.
fn whole(
    response: HttpResponse,
    out: &mut impl Out,
    keep_alive: bool,
    config: &HttpConfig,
) -> io::Result<()> {
    response.write_to(out, keep_alive, &config.response_headers)
}

/// The one SSE writer: frames the stream's messages as they come, batching
/// what is queued into one write, with keepalive comments, until the stream
/// ends; then ends the response. When the client goes away, does what
/// `on_close` says. `on_status` hears the status of the whole response a
/// stream turns into (an error's 4xx), before it is written.
fn write_events(
    stream: EventStream,
    out: &mut impl Out,
    peer: Peer,
    config: &HttpConfig,
    on_status: impl FnOnce(u16),
) -> io::Result<()> {
    let keep_alive = peer.keep_alive;
    let EventStream {
        receiver,
        replay,
        framing,
        on_close,
        headers,
        guard: _guard,
        writer,
    } = stream;
    let mut pending = match framing {
        Framing::JsonWhenDone => return json_when_done(&receiver, out, keep_alive, config),
        Framing::Plain {
            json_if_first: true,
        } => match first_message(&receiver, out, &on_close) {
            Err(e) => {
                closed(on_close);
                return Err(e);
            }
            Ok(First::Ended) => return whole(HttpResponse::new(204), out, keep_alive, config),
            Ok(First::Response(json, kind)) => {
                let status = status_for(kind);
                on_status(status);
                let response = HttpResponse::json(status, json.as_bytes().to_vec());
                return whole(response, out, keep_alive, config);
            }
            Ok(First::Other(json)) => {
                let mut head = peer.sse_head(&headers, config);
                peer.chunk(&mut head, &sse::frame_event_plain(&json));
                head
            }
        },
        _ => peer.sse_head(&headers, config),
    };
    let ids = match &framing {
        Framing::WithIds {
            stream_id, priming, ..
        } => {
            if let Some((seq, retry)) = priming {
                peer.chunk(&mut pending, &sse::frame_priming(*stream_id, *seq, *retry));
            }
            Some(*stream_id)
        }
        _ => None,
    };
    let mut ended = None;
    for item in replay {
        ended = push_item(&mut pending, ids, item, peer);
        if ended.is_some() {
            break;
        }
    }
    let keep_alive_every = config.sse_keep_alive;
    let sees_peer = out.sees_peer();
    let pump = Pump {
        receiver: &receiver,
        writer: writer_of(writer, &framing),
        ids,
        keep_alive: keep_alive_every,
        sees_peer,
        peer,
        tick: looking_tick(&on_close, sees_peer, keep_alive_every),
    };
    let result = match ended {
        Some(delivered) => finish_replay(out, pending, peer).map(|()| delivered),
        None => pump.run(out, pending),
    };
    after_stream(result, &framing, on_close)
}

/// The longest wait of an idle stream that looks for its client's close
/// itself. While idle, every stream learns that its client left, so that
/// what it holds is freed for the client's reconnection (issue 28): from
/// the kernel once past its first write (`Pump::run`), else by looking,
/// often when its closing cancels a request, within a second otherwise.
/// An output that cannot see its peer only writes keepalives.
fn looking_tick(on_close: &OnClose, sees_peer: bool, keep_alive: Duration) -> Duration {
    match on_close {
        _ if !sees_peer => keep_alive,
        OnClose::Cancel(..) => keep_alive.min(LIVENESS_CHECK),
        _ => keep_alive.min(CLOSE_CHECK),
    }
}

/// The stream a writer writes and its token, to be told that its client
/// left: given, or a resumable stream's.
fn writer_of(writer: Option<(Arc<Stream>, u64)>, framing: &Framing) -> Option<(Weak<Stream>, u64)> {
    match (writer, framing) {
        (Some((stream, token)), _) => Some((Arc::downgrade(&stream), token)),
        (
            None,
            Framing::WithIds {
                resumable: Some(r), ..
            },
        ) => Some((Arc::downgrade(&r.stream), r.token)),
        (None, _) => None,
    }
}

/// What the end of a stream's writing leaves to do.
fn after_stream(result: io::Result<bool>, framing: &Framing, on_close: OnClose) -> io::Result<()> {
    let resumable = match framing {
        Framing::WithIds { resumable, .. } => resumable.as_ref(),
        _ => None,
    };
    match result {
        Ok(delivered) => {
            if let Some(r) = resumable {
                if let (true, Some(session)) = (delivered, &r.forget_in) {
                    // Delivered whole: nothing left to replay.
                    session.forget_stream(r.stream.id);
                }
            }
            Ok(())
        }
        Err(e) => {
            if let Some(r) = resumable {
                r.stream.detach_writer(r.token);
            }
            closed(on_close);
            Err(e)
        }
    }
}

/// The client went away: do what closing the stream means.
fn closed(on_close: OnClose) {
    match on_close {
        OnClose::Nothing => {}
        OnClose::Cancel(session, id) => {
            // MHTTP-7: the client closing the stream cancels the request.
            session.cancel(&id, Some("the client closed the stream".into()), false);
        }
        OnClose::ForgetListen(session, key) => session.forget_listen(key),
    }
}

fn finish_replay(out: &mut impl Out, mut pending: Vec<u8>, peer: Peer) -> io::Result<()> {
    // The resumed stream had finished: replay it whole and end.
    peer.last(&mut pending);
    out.write_all(&pending)?;
    out.flush()
}

/// The first message of a 2026-07-28 request's stream.
enum First {
    /// The stream ended without a message (the request was cancelled).
    Ended,
    /// The response, before anything else.
    Response(Arc<str>, Kind),
    /// A notification or request: the answer becomes a stream.
    Other(Arc<str>),
}

/// Waits for the first message; a client that goes away meanwhile is
/// handled as `on_close` says (MHTTP-7), and reported as an error.
fn first_message(
    receiver: &Receiver<Outgoing>,
    out: &impl Out,
    on_close: &OnClose,
) -> io::Result<First> {
    loop {
        match receiver.recv_timeout(LIVENESS_CHECK) {
            Ok(Outgoing::Event {
                json,
                kind: Kind::Other,
                ..
            }) => return Ok(First::Other(json)),
            Ok(Outgoing::Event { json, kind, .. }) => return Ok(First::Response(json, kind)),
            Ok(Outgoing::Probe) => continue,
            Ok(Outgoing::End) | Err(RecvTimeoutError::Disconnected) => return Ok(First::Ended),
            Err(RecvTimeoutError::Timeout) => {
                if !matches!(on_close, OnClose::Nothing) && out.peer_closed() {
                    return Err(client_gone());
                }
            }
        }
    }
}

/// JSON mode: wait for the response, drop what comes before it.
fn json_when_done(
    receiver: &Receiver<Outgoing>,
    out: &mut impl Out,
    keep_alive: bool,
    config: &HttpConfig,
) -> io::Result<()> {
    let common = &config.response_headers;
    let mut last = None;
    // Ends with the stream: after the response, on a cancel, or when the
    // session closes.
    loop {
        match receiver.recv() {
            Ok(Outgoing::Event { json, kind, .. }) => {
                if kind != Kind::Other {
                    last = Some(json);
                }
            }
            Ok(Outgoing::Probe) => {}
            Ok(Outgoing::End) | Err(_) => break,
        }
    }
    match last {
        Some(json) => {
            HttpResponse::json(200, json.as_bytes().to_vec()).write_to(out, keep_alive, common)
        }
        // Cancelled: no JSON-RPC response exists (CAN-1).
        None => HttpResponse::new(204).write_to(out, keep_alive, common),
    }
}

/// The status of a response message (HTTP-7).
fn status_for(kind: Kind) -> u16 {
    match kind {
        Kind::Error(code) => status_of(code),
        _ => 200,
    }
}

/// The event loop of one stream.
struct Pump<'a> {
    receiver: &'a Receiver<Outgoing>,
    /// The stream and the writer's token, to be told that the client left.
    writer: Option<(Weak<Stream>, u64)>,
    /// The stream id for event ids; `None` frames events without ids.
    ids: Option<u64>,
    keep_alive: Duration,
    /// Check between events whether the client is still there.
    sees_peer: bool,
    /// The longest wait for an event while the stream looks itself.
    tick: Duration,
    peer: Peer,
}

impl Pump<'_> {
    /// Writes `pending`, then events as they come, until the stream ends.
    /// Returns `true` when it ended with its response delivered.
    fn run(&self, out: &mut impl Out, mut pending: Vec<u8>) -> io::Result<bool> {
        let mut tick = self.tick;
        let mut wait = HEAD_COALESCE.min(tick);
        let mut last_write = Instant::now();
        let mut wrote = false;
        // Held while the stream is written: dropping it stops the watch.
        let mut _watch = None;
        let mut asked = !self.sees_peer;
        loop {
            let mut ended = None;
            match self.receiver.recv_timeout(wait) {
                Ok(Outgoing::Probe) => {
                    // A new GET asks whether this client is still there,
                    // or the kernel says it left.
                    if out.peer_closed() {
                        return Err(client_gone());
                    }
                }
                Ok(item) => {
                    ended = push_item(&mut pending, self.ids, item, self.peer);
                    while ended.is_none() {
                        match self.receiver.try_recv() {
                            Ok(item) => ended = push_item(&mut pending, self.ids, item, self.peer),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => ended = Some(false),
                Err(RecvTimeoutError::Timeout) => {
                    if self.sees_peer && out.peer_closed() {
                        return Err(client_gone());
                    }
                    if pending.is_empty() && last_write.elapsed() >= self.keep_alive {
                        self.peer.chunk(&mut pending, sse::KEEPALIVE);
                    }
                }
            }
            if let Some(delivered) = ended.as_mut() {
                self.peer.last(&mut pending);
                // A client that left after an earlier write may not have
                // made a write fail yet: write anyway, but keep the stream
                // for a resume (HTTP-9). A stream answered in its first
                // write went to a client that just asked (and the check
                // costs three system calls).
                if wrote {
                    *delivered = *delivered && !out.peer_closed();
                }
            }
            if !pending.is_empty() {
                out.write_all(&pending)?;
                out.flush()?;
                pending.clear();
                last_write = Instant::now();
                wrote = true;
            }
            if let Some(delivered) = ended {
                return Ok(delivered);
            }
            if !asked {
                asked = true;
                // Past its first write the stream may stay idle long: the
                // kernel tells it when its client leaves, and it waits for
                // events alone (a stream answered at once never asks).
                _watch = self.writer.as_ref().and_then(|(stream, token)| {
                    let (stream, token) = (Weak::clone(stream), *token);
                    out.watch_hangup(Arc::new(move || {
                        if let Some(stream) = stream.upgrade() {
                            stream.poke(token);
                        }
                    }))
                });
                if _watch.is_some() {
                    tick = self.keep_alive;
                }
            }
            // The keepalive goes out on time, whatever the tick.
            wait = tick.min(self.keep_alive.saturating_sub(last_write.elapsed()));
        }
    }
}

/// Appends one item as a chunk; `Some(true)` when it is the end.
fn push_item(buf: &mut Vec<u8>, ids: Option<u64>, item: Outgoing, peer: Peer) -> Option<bool> {
    match item {
        Outgoing::Event { seq, json, .. } => {
            let event = match ids {
                Some(stream_id) => sse::frame_event(stream_id, seq, &json),
                None => sse::frame_event_plain(&json),
            };
            peer.chunk(buf, &event);
            None
        }
        Outgoing::End => Some(true),
        // Only a waiting writer answers a probe; a queued one is stale.
        Outgoing::Probe => None,
    }
}

fn client_gone() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the client closed the stream",
    )
}

/// `true` when the peer has closed its side (a read would return EOF) or
/// reset the connection. Looks without taking a byte: a client that sent
/// something (a pipelined request) is still there.
fn peer_closed(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let mut byte = [0u8; 1];
    let closed = match stream.peek(&mut byte) {
        Ok(n) => n == 0,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted | io::ErrorKind::TimedOut
        ),
    };
    let _ = stream.set_nonblocking(false);
    closed
}
