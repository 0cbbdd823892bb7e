//! A session: what one client negotiated, plus its in-flight requests.
//!
//! Sessions are data; connections are threads (DESIGN.md). stdio has
//! exactly one session. Locks here are held only to read or update this
//! data, never across I/O or a handler call. Lock order, where two are
//! held: `state` before nothing else; `pending` and the in-flight table
//! are never held together.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use serde_json::Value;

use crate::cancel::InFlightTable;
use crate::jsonrpc::{Message, RequestId};
use crate::protocol::{versions, ClientCapabilities, Implementation, LoggingLevel};
use crate::server::ServerInner;
use crate::transport::Sink;
use crate::Error;

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

/// The two protocol eras.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2025-11-25 and older: `initialize`, sessions.
    Legacy,
    /// 2026-07-28: per-request envelope, no sessions.
    Modern,
}

/// A pending request of ours to the client, waiting for its answer.
pub(crate) type PendingAnswer = Sender<Result<Value, Error>>;

pub(crate) struct Session {
    pub(crate) server: Arc<ServerInner>,
    /// Key in the server's list of live sessions.
    pub(crate) key: u64,
    /// `Mcp-Session-Id` on HTTP; `None` on stdio and in memory.
    pub(crate) id: Option<String>,
    pub(crate) state: Mutex<SessionState>,
    pub(crate) in_flight: InFlightTable,
    pub(crate) pending: Mutex<HashMap<RequestId, PendingAnswer>>,
    next_request_id: AtomicI64,
    /// Where messages related to no request go (stdout, the GET stream).
    pub(crate) unrelated: Mutex<Option<Arc<dyn Sink>>>,
    /// Keys of the listen streams this session opened (2026-07-28).
    pub(crate) listen_keys: Mutex<Vec<u64>>,
    /// Listed in the server's sessions for change notifications.
    registered: bool,
}

impl Session {
    /// A new session, registered with the server for change notifications.
    ///
    /// A session without a sink for unrelated messages (a stateless HTTP
    /// request's) could receive no change notification, so it is not
    /// registered: no shared lock on that per-request path.
    pub(crate) fn new(
        server: &Arc<ServerInner>,
        id: Option<String>,
        unrelated: Option<Arc<dyn Sink>>,
    ) -> Arc<Session> {
        let key = server.next_session_key();
        let registered = unrelated.is_some();
        let session = Arc::new(Session {
            server: Arc::clone(server),
            key,
            id,
            state: Mutex::new(SessionState {
                initialized: false,
                protocol_version: versions::V2025_03_26.to_string(),
                client_info: None,
                client_capabilities: ClientCapabilities::default(),
                log_level: None,
                subscriptions: HashSet::new(),
                era: None,
            }),
            in_flight: InFlightTable::new(server.config.max_in_flight),
            pending: Mutex::new(HashMap::new()),
            next_request_id: AtomicI64::new(0),
            unrelated: Mutex::new(unrelated),
            listen_keys: Mutex::new(Vec::new()),
            registered,
        });
        if registered {
            server.register_session(&session);
        }
        session
    }

    /// A fresh id for a request of ours to the client.
    pub(crate) fn next_request_id(&self) -> RequestId {
        RequestId::Number(self.next_request_id.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn is_initialized(&self) -> bool {
        self.state.lock().initialized
    }

    /// Sends a message related to no request, if the session has a place
    /// for it (on HTTP, an open GET stream).
    pub(crate) fn send_unrelated(&self, message: Message) -> bool {
        let sink = self.unrelated.lock().clone();
        match sink {
            Some(sink) => sink.send(message),
            None => false,
        }
    }

    /// Cancels every in-flight request and every pending call to the client
    /// (end of input, `DELETE`, shutdown).
    pub(crate) fn cancel_all(&self, reason: &str) {
        for entry in self.in_flight.cancel_all(reason) {
            self.cancel_nested(entry.nested, Some(reason), None);
            entry.sink.end();
        }
        self.server.listen.drop_owner(self.key);
    }

    /// Locks the session's era (HTTP sessions and stateless requests know
    /// theirs from the start).
    pub(crate) fn lock_era(&self, era: Era) {
        self.state.lock().era = Some(era);
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
                        crate::protocol::notifications::CANCELLED,
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
        if self.registered {
            self.server.unregister_session(self.key);
        }
    }
}
