//! The server: one builder, handler traits, and a handle for changes while
//! serving.

mod context;
pub(crate) mod dispatch;
mod handler;
pub(crate) mod listen;
pub(crate) mod modern;
pub(crate) mod mrtr;
mod registry;
mod uri_template;
mod validate;

pub use context::RequestContext;
pub use handler::{
    CompletionHandler, PromptHandler, ResourceHandler, ResourceTemplateHandler, ToolHandler,
};
pub use modern::CacheScope;
pub use mrtr::{InputRequest, InputResponses, RequestStateCodec, ServerStateStore};
pub use registry::TemplateVariables;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use crate::jsonrpc::{ErrorCode, Message};
use crate::protocol::{
    notifications, Implementation, ListChangedCapability, Prompt, Resource, ResourceTemplate,
    ResourcesCapability, ServerCapabilities, Tool,
};
use crate::session::Session;
use registry::Registry;

/// An MCP server: what it offers and how it is configured.
///
/// Build one with [`Server::builder`], then serve it with
/// [`Server::serve_stdio`] (or test it with [`Server::connect_memory`]).
/// A `Server` is cheap to clone; clones share everything.
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
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            registry: Registry::default(),
            completion: None,
            on_request_finished: None,
            config: Config::default(),
            capabilities: None,
            cache: modern::CacheHints::default(),
            state_codec: None,
        }
    }

    /// A handle to change tools, prompts and resources while serving and to
    /// send change notifications.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            inner: Arc::clone(&self.inner),
        }
    }

    /// The capabilities sent in the `initialize` result.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }
}

/// The hook of [`ServerBuilder::on_request_finished`].
type RequestHook = Box<dyn Fn(&RequestOutcome) + Send + Sync>;

/// Limits and timeouts, set through [`ServerBuilder`].
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) page_size: usize,
    pub(crate) max_line_bytes: usize,
    pub(crate) client_request_timeout: Duration,
    pub(crate) max_in_flight: usize,
    pub(crate) max_workers: usize,
    pub(crate) max_subscriptions: usize,
    pub(crate) max_listen_streams: usize,
    pub(crate) end_of_input_grace: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            page_size: 100,
            max_line_bytes: 4 * 1024 * 1024,
            client_request_timeout: Duration::from_secs(60),
            max_in_flight: 1024,
            max_workers: 256,
            max_subscriptions: 1024,
            max_listen_streams: 1024,
            end_of_input_grace: Duration::from_secs(1),
        }
    }
}

/// Builds a [`Server`]. Every setting has a default; see each method.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    registry: Registry,
    completion: Option<Box<dyn CompletionHandler>>,
    on_request_finished: Option<RequestHook>,
    config: Config,
    capabilities: Option<ServerCapabilities>,
    cache: modern::CacheHints,
    state_codec: Option<Box<dyn RequestStateCodec>>,
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish()
    }
}

impl ServerBuilder {
    /// Sets `instructions`, sent in the `initialize` result for the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets `serverInfo` in full (title, icons, website, …).
    pub fn server_info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Adds a tool. A tool with the same name replaces the earlier one.
    ///
    /// The handler runs on a worker thread for each `tools/call`. Closures
    /// need their parameter types written out:
    /// `|ctx: &RequestContext, args: JsonObject| …`.
    ///
    /// Spec: server/tools (2025-11-25).
    pub fn tool(mut self, tool: Tool, handler: impl ToolHandler) -> Self {
        self.registry.insert_tool(tool, Arc::new(handler));
        self
    }

    /// Adds a resource with a fixed URI.
    ///
    /// Spec: server/resources (2025-11-25).
    pub fn resource(mut self, resource: Resource, handler: impl ResourceHandler) -> Self {
        self.registry.insert_resource(resource, Arc::new(handler));
        self
    }

    /// Adds a resource template; `resources/read` of a URI that matches it
    /// calls `handler` with the template's variables.
    pub fn resource_template(
        mut self,
        template: ResourceTemplate,
        handler: impl ResourceTemplateHandler,
    ) -> Self {
        self.registry.insert_template(template, Arc::new(handler));
        self
    }

    /// Adds a prompt. Required arguments are checked before the handler
    /// runs (missing: `-32602`).
    ///
    /// Spec: server/prompts (2025-11-25).
    pub fn prompt(mut self, prompt: Prompt, handler: impl PromptHandler) -> Self {
        self.registry.insert_prompt(prompt, Arc::new(handler));
        self
    }

    /// Serves `completion/complete` with `handler` and declares
    /// `completions: {}`.
    pub fn completion(mut self, handler: impl CompletionHandler) -> Self {
        self.completion = Some(Box::new(handler));
        self
    }

    /// Calls `hook` after each request finishes, on the thread that finished
    /// it, with its method, duration and outcome. Keep it fast.
    pub fn on_request_finished(
        mut self,
        hook: impl Fn(&RequestOutcome) + Send + Sync + 'static,
    ) -> Self {
        self.on_request_finished = Some(Box::new(hook));
        self
    }

    /// Items per page of `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list`. Defaults to 100; at least 1.
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// Longest message accepted on stdio, in bytes. A longer line is
    /// discarded up to its newline and answered with `-32600`. Defaults to
    /// 4 MiB.
    pub fn max_message_bytes(mut self, n: usize) -> Self {
        self.config.max_line_bytes = n.max(64);
        self
    }

    /// How long `create_message`, `elicit` and `list_roots` wait for the
    /// client. Defaults to 60 s. On timeout the request is cancelled with
    /// `notifications/cancelled` (LC-6).
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.config.client_request_timeout = timeout;
        self
    }

    /// How long handlers still running when stdin closes get to finish and
    /// answer before they are cancelled. Defaults to 1 s; zero cancels them
    /// at once.
    pub fn end_of_input_grace(mut self, grace: Duration) -> Self {
        self.config.end_of_input_grace = grace;
        self
    }

    /// Most requests one session may have in flight. Past it a request gets
    /// `-32603` "too many requests in flight". Defaults to 1024.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.config.max_in_flight = n.max(1);
        self
    }

    /// Most worker threads running handlers at once. Past it requests wait
    /// in a queue for a free worker. Defaults to 256.
    pub fn max_workers(mut self, n: usize) -> Self {
        self.config.max_workers = n.max(1);
        self
    }

    /// Most `resources/subscribe` URIs per session; past it `-32602`.
    /// Defaults to 1024.
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.config.max_subscriptions = n;
        self
    }

    /// Most `subscriptions/listen` streams open at once (2026-07-28). Past
    /// it a listen request gets `-32603` "too many listen streams" (HTTP
    /// 503) before any acknowledgement. Defaults to 1024.
    pub fn max_listen_streams(mut self, n: usize) -> Self {
        self.config.max_listen_streams = n;
        self
    }

    /// The cache hints of cacheable 2026-07-28 results (`server/discover`,
    /// the list methods, `resources/read`): `ttlMs` and `cacheScope`.
    /// Defaults to 0 ms (stale at once) and private (CACHE-1).
    pub fn cache_hints(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.cache = modern::CacheHints { ttl, scope };
        self
    }

    /// How `requestState` is made and checked for multi round-trip
    /// requests (2026-07-28). Defaults to a [`ServerStateStore`]: the state
    /// stays in memory behind a random, expiring key.
    pub fn request_state_codec(mut self, codec: impl RequestStateCodec) -> Self {
        self.state_codec = Some(Box::new(codec));
        self
    }

    /// Replaces the capabilities derived from what was registered.
    pub fn capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Finishes the server.
    ///
    /// Capabilities follow what was registered: `tools` with
    /// `listChanged` if any tool was added, `resources` with `subscribe`
    /// and `listChanged` if any resource or template was, `prompts`
    /// likewise, `completions` with a completion handler, and always
    /// `logging`.
    pub fn build(self) -> Server {
        let capabilities = self.capabilities.unwrap_or_else(|| {
            let listed = || {
                Some(ListChangedCapability {
                    list_changed: Some(true),
                })
            };
            ServerCapabilities {
                tools: if self.registry.has_tools() {
                    listed()
                } else {
                    None
                },
                prompts: if self.registry.has_prompts() {
                    listed()
                } else {
                    None
                },
                resources: if self.registry.has_resources() {
                    Some(ResourcesCapability {
                        subscribe: Some(true),
                        list_changed: Some(true),
                    })
                } else {
                    None
                },
                logging: Some(Default::default()),
                completions: self.completion.as_ref().map(|_| Default::default()),
                experimental: None,
            }
        });
        Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                capabilities,
                registry: RwLock::new(self.registry),
                completion: self.completion,
                on_request_finished: self.on_request_finished,
                listen: listen::ListenRegistry::new(self.config.max_listen_streams),
                config: self.config,
                sessions: Mutex::new(HashMap::new()),
                next_session_key: AtomicU64::new(1),
                cache: self.cache,
                state_codec: self
                    .state_codec
                    .unwrap_or_else(|| Box::new(ServerStateStore::default())),
            }),
        }
    }
}

/// Everything a server shares between its sessions and threads.
pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) registry: RwLock<Registry>,
    pub(crate) completion: Option<Box<dyn CompletionHandler>>,
    pub(crate) on_request_finished: Option<RequestHook>,
    pub(crate) config: Config,
    sessions: Mutex<HashMap<u64, Weak<Session>>>,
    next_session_key: AtomicU64,
    pub(crate) listen: listen::ListenRegistry,
    pub(crate) cache: modern::CacheHints,
    pub(crate) state_codec: Box<dyn RequestStateCodec>,
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

    pub(crate) fn report(&self, outcome: &RequestOutcome) {
        if let Some(hook) = &self.on_request_finished {
            hook(outcome);
        }
    }

    /// Sends `notification` to every initialized session's unrelated stream.
    fn broadcast(&self, method: &str, params: Option<Value>) {
        for session in self.live_sessions() {
            session.send_unrelated(Message::notification(method, params.clone()));
        }
    }
}

/// A handle to a running [`Server`]: change what it offers and notify
/// clients. Cheap to clone; usable from any thread and from handlers
/// ([`RequestContext::server`]).
///
/// Each change sends the matching `notifications/*/list_changed` to every
/// initialized session (TOOL-2, RES-2, PRM-2).
#[derive(Clone)]
pub struct ServerHandle {
    inner: Arc<ServerInner>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("name", &self.inner.info.name)
            .finish()
    }
}

impl ServerHandle {
    pub(crate) fn new(inner: Arc<ServerInner>) -> ServerHandle {
        ServerHandle { inner }
    }

    /// Adds (or replaces) a tool and sends `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) {
        self.inner
            .registry
            .write()
            .insert_tool(tool, Arc::new(handler));
        self.notify_tools_list_changed();
    }

    /// Removes a tool; `false` if there was none. Notifies on removal.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.registry.write().remove_tool(name);
        if removed {
            self.notify_tools_list_changed();
        }
        removed
    }

    /// Adds (or replaces) a prompt and sends
    /// `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt, handler: impl PromptHandler) {
        self.inner
            .registry
            .write()
            .insert_prompt(prompt, Arc::new(handler));
        self.notify_prompts_list_changed();
    }

    /// Removes a prompt; `false` if there was none. Notifies on removal.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.registry.write().remove_prompt(name);
        if removed {
            self.notify_prompts_list_changed();
        }
        removed
    }

    /// Adds (or replaces) a resource and sends
    /// `notifications/resources/list_changed`.
    pub fn add_resource(&self, resource: Resource, handler: impl ResourceHandler) {
        self.inner
            .registry
            .write()
            .insert_resource(resource, Arc::new(handler));
        self.notify_resources_list_changed();
    }

    /// Removes a resource by URI; `false` if there was none. Notifies on
    /// removal.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.inner.registry.write().remove_resource(uri);
        if removed {
            self.notify_resources_list_changed();
        }
        removed
    }

    /// Sends `notifications/tools/list_changed` to every session and every
    /// listen stream that asked for it.
    pub fn notify_tools_list_changed(&self) {
        self.inner
            .broadcast(notifications::TOOLS_LIST_CHANGED, None);
        self.inner.listen.notify(listen::Change::Tools);
    }

    /// Sends `notifications/prompts/list_changed` to every session and
    /// every listen stream that asked for it.
    pub fn notify_prompts_list_changed(&self) {
        self.inner
            .broadcast(notifications::PROMPTS_LIST_CHANGED, None);
        self.inner.listen.notify(listen::Change::Prompts);
    }

    /// Sends `notifications/resources/list_changed` to every session and
    /// every listen stream that asked for it.
    pub fn notify_resources_list_changed(&self) {
        self.inner
            .broadcast(notifications::RESOURCES_LIST_CHANGED, None);
        self.inner.listen.notify(listen::Change::Resources);
    }

    /// Ends every `subscriptions/listen` stream gracefully: each gets its
    /// listen request's result (LISTEN-11) and its HTTP response ends.
    pub fn close_listen_streams(&self) {
        self.inner.listen.close_all(&self.inner.info);
    }

    /// Sends `notifications/resources/updated {uri}` to the sessions that
    /// subscribed to `uri` (RES-3) and the listen streams that name it.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner.listen.notify(listen::Change::Updated(uri));
        for session in self.inner.live_sessions() {
            let subscribed = session.state.lock().subscriptions.contains(uri);
            if subscribed {
                session.send_unrelated(Message::notification(
                    notifications::RESOURCES_UPDATED,
                    Some(serde_json::json!({ "uri": uri })),
                ));
            }
        }
    }
}

/// How a request ended, as reported to
/// [`ServerBuilder::on_request_finished`].
#[derive(Debug, Clone)]
pub struct RequestOutcome {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// From receipt to the response (or the cancel).
    pub duration: Duration,
    /// What happened.
    pub status: RequestStatus,
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
