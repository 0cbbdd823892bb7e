//! One stdio server started by `mcp serve`: the crate's `Client` over its
//! stdio, and the routes from what it sends back to the HTTP clients.
//!
//! A call is forwarded by [`Child::forward`] on the library's worker: the
//! upstream request goes out on a thread of its own, and the worker
//! relays, through the call's `RequestContext`, what the child sends for
//! it (progress, and the requests it makes meanwhile: elicitation,
//! sampling, roots) until the answer comes. The child's requests carry no
//! link to a call, so they go to the newest call in flight; with none,
//! to the session's GET stream ([`Relays::outside`]).

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_mcp::notifications;
use tiny_mcp::{
    CallOptions, CancelToken, Client, ClientCapabilities, CreateMessageResult, ElicitResult, Era,
    Error, ErrorKind, ErrorObject, Implementation, InitializeResult, ListRootsResult,
    ProgressNotificationParams, RequestContext, RequestId, SessionHandle, StderrMode,
    WeakServerHandle,
};

/// How the children are started and spoken to.
#[derive(Debug, Clone)]
pub(crate) struct Spawn {
    /// The command line, as given to `--stdio`.
    pub(crate) line: String,
    pub(crate) words: Vec<String>,
    /// How long a forwarded request may take.
    pub(crate) timeout: Duration,
}

impl Spawn {
    fn command(&self) -> Command {
        // `run` refuses an empty command line; an empty program fails to start.
        let (program, args) = self
            .words
            .split_first()
            .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

/// What the child sends during a call, for the worker that holds it.
pub(crate) enum Event {
    Progress(ProgressNotificationParams),
    Ask {
        method: &'static str,
        params: Option<Value>,
        reply: Sender<Result<Value, Error>>,
    },
    Done(Result<Value, Error>),
}

/// The calls in flight on one child, newest last, and the sessions to
/// reach outside any call.
pub(crate) struct Relays {
    live: Mutex<Vec<(u64, Sender<Event>)>>,
    next: Mutex<u64>,
    /// The sessions this child serves: one, or all of them (`--shared`).
    pub(crate) outside: Mutex<Vec<SessionHandle>>,
    /// The server, for the common child: its list changes go to every
    /// session and to the 2026-07-28 listen streams, through the server.
    server: Mutex<Option<WeakServerHandle>>,
    timeout: Duration,
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Relays {
    /// No calls yet; requests outside a call wait `timeout` for the client.
    pub(crate) fn new(timeout: Duration) -> Relays {
        Relays {
            live: Mutex::new(Vec::new()),
            next: Mutex::new(0),
            outside: Mutex::new(Vec::new()),
            server: Mutex::new(None),
            timeout,
        }
    }

    /// Sends the child's list changes through `server` from now on.
    pub(crate) fn set_server(&self, server: WeakServerHandle) {
        *lock(&self.server) = Some(server);
    }

    fn enter(&self, sender: Sender<Event>) -> u64 {
        let mut next = lock(&self.next);
        *next += 1;
        lock(&self.live).push((*next, sender));
        *next
    }

    fn leave(&self, seq: u64) {
        lock(&self.live).retain(|(s, _)| *s != seq);
    }

    /// Asks the client of the newest call, or the one session outside
    /// any call, and waits for its answer.
    fn ask(&self, method: &'static str, params: Option<Value>) -> Result<Value, Error> {
        let newest = lock(&self.live).last().map(|(_, s)| s.clone());
        let answer = match newest {
            Some(call) => {
                let (reply, answer) = mpsc::channel();
                let event = Event::Ask {
                    method,
                    params,
                    reply,
                };
                call.send(event).map_err(|_| ended())?;
                answer.recv().map_err(|_| ended())?
            }
            None => {
                let outside = lock(&self.outside);
                match outside.as_slice() {
                    [session] => {
                        let session = session.clone();
                        drop(outside);
                        session.send_request(method, params, self.timeout)
                    }
                    _ => Err(Error::msg(format!(
                        "{} outside a call, with no single client to ask",
                        method
                    ))),
                }
            }
        };
        // The client's own error goes back to the child as it was.
        answer.map_err(|e| match e.into_kind() {
            ErrorKind::Peer(object) => Error::rpc(object),
            kind => Error::new(kind),
        })
    }

    /// A notification of the child's, to every session it serves; a
    /// common child's list changes through the server, which reaches the
    /// listen streams too.
    fn notify(&self, method: &str, params: Option<Value>) {
        let server = lock(&self.server).as_ref().and_then(|s| s.upgrade());
        if let Some(server) = server {
            match method {
                notifications::TOOLS_LIST_CHANGED => return server.notify_tools_list_changed(),
                notifications::PROMPTS_LIST_CHANGED => return server.notify_prompts_list_changed(),
                notifications::RESOURCES_LIST_CHANGED => {
                    return server.notify_resources_list_changed()
                }
                // The listen streams that name it; the sessions below.
                notifications::RESOURCES_UPDATED => {
                    let uri = params.as_ref().and_then(|p| p["uri"].as_str());
                    if let Some(uri) = uri {
                        server.notify_resource_updated(uri);
                    }
                }
                _ => {}
            }
        }
        let outside: Vec<SessionHandle> = lock(&self.outside).clone();
        for session in outside {
            session.notify(method, params.clone());
        }
    }
}

fn ended() -> Error {
    Error::msg("the call ended before the client answered")
}

/// One running stdio server.
pub(crate) struct Child {
    client: Client,
    pub(crate) relays: Arc<Relays>,
    /// Cancel tokens of the calls in flight, by (session key, the HTTP
    /// client's request id).
    calls: Mutex<HashMap<(u64, RequestId), CancelToken>>,
    /// The child exited, or stopped answering.
    dead: AtomicBool,
    pub(crate) started: Instant,
    spawn: Spawn,
}

impl Child {
    /// Starts the server and initializes it as `info` with `capabilities`
    /// (those the HTTP client declared; the relays answer for it).
    pub(crate) fn start(
        spawn: &Spawn,
        info: Implementation,
        capabilities: &ClientCapabilities,
        relays: Arc<Relays>,
    ) -> Result<Child, Error> {
        let mut builder = Client::builder(&info.name, &info.version)
            .client_info(info)
            .era(Era::V2025_11_25)
            .request_timeout(spawn.timeout)
            .stderr(StderrMode::Inherit);
        if capabilities.supports_elicitation_form() || capabilities.supports_elicitation_url() {
            let relays = Arc::clone(&relays);
            builder = builder.on_elicitation(move |params| {
                let answer = relays.ask("elicitation/create", Some(to_json(&params)?))?;
                from_json::<ElicitResult>(answer)
            });
        }
        if capabilities.supports_sampling() {
            let relays = Arc::clone(&relays);
            builder = builder.on_sampling(move |params| {
                let answer = relays.ask("sampling/createMessage", Some(to_json(&params)?))?;
                from_json::<CreateMessageResult>(answer)
            });
        }
        if capabilities.supports_roots() {
            let relays = Arc::clone(&relays);
            builder = builder
                .on_roots(move || from_json::<ListRootsResult>(relays.ask("roots/list", None)?));
        }
        let notified = Arc::clone(&relays);
        builder = builder.on_notification(move |n| notified.notify(&n.method, n.params.clone()));
        let client = builder.connect_stdio(spawn.command())?;
        Ok(Child {
            client,
            relays,
            calls: Mutex::new(HashMap::new()),
            dead: AtomicBool::new(false),
            started: Instant::now(),
            spawn: spawn.clone(),
        })
    }

    /// The child's `initialize` result, as the HTTP client gets it: the
    /// version it asked for when the child speaks that one or a newer one.
    pub(crate) fn initialize_result(&self, asked: &str) -> Result<InitializeResult, Error> {
        let spoken = self.client.protocol_version();
        let version = if tiny_mcp::versions::is_supported(asked) && asked <= spoken {
            asked
        } else {
            spoken
        };
        let result = serde_json::json!({
            "protocolVersion": version,
            "capabilities": to_json(self.client.server_capabilities())?,
            "serverInfo": to_json(&self.client.server_info())?,
            "instructions": self.client.instructions(),
        });
        from_json(result)
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    /// Sends a client notification on to the child.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) {
        // A child that is gone shows on the next call.
        let _ = self.client.notify(method, params);
    }

    /// Cancels the call of `session` whose id is `id`, if it is in flight.
    pub(crate) fn cancel(&self, session: u64, id: RequestId) {
        if let Some(token) = lock(&self.calls).get(&(session, id)) {
            token.cancel();
        }
    }

    /// Cancels every call of `session`.
    pub(crate) fn cancel_session(&self, session: u64) {
        for ((key, _), token) in lock(&self.calls).iter() {
            if *key == session {
                token.cancel();
            }
        }
    }

    /// Forwards one request and relays what the child sends for it.
    pub(crate) fn forward(
        self: &Arc<Self>,
        session: u64,
        ctx: &RequestContext,
        params: Option<Value>,
    ) -> Result<Value, Error> {
        let call = self.start_call(session, ctx, params)?;
        relay(ctx, &call.events, self.spawn.timeout).map_err(|e| self.failed(ctx.method(), e))
    }

    /// Sends the request of `ctx` to the child, on a thread of its own;
    /// what the child sends for it arrives as the call's events.
    pub(crate) fn start_call(
        self: &Arc<Self>,
        session: u64,
        ctx: &RequestContext,
        params: Option<Value>,
    ) -> Result<Call, Error> {
        let token = CancelToken::new();
        let key = (session, ctx.request_id().clone());
        lock(&self.calls).insert(key.clone(), token.clone());
        if ctx.is_cancelled() {
            token.cancel();
        }
        let (sender, events) = mpsc::channel();
        let seq = self.relays.enter(sender.clone());
        let call = Call {
            events,
            token: token.clone(),
            child: Arc::clone(self),
            key,
            seq,
        };
        let mut options = CallOptions::new()
            .timeout(self.spawn.timeout)
            .cancel_token(token);
        if ctx.progress_token().is_some() {
            let progress = Mutex::new(sender.clone());
            options = options.on_progress(move |p| {
                let _ = lock(&progress).send(Event::Progress(p.clone()));
            });
        }
        let method = ctx.method().to_string();
        let params = params.unwrap_or(Value::Null);
        let child = Arc::clone(self);
        // Ends with the request: its answer, its cancel or its timeout.
        let started = thread::Builder::new()
            .name("mcp-serve-call".into())
            .spawn(move || {
                let answer = child.client.request_with(&method, params, &options);
                drop(options);
                let _ = sender.send(Event::Done(answer));
            });
        match started {
            Ok(_) => Ok(call),
            Err(e) => Err(Error::msg(format!("cannot start a thread: {}", e))),
        }
    }

    /// The error the HTTP client gets for a failed upstream call: the
    /// child's own error as it was; a child that is gone named as such.
    pub(crate) fn failed(&self, method: &str, error: Error) -> Error {
        match error.into_kind() {
            ErrorKind::Peer(object) => Error::rpc(object),
            ErrorKind::Cancelled { reason } => Error::cancelled(reason),
            ErrorKind::Timeout { after, .. } => Error::rpc(ErrorObject::internal(format!(
                "the stdio server ({}) did not answer {} within {} s",
                self.spawn.line,
                method,
                after.as_secs()
            ))),
            kind @ (ErrorKind::Closed | ErrorKind::Io(_) | ErrorKind::Protocol(_)) => {
                self.dead.store(true, Ordering::Release);
                let error = Error::new(kind);
                eprintln!(
                    "mcp serve: the stdio server ({}) is gone: {}",
                    self.spawn.line, error
                );
                Error::rpc(ErrorObject::internal(format!(
                    "the stdio server ({}) exited or broke off: {}; its session is ended, \
                     start a new one",
                    self.spawn.line, error
                )))
            }
            kind => Error::new(kind),
        }
    }
}

/// A call sent to the child: what it sends for the call, until the
/// answer. Dropping it cancels the call if it still runs, and takes it out
/// of the child's tables.
pub(crate) struct Call {
    pub(crate) events: mpsc::Receiver<Event>,
    token: CancelToken,
    child: Arc<Child>,
    key: (u64, RequestId),
    seq: u64,
}

impl Call {
    /// The child this call runs on.
    pub(crate) fn child(&self) -> &Arc<Child> {
        &self.child
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.token.cancel();
        self.child.relays.leave(self.seq);
        lock(&self.child.calls).remove(&self.key);
    }
}

/// The worker's side of a call: relays progress and the child's requests
/// until the answer arrives.
fn relay(
    ctx: &RequestContext,
    events: &mpsc::Receiver<Event>,
    timeout: Duration,
) -> Result<Value, Error> {
    loop {
        match events.recv() {
            Ok(Event::Progress(p)) => {
                ctx.notify_progress(p.progress, p.total, p.message.as_deref())
            }
            Ok(Event::Ask {
                method,
                params,
                reply,
            }) => {
                let _ = reply.send(ctx.send_request(method, params, timeout));
            }
            Ok(Event::Done(answer)) => return answer,
            Err(_) => return Err(Error::new(ErrorKind::Closed)),
        }
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, Error> {
    Ok(serde_json::to_value(value)?)
}

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, Error> {
    serde_json::from_value(value).map_err(|e| Error::msg(format!("unexpected answer: {}", e)))
}
