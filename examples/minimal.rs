//! The smallest MCP server: one `echo` tool over stdio.
//!
//! ```text
//! cargo run --example minimal
//! ```
//!
//! It reads JSON-RPC messages from stdin, one per line, and writes its
//! answers to stdout until stdin closes. Point an MCP client at the built
//! binary (`target/debug/examples/minimal`), or try it by hand:
//!
//! ```text
//! printf '%s\n' \
//!   '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}' \
//!   '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
//!   '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}' \
//!   | cargo run --example minimal
//! ```

use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

fn main() -> Result<(), tiny_mcp::Error> {
    // The arguments' JSON Schema; the crate checks calls against it before
    // the handler runs, so `text` is a string here (server/tools).
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo"}},
        "required": ["text"]
    });
    let echo = Tool::new("echo", schema).with_description("Echoes its text back");
    Server::builder("minimal", "1.0.0")
        .tool(echo, |_: &RequestContext, args: JsonObject| {
            let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
            Ok(CallToolResult::text(text))
        })
        .build()
        .serve_stdio()
}
