//! The server: one builder, handler traits, and a handle for changes while
//! serving.

mod builder;
mod bus;
mod caller;
mod close;
mod complete;
mod context;
pub(crate) mod dispatch;
pub(crate) mod envelope;
mod handle;
mod handler;
mod inline;
mod input;
mod intercept;
mod listen;
pub(crate) mod methods;
mod provider;
mod registry;
mod run;
mod scopes;
#[cfg(feature = "sealed-state")]
mod sealed;
mod sink;
#[cfg(feature = "skills")]
mod skills;
#[cfg(not(feature = "skills"))]
#[path = "skills_off.rs"]
mod skills;
#[cfg(feature = "tasks")]
mod tasks;
#[cfg(not(feature = "tasks"))]
#[path = "tasks_off.rs"]
mod tasks;
#[cfg(feature = "tasks")]
pub use tasks::{MemoryTaskStore, TaskLimits, TaskRecord, TaskStore};
mod typed;
pub use typed::typed;
mod uri_template;
mod validate;

pub use builder::ServerBuilder;
pub use bus::{Change, ChangeBus, ChangeEvent};
pub use caller::{HttpHeaders, Principal, TraceContext};
pub use complete::{complete_from, ArgumentCompleter};
pub use context::RequestContext;
pub use envelope::CacheScope;
pub use handle::{ServerEdit, ServerHandle, WeakServerHandle};
pub use handler::{
    CompletionHandler, PromptHandler, ResourceHandler, ResourceTemplateHandler, ToolHandler,
};
pub use input::{InputRequest, InputResponses, RequestStateCodec, ServerStateStore};
pub use intercept::{HandlerOutcome, Interceptor};
pub use provider::{ResourcePage, ResourceProvider};
pub use registry::TemplateVariables;
#[cfg(feature = "sealed-state")]
pub use sealed::SealedStateCodec;

pub(crate) use builder::Config;
pub(crate) use caller::Caller;
pub(crate) use dispatch::Received;
pub(crate) use envelope::Envelope;
pub(crate) use run::current_request;
pub(crate) use sink::{ChannelSink, NullSink, Sink, ToolAnswer};
#[cfg(feature = "fuzzing")]
pub(crate) use uri_template::UriTemplate;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use crate::jsonrpc::{ErrorCode, Message};
use crate::protocol::{Implementation, ServerCapabilities};
use crate::session::Session;
use builder::RequestHook;
use registry::Registry;

/// An MCP server: what it offers and how it is configured.
///
/// Build one with [`Server::builder`], then serve it. A `Server` is cheap
/// to clone; clones share everything.
///
/// # Serving
///
/// | method | serves |
/// | --- | --- |
/// | [`serve_stdio`](Server::serve_stdio) | stdin and stdout, until stdin closes |
/// | [`serve_io`](Server::serve_io) | any reader and writer, the same way |
/// | [`serve_http`](Server::serve_http) | Streamable HTTP with the default settings |
/// | [`http`](Server::http) | Streamable HTTP settings, then [`serve`](crate::HttpServerBuilder::serve) |
/// | [`connect_memory`](Server::connect_memory) | an in-memory client, for tests |
///
/// They are thin calls into the transports, kept in `src/serve.rs` so that
/// this module imports no transport (DESIGN.md §11).
///
/// # Example
///
/// ```no_run
/// use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
///
/// let server = Server::builder("weather", "1.0.0")
///     .instructions("Forecasts by city name.")
///     .tool(
///         Tool::new("forecast", serde_json::json!({
///             "type": "object",
///             "properties": { "city": { "type": "string" } },
///             "required": ["city"]
///         }))
///         .with_description("Tomorrow's weather"),
///         |_ctx: &RequestContext, args: JsonObject| {
///             let city = args.get("city").and_then(|v| v.as_str()).unwrap_or("nowhere");
///             Ok(CallToolResult::text(format!("sunny in {}", city)))
///         },
///     )
///     .build();
/// server.serve_stdio()?; // returns when stdin closes
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("version", &self.inner.info.version)
            .finish()
    }
}

impl Server {
    /// Starts building a server that calls itself `name`, version `version`
    /// (`serverInfo` in the `initialize` result).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// A handle to change tools, prompts and resources while serving and to
    /// send change notifications.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            inner: Arc::clone(&self.inner),
        }
    }

    /// The capabilities the server declares now (in the `initialize`
    /// result and `server/discover`): those of the builder, plus each kind
    /// added while serving.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.inner.capabilities()
    }
}

/// Everything a server shares between its sessions and threads.
pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    /// What the server declares; grows when the first item of a kind is
    /// added while serving.
    capabilities: RwLock<ServerCapabilities>,
    pub(crate) registry: RwLock<Registry>,
    pub(crate) closing: close::Closing,
    pub(crate) on_request_finished: Option<RequestHook>,
    pub(crate) config: Config,
    sessions: Mutex<HashMap<u64, Weak<Session>>>,
    next_session_key: AtomicU64,
    pub(crate) listen: listen::ListenRegistry,
    pub(crate) cache: envelope::CacheHints,
    pub(crate) state_codec: Box<dyn RequestStateCodec>,
    pub(crate) scopes: scopes::ScopePolicy,
    pub(crate) interceptors: Vec<Box<dyn intercept::Interceptor>>,
    /// Where this instance's changes go ([`ChangeBus`]); `None`: nowhere.
    pub(crate) bus: Option<Box<dyn ChangeBus>>,
    /// The `origin` of the events this instance publishes.
    pub(crate) instance_id: String,
    /// The tasks: their store and this instance's runs.
    pub(crate) tasks: tasks::Tasks,
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

    /// The live, initialized sessions (cloned out of the lock).
    fn live_sessions(&self) -> Vec<Arc<Session>> {
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
    fn declare(&self, add: impl FnOnce(&mut ServerCapabilities)) {
        add(&mut self.capabilities.write());
    }

    /// RES-3's server info in a result's `_meta` (a typed result's part of
    /// [`decorate`](Self::decorate); `resultType` is added as it is written).
    pub(crate) fn stamp(&self, meta: &mut crate::JsonObject) {
        envelope::stamp_meta(meta, &self.info)
    }

    /// Decorates a 2026-07-28 result of `method` (see
    /// [`envelope::decorate`]): with the cache hints when its row says it
    /// is cacheable.
    pub(crate) fn decorate(&self, result: Value, method: &methods::Method) -> Value {
        let cache = if method.cacheable {
            Some(self.cache)
        } else {
            None
        };
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

    /// The scopes a request for `method` with `params` needs: the
    /// server-wide ones, then those of the tool, prompt or resource it acts
    /// on (its row's `offer`). HTTP's second registry question, asked
    /// before the request is dispatched.
    pub(crate) fn scopes_needed(&self, method: &str, params: Option<&Value>) -> Vec<String> {
        let offer = methods::offer_of(method);
        self.scopes.needed(&self.registry.read(), offer, params)
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
    fn broadcast(&self, method: &str, params: Option<Value>) {
        for session in self.live_sessions() {
            session.send_unrelated(Message::notification(method, params.clone()));
        }
    }
}

/// How a request ended, as reported to
/// [`ServerBuilder::on_request_finished`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestOutcome {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// From receipt to the response (or the cancel).
    pub duration: Duration,
    /// What happened.
    pub status: RequestStatus,
    /// Who called, when a token verifier established it (HTTP).
    pub principal: Option<Arc<Principal>>,
    /// The trace context of the request's `_meta`, if it had one.
    pub trace: Option<TraceContext>,
}

/// The end of a request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RequestStatus {
    /// A result was sent (for `tools/call`, also one with `isError: true`).
    Ok,
    /// A JSON-RPC error was sent with this code.
    Error(ErrorCode),
    /// The request was cancelled; no response was sent.
    Cancelled {
        /// The reason the canceller gave.
        reason: Option<String>,
    },
}
