//! The client over Streamable HTTP (basic/transports "Streamable HTTP",
//! 2025-11-25; HTTP-1 to HTTP-9, 2026-07-28).
//!
//! Each request is one POST on a keep-alive connection from a small pool,
//! on the calling thread: calls from several threads use several
//! connections. The answer is one JSON response or an event stream whose
//! notifications go to the inbox and whose server requests (2025-11-25)
//! are answered with a POST of their own (a refusal of that answer ends
//! the call). A stream that ends before the answer is resumed with
//! `Last-Event-ID` (2025-11-25, "Resumability and Redelivery"), honouring
//! `retry:`, for as long as the reconnections bring new events
//! (`resume.rs`). Same-origin `307` and `308` are followed
//! (`redirect.rs`); a pooled connection the server closed is replaced
//! (`send.rs`).

use std::io::{self, BufReader};
use std::net::Shutdown;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;

use super::inbox::Inbox;
use super::link::{Link, Outgoing, Wait};
use super::params::{header_value, ParamHeaders};
use super::sse::Events;
use super::wire::{Body, Conn, Endpoint, Head};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{Message, RequestId};
use crate::protocol::{meta, methods, versions, Era};

mod auth;
mod redirect;
mod refusal;
mod resume;
mod send;

pub(crate) use self::auth::{Credentials, FixedToken, TokenFn};
pub(crate) use self::redirect::resolve;
use self::resume::Resumption;

/// How long a notification's POST may take.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 16;

/// Settings of the HTTP link.
#[derive(Clone)]
pub(crate) struct HttpSettings {
    pub(crate) connect_timeout: Duration,
    pub(crate) max_message_bytes: usize,
    pub(crate) credentials: Option<Arc<dyn Credentials>>,
    /// Reconnections in a row that may bring a resumed stream nothing new.
    pub(crate) max_idle_resumes: usize,
    pub(crate) params: Arc<ParamHeaders>,
    /// The program's own headers, on every request to the server
    /// (`ClientBuilder::header`), checked when the client is built.
    pub(crate) headers: Vec<(String, String)>,
    /// Roots for `https://` (feature `tls`).
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<Arc<super::tls::Tls>>,
}

#[derive(Debug, Default)]
struct State {
    era: Option<Era>,
    version: Option<String>,
    session: Option<String>,
}

/// See the module docs.
pub(crate) struct HttpLink {
    endpoint: Endpoint,
    inbox: Arc<Inbox>,
    settings: HttpSettings,
    /// Idle connections, all to the endpoint's origin (redirects to
    /// another are not followed).
    idle: Mutex<Vec<Conn>>,
    /// Where a `308` moved the endpoint, on the same origin.
    moved: Mutex<Option<Endpoint>>,
    state: Mutex<State>,
}

/// What one exchange found.
enum Outcome {
    Answer(Result<Value, Error>),
    /// The stream ended without the answer; resume after this event.
    Dropped {
        last_id: Option<String>,
        retry: Option<u64>,
    },
}

impl HttpLink {
    pub(crate) fn new(
        url: &str,
        inbox: Arc<Inbox>,
        settings: HttpSettings,
    ) -> Result<HttpLink, Error> {
        let endpoint = Endpoint::parse(url).map_err(Error::msg)?;
        Ok(HttpLink {
            endpoint,
            inbox,
            settings,
            idle: Mutex::new(Vec::new()),
            moved: Mutex::new(None),
            state: Mutex::new(State::default()),
        })
    }

    /// Drops the session id, before a new `initialize`.
    pub(crate) fn forget_session(&self) {
        self.state.lock().session = None;
    }

    /// The session id the server gave, if any.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.state.lock().session.clone()
    }

    /// The headers of a POST carrying `body_meta`'s request: the 2026-07-28
    /// routing headers when the request claims 2026-07-28 (HTTP-2), the
    /// session's otherwise.
    fn headers(
        &self,
        method: &str,
        name: Option<&str>,
        v2026: bool,
        token: Option<&str>,
    ) -> Vec<(&'static str, String)> {
        let mut headers = vec![
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        let state = self.state.lock();
        if v2026 {
            headers.push(("MCP-Protocol-Version", versions::V2026_07_28.to_string()));
            headers.push(("Mcp-Method", method.to_string()));
            if let Some(name) = name {
                headers.push(("Mcp-Name", header_value(name)));
            }
        } else {
            if let Some(version) = &state.version {
                headers.push(("MCP-Protocol-Version", version.clone()));
            }
            if let Some(session) = &state.session {
                headers.push(("Mcp-Session-Id", session.clone()));
            }
        }
        drop(state);
        if let Some(token) = token {
            headers.push(("Authorization", format!("Bearer {}", token)));
        }
        headers
    }

    /// The current token, if any.
    fn token(&self) -> Option<String> {
        self.settings.credentials.as_ref().and_then(|c| c.token())
    }

    /// One exchange: the POST (or the resuming GET) and its answer.
    fn exchange(
        &self,
        out: &Outgoing,
        wait: &Wait<'_>,
        resume: Option<&str>,
        token: Option<&str>,
    ) -> Result<Outcome, Error> {
        let v2026 = is_2026(&out.params);
        let mut headers: Vec<(String, String)> = self
            .headers(&out.method, out.name.as_deref(), v2026, token)
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect();
        let body;
        let (verb, body) = match resume {
            Some(last) => {
                headers.retain(|(n, _)| n != "Content-Type" && n != "Accept");
                headers.push(("Accept".into(), "text/event-stream".into()));
                headers.push(("Last-Event-ID".into(), last.to_string()));
                ("GET", None)
            }
            None => {
                if let (true, Some(name)) = (
                    v2026 && out.method == methods::TOOLS_CALL,
                    out.name.as_deref(),
                ) {
                    let arguments = out.params.get("arguments");
                    headers.extend(self.settings.params.headers(name, arguments));
                }
                let message =
                    Message::request(out.id.clone(), out.method.clone(), Some(out.params.clone()));
                body = message.to_json_string().into_bytes();
                ("POST", Some(&body[..]))
            }
        };
        let (conn, head, _guard) = self.send(verb, &headers, body, wait)?;
        if let Some(session) = head.header("mcp-session-id") {
            if out.method == methods::INITIALIZE {
                self.state.lock().session = Some(session.to_string());
            }
        }
        self.answer(conn, head, out, wait)
    }

    fn answer(
        &self,
        mut conn: Conn,
        head: Head,
        out: &Outgoing,
        wait: &Wait<'_>,
    ) -> Result<Outcome, Error> {
        let media = head.media_type();
        if head.status == 200 && media == "text/event-stream" {
            return self.read_stream(conn, head, &out.id, wait);
        }
        let framing = head.framing();
        let mut body = Body::new(&mut conn, framing);
        let bytes = body.read_all(self.settings.max_message_bytes)?;
        let finished = body.finished();
        if finished && head.keeps_alive() {
            self.keep(conn);
        }
        if head.status == 200 && media == "application/json" {
            return Ok(Outcome::Answer(response_to(&bytes, &out.id)));
        }
        Err(self.refusal(&head, &bytes, !is_2026(&out.params)))
    }

    /// Reads an event stream until the response to `id`.
    fn read_stream(
        &self,
        mut conn: Conn,
        head: Head,
        id: &RequestId,
        wait: &Wait<'_>,
    ) -> Result<Outcome, Error> {
        let max = self.settings.max_message_bytes;
        let mut last_id = None;
        let mut retry = None;
        let mut reusable = false;
        let answer = {
            let body = Body::new(&mut conn, head.framing());
            let mut events = Events::new(BufReader::new(body), max);
            let answer = loop {
                if wait.remaining().is_zero() {
                    return Err(wait.timed_out("the request"));
                }
                let event = match events.next_event() {
                    Ok(Some(event)) => event,
                    Ok(None) => break None,
                    Err(e) if is_timeout(&e) => return Err(wait.timed_out("the request")),
                    Err(_) if wait.cancel.map_or(false, |t| t.is_cancelled()) => {
                        return Err(Error::cancelled(None))
                    }
                    Err(_) => break None,
                };
                if let Some(id) = &event.id {
                    // An empty `id:` clears the last event ID: a resume then
                    // sends no `Last-Event-ID` (HTML "Server-sent events").
                    last_id = Some(id.clone()).filter(|id| !id.is_empty());
                }
                retry = event.retry.or(retry);
                if !carries_message(&event) {
                    continue;
                }
                let within = wait.remaining().min(NOTIFY_TIMEOUT);
                if let Some(answer) = self.on_event(&event.data, Some(id), within) {
                    break Some(answer);
                }
            };
            if answer.is_some() {
                reusable = drain(&mut events) && head.keeps_alive();
            }
            answer
        };
        if reusable {
            self.keep(conn);
        }
        match answer {
            Some(answer) => Ok(Outcome::Answer(answer)),
            None => Ok(Outcome::Dropped { last_id, retry }),
        }
    }

    /// One event's message: the answer to `id` ends the stream; the rest
    /// goes to the inbox, server requests answered by a POST.
    ///
    /// When the server refuses the answer to its request (HTTP-3: a 4xx or
    /// 5xx), the call the request belongs to would wait for nothing: it
    /// ends with that refusal (`ErrorKind::Http`, or `SessionExpired`),
    /// and a 2025-11-25 server is told it was abandoned
    /// (basic/utilities/cancellation). `call` is `None` on the GET stream.
    fn on_event(
        &self,
        data: &str,
        call: Option<&RequestId>,
        within: Duration,
    ) -> Option<Result<Value, Error>> {
        match Message::parse(data.as_bytes()) {
            Ok(Message::Response(response)) if call.is_some() && response.id.as_ref() == call => {
                Some(response.outcome.map_err(|e| Error::new(ErrorKind::Peer(e))))
            }
            Ok(Message::Response(response)) => {
                log::warn!(
                    "the server answered another request (id {:?}) on this stream",
                    response.id
                );
                None
            }
            Ok(Message::Notification(notification)) => {
                self.inbox.notification(&notification);
                None
            }
            Ok(Message::Request(request)) => {
                let response = self.inbox.request(request, data.as_bytes());
                let e = self.post_message(&response.into(), within).err()?;
                log::warn!("cannot answer the server's request: {}", e);
                let refused =
                    matches!(e.kind(), ErrorKind::Http { .. } | ErrorKind::SessionExpired);
                let call = call.filter(|_| refused)?;
                if self.state.lock().era != Some(Era::V2026_07_28) {
                    self.send_cancel(call, "the server refused the answer to its request");
                }
                Some(Err(e))
            }
            Err(e) => {
                log::warn!(
                    "the server sent an event that is not JSON-RPC: {}",
                    e.error.message
                );
                None
            }
        }
    }

    /// POSTs a notification or a response; `202` (or `200`) expected.
    fn post_message(&self, message: &Message, timeout: Duration) -> Result<(), Error> {
        self.authorized(|token, _| self.post_message_with(message, timeout, token))
    }

    fn post_message_with(
        &self,
        message: &Message,
        timeout: Duration,
        token: Option<&str>,
    ) -> Result<(), Error> {
        let v2026 = match message {
            Message::Notification(n) => n.params.as_ref().map_or(false, is_2026),
            _ => false,
        };
        let method = match message {
            Message::Notification(n) => n.method.clone(),
            _ => String::new(),
        };
        let headers = self.headers(&method, None, v2026, token);
        let body = message.to_json_string().into_bytes();
        let wait = Wait {
            deadline: std::time::Instant::now() + timeout,
            timeout,
            cancel: None,
        };
        let (mut conn, head, _) = self.send("POST", &headers, Some(&body), &wait)?;
        let mut reply = Body::new(&mut conn, head.framing());
        let bytes = reply.read_all(self.settings.max_message_bytes)?;
        if reply.finished() && head.keeps_alive() {
            self.keep(conn);
        }
        match (head.status, message) {
            (200 | 202, _) => Ok(()),
            (_, Message::Response(_)) => Err(self.answer_refused(&head, &bytes)),
            _ => Err(self.refusal(&head, &bytes, !v2026)),
        }
    }

    fn send_cancel(&self, id: &RequestId, reason: &str) {
        let params = serde_json::json!({ "requestId": id, "reason": reason });
        let message =
            Message::notification(crate::protocol::notifications::CANCELLED, Some(params));
        if let Err(e) = self.post_message(&message, Duration::from_secs(2)) {
            log::debug!("notifications/cancelled not delivered: {}", e);
        }
    }
}

impl Link for HttpLink {
    fn request(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error> {
        if wait.cancel.map_or(false, |t| t.is_cancelled()) {
            return Err(Error::cancelled(None));
        }
        self.authorized(|token, round| {
            // A login may have taken the user minutes: the request gets its
            // whole time again after one.
            let renewed;
            let wait = match round {
                0 => wait,
                _ => {
                    renewed = Wait {
                        deadline: std::time::Instant::now() + wait.timeout,
                        timeout: wait.timeout,
                        cancel: wait.cancel,
                    };
                    &renewed
                }
            };
            self.attempt(out, wait, token)
        })
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.post_message(&Message::notification(method, params), NOTIFY_TIMEOUT)
    }

    fn settle(&self, era: Era, version: &str) {
        let mut state = self.state.lock();
        state.era = Some(era);
        state.version = Some(version.to_string());
    }

    fn close(&self) {
        let session = self.state.lock().session.take();
        if let Some(session) = session {
            // Ends the session (2025-11-25 transports, "Session Management").
            let mut headers = vec![("Mcp-Session-Id", session)];
            if let Some(version) = self.state.lock().version.clone() {
                headers.push(("MCP-Protocol-Version", version));
            }
            if let Some(token) = self.token() {
                headers.push(("Authorization", format!("Bearer {}", token)));
            }
            let timeout = Duration::from_secs(2);
            let wait = Wait {
                deadline: std::time::Instant::now() + timeout,
                timeout,
                cancel: None,
            };
            if let Ok((mut conn, head, _)) = self.send("DELETE", &headers, None, &wait) {
                let _ = Body::new(&mut conn, head.framing()).read_all(64 * 1024);
            }
        }
        self.idle.lock().clear();
    }
}

impl HttpLink {
    /// One request's exchanges with one token: the POST, and the GETs
    /// that resume its stream.
    fn attempt(
        &self,
        out: &Outgoing,
        wait: &Wait<'_>,
        token: Option<&str>,
    ) -> Result<Value, Error> {
        let v2026 = is_2026(&out.params);
        let mut resumption = Resumption::new(self.settings.max_idle_resumes);
        loop {
            let outcome = match self.exchange(out, wait, resumption.last_id(), token) {
                Err(e) => return Err(self.failed(e, out, wait, v2026)),
                Ok(outcome) => outcome,
            };
            let (last_id, retry) = match outcome {
                Outcome::Answer(answer) => return answer,
                Outcome::Dropped { .. } if v2026 => {
                    return Err(resume::ended(
                        "2026-07-28 streams are not resumed (MHTTP-6)",
                    ))
                }
                Outcome::Dropped { last_id, retry } => (last_id, retry),
            };
            let pause = resumption.dropped(last_id, retry)?;
            // A cancel shuts the socket down, which reads as the end of the
            // stream: it is the call's end, not a drop to resume after.
            if pause_or_cancel(pause.min(wait.remaining()), wait) {
                let cancelled = Error::cancelled(None);
                return Err(self.failed(cancelled, out, wait, v2026));
            }
        }
    }
}

impl HttpLink {
    /// Opens the session's GET stream (2025-11-25 transports, "Listening
    /// for Messages from the Server"): its head, once it is a 200 event
    /// stream.
    pub(crate) fn open_get_stream(&self, timeout: Duration) -> Result<(Conn, Head), Error> {
        self.authorized(|token, _| self.open_get_stream_with(timeout, token))
    }

    fn open_get_stream_with(
        &self,
        timeout: Duration,
        token: Option<&str>,
    ) -> Result<(Conn, Head), Error> {
        let mut headers = self.headers("", None, false, token);
        headers.retain(|(n, _)| *n != "Content-Type" && *n != "Accept");
        headers.push(("Accept", "text/event-stream".to_string()));
        let wait = Wait {
            deadline: std::time::Instant::now() + timeout,
            timeout,
            cancel: None,
        };
        let (mut conn, head, _) = self.send("GET", &headers, None, &wait)?;
        if head.status == 200 && head.media_type() == "text/event-stream" {
            conn.set_deadline(None);
            conn.stream().set_read_timeout(None)?;
            conn.timeouts_changed();
            return Ok((conn, head));
        }
        let bytes = Body::new(&mut conn, head.framing()).read_all(64 * 1024)?;
        Err(self.refusal(&head, &bytes, true))
    }

    /// Reads the GET stream until it ends or `token` is cancelled; its
    /// messages go where a POST stream's would.
    pub(crate) fn read_get_stream(&self, mut conn: Conn, head: Head, token: &super::CancelToken) {
        let socket = match conn.stream().try_clone() {
            Ok(socket) => socket,
            Err(_) => return,
        };
        let _guard = token.on_cancel(move || {
            let _ = socket.shutdown(Shutdown::Both);
        });
        let body = Body::new(&mut conn, head.framing());
        let mut events = Events::new(BufReader::new(body), self.settings.max_message_bytes);
        while let Ok(Some(event)) = events.next_event() {
            if carries_message(&event) {
                let _ = self.on_event(&event.data, None, NOTIFY_TIMEOUT);
            }
        }
    }

    /// The error of a failed exchange: a cancel or a timeout (which tell
    /// the 2025-11-25 server to stop), or the failure itself.
    fn failed(&self, e: Error, out: &Outgoing, wait: &Wait<'_>, v2026: bool) -> Error {
        let cancelled = wait.cancel.map_or(false, |t| t.is_cancelled());
        let timed_out = matches!(e.kind(), ErrorKind::Io(io) if is_timeout(io))
            || matches!(e.kind(), ErrorKind::Timeout { .. });
        if !cancelled && !timed_out {
            return e;
        }
        if !v2026 && out.method != methods::INITIALIZE {
            self.send_cancel(
                &out.id,
                if cancelled {
                    "cancelled by the client"
                } else {
                    "timed out"
                },
            );
        }
        if cancelled {
            Error::cancelled(None)
        } else {
            wait.timed_out(&out.method)
        }
    }
}

/// After the answer, the server ends the stream (2025-11-25: "the server
/// SHOULD close the SSE stream"): read it to its end, briefly, so that the
/// connection can carry the next request. `true` when the body ended.
fn drain(events: &mut Events<BufReader<Body<'_>>>) -> bool {
    let soon = std::time::Instant::now() + Duration::from_millis(50);
    events.reader_mut().get_mut().set_deadline(Some(soon));
    for _ in 0..16 {
        match events.next_event() {
            Ok(Some(_)) => continue,
            Ok(None) => return events.reader().get_ref().finished(),
            Err(_) => return false,
        }
    }
    false
}

/// Sleeps `pause`, or less when the call's token fires; `true` when it
/// has fired.
fn pause_or_cancel(pause: Duration, wait: &Wait<'_>) -> bool {
    let token = match wait.cancel {
        Some(token) => token,
        None => {
            thread::sleep(pause);
            return false;
        }
    };
    let (wake, woken) = crossbeam_channel::bounded::<()>(1);
    let _guard = token.on_cancel(move || {
        let _ = wake.try_send(());
    });
    let _ = woken.recv_timeout(pause);
    token.is_cancelled()
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// `true` when the params carry a 2026-07-28 envelope (ERA-1).
fn is_2026(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(meta::PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .and_then(Era::of)
        == Some(Era::V2026_07_28)
}

/// Whether an event carries a JSON-RPC message: one of type `message`
/// (named so, or unnamed) with data. The transport sends its messages so
/// (2025-11-25 transports, "Streamable HTTP": "SSE events" carry JSON-RPC
/// messages as data); events of other types are passed over, as a browser's
/// `onmessage` passes them over.
fn carries_message(event: &super::sse::Event) -> bool {
    event.kind == "message" && !event.data.trim().is_empty()
}

/// The answer in a JSON body: the response to `id`.
fn response_to(bytes: &[u8], id: &RequestId) -> Result<Value, Error> {
    match Message::parse(bytes) {
        Ok(Message::Response(response)) if response.id.as_ref() == Some(id) => {
            response.outcome.map_err(|e| Error::new(ErrorKind::Peer(e)))
        }
        Ok(_) => Err(Error::new(ErrorKind::Protocol(format!(
            "the server answered request {} with another message",
            id
        )))),
        Err(e) => Err(Error::new(ErrorKind::Protocol(format!(
            "the server's answer is not JSON-RPC: {}",
            e.error.message
        )))),
    }
}
