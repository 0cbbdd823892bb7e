//! `mcp bridge --to URL`: a stdio MCP server for a local client (a desktop
//! app's or an editor's config that can only start commands) that
//! forwards every message to a remote Streamable HTTP server, and the
//! server's messages back.
//!
//! The local side ([`local`]) reads one JSON-RPC message per line from
//! stdin on the main thread and writes to stdout (basic/transports
//! "stdio"); each request runs on a thread of its own, at most
//! [`MAX_IN_FLIGHT`] at once, threads kept for the next requests
//! ([`workers`]). The remote side ([`remote`]) is the crate's
//! [`Client`](tiny_mcp::Client), connected when the local client sends
//! `initialize`. The local client speaks the `initialize` era (2024-11-05
//! to 2025-11-25); the remote server may speak either era, and the
//! server's requests (sampling, elicitation, roots), also those of a
//! 2026-07-28 `input_required` round, reach the local client as requests.
//! Closing stdin ends the bridge: requests in flight are cancelled and a
//! 2025-11-25 session is ended with `DELETE`.

pub mod args;
mod local;
mod remote;
mod workers;

use std::io::{self, BufRead, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{CancelToken, Era, ErrorCode, ErrorObject, Message, Response};

use self::local::Local;
use self::remote::Remote;
use self::workers::Workers;
use crate::login;

/// The largest message read from the local client (16 MiB, as the
/// crate's own client and server allow); a longer line is answered with
/// `-32600` and skipped.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Requests of the local client's forwarded at once; one more is
/// answered with `-32603` at once.
pub const MAX_IN_FLIGHT: usize = 256;

/// The local client's notifications waiting for the remote server to
/// take them; one more is dropped (and noted on stderr).
const MAX_QUEUED_NOTIFICATIONS: usize = 256;

/// How long requests still running when stdin closes get to finish and
/// answer before they are cancelled (as the crate's stdio server gives
/// its handlers, 1 s).
const END_OF_INPUT_GRACE: Duration = Duration::from_secs(1);

/// How long cancelled requests get to end before the remote session is
/// ended anyway.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// What `mcp bridge` was asked to do.
#[derive(Debug)]
pub struct Options {
    /// `--to URL`: the remote Streamable HTTP endpoint.
    pub url: String,
    /// `--header "Name: value"`, repeatable.
    pub headers: Vec<(String, String)>,
    /// `--token TOKEN`: sent as a bearer token instead of logging in.
    pub token: Option<String>,
    /// `--era`: speak only this era to the remote server.
    pub era: Option<Era>,
    /// `--timeout SECONDS`: per request, and per request of the server's
    /// to the local client. Default: 1 hour (the local client's own
    /// timeout and cancellation come first).
    pub timeout: Duration,
    /// The login options shared with the other commands.
    pub login: login::Options,
}

/// A notification of the local client's: its method and params.
type Notice = (String, Option<Value>);

/// The bridge between the two sides.
struct Bridge {
    options: Options,
    local: Arc<Local>,
    /// The local client's `initialize` params, once it sent them: the
    /// remote server is connected with them, whichever request connects.
    init: Mutex<Option<Value>>,
    /// The remote server's client, once connected (held only to look).
    remote: Mutex<Option<Arc<Remote>>>,
    /// Held while connecting, on a request's thread: the others wait for
    /// that connection; the thread reading stdin never waits.
    connecting: Mutex<()>,
    /// The local client's notifications for the remote server, in order,
    /// to the thread that posts them ([`forward_notifications`]); `None`
    /// once stdin ended.
    notices: Mutex<Option<SyncSender<Notice>>>,
    /// Requests running, and the signal that one ended.
    running: Mutex<usize>,
    ended: Condvar,
    /// The threads requests run on.
    workers: Workers,
}

/// Runs the bridge until stdin ends; the process's exit code (0).
pub fn run(options: Options) -> i32 {
    let bridge = Arc::new(Bridge {
        options,
        local: Arc::new(Local::new()),
        init: Mutex::new(None),
        remote: Mutex::new(None),
        connecting: Mutex::new(()),
        notices: Mutex::new(None),
        running: Mutex::new(0),
        ended: Condvar::new(),
        workers: Workers::new(),
    });
    let (notices, queued) = sync_channel(MAX_QUEUED_NOTIFICATIONS);
    let poster = Arc::clone(&bridge);
    match thread::Builder::new()
        .name("mcp-bridge-notify".into())
        .spawn(move || forward_notifications(&poster, &queued))
    {
        Ok(_) => *lock(&bridge.notices) = Some(notices),
        Err(e) => note!(
            "mcp bridge: the client's notifications are not forwarded: {}",
            e
        ),
    }
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    loop {
        match read_message(&mut input, &mut line) {
            Ok(Some(true)) => bridge.receive(&line),
            Ok(Some(false)) => bridge.local.reply_error(
                Value::Null,
                &ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("a message over {} bytes", MAX_MESSAGE_BYTES),
                ),
            ),
            Ok(None) => break,
            Err(e) => {
                note!("mcp bridge: reading stdin failed: {}", e);
                break;
            }
        }
        if bridge.local.gone() {
            note!("mcp bridge: stdout is closed");
            break;
        }
    }
    bridge.close();
    0
}

/// Reads the next line into `line`, without its line end: `Some(true)`,
/// `Some(false)` when it was longer than [`MAX_MESSAGE_BYTES`] (the rest
/// is skipped), `None` at the end of the input.
fn read_message(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
    line.clear();
    let limit = MAX_MESSAGE_BYTES as u64 + 1;
    let read = input.by_ref().take(limit).read_until(b'\n', line)?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Ok(Some(true));
    }
    if line.len() <= MAX_MESSAGE_BYTES {
        // The last line, without a line end.
        return Ok(Some(true));
    }
    // Skip to the end of the long line.
    let mut rest = Vec::new();
    while input
        .by_ref()
        .take(64 * 1024)
        .read_until(b'\n', &mut rest)?
        > 0
    {
        if rest.last() == Some(&b'\n') {
            break;
        }
        rest.clear();
    }
    Ok(Some(false))
}

impl Bridge {
    /// One message from the local client, read by the crate's rules
    /// (basic/index, BASE-1, BASE-2): what is not a message is answered
    /// with `-32700` or `-32600` (a malformed notification is not), a
    /// request's id is a string or an integer.
    fn receive(self: &Arc<Self>, bytes: &[u8]) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let message = match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => Message::from_value(value),
            Err(e) => {
                let error = ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {}", e));
                return self.local.reply_error(Value::Null, &error);
            }
        };
        match message {
            Ok(Message::Request(request)) => {
                let id = local::id_value(Some(&request.id));
                self.request(id, &request.method, request.params)
            }
            Ok(Message::Notification(n)) => self.notification(&n.method, n.params.as_ref()),
            Ok(Message::Response(response)) => self.local.answered(response),
            // A malformed answer (both result and error, a malformed
            // error) is not answered, but the request of the bridge's it
            // names fails now, not at its timeout.
            Err(e) if e.silent => {
                if let Some(id) = e.id {
                    let why = format!(
                        "the local client's answer is malformed: {}",
                        e.error.message
                    );
                    let error = ErrorObject::internal(why);
                    self.local.answered(Response::error(Some(id), error));
                }
            }
            Err(e) => {
                let id = local::id_value(e.id.as_ref());
                self.local.reply_error(id, &e.error);
            }
        }
    }

    fn refuse(&self, id: Value, why: &str) {
        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, why.to_string());
        self.local.reply_error(id, &error);
    }

    /// A request of the local client's, answered on a thread of its own:
    /// `initialize` too, so that a remote server that is slow to connect
    /// (or never answers) does not keep the bridge from reading stdin.
    fn request(self: &Arc<Self>, id: Value, method: &str, params: Option<Value>) {
        // basic/lifecycle: a ping may come before `initialize`; the bridge
        // answers it, so that the remote server is reached in the local
        // client's name and with its capabilities, not without them.
        if method == "ping" && lock(&self.init).is_none() && self.connected().is_none() {
            return self.local.reply(id, json!({}));
        }
        if method == "server/discover" {
            // The local side speaks the initialize era: a client that
            // probes the 2026-07-28 handshake first falls back to
            // `initialize` on -32601, as from any server of that era.
            let why = "server/discover: the bridge speaks the initialize era (2025-11-25)";
            let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, why.to_string());
            return self.local.reply_error(id, &error);
        }
        if *lock(&self.running) >= MAX_IN_FLIGHT {
            let why = format!(
                "the bridge is forwarding {} requests already",
                MAX_IN_FLIGHT
            );
            return self.local.reply_error(id, &ErrorObject::internal(why));
        }
        let token = CancelToken::new();
        if !self.local.track(&id, token.clone()) {
            return self.refuse(id, "a request with this id is in flight already");
        }
        if method == "initialize" {
            *lock(&self.init) = params.clone();
        }
        let bridge = Arc::clone(self);
        let method = method.to_string();
        let answer_id = id.clone();
        *lock(&self.running) += 1;
        let spawned = self.workers.run(move || {
            let outcome = match method.as_str() {
                "initialize" => bridge.initialize(params.as_ref()),
                // The remote's clone ends with this closure, before the
                // answer: `close` ends the session only when it holds the
                // last one.
                _ => bridge.remote().and_then(|remote| {
                    let local = &bridge.local;
                    local.on_behalf_of(&answer_id, || {
                        remote.forward(&method, params, &token, local)
                    })
                }),
            };
            bridge.local.finish(answer_id, outcome);
            bridge.request_ended();
        });
        if let Err(e) = spawned {
            self.request_ended();
            let why = format!("mcp bridge: cannot start a thread: {}", e);
            self.local.finish(id, Err(ErrorObject::internal(why)));
        }
    }

    /// `initialize`: connects to the remote server in the local client's
    /// name, and answers with the server's capabilities and identity.
    fn initialize(&self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        self.remote().map(|remote| remote.initialize_result(asked))
    }

    /// The remote server's client, connected on first use: with the
    /// local client's `initialize` params when it sent them.
    fn remote(&self) -> Result<Arc<Remote>, ErrorObject> {
        if let Some(remote) = self.connected() {
            return Ok(remote);
        }
        let _connecting = lock(&self.connecting);
        if let Some(remote) = self.connected() {
            return Ok(remote);
        }
        let init = lock(&self.init).clone();
        let connected =
            Remote::connect(&self.options, init.as_ref(), &self.local).map_err(|e| {
                note!("mcp bridge: {}: {}", crate::shown_url(&self.options.url), e);
                remote::wire_error(&e)
            })?;
        let client = connected.client();
        note!(
            "mcp bridge: connected to {} ({}, protocol {})",
            crate::shown_url(&self.options.url),
            client.server_info().map_or("unnamed", |i| i.name.as_str()),
            client.protocol_version()
        );
        let connected = Arc::new(connected);
        *lock(&self.remote) = Some(Arc::clone(&connected));
        // The first listen stream of a 2026-07-28 server is acknowledged
        // before it counts: the local client's `initialize` does not wait.
        // (A 2025-11-25 session has its GET stream: no thread, which would
        // hold the remote when stdin ends, and its session's DELETE.)
        if connected.client().era() == Era::V2026_07_28 {
            let listener = Arc::clone(&connected);
            let spawned = thread::Builder::new()
                .name("mcp-bridge-listen".into())
                .spawn(move || listener.listen_for_changes());
            if let Err(e) = spawned {
                note!("mcp bridge: no change notifications: {}", e);
            }
        }
        Ok(connected)
    }

    /// The remote server's client, when connected.
    fn connected(&self) -> Option<Arc<Remote>> {
        lock(&self.remote).clone()
    }

    fn notification(&self, method: &str, params: Option<&Value>) {
        match method {
            // The bridge's client sent its own when it connected.
            "notifications/initialized" => {}
            "notifications/cancelled" => {
                if let Some(id) = params.and_then(|p| p.get("requestId")) {
                    self.local.cancel(id);
                }
            }
            _ if self.connected().is_some() => {
                let queued = match &*lock(&self.notices) {
                    Some(notices) => notices.try_send((method.to_string(), params.cloned())),
                    None => return,
                };
                if queued.is_err() {
                    note!("mcp bridge: {} not forwarded: too many waiting", method);
                }
            }
            // Before the remote server is connected, there is nobody to tell.
            _ => {}
        }
    }

    /// Stdin ended: gives what runs [`END_OF_INPUT_GRACE`] to answer,
    /// cancels the rest, and closes the remote connection (a 2025-11-25
    /// session gets its `DELETE`).
    fn close(&self) {
        lock(&self.notices).take();
        self.wait_for_requests(END_OF_INPUT_GRACE);
        self.local.cancel_all();
        self.wait_for_requests(CANCEL_WAIT);
        let remote = lock(&self.remote).take();
        if let Some(remote) = remote.and_then(|r| Arc::try_unwrap(r).ok()) {
            remote.close();
        }
    }
}

impl Bridge {
    fn request_ended(&self) {
        *lock(&self.running) -= 1;
        self.ended.notify_all();
    }

    /// Waits until no request runs, at most `wait`.
    fn wait_for_requests(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut running = lock(&self.running);
        while *running > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            running = self
                .ended
                .wait_timeout(running, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Posts the local client's notifications to the remote server, one at a
/// time and in order, until the bridge drops the sender: a remote server
/// slow to take them (the client waits 10 s for each) holds this thread,
/// not the one reading stdin.
fn forward_notifications(bridge: &Bridge, queued: &Receiver<Notice>) {
    while let Ok((method, params)) = queued.recv() {
        if let Some(remote) = bridge.connected() {
            if let Err(e) = remote.client().notify(&method, params) {
                note!("mcp bridge: {} not forwarded: {}", method, e);
            }
        }
    }
}

/// A lock that a panicking holder did not spoil.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
