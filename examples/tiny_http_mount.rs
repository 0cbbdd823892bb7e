//! A tiny_http program with its own page at `/` and an MCP endpoint at
//! `/mcp`, side by side on one port (feature `tiny_http`):
//!
//! ```text
//! cargo run --features tiny_http --example tiny_http_mount -- 127.0.0.1:8080
//! ```
//!
//! The endpoint offers one tool, `echo`, that returns `{"message"}`.

use std::sync::Arc;
use std::thread;

use serde_json::json;
use tiny_http::{Header, Response};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

const PAGE: &str = "<!doctype html><title>tiny_http + MCP</title>\
<p>This page is the program's own; MCP clients connect to <code>/mcp</code>.";

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let web = tiny_http::Server::http(addr.as_str())?;
    let schema = json!({
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"]
    });
    let server = Server::builder("tiny-http-mount", "1.0.0")
        .tool(
            Tool::new("echo", schema).with_description("Returns the message"),
            |_: &RequestContext, args: JsonObject| {
                let message = args.get("message").and_then(|m| m.as_str());
                Ok(CallToolResult::text(message.unwrap_or_default()))
            },
        )
        .build();
    let mcp = Arc::new(server.http().endpoint("/mcp").mount(&web)?);
    let bound = web.server_addr().to_ip().ok_or("not an IP address")?;
    eprintln!("serving http://{bound}/ and MCP at http://{bound}/mcp");
    let html: Header = "Content-Type: text/html; charset=utf-8"
        .parse()
        .map_err(|()| "bad header")?;
    for request in web.incoming_requests() {
        if mcp.matches(&request) {
            let mcp = Arc::clone(&mcp);
            // An SSE answer holds its thread until its stream ends.
            thread::spawn(move || mcp.handle(request));
        } else if request.url() == "/" {
            let _ = request.respond(Response::from_string(PAGE).with_header(html.clone()));
        } else {
            let _ = request.respond(Response::from_string("not found").with_status_code(404));
        }
    }
    Ok(())
}
