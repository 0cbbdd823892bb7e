//! The [`Upstream`] of `mcp serve`: which child serves which session.
//!
//! By default each 2025-11-25 HTTP session gets a child of its own,
//! started with the session's `initialize` (the client's `clientInfo` and
//! capabilities) and ended with the session. With `--shared` one child,
//! started once, serves every session. Requests that belong to no opened
//! session (2026-07-28 clients, which have none) go to that common child
//! too, started on first use; the proxy holds its 2025-11-25 session.
//!
//! A per-session child that exits gives its session's calls a JSON-RPC
//! error naming it, and the session is ended (`SessionHandle::end`): the
//! client's next request gets `404` and it starts a new session, with a
//! new child. The common child is started again on the next request, no
//! sooner than its back-off allows (1 s, doubling to 30 s while children
//! die within 10 s of starting).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_mcp::{
    ClientCapabilities, Era, Error, ErrorObject, Implementation, InitializeRequestParams,
    InitializeResult, RequestContext, RequestId, SessionHandle, Upstream,
};

use super::child::{lock, Child, Relays, Spawn};
use super::era_2026;

/// The first pause before the common child is started again.
const MIN_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause before the common child is started again.
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(30);
/// A child that ran at least this long resets the pause.
const HEALTHY: Duration = Duration::from_secs(10);

pub(crate) struct Proxy {
    spawn: Spawn,
    shared: bool,
    /// Per-session children, by session key.
    sessions: Mutex<HashMap<u64, Arc<Child>>>,
    common: Mutex<Common>,
    /// The relays of the common child, kept across its restarts: the
    /// sessions it serves.
    common_relays: Arc<Relays>,
    /// 2026-07-28 calls waiting for the client's retry.
    parked: era_2026::Parked,
}

/// The common child and when it may be started again.
struct Common {
    child: Option<Arc<Child>>,
    not_before: Option<Instant>,
    pause: Duration,
}

impl Proxy {
    pub(crate) fn new(spawn: Spawn, shared: bool) -> Proxy {
        let timeout = spawn.timeout;
        Proxy {
            spawn,
            shared,
            sessions: Mutex::new(HashMap::new()),
            common: Mutex::new(Common {
                child: None,
                not_before: None,
                pause: MIN_PAUSE,
            }),
            common_relays: Arc::new(Relays::new(timeout)),
            parked: era_2026::Parked::default(),
        }
    }

    /// The relays of the common child: to give them the server once built.
    pub(crate) fn common_relays(&self) -> Arc<Relays> {
        Arc::clone(&self.common_relays)
    }

    /// The common child, started (again) if it is not running.
    pub(crate) fn common(&self) -> Result<Arc<Child>, Error> {
        let mut common = lock(&self.common);
        if let Some(child) = &common.child {
            if !child.is_dead() {
                return Ok(Arc::clone(child));
            }
        }
        let now = Instant::now();
        if let Some(wait) = common
            .not_before
            .and_then(|t| t.checked_duration_since(now))
        {
            return Err(Error::rpc(ErrorObject::internal(format!(
                "the stdio server ({}) exited; it is started again in {} ms",
                self.spawn.line,
                wait.as_millis().max(1)
            ))));
        }
        common.pause = match &common.child {
            Some(old) if old.started.elapsed() < HEALTHY => (common.pause * 2).min(MAX_PAUSE),
            _ => MIN_PAUSE,
        };
        common.not_before = Some(now + common.pause);
        let info = Implementation::new("mcp serve", env!("CARGO_PKG_VERSION"));
        // Sampling and elicitation are relayed to the client of the call
        // that asks; roots belong to one client, which a shared server
        // does not have.
        let capabilities: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "sampling": {}, "elicitation": {"form": {}, "url": {}}
        }))?;
        let relays = Arc::clone(&self.common_relays);
        let child = Child::start(&self.spawn, info, &capabilities, relays)
            .map_err(|e| self.not_started(e))?;
        let child = Arc::new(child);
        common.child = Some(Arc::clone(&child));
        Ok(child)
    }

    fn not_started(&self, error: Error) -> Error {
        Error::rpc(ErrorObject::internal(format!(
            "cannot start the stdio server ({}): {}",
            self.spawn.line, error
        )))
    }

    /// The child that serves `session`, and whether it is its own.
    fn child_of(&self, session: &SessionHandle) -> Result<(Arc<Child>, bool), Error> {
        match lock(&self.sessions).get(&session.key()) {
            Some(child) => return Ok((Arc::clone(child), true)),
            None if !self.shared && session.id().is_some() => {
                // Its child was let go already.
                return Err(gone(&self.spawn));
            }
            None => {}
        }
        self.common().map(|child| (child, false))
    }
}

impl Upstream for Proxy {
    fn open(
        &self,
        session: &SessionHandle,
        params: &InitializeRequestParams,
    ) -> Result<InitializeResult, Error> {
        if self.shared {
            let child = self.common()?;
            lock(&self.common_relays.outside).push(session.clone());
            return child.initialize_result(&params.protocol_version);
        }
        let relays = Arc::new(Relays::new(self.spawn.timeout));
        lock(&relays.outside).push(session.clone());
        let info = params.client_info.clone();
        let child = Child::start(&self.spawn, info, &params.capabilities, relays)
            .map_err(|e| self.not_started(e))?;
        let result = child.initialize_result(&params.protocol_version)?;
        lock(&self.sessions).insert(session.key(), Arc::new(child));
        Ok(result)
    }

    fn forward(
        &self,
        session: &SessionHandle,
        ctx: &RequestContext,
        params: Option<Value>,
    ) -> Result<Value, Error> {
        let (child, own) = self.child_of(session)?;
        if own && child.is_dead() {
            session.end();
            return Err(gone(&self.spawn));
        }
        let result = match ctx.era() {
            Era::V2026_07_28 => era_2026::forward(&self.parked, &child, session, ctx, params),
            _ => child.forward(session.key(), ctx, params),
        };
        if own && child.is_dead() {
            session.end();
        }
        result
    }

    fn notify(&self, session: &SessionHandle, method: &str, params: Option<Value>) {
        let child = match lock(&self.sessions).get(&session.key()) {
            Some(child) => Arc::clone(child),
            None => match lock(&self.common).child.clone() {
                Some(child) => child,
                None => return,
            },
        };
        match method {
            "notifications/cancelled" => {
                let id = params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                if let Some(id) = id {
                    child.cancel(session.key(), id);
                }
            }
            // The child had its own from the proxy's client.
            "notifications/initialized" => {}
            _ => child.notify(method, params),
        }
    }

    fn close(&self, session: &SessionHandle) {
        let key = session.key();
        lock(&self.common_relays.outside).retain(|s| s.key() != key);
        if let Some(child) = lock(&self.common).child.clone() {
            child.cancel_session(key);
        }
        let child = match lock(&self.sessions).remove(&key) {
            Some(child) => child,
            None => return,
        };
        child.cancel_session(key);
        // Ending a child waits for it (stdin closed, then signals): not on
        // the thread that ends the session (a DELETE's connection).
        let stopped = thread::Builder::new()
            .name("mcp-serve-stop".into())
            .spawn(move || drop(child));
        if let Err(e) = stopped {
            eprintln!("mcp serve: cannot start a thread to stop a server: {}", e);
        }
    }
}

/// The error of a session whose child is gone.
fn gone(spawn: &Spawn) -> Error {
    Error::rpc(ErrorObject::internal(format!(
        "the stdio server ({}) of this session exited; the session is ended, start a new one",
        spawn.line
    )))
}
