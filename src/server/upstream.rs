//! Forwarding a server's sessions to an upstream: the seam a proxy (such
//! as `mcp serve`, a stdio server served over HTTP) plugs into, while the
//! crate's transports keep everything around the messages (DESIGN.md §25).
//!
//! A server built with [`ServerBuilder::upstream`] answers `initialize`
//! with what [`Upstream::open`] returns, runs every other request but
//! `ping` and `subscriptions/listen` on a worker through
//! [`Upstream::forward`] (methods the crate does not know too), hands
//! every client notification to [`Upstream::notify`] after acting on it
//! (a cancel sets the request's flag first), and tells
//! [`Upstream::close`] when an opened session ends. The method table's
//! `proxied` column says which method goes where.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use serde_json::Value;

use super::builder::ServerBuilder;
use super::caller::Caller;
use super::context::RequestContext;
use super::reply::{failure, to_value, Answer, Failure, Reply};
use super::session::Session;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::protocol::{
    notifications, ClientCapabilities, Era, Implementation, InitializeRequestParams,
    InitializeResult,
};

/// A program that forwards a server's sessions to an upstream server of
/// its own: a proxy. The crate's transport stays in charge of everything
/// around the messages (on HTTP: Host and Origin checks, authorization,
/// limits, timeouts, sessions, event streams, resumption, both eras).
///
/// Who calls what, on which thread:
///
/// - [`open`](Self::open): once per 2025-11-25 session, for its
///   `initialize`, on the thread that read it (on HTTP, the connection's):
///   it may block, e.g. to start a process and initialize it.
/// - [`forward`](Self::forward): every other request, on a worker, with the
///   request's [`RequestContext`]: progress
///   ([`notify_progress`](RequestContext::notify_progress)), log messages
///   and requests to the client
///   ([`send_request`](RequestContext::send_request), 2025-11-25;
///   [`request_inputs`](RequestContext::request_inputs), 2026-07-28) go
///   through it to the request's own stream. Requests of the 2026-07-28
///   era come here too, on sessions that were never opened (each request
///   is one, [`RequestContext::era`] says so).
/// - [`notify`](Self::notify): every notification of the client, on the
///   thread that read it; keep it short.
/// - [`close`](Self::close): once, when an opened session ends (`DELETE`,
///   idle expiry, eviction, end of input, shutdown, or a session the table
///   had no room for), on whichever thread ends it; its requests still in
///   flight were cancelled first, without answers.
///
/// A panic in any of them is caught: `-32603` for `open` and `forward`,
/// logged for the others.
///
/// Spec: basic/lifecycle, basic/transports (2025-11-25).
pub trait Upstream: Send + Sync + 'static {
    /// Opens the upstream of a new session with the client's `initialize`
    /// params, and returns the `initialize` result to answer with. Its
    /// `protocolVersion` becomes the session's.
    ///
    /// # Errors
    ///
    /// The error the client gets instead ([`Error::to_wire`]); no session
    /// is kept.
    fn open(
        &self,
        session: &SessionHandle,
        params: &InitializeRequestParams,
    ) -> Result<InitializeResult, Error>;

    /// Forwards one request (its method is
    /// [`ctx.method()`](RequestContext::method)) and returns its result.
    /// A cancel of the request sets
    /// [`ctx.is_cancelled()`](RequestContext::is_cancelled) and then
    /// reaches [`notify`](Self::notify) as `notifications/cancelled`.
    ///
    /// # Errors
    ///
    /// The JSON-RPC error to answer with ([`Error::to_wire`]:
    /// [`Error::rpc`] passes an upstream's error on as it is); in the
    /// 2026-07-28 era, [`ErrorKind::InputRequired`] from
    /// [`request_inputs`](RequestContext::request_inputs) answers
    /// `input_required`.
    fn forward(
        &self,
        session: &SessionHandle,
        ctx: &RequestContext,
        params: Option<Value>,
    ) -> Result<Value, Error>;

    /// A notification from the client (`notifications/initialized`,
    /// `notifications/roots/list_changed`, …), and
    /// `notifications/cancelled` for every cancel of a request in flight:
    /// the client's own, or a 2026-07-28 client that closed its request's
    /// stream (a cancel of an unknown or finished request is not passed
    /// on; the handle of a cancel reaches nobody, its key names the
    /// session). Does nothing by default.
    fn notify(&self, session: &SessionHandle, method: &str, params: Option<Value>) {
        let _ = (session, method, params);
    }

    /// The session ended: release its upstream. Does nothing by default.
    fn close(&self, session: &SessionHandle) {
        let _ = session;
    }
}

/// OpenFn: the shape of the method table's `Proxied::Answer` column.
pub(crate) type OpenFn = fn(&Arc<Session>, &Caller, Option<Value>) -> Answer;

/// One session, as an [`Upstream`] sees it: to tell sessions apart, and to
/// reach its client outside any request. It does not keep the session
/// alive: once the session is gone, sending fails.
#[derive(Clone)]
pub struct SessionHandle {
    key: u64,
    id: Option<String>,
    session: Weak<Session>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle")
            .field("key", &self.key)
            .field("id", &self.id)
            .finish()
    }
}

impl SessionHandle {
    fn of(session: &Arc<Session>) -> SessionHandle {
        SessionHandle {
            key: session.key,
            id: session.id.clone(),
            session: Arc::downgrade(session),
        }
    }

    /// A number unique among this server's sessions (also for stdio and
    /// for each 2026-07-28 request, which have no id).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The `Mcp-Session-Id` on Streamable HTTP; `None` on stdio and for a
    /// 2026-07-28 request.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The client's `clientInfo` from `initialize`, while the session lives.
    pub fn client_info(&self) -> Option<Implementation> {
        let session = self.session.upgrade()?;
        let info = session.state.lock().client_info.clone();
        info
    }

    /// The capabilities the client declared in `initialize` (none once the
    /// session is gone).
    pub fn client_capabilities(&self) -> ClientCapabilities {
        match self.session.upgrade() {
            Some(session) => session.state.lock().client_capabilities.clone(),
            None => ClientCapabilities::default(),
        }
    }

    /// Sends a notification related to no request (a log message, a
    /// `list_changed`): on HTTP on the session's GET stream, on stdio to
    /// stdout. `false` when it has nowhere to go (no GET stream open, the
    /// session gone).
    pub fn notify(&self, method: &str, params: Option<Value>) -> bool {
        match self.session.upgrade() {
            Some(session) => session.send_unrelated(Message::notification(method, params)),
            None => false,
        }
    }

    /// Sends a request related to no request of the client's (e.g. the
    /// `roots/list` a server sends after `initialized`) where
    /// [`notify`](Self::notify) sends, and waits for the answer. A request
    /// related to a call goes through that call's
    /// [`RequestContext::send_request`] instead, on the call's stream.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Peer`] when the client answers with an error;
    /// [`ErrorKind::Timeout`] after `timeout` (the client is sent
    /// `notifications/cancelled`); [`ErrorKind::Closed`] when the session
    /// is gone or has no stream open for it.
    ///
    /// Spec: basic/transports "Listening for Messages from the Server"
    /// (2025-11-25).
    pub fn send_request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, Error> {
        let session = self.session.upgrade().ok_or_else(gone)?;
        let id = session.next_request_id();
        let (sender, receiver) = crossbeam_channel::bounded(1);
        session.pending.lock().insert(id.clone(), sender);
        if !session.send_unrelated(Message::request(id.clone(), method, params)) {
            session.pending.lock().remove(&id);
            return Err(gone());
        }
        // Not kept while waiting: a session that goes drops the waiter.
        drop(session);
        match receiver.recv_timeout(timeout) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => {
                if let Some(session) = self.session.upgrade() {
                    session.pending.lock().remove(&id);
                    let params =
                        serde_json::json!({ "requestId": id.to_value(), "reason": "timed out" });
                    session.send_unrelated(Message::notification(
                        notifications::CANCELLED,
                        Some(params),
                    ));
                }
                Err(Error::new(ErrorKind::Timeout {
                    method: method.to_string(),
                    after: timeout,
                }))
            }
            Err(RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    /// Ends the session, as its idle expiry would: requests still running
    /// finish and answer, and the transport forgets the session at its
    /// next request, which gets `404` (a client then starts a new session,
    /// basic/transports "Session Management"); [`Upstream::close`] follows.
    /// For an upstream that can no longer serve it (a child that exited).
    /// On stdio nothing changes: the connection ends with its input.
    pub fn end(&self) {
        if let Some(session) = self.session.upgrade() {
            session.ended.store(true, Ordering::Release);
        }
    }
}

fn gone() -> Error {
    Error::new(ErrorKind::Closed)
}

impl ServerBuilder {
    /// Forwards the server's sessions to `upstream` instead of serving
    /// them from the registry (a proxy; see [`Upstream`]). What was
    /// registered is then not offered, the declared capabilities are the
    /// upstream's (its `initialize` result), and the method gates are the
    /// upstream's to decide; interceptors run around every forwarded call.
    ///
    /// Spec: basic/lifecycle (2025-11-25).
    pub fn upstream(mut self, upstream: impl Upstream) -> Self {
        self.upstream = Some(Arc::new(upstream));
        self
    }
}

/// LC-1, LC-2: `initialize` of a forwarded session: the upstream's answer,
/// and the session takes its version and the client's info.
pub(crate) fn initialize(session: &Arc<Session>, _: &Caller, params: Option<Value>) -> Answer {
    let upstream = match &session.server.upstream {
        Some(upstream) => upstream,
        None => return Err(ErrorObject::internal("no upstream to forward to")),
    };
    let params: InitializeRequestParams = serde_json::from_value(params.unwrap_or(Value::Null))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid initialize params: {}", e)))?;
    if session.is_initialized() {
        return Err(ErrorObject::invalid_request(
            "the session is already initialized",
        ));
    }
    let handle = SessionHandle::of(session);
    let opened =
        catch_unwind(AssertUnwindSafe(|| upstream.open(&handle, &params))).unwrap_or_else(|_| {
            log::error!("Upstream::open panicked");
            Err(Error::msg("the upstream failed unexpectedly"))
        });
    let result = opened.map_err(|e| e.to_wire(Era::V2025_11_25))?;
    {
        let mut state = session.state.lock();
        state.initialized = true;
        state.protocol_version = result.protocol_version.clone();
        state.client_info = Some(params.client_info);
        state.client_capabilities = params.capabilities;
    }
    session.forwarded.store(true, Ordering::Release);
    to_value(result)
}

/// A forwarded request, on a worker (the `FORWARDED` row, and every row
/// whose `proxied` column says `Forward`).
pub(crate) fn forward(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let upstream = match &ctx.session.server.upstream {
        Some(upstream) => upstream,
        None => return Err(Failure::Rpc(ErrorObject::internal("no upstream"))),
    };
    let handle = SessionHandle::of(&ctx.session);
    upstream
        .forward(&handle, ctx, params)
        .map(Reply::Value)
        .map_err(|e| failure(ctx, e))
}

/// Hands a client notification to the upstream, if the server has one.
pub(crate) fn notified(session: &Arc<Session>, method: &str, params: Option<Value>) {
    if let Some(upstream) = &session.server.upstream {
        let handle = SessionHandle::of(session);
        let told = catch_unwind(AssertUnwindSafe(|| {
            upstream.notify(&handle, method, params)
        }));
        if told.is_err() {
            log::error!("Upstream::notify panicked on {}", method);
        }
    }
}

/// Tells the upstream that request `id` was cancelled, as a
/// `notifications/cancelled`: the client's own, or a 2026-07-28 client
/// that closed its request's stream (the one cancel path, `Session::cancel`).
pub(crate) fn cancelled(session: &Session, id: &RequestId, reason: Option<&str>) {
    let upstream = match &session.server.upstream {
        Some(upstream) => upstream,
        None => return,
    };
    let handle = SessionHandle {
        key: session.key,
        id: session.id.clone(),
        session: Weak::new(),
    };
    let mut params = serde_json::json!({ "requestId": id.to_value() });
    if let Some(reason) = reason {
        params["reason"] = Value::from(reason);
    }
    let told = catch_unwind(AssertUnwindSafe(|| {
        upstream.notify(&handle, notifications::CANCELLED, Some(params))
    }));
    if told.is_err() {
        log::error!("Upstream::notify panicked on a cancel");
    }
}

/// Tells the upstream, once, that a session it opened ended.
pub(crate) fn closed(session: &Session) {
    if !session.forwarded.swap(false, Ordering::AcqRel) {
        return;
    }
    if let Some(upstream) = &session.server.upstream {
        let handle = SessionHandle {
            key: session.key,
            id: session.id.clone(),
            session: Weak::new(),
        };
        if catch_unwind(AssertUnwindSafe(|| upstream.close(&handle))).is_err() {
            log::error!("Upstream::close panicked");
        }
    }
}
