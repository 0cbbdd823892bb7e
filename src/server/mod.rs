//! The server: one builder, handler traits, and a handle for changes while
//! serving.

mod apps;
mod builder;
mod bus;
mod caller;
mod calls;
pub(crate) mod cancel;
mod close;
mod complete;
mod context;
pub(crate) mod dispatch;
pub(crate) mod envelope;
mod handle;
mod handler;
mod inline;
mod inner;
mod input;
mod intercept;
mod listen;
pub(crate) mod methods;
#[cfg(feature = "metrics")]
mod metrics;
#[cfg(not(feature = "metrics"))]
#[path = "metrics_off.rs"]
mod metrics;
mod outcome;
mod provider;
mod registry;
mod reply;
mod run;
mod scopes;
#[cfg(feature = "sealed-state")]
mod sealed;
pub(crate) mod session;
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
#[cfg(feature = "tracing")]
mod trace;
#[cfg(not(feature = "tracing"))]
#[path = "trace_off.rs"]
mod trace;
#[cfg(feature = "opentelemetry")]
mod trace_parent;
#[cfg(feature = "tasks")]
pub use tasks::{MemoryTaskStore, TaskCommand, TaskLimits, TaskRecord, TaskStore};
mod typed;
pub use typed::typed;
mod upstream;
mod uri_template;
mod validate;
pub(crate) mod waiting;

pub use builder::ServerBuilder;
pub use bus::{Change, ChangeBus, ChangeEvent};
pub use caller::{HttpHeaders, Principal, TraceContext};
pub use cancel::CancellationFlag;
pub use complete::{complete_from, ArgumentCompleter};
pub use context::RequestContext;
pub use envelope::CacheScope;
pub use handle::{ServerEdit, ServerHandle, WeakServerHandle};
pub use handler::{
    CompletionHandler, PromptHandler, ResourceHandler, ResourceTemplateHandler, ToolHandler,
};
pub use input::{InputRequest, InputResponses, RequestStateCodec, ServerStateStore};
pub use intercept::{HandlerOutcome, Interceptor};
#[cfg(feature = "metrics")]
pub use metrics::{Gauge, Metrics};
pub use outcome::{RequestOutcome, RequestStatus};
pub use provider::{ResourcePage, ResourceProvider};
pub use registry::TemplateVariables;
#[cfg(feature = "sealed-state")]
pub use sealed::SealedStateCodec;
pub use upstream::{SessionHandle, Upstream};

pub(crate) use builder::Config;
pub(crate) use caller::{Caller, CallerKey};
pub(crate) use dispatch::Received;
pub(crate) use envelope::Envelope;
pub(crate) use inner::ServerInner;
pub(crate) use metrics::{OpenMark, WorkerGauges};
pub(crate) use run::{current_request, Job};
pub(crate) use sink::{ChannelSink, NullSink, Sink, ToolAnswer};
#[cfg(feature = "fuzzing")]
pub(crate) use uri_template::UriTemplate;

use std::fmt;
use std::sync::Arc;

use crate::protocol::{Implementation, ServerCapabilities};

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

    /// The server's metrics (feature `metrics`): request counts and
    /// durations per method and tool, errors, sessions, connections,
    /// streams, tasks and workers, over every transport serving it
    /// (DESIGN.md §29).
    #[cfg(feature = "metrics")]
    pub fn metrics(&self) -> Metrics {
        Metrics {
            server: Arc::clone(&self.inner),
        }
    }

    /// Lets the change bus and the task store start what they run beside
    /// the server (`ChangeBus::attach`, `TaskStore::attach`; DESIGN.md §16).
    fn attach_shared(&self) {
        let handle = self.handle();
        if let Some(bus) = &self.inner.bus {
            bus.attach(&handle);
        }
        #[cfg(feature = "tasks")]
        self.inner.tasks.store.attach(&handle);
    }
}
