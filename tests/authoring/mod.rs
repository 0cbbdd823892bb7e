//! Writing servers (issue 13): what the crate checks for a tool's author.

use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::{call_tool, connect, first_text};

fn server_with(result: fn() -> CallToolResult) -> Server {
    let schema = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "minimum": 1, "maximum": 50}}});
    let output = json!({"type": "object", "required": ["total"],
        "properties": {"total": {"type": "integer", "minimum": 0}}});
    Server::builder("authoring", "1")
        .tool(
            Tool::new("count", schema).with_output_schema(output),
            move |_: &RequestContext, _: JsonObject| Ok(result()),
        )
        .build()
}

fn call(server: &Server, arguments: Value) -> Value {
    let mut client = connect(server, json!({}));
    call_tool(&mut client, "count", arguments)
}

// server/tools "Output Schema": a tool that declares one must return
// conforming structuredContent; the crate turns a broken promise into an
// isError result that says why, instead of passing it to the client.
#[test]
fn output_schemas_are_kept() {
    let good = server_with(|| CallToolResult::structured(json!({"total": 3})));
    let answer = call(&good, json!({"limit": 5}));
    assert_eq!(answer["structuredContent"], json!({"total": 3}));
    assert!(answer.get("isError").is_none(), "{}", answer);
    let missing = server_with(|| CallToolResult::text("3"));
    let answer = call(&missing, json!({}));
    assert_eq!(answer["isError"], true);
    assert!(
        first_text(&answer).contains("no structuredContent"),
        "{}",
        answer
    );
    let wrong = server_with(|| CallToolResult::structured(json!({"total": -1})));
    let answer = call(&wrong, json!({}));
    assert_eq!(answer["isError"], true);
    assert!(
        first_text(&answer).contains("\"total\" must be at least 0"),
        "{}",
        answer
    );
    let failed = server_with(|| CallToolResult::error("no database"));
    assert_eq!(first_text(&call(&failed, json!({}))), "no database");
}

// TOOL-6, the checked keywords: a bound is reported with the field's name.
#[test]
fn argument_bounds_name_the_field() {
    let server = server_with(|| CallToolResult::structured(json!({"total": 0})));
    let answer = call(&server, json!({"limit": -3}));
    assert_eq!(answer["isError"], true);
    assert_eq!(
        first_text(&answer),
        "invalid arguments for tool count: argument \"limit\" must be at least 1, not -3"
    );
}
