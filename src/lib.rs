//! # tiny-mcp
//!
//! [Model Context Protocol](https://modelcontextprotocol.io) servers for
//! plain, synchronous Rust programs: no async runtime, a handful of small
//! dependencies, and a build on Rust 1.63.
//!
//! A program describes its tools, resources and prompts with
//! [`Server::builder`], then serves them over stdio ([`Server::serve_stdio`]).
//! Handlers are closures (or types implementing [`ToolHandler`] and its
//! siblings) that receive a [`RequestContext`] first.
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
//! ## Threads and shutdown
//!
//! [`Server::serve_stdio`] reads stdin on the calling thread. One writer
//! thread owns stdout and writes whole lines. Requests that run a handler
//! (`tools/call`, `prompts/get`, `resources/read`, `completion/complete`)
//! each run on a worker thread from an elastic pool, so a slow tool never
//! delays `ping`, other requests, cancellations, or the client's answers to
//! sampling and elicitation. Everything else is answered on the reading
//! thread. At end of input every running handler is cancelled (its flag is
//! set, its calls to the client fail) and joined, the writer drains (so
//! the answers of handlers that finished anyway are written), and
//! `serve_stdio` returns. Handlers that run long must poll
//! [`RequestContext::is_cancelled`].
//!
//! ## Log levels
//!
//! The crate logs through [`log`]; nothing but protocol is written to
//! stdout. `error!` is a bug of ours, `warn!` a misbehaving peer or a
//! configuration problem, `info!` lifecycle, `debug!` one line per message.
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
//! (form and URL mode) and roots. Not implemented: tasks (experimental).

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms, missing_debug_implementations)]

mod cancel;
mod error;
pub mod jsonrpc;
pub mod protocol;
mod server;
mod session;
pub mod transport;

pub use cancel::CancellationFlag;
pub use error::{Error, ErrorKind};
pub use jsonrpc::{ErrorCode, ErrorObject, JsonObject, RequestId};
pub use protocol::*;
pub use server::{
    CacheScope, CompletionHandler, InputRequest, InputResponses, PromptHandler, RequestContext,
    RequestOutcome, RequestStateCodec, RequestStatus, ResourceHandler, ResourceTemplateHandler,
    Server, ServerBuilder, ServerHandle, ServerStateStore, TemplateVariables, ToolHandler,
};
pub use transport::http::{HttpServer, HttpServerBuilder};
pub use transport::memory::MemoryClient;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
