//! [`ServerInner`]: the state a server shares between its sessions,
//! transports and threads (the offer, the declared capabilities, the live
//! sessions, the configuration), and the questions every part asks of it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use super::builder::{Config, RequestHook};
use super::bus::ChangeBus;
use super::close::Closing;
use super::envelope::{self, CacheHints};
use super::input::RequestStateCodec;
use super::intercept::Interceptor;
use super::listen::ListenRegistry;
use super::metrics::MetricsCore;
use super::outcome::RequestOutcome;
use super::registry::Registry;
use super::scopes::ScopePolicy;
use super::session::Session;
#[cfg(feature = "skills")]
use super::skills;
use super::tasks;
use super::upstream::Upstream;
use crate::jsonrpc::{JsonObject, Message};
use crate::protocol::{Implementation, ServerCapabilities};

/// Everything a server shares between its sessions and threads.
pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    /// What the server declares; grows when the first item of a kind is
    /// added while serving.
    pub(super) capabilities: RwLock<ServerCapabilities>,
    pub(crate) registry: RwLock<Registry>,
    pub(crate) closing: Closing,
    pub(crate) on_request_finished: Option<RequestHook>,
    /// The counters of `Server::metrics` (inert without the feature).
    pub(crate) metrics: Arc<MetricsCore>,
    pub(crate) config: Config,
    pub(super) sessions: Mutex<HashMap<u64, Weak<Session>>>,
    pub(super) next_session_key: AtomicU64,
    pub(crate) listen: ListenRegistry,
    pub(crate) cache: CacheHints,
    pub(crate) state_codec: Box<dyn RequestStateCodec>,
    pub(crate) scopes: ScopePolicy,
    pub(crate) interceptors: Vec<Box<dyn Interceptor>>,
    /// Where this instance's changes go ([`ChangeBus`]); `None`: nowhere.
    pub(crate) bus: Option<Box<dyn ChangeBus>>,
    /// The `origin` of the events this instance publishes.
    pub(crate) instance_id: String,
    /// The tasks: their store and this instance's runs.
    pub(crate) tasks: tasks::Tasks,
    /// Where sessions are forwarded instead of served here (DESIGN.md §25).
    pub(crate) upstream: Option<Arc<dyn Upstream>>,
    /// The skills served (SEP-2640); empty unless some were added.
    #[cfg(feature = "skills")]
    pub(crate) skills: Arc<skills::SkillSet>,
}

impl ServerInner {
    pub(crate) fn next_session_key(&self) -> u64 {
        self.next_session_key.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn register_session(&self, session: &Arc<Session>) {
        self.sessions
            .lock()
            .insert(session.key, Arc::downgrade(session));
    }

    pub(crate) fn unregister_session(&self, key: u64) {
        self.sessions.lock().remove(&key);
    }

    /// How many lasting sessions are live (the metrics' gauge).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn live_session_count(&self) -> usize {
        let sessions = self.sessions.lock();
        sessions.values().filter(|s| s.strong_count() > 0).count()
    }

    /// The live, initialized sessions (cloned out of the lock).
    pub(super) fn live_sessions(&self) -> Vec<Arc<Session>> {
        let sessions: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        sessions
            .into_iter()
            .filter(|s| s.is_initialized())
            .collect()
    }

    /// The capabilities declared now.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        self.capabilities.read().clone()
    }

    /// Reads the declared capabilities without cloning them.
    pub(crate) fn with_capabilities<T>(&self, read: impl FnOnce(&ServerCapabilities) -> T) -> T {
        read(&self.capabilities.read())
    }

    /// Declares a kind when its first item is added while serving.
    pub(super) fn declare(&self, add: impl FnOnce(&mut ServerCapabilities)) {
        add(&mut self.capabilities.write());
    }

    /// RES-3's server info in a result's `_meta` (a typed result's part of
    /// [`decorate`](Self::decorate); `resultType` is added as it is written).
    pub(crate) fn stamp(&self, meta: &mut JsonObject) {
        envelope::stamp_meta(meta, &self.info)
    }

    /// Decorates a 2026-07-28 result (see [`envelope::decorate`]): with
    /// the cache hints when its method's row says it is `cacheable`.
    pub(crate) fn decorate(&self, result: Value, cacheable: bool) -> Value {
        let cache = if cacheable { Some(self.cache) } else { None };
        envelope::decorate(result, &self.info, cache)
    }

    /// The `x-mcp-header` properties of tool `name`'s `inputSchema`, as
    /// (property, header name in lowercase, e.g. `mcp-param-region`), for
    /// the 2026-07-28 HTTP header checks (HTTP-4). Empty for an unknown
    /// tool.
    pub(crate) fn param_headers(&self, name: &str) -> Vec<(String, String)> {
        let entry = match self.registry.read().tool(name) {
            Some(entry) => entry,
            None => return Vec::new(),
        };
        let properties = match entry.tool.input_schema.get("properties") {
            Some(Value::Object(p)) => p,
            _ => return Vec::new(),
        };
        properties
            .iter()
            .filter_map(|(property, schema)| {
                let header = schema.get("x-mcp-header").and_then(Value::as_str)?;
                Some((
                    property.clone(),
                    format!("mcp-param-{}", header.to_ascii_lowercase()),
                ))
            })
            .collect()
    }

    /// The scopes every request needs (checked before the body is read).
    pub(crate) fn server_scopes(&self) -> &[String] {
        &self.scopes.server
    }

    /// Every scope the server names, for `scopes_supported`.
    pub(crate) fn scopes_named(&self) -> Vec<String> {
        self.scopes.all_named()
    }

    /// Calls the program's `on_request_finished` hook. A panic in it is
    /// caught and logged: it runs on a reading thread or a worker, which
    /// must go on serving.
    /// The outcome is put together only when there is a hook.
    pub(crate) fn report(&self, outcome: impl FnOnce() -> RequestOutcome) {
        if let Some(hook) = &self.on_request_finished {
            let outcome = &outcome();
            let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(outcome)));
            if called.is_err() {
                log::error!(
                    "the on_request_finished hook panicked on {}",
                    outcome.method
                );
            }
        }
    }

    /// Sends `notification` to every initialized session's unrelated stream.
    pub(super) fn broadcast(&self, method: &str, params: Option<Value>) {
        for session in self.live_sessions() {
            session.send_unrelated(Message::notification(method, params.clone()));
        }
    }
}
