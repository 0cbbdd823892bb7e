//! A session: what one client negotiated, plus its in-flight requests.
//!
//! Sessions are data; connections are threads (DESIGN.md §11). stdio has
//! exactly one session; a 2025-11-25 HTTP session has one per
//! `Mcp-Session-Id`; each POST of the 2025-11-25 stateless HTTP mode and
//! each 2026-07-28 request on HTTP gets a short-lived one. Each kind has its
//! named constructor, so that no transport writes session state.
//! Transports hand its messages to the dispatcher
//! ([`dispatch::receive`](super::dispatch::receive)) and use only the named
//! methods: [`cancel`](Session::cancel), [`close`](Session::close),
//! [`forget_listen`](Session::forget_listen) and the read accessors.
//!
//! Locks here are held only to read or update this data, never across I/O
//! or a handler call. Lock order, where two are held: `state` before
//! nothing else; `pending` and the in-flight table are never held together.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use serde_json::Value;

use super::cancel::InFlightTable;
use super::inner::ServerInner;
use super::metrics::{SessionMark, Transport};
use super::sink::Sink;
use crate::error::Error;
use crate::jsonrpc::{Message, RequestId};
use crate::protocol::{
    notifications, versions, ClientCapabilities, Era, Implementation, LoggingLevel,
};

/// What the client told us in `initialize`, and what it set since.
#[derive(Debug, Clone)]
pub(crate) struct SessionState {
    /// `initialize` succeeded.
    pub(crate) initialized: bool,
    /// The negotiated version (`2025-03-26` until `initialize`, HTTP-20).
    pub(crate) protocol_version: String,
    pub(crate) client_info: Option<Implementation>,
    pub(crate) client_capabilities: ClientCapabilities,
    /// Set by `logging/setLevel`; `None` sends every level.
    pub(crate) log_level: Option<LoggingLevel>,
    /// URIs from `resources/subscribe`.
    pub(crate) subscriptions: HashSet<String>,
    /// The era this connection or session is locked to, once known
    /// (ERA-2: the first request decides on stdio).
    pub(crate) era: Option<Era>,
}

/// Who ends a session, which decides how its listen streams end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closing {
    /// The client went away (end of input, `DELETE`, a dropped client).
    ClientLeft,
    /// The server ends it (shutdown, expiry).
    ServerEnds,
}

/// A pending request of ours to the client, waiting for its answer.
pub(crate) type PendingAnswer = Sender<Result<Value, Error>>;

pub(crate) struct Session {
    pub(crate) server: Arc<ServerInner>,
    /// Key in the server's list of live sessions, and owner key of the
    /// listen streams this session opens.
    pub(crate) key: u64,
    /// `Mcp-Session-Id` on HTTP; `None` on stdio and in memory.
    pub(crate) id: Option<String>,
    pub(crate) state: Mutex<SessionState>,
    pub(crate) in_flight: InFlightTable,
    pub(crate) pending: Mutex<HashMap<RequestId, PendingAnswer>>,
    next_request_id: AtomicI64,
    /// Where messages related to no request go (stdout, the GET stream).
    unrelated: Option<Arc<dyn Sink>>,
    /// The server's [`Upstream`](super::Upstream) opened this session
    /// (its `initialize` succeeded); cleared when it is told of the end.
    pub(crate) forwarded: AtomicBool,
    /// A lasting session's place in the metrics (open, then its duration).
    mark: SessionMark,
    /// The program ended the session ([`SessionHandle::end`](super::SessionHandle::end)):
    /// its transport forgets it at the next look-up.
    pub(crate) ended: AtomicBool,
}

impl Session {
    /// The session of one connection (stdio, the in-memory client): its era
    /// is locked by its first request, and change notifications reach it
    /// through `unrelated`.
    pub(crate) fn connection(server: &Arc<ServerInner>, unrelated: Arc<dyn Sink>) -> Arc<Session> {
        Session::register(Session::new(server, None, None, Some(unrelated)))
    }

    /// A 2025-11-25 HTTP session with its `Mcp-Session-Id`; messages related
    /// to no request go to `get_stream`.
    pub(crate) fn http(
        server: &Arc<ServerInner>,
        id: String,
        get_stream: Arc<dyn Sink>,
    ) -> Arc<Session> {
        let era = Some(Era::V2025_11_25);
        Session::register(Session::new(server, Some(id), era, Some(get_stream)))
    }

    /// The session of one POST in the 2025-11-25 stateless HTTP mode: taken
    /// as initialized at `version` (the request's `MCP-Protocol-Version`,
    /// 2025-03-26 without one, HTTP-20).
    pub(crate) fn stateless_post(server: &Arc<ServerInner>, version: Option<&str>) -> Arc<Session> {
        let session = Session::new(server, None, Some(Era::V2025_11_25), None);
        {
            let mut state = session.state.lock();
            state.initialized = true;
            state.protocol_version = version.unwrap_or(versions::V2025_03_26).to_string();
        }
        Arc::new(session)
    }

    /// A session that only answers one `initialize` and is then dropped
    /// (the 2025-11-25 stateless HTTP mode).
    pub(crate) fn stateless_initialize(server: &Arc<ServerInner>) -> Arc<Session> {
        Arc::new(Session::new(server, None, Some(Era::V2025_11_25), None))
    }

    /// The session of one 2026-07-28 request on HTTP: nothing is kept
    /// between requests (GEN-4).
    pub(crate) fn per_request(server: &Arc<ServerInner>) -> Arc<Session> {
        Arc::new(Session::new(server, None, Some(Era::V2026_07_28), None))
    }

    fn new(
        server: &Arc<ServerInner>,
        id: Option<String>,
        era: Option<Era>,
        unrelated: Option<Arc<dyn Sink>>,
    ) -> Session {
        Session {
            server: Arc::clone(server),
            key: server.next_session_key(),
            id,
            state: Mutex::new(SessionState {
                initialized: false,
                protocol_version: versions::V2025_03_26.to_string(),
                client_info: None,
                client_capabilities: ClientCapabilities::default(),
                log_level: None,
                subscriptions: HashSet::new(),
                era,
            }),
            in_flight: InFlightTable::new(server.config.max_in_flight),
            pending: Mutex::new(HashMap::new()),
            next_request_id: AtomicI64::new(0),
            unrelated,
            forwarded: AtomicBool::new(false),
            mark: SessionMark::default(),
            ended: AtomicBool::new(false),
        }
    }

    /// Lists a session that has a place for unrelated messages with the
    /// server, for change notifications. Sessions without one (per-request
    /// HTTP sessions) could receive none, so they are never listed: no
    /// shared lock on that path.
    fn register(mut session: Session) -> Arc<Session> {
        session.mark = session.server.metrics.session(session.transport());
        let session = Arc::new(session);
        session.server.register_session(&session);
        session
    }

    /// A fresh id for a request of ours to the client.
    pub(crate) fn next_request_id(&self) -> RequestId {
        RequestId::Number(self.next_request_id.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn is_initialized(&self) -> bool {
        self.state.lock().initialized
    }

    /// The negotiated protocol version (`2025-03-26` before `initialize`).
    pub(crate) fn protocol_version(&self) -> String {
        self.state.lock().protocol_version.clone()
    }

    /// The version as a metrics label: one of the crate's versions (the
    /// era's for 2026-07-28), else `_OTHER`.
    pub(crate) fn version_label(&self) -> &'static str {
        let state = self.state.lock();
        if state.era == Some(Era::V2026_07_28) {
            return versions::V2026_07_28;
        }
        let version = state.protocol_version.as_str();
        versions::SUPPORTED
            .iter()
            .find(|v| **v == version)
            .copied()
            .unwrap_or("_OTHER")
    }

    /// `network.transport`: `pipe` for a connection (stdio, in memory),
    /// `tcp` for HTTP.
    pub(crate) fn transport(&self) -> Transport {
        if self.is_connection() {
            Transport::Pipe
        } else {
            Transport::Tcp
        }
    }

    /// `true` for the session of a connection (stdio, the in-memory
    /// client), which carries many requests over time.
    pub(crate) fn is_connection(&self) -> bool {
        self.unrelated.is_some() && self.id.is_none()
    }

    /// `true` once the program ended the session
    /// ([`SessionHandle::end`](super::SessionHandle::end)): the transport
    /// then treats its id as unknown (404) and closes it.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// `true` while the client is subscribed to a resource
    /// (`resources/subscribe`).
    pub(crate) fn has_subscriptions(&self) -> bool {
        !self.state.lock().subscriptions.is_empty()
    }

    /// How many requests are in flight.
    pub(crate) fn in_flight_count(&self) -> usize {
        self.in_flight.len()
    }

    /// Waits until no request is in flight, at most `timeout`; `true` if
    /// none is left (the end-of-input grace on stdio).
    pub(crate) fn wait_idle(&self, timeout: std::time::Duration) -> bool {
        self.in_flight.wait_empty(timeout)
    }

    /// The session's key when the session outlives its requests (a
    /// connection, a 2025-11-25 HTTP session): the caller its shares are
    /// counted against when there is no principal (DESIGN.md §26).
    pub(crate) fn lasting_key(&self) -> Option<u64> {
        if self.unrelated.is_some() {
            Some(self.key)
        } else {
            None
        }
    }

    /// The session's key: unique in the server, and the owner of the
    /// listen streams it opens.
    pub(crate) fn key(&self) -> u64 {
        self.key
    }

    /// The session's era, locking it to `claim` if no request decided it
    /// yet (ERA-2).
    pub(crate) fn lock_era(&self, claim: Era) -> Era {
        *self.state.lock().era.get_or_insert(claim)
    }

    /// Sends a message related to no request, if the session has a place
    /// for it (on HTTP, an open GET stream).
    pub(crate) fn send_unrelated(&self, message: Message) -> bool {
        match &self.unrelated {
            Some(sink) => sink.send(message),
            None => false,
        }
    }

    /// Cancels request `id` (the one cancel path of every transport).
    ///
    /// A listen stream of this session with that id ends without a word
    /// (LISTEN-10). A request in flight has its flag set, and the requests
    /// it waits on are failed; with `notify_client`, the client is sent
    /// `notifications/cancelled` for each of those (CAN-5). Unknown,
    /// finished and repeated ids are ignored (CAN-2). Returns `true` if
    /// something was cancelled.
    pub(crate) fn cancel(
        &self,
        id: &RequestId,
        reason: Option<String>,
        notify_client: bool,
    ) -> bool {
        if self.server.listen.cancel(self.key, id) {
            return true;
        }
        match self.in_flight.cancel(id, reason.clone()) {
            Some(entry) => {
                let notify = if notify_client {
                    Some(&entry.sink)
                } else {
                    None
                };
                self.cancel_nested(entry.nested, reason.as_deref(), notify);
                super::upstream::cancelled(self, id, reason.as_deref());
                true
            }
            None => false,
        }
    }

    /// Ends the session (the one close path: end of input, `DELETE`,
    /// expiry, shutdown): cancels every request in flight and every pending
    /// call to the client, and ends their streams without a response. The
    /// session's listen streams end too: without a word when the client
    /// left (LISTEN-12), with their result when the server ends them
    /// (LISTEN-11).
    pub(crate) fn close(&self, reason: &str, by: Closing) {
        self.close_sparing(reason, by, None)
    }

    /// [`close`](Self::close), but request `spare` runs on and answers: the
    /// request whose handler is stopping the server.
    pub(crate) fn close_sparing(&self, reason: &str, by: Closing, spare: Option<&RequestId>) {
        for entry in self.in_flight.cancel_all_but(reason, spare) {
            self.cancel_nested(entry.nested, Some(reason), None);
            entry.sink.end();
        }
        // Its tasks' results can no longer be fetched.
        self.server.tasks.cancel_where(Some(self.key), reason);
        let listen = &self.server.listen;
        match by {
            Closing::ClientLeft => listen.forget_owner(self.key),
            Closing::ServerEnds => listen.close_where(&self.server.info, |owner| owner == self.key),
        }
        super::upstream::closed(self);
    }

    /// Forgets a listen stream whose client went away, without a word
    /// (LISTEN-10).
    pub(crate) fn forget_listen(&self, key: u64) {
        self.server.listen.close(key);
    }

    /// Fails our pending requests `nested` with a cancelled error; when a
    /// sink is given, also tells the client with `notifications/cancelled`
    /// (CAN-5).
    pub(crate) fn cancel_nested(
        &self,
        nested: Vec<RequestId>,
        reason: Option<&str>,
        notify: Option<&Arc<dyn Sink>>,
    ) {
        for id in nested {
            let waiter = self.pending.lock().remove(&id);
            if let Some(waiter) = waiter {
                // Tell the client first: once woken, the handler may finish
                // and end its stream (CAN-5).
                if let Some(sink) = notify {
                    let mut params = serde_json::Map::new();
                    params.insert("requestId".into(), id.to_value());
                    if let Some(reason) = reason {
                        params.insert("reason".into(), Value::from(reason));
                    }
                    sink.send(Message::notification(
                        notifications::CANCELLED,
                        Some(Value::Object(params)),
                    ));
                }
                let _ = waiter.send(Err(Error::cancelled(reason.map(str::to_string))));
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A session dropped unclosed (a full table refused it after its
        // `initialize`) still ends its upstream.
        super::upstream::closed(self);
        if self.unrelated.is_some() {
            self.server.unregister_session(self.key);
        }
    }
}
