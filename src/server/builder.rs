//! [`ServerBuilder`]: what a server offers and how it is configured.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};

use super::bus::ChangeBus;
use super::complete::{ArgumentCompleter, CompleterEntry, Target};
use super::envelope::CacheHints;
use super::envelope::CacheScope;
use super::handler::{
    CompletionHandler, PromptHandler, ResourceHandler, ResourceTemplateHandler, ToolHandler,
};
use super::inner::ServerInner;
use super::input::{RequestStateCodec, ServerStateStore};
use super::intercept::Interceptor;
use super::listen::ListenRegistry;
use super::outcome::RequestOutcome;
use super::provider::ResourceProvider;
use super::registry::Registry;
use super::scopes::ScopePolicy;
use super::Server;
use crate::protocol::{
    Implementation, ListChangedCapability, Prompt, Resource, ResourceTemplate, ResourcesCapability,
    ServerCapabilities, Tool,
};

mod apps;
mod extensions;
mod limits;

#[cfg(feature = "tasks")]
use super::tasks::{TaskLimits, TaskStore};

/// The hook of [`ServerBuilder::on_request_finished`].
pub(crate) type RequestHook = Box<dyn Fn(&RequestOutcome) + Send + Sync>;

/// Limits and timeouts, set through [`ServerBuilder`].
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) page_size: usize,
    pub(crate) max_line_bytes: usize,
    /// Bytes of requests queued behind a waiting single-threaded handler.
    pub(crate) max_queued_bytes: usize,
    pub(crate) client_request_timeout: Duration,
    pub(crate) max_in_flight: usize,
    pub(crate) max_workers: usize,
    /// `None`: a quarter of `max_workers` (DESIGN.md §26).
    pub(crate) max_workers_per_caller: Option<usize>,
    /// `None`: half of `max_workers`.
    pub(crate) max_workers_per_peer: Option<usize>,
    pub(crate) max_subscriptions: usize,
    pub(crate) max_listen_streams: usize,
    pub(crate) end_of_input_grace: Duration,
    pub(crate) handler_exit_timeout: Duration,
    /// [`ServerBuilder::list_ui_resources`].
    pub(crate) list_ui_resources: bool,
    /// [`ServerBuilder::hide_ui_from_text_clients`].
    pub(crate) hide_ui_from_text_clients: bool,
    /// [`ServerBuilder::collect_metrics`].
    pub(crate) collect_metrics: bool,
    /// [`ServerBuilder::max_metric_tools`].
    pub(crate) max_metric_tools: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            page_size: 100,
            max_line_bytes: 4 * 1024 * 1024,
            max_queued_bytes: 64 * 1024 * 1024,
            client_request_timeout: Duration::from_secs(60),
            max_in_flight: 1024,
            max_workers: if crate::server::waiting::NO_THREADS {
                0
            } else {
                256
            },
            max_workers_per_caller: None,
            max_workers_per_peer: None,
            max_subscriptions: 1024,
            max_listen_streams: 10_000,
            end_of_input_grace: Duration::from_secs(1),
            handler_exit_timeout: Duration::from_secs(5),
            list_ui_resources: true,
            hide_ui_from_text_clients: false,
            collect_metrics: true,
            max_metric_tools: 256,
        }
    }
}

/// Builds a [`Server`]. Every setting has a default; see each method.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    registry: Registry,
    on_request_finished: Option<RequestHook>,
    config: Config,
    capabilities: Option<ServerCapabilities>,
    cache: CacheHints,
    state_codec: Option<Box<dyn RequestStateCodec>>,
    offer: Offered,
    scopes: ScopePolicy,
    interceptors: Vec<Box<dyn Interceptor>>,
    bus: Option<Box<dyn ChangeBus>>,
    pub(super) upstream: Option<Arc<dyn super::Upstream>>,
    #[cfg(feature = "tasks")]
    task_store: Option<Box<dyn TaskStore>>,
    #[cfg(feature = "tasks")]
    task_limits: Option<TaskLimits>,
    #[cfg(feature = "tasks")]
    task_id_prefix: String,
    #[cfg(feature = "skills")]
    skills: Arc<super::skills::SkillSet>,
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish()
    }
}

impl ServerBuilder {
    pub(super) fn new(info: Implementation) -> ServerBuilder {
        ServerBuilder {
            info,
            instructions: None,
            registry: Registry::default(),
            on_request_finished: None,
            config: Config::default(),
            capabilities: None,
            cache: CacheHints::default(),
            state_codec: None,
            offer: Offered::default(),
            scopes: ScopePolicy::default(),
            interceptors: Vec::new(),
            bus: None,
            upstream: None,
            #[cfg(feature = "tasks")]
            task_store: None,
            #[cfg(feature = "tasks")]
            task_limits: None,
            #[cfg(feature = "tasks")]
            task_id_prefix: String::new(),
            #[cfg(feature = "skills")]
            skills: Arc::default(),
        }
    }

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

    /// Adds a tool that runs on the thread that reads its call, not on a
    /// worker: for a handler that returns in microseconds and never
    /// blocks (a lookup, a computation on its arguments). It saves the
    /// hand-over to a worker and back, most of the cost of a small call.
    ///
    /// While it runs, the connection reads nothing else: no other request,
    /// no cancellation, so a quick tool that is slow delays everything
    /// else on its connection (stdio; one HTTP connection). It cannot wait
    /// for the client: `create_message`, `elicit`, `list_roots` and
    /// `send_request` fail at once in the 2025-11-25 era (in 2026-07-28 they
    /// ask as usual, with `input_required`). Register anything that may be
    /// slow with [`tool`](Self::tool).
    ///
    /// Spec: server/tools (2025-11-25).
    pub fn quick_tool(mut self, tool: Tool, handler: impl ToolHandler) -> Self {
        self.registry
            .insert_tool_entry(tool, Arc::new(handler), true);
        self
    }

    /// Adds a tool whose arguments are a type `A` and whose result is a
    /// type `R`: the crate deserializes `arguments` into `A` (a failure is
    /// an `isError` result with serde's message, e.g. ``missing field
    /// `city` ``, naming the argument serde refused; the `inputSchema`
    /// checks run first and name the field, see [`ToolHandler`]; `A = ()`
    /// takes a call without arguments). The result:
    ///
    /// | `R` | the tool's result |
    /// | --- | --- |
    /// | serializes to a JSON object | `structuredContent`, plus the same JSON as text (TOOL-5) |
    /// | `String`, `&'static str` | that text |
    /// | [`CallToolResult`](crate::CallToolResult) | itself, as the handler built it |
    /// | anything else | its JSON as text |
    ///
    /// Give the tool an `outputSchema` (`Tool::with_output_schema`, or
    /// `Tool::from_types` with the `schemars` feature) to have the result
    /// checked against it. An `Option` field that is `None` serializes as
    /// `null`: a schema from `Tool::from_types` allows it (an `Option`
    /// field is not required and its `type` lists `"null"`), and where a
    /// hand-written schema declares the property without requiring it or
    /// allowing `null` (`{"type": "string"}`), the member is left out of
    /// `structuredContent` and its text. To leave it out always, mark the
    /// field `#[serde(skip_serializing_if = "Option::is_none")]`.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use tiny_mcp::{RequestContext, Server, Tool};
    ///
    /// #[derive(Deserialize)]
    /// struct Add { a: i64, b: i64 }
    /// #[derive(Serialize)]
    /// struct Sum { sum: i64 }
    ///
    /// let schema = serde_json::json!({"type": "object", "required": ["a", "b"],
    ///     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
    /// let server = Server::builder("calc", "1")
    ///     .typed_tool(Tool::new("add", schema), |_: &RequestContext, args: Add| {
    ///         Ok(Sum { sum: args.a + args.b })
    ///     })
    ///     .build();
    /// # drop(server);
    /// ```
    ///
    /// Spec: server/tools "Structured Content" (2025-11-25).
    pub fn typed_tool<A, R, F>(self, tool: Tool, handler: F) -> Self
    where
        A: serde::de::DeserializeOwned + 'static,
        R: serde::Serialize + 'static,
        F: Fn(&super::context::RequestContext, A) -> Result<R, crate::error::Error>
            + Send
            + Sync
            + 'static,
    {
        self.tool(tool, super::typed::typed(handler))
    }

    /// Adds a resource with a fixed URI.
    ///
    /// Spec: server/resources (2025-11-25).
    pub fn resource(mut self, resource: Resource, handler: impl ResourceHandler) -> Self {
        self.registry.insert_resource(resource, Arc::new(handler));
        self
    }

    /// Adds a list of resources computed per request (see
    /// [`ResourceProvider`]): listed after the fixed resources, in the
    /// order providers were added; read before the templates.
    ///
    /// Spec: server/resources "Listing Resources" (2025-11-25).
    pub fn resource_provider(mut self, provider: impl ResourceProvider) -> Self {
        self.registry.providers.push(Arc::new(provider));
        self
    }

    /// Adds a resource template; `resources/read` of a URI that matches it
    /// calls `handler` with the template's variables. A URI that a fixed
    /// resource or a provider lists is read from there, not from a
    /// template.
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
    /// `completions: {}`. A completer registered for the argument
    /// ([`complete_prompt_argument`](Self::complete_prompt_argument),
    /// [`complete_template_variable`](Self::complete_template_variable))
    /// is asked instead of it.
    pub fn completion(mut self, handler: impl CompletionHandler) -> Self {
        self.registry.completion = Some(Arc::new(handler));
        self
    }

    /// Completes argument `argument` of prompt `prompt` with `completer`
    /// (see [`ArgumentCompleter`]) and declares `completions: {}`. A
    /// completer for the same pair replaces the earlier one. A prompt that
    /// has no completer for an argument gets no suggestions (or the
    /// [`completion`](Self::completion) handler's, if set).
    ///
    /// Spec: server/utilities/completion (2025-11-25), `ref/prompt`.
    pub fn complete_prompt_argument(
        self,
        prompt: impl Into<String>,
        argument: impl Into<String>,
        completer: impl ArgumentCompleter,
    ) -> Self {
        let target = Target::PromptArgument {
            prompt: prompt.into(),
            argument: argument.into(),
        };
        self.completer(target, Arc::new(completer))
    }

    /// Completes variable `variable` of the resource template
    /// `uri_template` (as registered, e.g. `file:///{path}`) with
    /// `completer`, as [`complete_prompt_argument`](Self::complete_prompt_argument)
    /// does for prompts.
    ///
    /// Spec: server/utilities/completion (2025-11-25), `ref/resource`.
    pub fn complete_template_variable(
        self,
        uri_template: impl Into<String>,
        variable: impl Into<String>,
        completer: impl ArgumentCompleter,
    ) -> Self {
        let target = Target::TemplateVariable {
            template: uri_template.into(),
            variable: variable.into(),
        };
        self.completer(target, Arc::new(completer))
    }

    fn completer(mut self, target: Target, completer: Arc<dyn ArgumentCompleter>) -> Self {
        let entry = CompleterEntry { target, completer };
        self.registry.insert_completer(entry);
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

    /// Publishes this instance's changes (list changes, resource updates)
    /// to the other instances behind a load balancer (see [`ChangeBus`]);
    /// feed theirs in with
    /// [`ServerHandle::apply_change`](crate::ServerHandle::apply_change).
    /// Defaults to none: changes reach this instance's clients only.
    pub fn change_bus(mut self, bus: impl ChangeBus) -> Self {
        self.bus = Some(Box::new(bus));
        self
    }

    /// Adds an interceptor around every handler call (see
    /// [`Interceptor`]). Interceptors run in the order they were added,
    /// after the HTTP edge (authorization, pre-request hooks, scope
    /// checks) let the request through.
    pub fn intercept(mut self, interceptor: impl Interceptor) -> Self {
        self.interceptors.push(Box::new(interceptor));
        self
    }

    /// Scopes every request needs, once a token verifier is set on the
    /// HTTP transport ([`HttpServerBuilder::protect`](crate::HttpServerBuilder::protect)).
    /// A request whose token lacks one is refused before its body is read:
    /// 403 with `error="insufficient_scope"`; a request without a token
    /// gets them in the 401 challenge's `scope` (basic/authorization,
    /// "Scope Challenge Handling"). Requests without a principal (stdio, a
    /// server without a verifier) are not checked. Defaults to none.
    pub fn require_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.server = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes `tools/call` of tool `name` needs, besides the server-wide
    /// ones; without them, 403 with the challenge naming all it needs.
    /// Names are matched as registered, also for tools added while
    /// serving; [`build`](Self::build) logs a warning for a name that is
    /// not registered then (a typo fails open to the server-wide scopes).
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.tools.insert(name.into(), scopes);
        self
    }

    /// Scopes `prompts/get` of prompt `name` needs (see
    /// [`tool_scopes`](Self::tool_scopes)).
    pub fn prompt_scopes<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.prompts.insert(name.into(), scopes);
        self
    }

    /// Scopes `resources/read` and `resources/subscribe` of the resource at
    /// `uri` need (see [`tool_scopes`](Self::tool_scopes)).
    pub fn resource_scopes<S: Into<String>>(
        mut self,
        uri: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.resources.insert(uri.into(), scopes);
        self
    }

    /// Scopes reading a URI that matches `uri_template` (as registered)
    /// needs, unless a fixed resource has that URI (see
    /// [`tool_scopes`](Self::tool_scopes)).
    pub fn template_scopes<S: Into<String>>(
        mut self,
        uri_template: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.templates.insert(uri_template.into(), scopes);
        self
    }

    /// `true`: `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list` show each principal only the items whose
    /// scopes it holds. Defaults to `false` (everything is listed; calls are
    /// still checked).
    pub fn list_only_permitted(mut self, on: bool) -> Self {
        self.scopes.filter_lists = on;
        self
    }

    /// The cache hints of cacheable 2026-07-28 results (`server/discover`,
    /// the list methods, `resources/read`): `ttlMs` and `cacheScope`.
    /// Defaults to 0 ms (stale at once) and private (CACHE-1).
    pub fn cache_hints(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.cache = CacheHints { ttl, scope };
        self
    }

    /// How `requestState` is made and checked for multi round-trip
    /// requests (2026-07-28). Defaults to a [`ServerStateStore`]: the state
    /// stays in memory behind a random, expiring key.
    pub fn request_state_codec(mut self, codec: impl RequestStateCodec) -> Self {
        self.state_codec = Some(Box::new(codec));
        self
    }

    /// Replaces the capabilities derived from what was registered. Adding
    /// the first tool, prompt or resource while serving still declares its
    /// kind.
    ///
    /// # Example
    ///
    /// ```
    /// use tiny_mcp::{Server, ServerCapabilities};
    ///
    /// let mut capabilities = ServerCapabilities::default();
    /// capabilities.logging = Some(Default::default());
    /// let server = Server::builder("quiet", "1").capabilities(capabilities).build();
    /// assert!(server.capabilities().tools.is_none());
    /// ```
    pub fn capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Declares `tools` (with `listChanged`) even while none is registered,
    /// for a server that adds its tools while serving
    /// ([`ServerHandle::edit`](crate::ServerHandle::edit)).
    pub fn offer_tools(mut self) -> Self {
        self.offer.tools = true;
        self
    }

    /// Declares `prompts` (with `listChanged`) even while none is
    /// registered.
    pub fn offer_prompts(mut self) -> Self {
        self.offer.prompts = true;
        self
    }

    /// Declares `resources` (with `subscribe` and `listChanged`) even while
    /// none is registered.
    pub fn offer_resources(mut self) -> Self {
        self.offer.resources = true;
        self
    }

    /// Finishes the server.
    ///
    /// Capabilities follow what can be served: `tools` with `listChanged`
    /// if any tool was added or [`offer_tools`](Self::offer_tools) was
    /// called, `resources` with `subscribe` and `listChanged` if any
    /// resource or template was (or `offer_resources`), `prompts` likewise,
    /// `completions` with a completion handler, and always `logging`.
    /// Adding the first item of a kind while serving declares that kind
    /// from then on.
    ///
    /// # Panics
    ///
    /// When [`try_build`](Self::try_build) fails: a tool names an MCP Apps
    /// view that is not registered.
    pub fn build(self) -> Server {
        match self.try_build() {
            Ok(server) => server,
            Err(e) => panic!("ServerBuilder::build: {}", e),
        }
    }

    /// [`build`](Self::build), with the checks of what was registered as
    /// an error.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) when
    /// a tool's `_meta.ui.resourceUri` names no view added with
    /// [`ui_resource`](Self::ui_resource) (MCP Apps "Resource Discovery":
    /// the resource must exist on the server).
    pub fn try_build(self) -> Result<Server, crate::error::Error> {
        super::apps::check_tools(&self.registry)?;
        for item in self.scopes.unknown(&self.registry) {
            log::warn!(
                "scopes are set for {}, which is not registered: until it is, only the \
                 server-wide scopes guard it",
                item
            );
        }
        #[cfg_attr(not(any(feature = "tasks", feature = "skills")), allow(unused_mut))]
        let mut capabilities = match &self.capabilities {
            Some(capabilities) => capabilities.clone(),
            None => self.derived_capabilities(),
        };
        #[cfg(feature = "tasks")]
        if self.capabilities.is_none()
            && (self.registry.has_task_tools()
                || self.task_limits.is_some()
                || self.task_store.is_some())
        {
            super::tasks::declare(&mut capabilities);
        }
        #[cfg(feature = "skills")]
        if self.capabilities.is_none()
            && self
                .skills
                .offered
                .load(std::sync::atomic::Ordering::Acquire)
        {
            super::skills::declare(&mut capabilities);
        }
        if self.capabilities.is_none() && self.registry.has_ui_resources() {
            super::apps::declare(&mut capabilities);
        }
        let server = Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                capabilities: RwLock::new(capabilities),
                registry: RwLock::new(self.registry),
                closing: super::close::Closing::default(),
                on_request_finished: self.on_request_finished,
                metrics: Arc::new(super::metrics::MetricsCore::new(
                    self.config.collect_metrics,
                    self.config.max_metric_tools,
                )),
                listen: ListenRegistry::new(self.config.max_listen_streams),
                config: self.config,
                sessions: Mutex::new(HashMap::new()),
                next_session_key: AtomicU64::new(1),
                cache: self.cache,
                state_codec: self
                    .state_codec
                    .unwrap_or_else(|| Box::new(ServerStateStore::default())),
                scopes: self.scopes,
                interceptors: self.interceptors,
                bus: self.bus,
                upstream: self.upstream,
                #[cfg(feature = "tasks")]
                tasks: super::tasks::Tasks::new(
                    self.task_store,
                    self.task_limits.unwrap_or_default(),
                    self.task_id_prefix,
                ),
                #[cfg(not(feature = "tasks"))]
                tasks: super::tasks::Tasks,
                instance_id: uuid::Uuid::new_v4().to_string(),
                #[cfg(feature = "skills")]
                skills: self.skills,
            }),
        };
        server.attach_shared();
        Ok(server)
    }

    /// The capabilities of what was registered and offered.
    fn derived_capabilities(&self) -> ServerCapabilities {
        let mut capabilities = ServerCapabilities {
            logging: Some(Default::default()),
            completions: self.registry.completes().then(Default::default),
            ..ServerCapabilities::default()
        };
        if self.registry.has_tools() || self.offer.tools {
            capabilities.tools = Some(listed());
        }
        if self.registry.has_prompts() || self.offer.prompts {
            capabilities.prompts = Some(listed());
        }
        if self.registry.has_resources() || self.offer.resources {
            capabilities.resources = Some(subscribable());
        }
        capabilities
    }
}

/// Which kinds a builder declares up front.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Offered {
    tools: bool,
    prompts: bool,
    resources: bool,
}

/// `{"listChanged": true}`.
pub(super) fn listed() -> ListChangedCapability {
    ListChangedCapability {
        list_changed: Some(true),
    }
}

/// `{"subscribe": true, "listChanged": true}`.
pub(super) fn subscribable() -> ResourcesCapability {
    ResourcesCapability {
        subscribe: Some(true),
        list_changed: Some(true),
    }
}
