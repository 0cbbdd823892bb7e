//! # tiny-mcp
//!
//! [Model Context Protocol](https://modelcontextprotocol.io) servers for
//! plain, synchronous Rust programs: no async runtime, a handful of small
//! dependencies, and a build on Rust 1.63.
//!
//! A program describes its tools, resources and prompts with
//! [`Server::builder`], then serves them over stdio ([`Server::serve_stdio`])
//! or Streamable HTTP ([`Server::serve_http`], or [`Server::http`] for the
//! settings). Handlers are closures (or types implementing [`ToolHandler`]
//! and its siblings) that receive a [`RequestContext`] first. One server
//! speaks both protocol eras: 2025-11-25 (with `initialize`, negotiating
//! down to 2024-11-05) and 2026-07-28 (no handshake, no session).
//!
//! ## Quick start
//!
//! ```no_run
//! use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
//!
//! let server = Server::builder("greeter", "1.0.0")
//!     .tool(
//!         Tool::new("greet", serde_json::json!({
//!             "type": "object",
//!             "properties": { "name": { "type": "string" } },
//!             "required": ["name"]
//!         }))
//!         .with_description("Says hello"),
//!         |ctx: &RequestContext, args: JsonObject| {
//!             ctx.check_cancelled()?;
//!             let name = args.get("name").and_then(|v| v.as_str()).unwrap_or("you");
//!             Ok(CallToolResult::text(format!("Hello, {}!", name)))
//!         },
//!     )
//!     .build();
//! server.serve_stdio()?;
//! # Ok::<(), tiny_mcp::Error>(())
//! ```
//!
//! ## Main types
//!
//! | type | what it is |
//! | --- | --- |
//! | [`Server`], [`ServerBuilder`] | the one entry point: what the server offers, its limits, and the serving methods |
//! | [`Tool`], [`Resource`], [`ResourceTemplate`], [`Prompt`] | definitions, as the spec's structs |
//! | [`ToolHandler`], [`ResourceHandler`], [`ResourceTemplateHandler`], [`PromptHandler`], [`CompletionHandler`] | handler traits, implemented by closures |
//! | [`RequestContext`] | what a handler knows of its request (its [`Era`], the client, cancellation) and can do with the client |
//! | [`CallToolResult`], [`GetPromptResult`], [`ReadResourceResult`], [`CompleteResult`] | what handlers return |
//! | [`ServerHandle`], [`ServerEdit`], [`WeakServerHandle`] | changes while serving, change notifications, closing |
//! | [`ResourceProvider`], [`ArgumentCompleter`] | resource lists computed per request; completion per argument |
//! | [`HttpServerBuilder`], [`HttpServer`] | Streamable HTTP settings and the running server |
//! | [`MemoryClient`] | an in-memory client for testing handlers |
//! | [`Client`], [`ClientBuilder`], [`CallOptions`], [`CancelToken`] | the blocking client: connect over stdio, HTTP or any reader and writer, then call |
//! | [`Error`], [`ErrorKind`] | the one error type, and how each kind reaches the client ([`Error::to_wire`]) |
//! | [`Message`], [`Request`], [`Response`], [`RequestId`], [`ErrorObject`] | JSON-RPC 2.0 messages |
//! | [`methods`], [`notifications`], [`meta`], [`versions`] | names as the spec spells them |
//!
//! ## Calling a server
//!
//! [`Client`] is a blocking client for the same two eras: it tries
//! 2026-07-28 (`server/discover`) and falls back to the `initialize`
//! handshake. Over a child process's stdio:
//!
//! ```no_run
//! use std::process::Command;
//! use tiny_mcp::Client;
//!
//! let mut server = Command::new("my-mcp-server");
//! server.arg("--stdio");
//! let client = Client::builder("my-tool", "1.0.0").connect_stdio(server)?;
//! let answer = client.call_tool("greet", serde_json::json!({"name": "Ada"}))?;
//! println!("{:?}", answer.content);
//! # Ok::<(), tiny_mcp::Error>(())
//! ```
//!
//! Over Streamable HTTP, with a bearer token:
//!
//! ```no_run
//! use tiny_mcp::Client;
//!
//! let client = Client::builder("my-tool", "1.0.0")
//!     .bearer_token(|| std::env::var("MCP_TOKEN").ok())
//!     .connect_http("http://127.0.0.1:3000/mcp")?;
//! for tool in client.list_tools()? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! # Ok::<(), tiny_mcp::Error>(())
//! ```
//!
//! Over any reader and writer of newline-delimited JSON-RPC (the mirror of
//! [`Server::serve_io`]), here a server in the same process:
//!
//! ```
//! use std::io::BufReader;
//! use std::net::{TcpListener, TcpStream};
//! use tiny_mcp::{CallToolResult, Client, JsonObject, RequestContext, Server, Tool};
//!
//! let server = Server::builder("in-process", "1.0.0")
//!     .tool(Tool::new("ping_me", serde_json::json!({"type": "object"})),
//!           |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("pong")))
//!     .build();
//! let listener = TcpListener::bind("127.0.0.1:0")?;
//! let ours = TcpStream::connect(listener.local_addr()?)?;
//! let (theirs, _) = listener.accept()?;
//! let reader = BufReader::new(theirs.try_clone()?);
//! std::thread::spawn(move || server.serve_io(reader, theirs));
//! let client = Client::builder("test", "1").connect_io(BufReader::new(ours.try_clone()?), ours)?;
//! let answer = client.call_tool("ping_me", serde_json::Value::Null)?;
//! assert_eq!(answer.is_error, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Cookbook
//!
//! One short example per feature; the `examples/` directory has whole
//! programs, each run by a test.
//!
//! **Structured output** (server/tools "Structured Content"): a typed tool
//! takes a `serde` type and returns one; its result goes out as
//! `structuredContent` and as text, checked against the `outputSchema`.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tiny_mcp::{RequestContext, Server, Tool};
//!
//! #[derive(Deserialize)]
//! struct Args { celsius: f64 }
//! #[derive(Serialize)]
//! struct Out { fahrenheit: f64 }
//!
//! let input = serde_json::json!({"type": "object", "required": ["celsius"],
//!     "properties": {"celsius": {"type": "number"}}});
//! let output = serde_json::json!({"type": "object", "required": ["fahrenheit"],
//!     "properties": {"fahrenheit": {"type": "number"}}});
//! let server = Server::builder("units", "1")
//!     .typed_tool(Tool::new("to_fahrenheit", input).with_output_schema(output),
//!         |_: &RequestContext, args: Args| Ok(Out { fahrenheit: args.celsius * 1.8 + 32.0 }))
//!     .build();
//! # drop(server);
//! ```
//!
//! **Progress and cancellation** (basic/utilities/progress,
//! basic/utilities/cancellation): progress is sent only when the request
//! asked for it, and only while it increases. A cancel (the client's
//! `notifications/cancelled`, its closing the HTTP request, `tasks/cancel`)
//! ends [`RequestContext::sleep`] at once with the cancellation error;
//! check once more right before anything that cannot be undone.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::time::Duration;
//! use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
//!
//! static COUNTED: AtomicU64 = AtomicU64::new(0);
//!
//! let server = Server::builder("slow", "1")
//!     .tool(Tool::new("count", serde_json::json!({"type": "object"})),
//!         |ctx: &RequestContext, _: JsonObject| {
//!             for step in 1..=10 {
//!                 ctx.sleep(Duration::from_millis(100))?; // a cancel ends it at once
//!                 ctx.notify_progress(step as f64, Some(10.0), Some("counting"));
//!             }
//!             ctx.check_cancelled()?; // right before the side effect
//!             COUNTED.fetch_add(10, Ordering::SeqCst);
//!             Ok(CallToolResult::text("done"))
//!         })
//!     .build();
//! # drop(server);
//! ```
//!
//! **Elicitation** (client/elicitation): ask the user, in both eras. In
//! 2026-07-28 the handler runs again with the answer, so work before the
//! question repeats unless [`RequestContext::round`] says it was done.
//!
//! ```
//! use tiny_mcp::{CallToolResult, ElicitAction, ElicitRequestFormParams, JsonObject,
//!     RequestContext, Server, Tool};
//!
//! let server = Server::builder("careful", "1")
//!     .tool(Tool::new("wipe", serde_json::json!({"type": "object"})),
//!         |ctx: &RequestContext, _: JsonObject| {
//!             let question = ElicitRequestFormParams::new("Really wipe?", serde_json::json!({
//!                 "type": "object", "properties": {"sure": {"type": "boolean"}}}));
//!             let answer = ctx.elicit(question)?; // `?` passes the retry on
//!             let sure = answer.action == ElicitAction::Accept
//!                 && answer.content.as_ref().and_then(|c| c.get("sure")) == Some(&true.into());
//!             Ok(CallToolResult::text(if sure { "wiped" } else { "kept" }))
//!         })
//!     .build();
//! # drop(server);
//! ```
//!
//! **Templates, lists computed per request, and completion**
//! (server/resources, server/utilities/completion): see
//! [`ResourceProvider`] for a list computed per request.
//!
//! ```
//! use std::collections::BTreeMap;
//! use tiny_mcp::{ReadResourceResult, RequestContext, ResourceTemplate, Server,
//!     TemplateVariables};
//!
//! let cities = ["Lisbon", "London", "Lyon"];
//! let server = Server::builder("weather", "1")
//!     .resource_template(ResourceTemplate::new("weather://{city}", "forecast"),
//!         |_: &RequestContext, uri: &str, vars: &TemplateVariables| {
//!             Ok(ReadResourceResult::text(uri, format!("sunny in {}", vars["city"])))
//!         })
//!     .complete_template_variable("weather://{city}", "city",
//!         move |_: &RequestContext, typed: &str, _: &BTreeMap<String, String>| {
//!             Ok(cities.iter().filter(|c| c.starts_with(typed)).map(|c| c.to_string()).collect())
//!         })
//!     .build();
//! # drop(server);
//! ```
//!
//! **Changes while serving** (TOOL-2, RES-2, PRM-2): each change notifies
//! the clients; [`ServerHandle::edit`] makes several with one notification
//! per kind.
//!
//! ```
//! use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
//!
//! let server = Server::builder("plugins", "1").offer_tools().build();
//! let handle = server.handle(); // Clone + Send: keep it on any thread
//! handle.edit(|edit| {
//!     edit.clear_tools();
//!     for name in ["alpha", "beta"].iter() {
//!         edit.add_tool(Tool::new(*name, serde_json::json!({"type": "object"})),
//!             |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("ok")));
//!     }
//! }); // one notifications/tools/list_changed
//! ```
//!
//! **Logging** (server/utilities/logging): from a handler to its client
//! ([`RequestContext::log`], both eras), or from any thread with
//! [`ServerHandle::log`] to every 2025-11-25 session that can receive
//! it (stdio, or an HTTP session with its GET stream open), each at the
//! level it chose. 2026-07-28 clients get log messages only on a request
//! that asked for them.
//!
//! ```
//! use tiny_mcp::{LoggingLevel, Server};
//!
//! let server = Server::builder("noisy", "1").build();
//! let sent = server.handle().log(LoggingLevel::Warning, Some("disk"), "90% full");
//! assert_eq!(sent, 0); // no client yet
//! ```
//!
//! **Shutdown**: [`Server::close`] stops every transport serving the
//! server and drops its handlers; `examples/graceful_shutdown.rs` wires it
//! to SIGINT and SIGTERM without a dependency.
//!
//! ```no_run
//! use tiny_mcp::Server;
//!
//! let server = Server::builder("s", "1").build();
//! let http = server.serve_http("127.0.0.1:8080")?;
//! let handle = server.handle().downgrade(); // keeps nothing alive
//! std::thread::spawn(move || {
//!     let _ = std::io::stdin().read_line(&mut String::new()); // Enter stops it
//!     if let Some(handle) = handle.upgrade() {
//!         handle.close();
//!     }
//! });
//! http.join()?; // returns once closed
//! # Ok::<(), tiny_mcp::Error>(())
//! ```
//!
//! ## Threads and shutdown
//!
//! [`Server::serve_stdio`] reads stdin on a thread of its own (so that
//! [`Server::close`] returns it at once) while the calling thread waits.
//! Whoever has a message writes it to stdout as one whole line, under one
//! lock (the reading thread flushes when its input runs dry). Requests that run
//! a handler (`tools/call`, `prompts/get`, `resources/list`,
//! `resources/read`, `completion/complete`) each run on a worker thread; the pool starts a worker whenever none is
//! free, so a slow tool never delays `ping`, other requests, cancellations,
//! or the client's answers to sampling and elicitation, and keeps idle
//! workers until it is shut down. Everything else is answered on the
//! reading thread. At end of input, running handlers get a grace period
//! ([`ServerBuilder::end_of_input_grace`], 1 s) to answer; the rest are
//! cancelled and joined, the writer drains, and `serve_stdio` returns.
//!
//! [`Server::serve_http`] returns an [`HttpServer`] at once: one acceptor
//! thread starts a thread per connection, handlers run on the same kind of
//! pool, and [`HttpServer::shutdown`] stops accepting, cancels handlers,
//! ends streams and joins every thread. Handlers that run long must poll
//! [`RequestContext::is_cancelled`] (or wait with
//! [`RequestContext::sleep`], which the cancel ends): one that ignores it
//! is waited for at
//! most [`ServerBuilder::handler_exit_timeout`] (5 s), then left running on
//! its thread, so that serving still returns. Every wait on a peer is
//! bounded too: see [`HttpServerBuilder`] for the HTTP timeouts, and
//! `DESIGN.md` §6 for every limit.
//!
//! ## Log levels
//!
//! The crate logs through [`log`]; nothing but protocol is written to
//! stdout. `error!` is a bug of ours, `warn!` a misbehaving peer or a
//! configuration problem, `info!` lifecycle, `debug!` one line per message.
//! A program that installs no logger gets no output at all (the `log`
//! crate drops every record until one is set); the `everything` example
//! installs a small stderr logger, set by `TINY_MCP_LOG` (`warn` by
//! default, e.g. `TINY_MCP_LOG=debug`).
//!
//! Log messages to the client are another thing: [`RequestContext::log`]
//! sends `notifications/message`. A 2025-11-25 client gets every level at
//! or above what it set with `logging/setLevel` (all of them until it sets
//! one); a 2026-07-28 client gets them only when its request opts in with
//! `_meta["io.modelcontextprotocol/logLevel"]`, and only at or above that
//! level.
//!
//! ## MSRV
//!
//! Rust 1.63, checked by building with Debian 12's packaged rustc. See
//! `MSRV.md`.
//!
//! ## Spec coverage
//!
//! MCP 2025-11-25, negotiating down to 2025-06-18, 2025-03-26 and
//! 2024-11-05: lifecycle, ping, tools, resources (with templates and
//! subscriptions), prompts, completion, logging, progress, cancellation,
//! pagination, and the server-to-client requests sampling, elicitation
//! (form and URL mode) and roots; stdio and Streamable HTTP (sessions, SSE
//! with resumption, DNS-rebinding protection). MCP 2026-07-28:
//! `server/discover`, the per-request `_meta` envelope, result decoration,
//! `subscriptions/listen`, multi round-trip requests, and the HTTP header
//! checks. Tasks: 2025-11-25 experimental tasks and the 2026-07-28 tasks
//! extension (`io.modelcontextprotocol/tasks`, SEP-2663), on the server
//! ([`RequestContext::start_task`], [`TaskStore`]). Skills
//! (`io.modelcontextprotocol/skills`, SEP-2640). MCP Apps
//! (`io.modelcontextprotocol/ui`, SEP-1865): views of tools
//! ([`ServerBuilder::ui_resource`], [`Tool::with_ui`], and
//! [`ClientBuilder::ui_extension`] for hosts). The client speaks both eras over stdio
//! and `http://`, and `https://` with the `tls` feature.
//!
//! Doc comments and tests cite requirements by short ids such as `LC-8`
//! or `MRTR-5`. Each id is a rule of the MCP specification, listed with
//! the spec page and section it comes from in the repository's
//! `docs/requirements/` (`DIGEST.md` for 2025-11-25, `DIGEST-2026-07-28.md`
//! for 2026-07-28).

// No unsafe code; the unit tests' counting allocator is the one exception.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![deny(missing_docs)]
#![warn(rust_2018_idioms, missing_debug_implementations)]

mod base64;
mod challenge;
mod client;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod jsonrpc;
mod lines;
mod protocol;
#[cfg(feature = "redis")]
mod redis;
mod serve;
mod server;
mod sha256;
#[cfg(test)]
#[cfg_attr(test, allow(unsafe_code))]
mod test_alloc;
mod transport;
mod verify;

// One public path per type: everything is re-exported here, and the
// modules that define it are private.

// Building and serving.
pub use server::{Server, ServerBuilder, ServerEdit, ServerHandle, WeakServerHandle};
#[cfg(feature = "tiny_http")]
pub use transport::http::TinyHttpMount;
pub use transport::http::{HttpServer, HttpServerBuilder};
pub use transport::memory::MemoryClient;

// Handlers and what they receive.
pub use server::CancellationFlag;
pub use server::{
    complete_from, typed, ArgumentCompleter, CompletionHandler, PromptHandler, RequestContext,
    ResourceHandler, ResourcePage, ResourceProvider, ResourceTemplateHandler, TemplateVariables,
    ToolHandler,
};

// Hooks and the 2026-07-28 era's settings.
pub use server::{
    CacheScope, InputRequest, InputResponses, RequestOutcome, RequestStateCodec, RequestStatus,
    ServerStateStore,
};

// Who is calling: authorization, request context, interceptors.
pub use server::{HandlerOutcome, HttpHeaders, Interceptor, Principal, TraceContext};
pub use transport::http::{
    HttpRefusal, HttpRequestHead, ProtectedResource, TokenError, TokenVerifier,
};

// Telemetry.
#[cfg(feature = "metrics")]
pub use server::{Gauge, Metrics};

// Several instances.
#[cfg(feature = "sealed-state")]
pub use server::SealedStateCodec;
pub use server::{Change, ChangeBus, ChangeEvent};

// Forwarding sessions to an upstream server (a proxy).
pub use server::{SessionHandle, Upstream};

// Tasks (2025-11-25 experimental; the 2026-07-28 tasks extension).
pub use protocol::{ListTasksResult, Task, TaskMetadata, TaskStatus, TaskSupport, ToolExecution};
#[cfg(feature = "tasks")]
pub use server::{MemoryTaskStore, TaskCommand, TaskLimits, TaskRecord, TaskStore};

// The blocking client.
pub use challenge::BearerChallenge;
pub use client::oauth;
pub use client::{
    CallOptions, CancelToken, Client, ClientBuilder, StderrMode, Subscription, SubscriptionFilter,
};
#[cfg(feature = "redis")]
pub use redis::RedisChangeBus;
#[cfg(all(feature = "redis", feature = "tasks"))]
pub use redis::RedisTaskStore;
pub use verify::{IntrospectionVerifier, IntrospectionVerifierBuilder};
#[cfg(feature = "jwt")]
pub use verify::{JwtVerifier, JwtVerifierBuilder};

// Errors.
pub use error::{Error, ErrorKind};

// JSON-RPC 2.0 messages (MCP-free).
pub use jsonrpc::{
    ErrorCode, ErrorObject, JsonObject, Message, Notification, ParseError, Request, RequestId,
    Response,
};

// MCP data types, by spec page: lifecycle, tools, resources, prompts,
// content, completion, logging, progress, sampling, elicitation, roots.
pub use protocol::{Annotations, ContentBlock, EmbeddedResource, ImageContent, Role, TextContent};
pub use protocol::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations};
pub use protocol::{
    CancelledNotificationParams, ClientCapabilities, EmptyResult, Era, Icon, Implementation,
    InitializeRequestParams, InitializeResult, ListChangedCapability, PaginatedRequestParams,
    ResourcesCapability, ServerCapabilities,
};
pub use protocol::{
    CompleteArgument, CompleteContext, CompleteRequestParams, CompleteResult, Completion, Reference,
};
pub use protocol::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};
pub use protocol::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitResult,
};
pub use protocol::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use protocol::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
pub use protocol::{ListRootsResult, Root};
// MCP Apps (the `io.modelcontextprotocol/ui` extension): views of tools.
pub use protocol::{LoggingLevel, LoggingMessageNotificationParams, SetLevelRequestParams};
pub use protocol::{ProgressNotificationParams, ProgressToken};
pub use protocol::{
    ToolUiMeta, ToolVisibility, UiPermissions, UiResourceCsp, UiResourceMeta, UI_MIME_TYPE,
    UI_RESOURCE_URI_KEY, UI_SCHEME,
};
// Method, notification, `_meta` key and version names, as the spec spells
// them.
pub use protocol::{extensions, meta, methods, notifications, versions};

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
