//! How the dispatcher reads params: objects only, levels as strings, and
//! percent-decoded template variables.

use crate::support::recv;
use crate::support::WAIT;
use serde_json::{json, Value};
use std::sync::Mutex;
use tiny_mcp::{
    CallToolResult, JsonObject, MemoryClient, ReadResourceResult, RequestContext, ResourceContents,
    ResourceTemplate, Server, Tool,
};

// 3. RFC 6570 §3.2.1, server/resources "Resource Templates": template
// variables are percent-decoded; a malformed escape matches nothing
// (-32002).
#[test]
fn template_variables_are_percent_decoded() {
    let (sender, seen) = crossbeam_channel::unbounded::<String>();
    let sender = Mutex::new(sender);
    let server = Server::builder("fixes", "1")
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "t"),
            move |_: &RequestContext, uri: &str, vars: &tiny_mcp::TemplateVariables| {
                if let Ok(sender) = sender.lock() {
                    let _ = sender.send(vars["id"].clone());
                }
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "x",
                )]))
            },
        )
        .build();
    let mut client = memory(&server);
    client.initialize(json!({})).unwrap();
    for (uri, expected) in [
        ("test://template/hello%20world/data", "hello world"),
        ("test://template/caf%C3%A9/data", "caf\u{e9}"),
    ] {
        client
            .request("resources/read", Some(json!({ "uri": uri })))
            .unwrap();
        assert_eq!(recv(&seen, "the template variable"), expected);
    }
    let err = client
        .request(
            "resources/read",
            Some(json!({"uri": "test://template/%ZZ/data"})),
        )
        .unwrap_err();
    assert_eq!(err.code.0, -32002, "{:?}", err);
}

// 4. BASE-1, LOG-2: MCP params are objects and levels are strings: a
// positional array or an externally tagged level is -32602.
#[test]
fn params_must_be_objects_and_levels_strings() {
    let server = Server::builder("fixes", "1")
        .tool(echo_tool(), echo)
        .build();
    let mut client = memory(&server);
    client.initialize(json!({})).unwrap();
    let bad = [
        ("tools/call", json!(["echo", {"text": "x"}])),
        ("logging/setLevel", json!(["debug"])),
        ("logging/setLevel", json!({"level": {"debug": null}})),
    ];
    for (method, params) in bad {
        let err = client.request(method, Some(params.clone())).unwrap_err();
        assert_eq!(err.code.0, -32602, "{} {}: {:?}", method, params, err);
    }
    assert!(client
        .request("logging/setLevel", Some(json!({"level": "debug"})))
        .is_ok());
}

fn memory(server: &Server) -> MemoryClient {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client
}

fn echo(_: &RequestContext, args: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    Ok(CallToolResult::text(
        args.get("text").and_then(Value::as_str).unwrap_or(""),
    ))
}

fn echo_tool() -> Tool {
    Tool::new("echo", json!({"type": "object"}))
}
