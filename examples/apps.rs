//! An MCP Apps server (the extension `io.modelcontextprotocol/ui`): a tool
//! whose result a host renders in an interactive HTML view.
//!
//! ```text
//! cargo run --example apps -- --stdio                # the default
//! cargo run --example apps -- --http 127.0.0.1:8080  # Streamable HTTP at /mcp
//! ```
//!
//! - The view `ui://counter/view` (`examples/apps-view.html`, plain HTML
//!   and script, no framework, no network) is a resource of type
//!   `text/html;profile=mcp-app`. Its `_meta.ui` asks for a border and no
//!   origins at all: the host's strictest Content Security Policy fits it.
//! - `counter_show` names the view in its `_meta.ui`. Its result has
//!   `content` for hosts that show only text ("The counter is at 3.") and
//!   `structuredContent` (`{"name", "count"}`) for the view.
//! - `counter_add` is for the view alone (`visibility: ["app"]`): the
//!   view's "Add one" button calls it through the host, which forwards
//!   the call; a host keeps it out of its model's tool list.
//!
//! Spec: `specification/2026-01-26/apps.mdx` of
//! `modelcontextprotocol/ext-apps` (SEP-1865).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, Error, JsonObject, RequestContext, Resource, Server, Tool, ToolUiMeta,
    ToolVisibility, UiResourceMeta,
};

const VIEW_URI: &str = "ui://counter/view";
const VIEW_HTML: &str = include_str!("apps-view.html");

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = counter_server(Arc::new(AtomicU64::new(0)))?;
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["--stdio"] => server.serve_stdio(),
        ["--http", addr] => {
            let http = server.http().endpoint("/mcp").serve(*addr)?;
            eprintln!("serving {}", http.url());
            http.join()
        }
        _ => {
            eprintln!("usage: apps [--stdio | --http ADDR]");
            std::process::exit(2)
        }
    }
}

/// The server: the view, the tool that shows it, the tool it calls.
fn counter_server(count: Arc<AtomicU64>) -> Result<Server, Error> {
    let view = Resource::new(VIEW_URI, "counter_view")
        .with_title("Counter")
        .with_description("Shows the counter, with a button that adds one")
        .with_ui(UiResourceMeta::new().with_prefers_border(true));
    let show = Tool::new("counter_show", json!({"type": "object"}))
        .with_description("Shows the counter")
        .with_output_schema(counter_schema())
        .with_ui(ToolUiMeta::new(VIEW_URI));
    let add = Tool::new(
        "counter_add",
        json!({"type": "object",
               "properties": {"by": {"type": "integer", "minimum": 1, "maximum": 100}},
               "required": ["by"]}),
    )
    .with_description("Adds to the counter (called by the counter's view)")
    .with_output_schema(counter_schema())
    .with_ui(ToolUiMeta::new(VIEW_URI).with_visibility([ToolVisibility::App]));
    let shown = Arc::clone(&count);
    Server::builder("counter", "1.0.0")
        .instructions("Call counter_show to see the counter.")
        .ui_resource(view, VIEW_HTML)?
        .tool(show, move |ctx: &RequestContext, _: JsonObject| {
            Ok(counter_result(ctx, shown.load(Ordering::SeqCst)))
        })
        .tool(add, move |ctx: &RequestContext, args: JsonObject| {
            let by = args.get("by").and_then(Value::as_u64).unwrap_or(1);
            Ok(counter_result(
                ctx,
                count.fetch_add(by, Ordering::SeqCst) + by,
            ))
        })
        .try_build()
}

/// `content` that reads well without the view, and the view's data.
fn counter_result(ctx: &RequestContext, count: u64) -> CallToolResult {
    let text = if ctx.supports_ui() {
        format!("The counter is at {}; the view shows it.", count)
    } else {
        format!("The counter is at {}.", count)
    };
    CallToolResult::text_and_structured(text, json!({"name": "clicks", "count": count}))
}

fn counter_schema() -> Value {
    json!({"type": "object",
           "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
           "required": ["name", "count"]})
}
