//! A small stdio MCP server for the tests of `mcp serve` (cli/tests/serve.rs):
//! each tool exercises one thing a proxy must carry.
//!
//! - `echo {text}`: the text back;
//! - `pid`: this process's id (one child per session, or one shared);
//! - `progress`: two progress notifications, then a result;
//! - `ask`: an elicitation of `name`, answered with what the user gave;
//! - `wait`: a progress notification, then runs until cancelled; the
//!   count of cancelled calls is `cancelled`'s answer;
//! - `change`: sends `notifications/tools/list_changed`;
//! - `crash`: the process exits at once, without answering.

use std::process;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use tiny_mcp::{
    CallToolResult, ElicitRequestFormParams, Error, JsonObject, RequestContext, Server, Tool,
};

fn main() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&cancelled);
    let object = || json!({"type": "object"});
    let server = Server::builder("serve-child", "1.0.0")
        .tool(
            Tool::new("echo", object()),
            |_: &RequestContext, args: JsonObject| {
                let text = args.get("text").and_then(|t| t.as_str()).unwrap_or("");
                Ok(CallToolResult::text(text))
            },
        )
        .tool(
            Tool::new("pid", object()),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text(process::id().to_string())),
        )
        .tool(
            Tool::new("progress", object()),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(2.0), Some("half way"));
                ctx.notify_progress(2.0, Some(2.0), None);
                Ok(CallToolResult::text("done"))
            },
        )
        .tool(
            Tool::new("ask", object()),
            |ctx: &RequestContext, _: JsonObject| {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let answer = ctx.elicit(ElicitRequestFormParams::new("Your name?", schema))?;
                let name = answer
                    .content
                    .as_ref()
                    .and_then(|c| c.get("name"))
                    .and_then(|n| n.as_str())
                    .unwrap_or("nobody")
                    .to_string();
                Ok(CallToolResult::text(name))
            },
        )
        .tool(
            Tool::new("wait", object()),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, None, Some("waiting"));
                // Waits for the cancel; the flag has no wait of its own.
                while !ctx.is_cancelled() {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                counted.fetch_add(1, Ordering::SeqCst);
                Err(Error::cancelled(None))
            },
        )
        .tool(
            Tool::new("cancelled", object()),
            move |_: &RequestContext, _: JsonObject| {
                Ok(CallToolResult::text(
                    cancelled.load(Ordering::SeqCst).to_string(),
                ))
            },
        )
        .tool(
            Tool::new("change", object()),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.server().notify_tools_list_changed();
                Ok(CallToolResult::text("changed"))
            },
        )
        .tool(
            Tool::new("crash", object()),
            |_: &RequestContext, _: JsonObject| process::exit(3),
        )
        .build();
    if let Err(e) = server.serve_stdio() {
        eprintln!("serve-child: {}", e);
        process::exit(1);
    }
}
