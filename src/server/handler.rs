//! Handler traits, one per kind of request a program serves.
//!
//! Each trait has a blanket impl for closures, so
//! `|ctx: &RequestContext, args: JsonObject| …` is a [`ToolHandler`], and a
//! struct holding state can implement the trait itself. Handlers are called
//! on a worker thread, one call per request, possibly many at once: they
//! must be `Send + Sync`.

use std::collections::BTreeMap;

use super::context::RequestContext;
use super::registry::TemplateVariables;
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::protocol::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, ReadResourceResult,
};

/// Runs a tool for `tools/call`.
///
/// `arguments` is the call's `arguments` object (`{}` when absent), already
/// checked against the top level of the tool's `inputSchema` (required
/// properties and their JSON types). An `Err` becomes a result with
/// `isError: true` and the error's message as text, except
/// [`ErrorKind::Rpc`](crate::ErrorKind::Rpc), which goes out as that
/// JSON-RPC error, and
/// [`ErrorKind::UrlElicitationRequired`](crate::ErrorKind::UrlElicitationRequired),
/// which goes out as `-32042` to a 2025-11-25 client that declared
/// `elicitation.url` (any other gets the `isError` result, whose text
/// carries the messages and URLs).
///
/// A closure is a handler when its parameter types are written out:
///
/// ```
/// use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
///
/// let server = Server::builder("s", "1")
///     .tool(Tool::new("hello", serde_json::json!({"type": "object"})),
///           |_ctx: &RequestContext, _args: JsonObject| Ok(CallToolResult::text("hi")))
///     .build();
/// # drop(server);
/// ```
///
/// Without them (`|ctx, args| …`) the compiler stops with "implementation
/// of `FnOnce` is not general enough": the registration takes any
/// `ToolHandler`, so Rust cannot see from it that the closure must accept
/// a `&RequestContext` of every lifetime, and writing `&RequestContext`
/// says so. The same holds for every handler trait below.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool.
    fn call(&self, ctx: &RequestContext, arguments: JsonObject) -> Result<CallToolResult, Error>;
}

impl<F> ToolHandler for F
where
    F: Fn(&RequestContext, JsonObject) -> Result<CallToolResult, Error> + Send + Sync + 'static,
{
    fn call(&self, ctx: &RequestContext, arguments: JsonObject) -> Result<CallToolResult, Error> {
        self(ctx, arguments)
    }
}

/// Reads a resource with a fixed URI for `resources/read`.
///
/// As a closure: `|ctx: &RequestContext, uri: &str| …` (the types written
/// out, see [`ToolHandler`]).
pub trait ResourceHandler: Send + Sync + 'static {
    /// Reads `uri`.
    fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadResourceResult, Error>;
}

impl<F> ResourceHandler for F
where
    F: Fn(&RequestContext, &str) -> Result<ReadResourceResult, Error> + Send + Sync + 'static,
{
    fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadResourceResult, Error> {
        self(ctx, uri)
    }
}

/// Reads a resource that matched a template, for `resources/read`.
///
/// Return [`Error::resource_not_found`] for a match that names nothing.
/// As a closure: `|ctx: &RequestContext, uri: &str, vars:
/// &TemplateVariables| …` (the types written out, see [`ToolHandler`]).
pub trait ResourceTemplateHandler: Send + Sync + 'static {
    /// Reads `uri`, whose template variables are `variables`.
    fn read(
        &self,
        ctx: &RequestContext,
        uri: &str,
        variables: &TemplateVariables,
    ) -> Result<ReadResourceResult, Error>;
}

impl<F> ResourceTemplateHandler for F
where
    F: Fn(&RequestContext, &str, &TemplateVariables) -> Result<ReadResourceResult, Error>
        + Send
        + Sync
        + 'static,
{
    fn read(
        &self,
        ctx: &RequestContext,
        uri: &str,
        variables: &TemplateVariables,
    ) -> Result<ReadResourceResult, Error> {
        self(ctx, uri, variables)
    }
}

/// Renders a prompt for `prompts/get`.
///
/// Required arguments are present when this is called. An `Err` becomes a
/// JSON-RPC error (`-32602` for [`Error::invalid_params`], else `-32603`).
/// As a closure: `|ctx: &RequestContext, args: BTreeMap<String, String>|
/// …` (the types written out, see [`ToolHandler`]).
pub trait PromptHandler: Send + Sync + 'static {
    /// Renders the prompt.
    fn get(
        &self,
        ctx: &RequestContext,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error>;
}

impl<F> PromptHandler for F
where
    F: Fn(&RequestContext, BTreeMap<String, String>) -> Result<GetPromptResult, Error>
        + Send
        + Sync
        + 'static,
{
    fn get(
        &self,
        ctx: &RequestContext,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        self(ctx, arguments)
    }
}

/// Suggests argument values for `completion/complete`.
///
/// As a closure: `|ctx: &RequestContext, params: CompleteRequestParams| …`
/// (the types written out, see [`ToolHandler`]).
pub trait CompletionHandler: Send + Sync + 'static {
    /// Completes `params.argument.value`.
    fn complete(
        &self,
        ctx: &RequestContext,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, Error>;
}

impl<F> CompletionHandler for F
where
    F: Fn(&RequestContext, CompleteRequestParams) -> Result<CompleteResult, Error>
        + Send
        + Sync
        + 'static,
{
    fn complete(
        &self,
        ctx: &RequestContext,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, Error> {
        self(ctx, params)
    }
}
