//! The whole server on arbitrary input: `Server::serve_io` reads the bytes
//! as newline-delimited JSON-RPC (both eras, every method, templates,
//! pagination, cancellation) and must return without panicking, whatever
//! it is sent.
#![no_main]

use std::io::{self, Cursor};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tiny_mcp::{
    CallToolResult, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, RequestContext, ResourceContents, ResourceTemplate, Server,
    TemplateVariables, Tool,
};

fn server() -> Server {
    Server::builder("fuzz", "1")
        .end_of_input_grace(Duration::from_millis(0))
        .handler_exit_timeout(Duration::from_millis(100))
        .page_size(2)
        .tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}},
                       "required": ["text"]}),
            ),
            |_: &RequestContext, args: JsonObject| {
                Ok(CallToolResult::text(
                    args.get("text").and_then(|t| t.as_str()).unwrap_or(""),
                ))
            },
        )
        .tool(
            Tool::new("progress", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(2.0), Some("half"));
                ctx.log(tiny_mcp::LoggingLevel::Info, "working");
                ctx.check_cancelled()?;
                Ok(CallToolResult::text("done"))
            },
        )
        .resource_template(
            ResourceTemplate::new("test://t/{id}/{+rest}", "t"),
            |_: &RequestContext, uri: &str, vars: &TemplateVariables| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    format!("{:?}", vars),
                )]))
            },
        )
        .prompt(
            Prompt::new("greet").with_argument(PromptArgument::new("name", "who", true)),
            |_: &RequestContext, args: std::collections::BTreeMap<String, String>| {
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    tiny_mcp::ContentBlock::text(format!("hello {:?}", args.get("name"))),
                )]))
            },
        )
        .build()
}

fuzz_target!(|data: &[u8]| {
    let _ = server().serve_io(Cursor::new(data.to_vec()), io::sink());
});
