//! The dispatcher driven through the public in-memory client, one test per
//! behaviour. Each test builds the small server it needs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams,
    ElicitRequestUrlParams, Error, ErrorCode, ErrorKind, GetPromptResult, JsonObject, LoggingLevel,
    MemoryClient, Prompt, PromptArgument, PromptMessage, ReadResourceResult, RequestContext,
    RequestId, RequestStatus, Resource, ResourceContents, ResourceTemplate, SamplingMessage,
    Server, TemplateVariables, Tool,
};
use tiny_mcp::{Message, Response};

use crate::support::{
    call_tool, connect, expect_error, first_text, messages_before_ping, next_message,
    outcome_recorder, recv, WAIT,
};

mod elicit_answers;
mod mime_types;
mod params;
mod url_elicitation;
mod waits;

fn any_object() -> Value {
    json!({"type": "object"})
}

/// A tool that answers `text`.
fn text_tool(
    name: &str,
    text: &'static str,
) -> (
    Tool,
    impl Fn(&RequestContext, JsonObject) -> Result<CallToolResult, Error> + Send + Sync + 'static,
) {
    let handler = move |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
        Ok(CallToolResult::text(text))
    };
    (Tool::new(name, any_object()), handler)
}

fn initialize_params(version: &str, capabilities: Value, client: &str) -> Option<Value> {
    Some(json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": {"name": client, "version": "1.0.0"}
    }))
}

/// What a client-facing call failed with, as text a tool can return:
/// `missing <capability>` for `CapabilityMissing`.
fn describe<T>(outcome: Result<T, Error>) -> String {
    match outcome {
        Ok(_) => "ok".to_string(),
        Err(e) => match e.kind() {
            ErrorKind::CapabilityMissing { capability } => format!("missing {}", capability),
            _ => format!("other error: {}", e),
        },
    }
}

fn is_response_to(message: &Message, id: &RequestId) -> bool {
    matches!(message, Message::Response(r) if r.id.as_ref() == Some(id))
}

fn notification_methods(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::Notification(n) => n.method.clone(),
            other => panic!("expected only notifications, got {:?}", other),
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Lifecycle
// ---------------------------------------------------------------------------

// LC-2, basic/lifecycle "Version Negotiation": a supported version is echoed.
#[test]
fn initialize_echoes_a_supported_version() {
    let server = Server::builder("negotiator", "2.0.0")
        .instructions("Be brief.")
        .build();
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut client = server.connect_memory();
        let result = client
            .request("initialize", initialize_params(version, json!({}), "c"))
            .unwrap_or_else(|e| panic!("initialize {} failed: {}", version, e));
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["serverInfo"]["name"], "negotiator");
        assert_eq!(result["serverInfo"]["version"], "2.0.0");
        assert_eq!(result["instructions"], "Be brief.");
    }
}

// LC-2, basic/lifecycle "Version Negotiation": an unsupported version gets
// the newest supported one (a handshake never offers 2026-07-28).
#[test]
fn initialize_offers_the_newest_version_for_an_unsupported_one() {
    let server = Server::builder("negotiator", "1").build();
    for asked in ["1999-01-01", "2026-07-28", ""] {
        let mut client = server.connect_memory();
        let result = client
            .request("initialize", initialize_params(asked, json!({}), "c"))
            .unwrap_or_else(|e| panic!("initialize {:?} failed: {}", asked, e));
        assert_eq!(result["protocolVersion"], "2025-11-25", "asked {:?}", asked);
    }
}

// LC-8, basic/lifecycle: a second initialize is refused with -32600 and the
// first negotiation (clientInfo, capabilities, version) stays.
#[test]
fn second_initialize_is_refused_and_the_first_kept() {
    let server = Server::builder("once", "1")
        .tool(
            Tool::new("whoami", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                let info = ctx.client_info().map(|i| i.name).unwrap_or_default();
                Ok(CallToolResult::structured(json!({
                    "client": info,
                    "sampling": ctx.client_capabilities().supports_sampling(),
                    "version": ctx.protocol_version(),
                })))
            },
        )
        .build();
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client
        .request(
            "initialize",
            initialize_params("2025-06-18", json!({"sampling": {}}), "first"),
        )
        .expect("the first initialize succeeds");
    client.notify("notifications/initialized", None);

    let second = client.request(
        "initialize",
        initialize_params("2025-11-25", json!({}), "second"),
    );
    expect_error(second, ErrorCode::INVALID_REQUEST, "second initialize");

    let result = call_tool(&mut client, "whoami", json!({}));
    assert_eq!(
        result["structuredContent"],
        json!({"client": "first", "sampling": true, "version": "2025-06-18"})
    );
}

// LC-1, basic/lifecycle "Initialization": requests other than ping before
// initialize are refused, and no handler runs.
#[test]
fn requests_before_initialize_are_refused() {
    let ran = Arc::new(AtomicBool::new(false));
    let ran_in_tool = Arc::clone(&ran);
    let server = Server::builder("strict", "1")
        .tool(
            Tool::new("touch", any_object()),
            move |_: &RequestContext, _: JsonObject| {
                ran_in_tool.store(true, Ordering::SeqCst);
                Ok(CallToolResult::text("touched"))
            },
        )
        .build();
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);

    let listed = client.request("tools/list", None);
    assert!(
        listed.is_err(),
        "tools/list before initialize: {:?}",
        listed
    );
    let called = client.request("tools/call", Some(json!({"name": "touch"})));
    assert!(
        called.is_err(),
        "tools/call before initialize: {:?}",
        called
    );
    assert!(
        !ran.load(Ordering::SeqCst),
        "a handler ran before initialize"
    );

    client.initialize(json!({})).expect("initialize succeeds");
    let listed = client
        .request("tools/list", None)
        .expect("tools/list after");
    assert_eq!(listed["tools"][0]["name"], "touch");
}

// PING-1, basic/utilities/ping: ping is answered with {} even before
// initialize.
#[test]
fn ping_is_answered_before_initialize() {
    let server = Server::builder("pong", "1").build();
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    let result = client
        .request("ping", None)
        .expect("ping before initialize");
    assert_eq!(result, json!({}));
}

// TOOL-1, RES-1, PRM-1, CMP-1, LOG-1 (basic/lifecycle "Capability
// Negotiation"): capabilities follow what was registered.
#[test]
fn capabilities_follow_what_was_registered() {
    let bare = Server::builder("bare", "1").build();
    let caps = connect_and_get_capabilities(&bare);
    assert_eq!(caps["logging"], json!({}));
    for absent in ["tools", "resources", "prompts", "completions"] {
        assert!(
            caps.get(absent).is_none(),
            "bare server declares {}",
            absent
        );
    }

    let (tool, handler) = text_tool("t", "x");
    let tools_only = Server::builder("tools", "1").tool(tool, handler).build();
    let caps = connect_and_get_capabilities(&tools_only);
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    for absent in ["resources", "prompts", "completions"] {
        assert!(
            caps.get(absent).is_none(),
            "tools-only server declares {}",
            absent
        );
    }

    let (tool, handler) = text_tool("t", "x");
    let full = Server::builder("full", "1")
        .tool(tool, handler)
        .resource(
            Resource::new("test://r", "r"),
            |_: &RequestContext, uri: &str| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "r",
                )]))
            },
        )
        .prompt(
            Prompt::new("p"),
            |_: &RequestContext, _: std::collections::BTreeMap<String, String>| {
                Ok(GetPromptResult::new(vec![]))
            },
        )
        .completion(|_: &RequestContext, _: CompleteRequestParams| Ok(CompleteResult::new(vec![])))
        .build();
    let caps = connect_and_get_capabilities(&full);
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(caps["completions"], json!({}));
    assert_eq!(caps["logging"], json!({}));
}

fn connect_and_get_capabilities(server: &Server) -> Value {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    let result = client.initialize(json!({})).expect("initialize succeeds");
    result["capabilities"].clone()
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

// PAG-1, basic/utilities/pagination: pages of page_size follow the opaque
// cursor; the last page has no nextCursor.
#[test]
fn tools_list_pages_follow_the_cursor() {
    let mut builder = Server::builder("paged", "1").page_size(2);
    for name in ["t0", "t1", "t2", "t3", "t4"] {
        let (tool, handler) = text_tool(name, "x");
        builder = builder.tool(tool, handler);
    }
    let mut client = connect(&builder.build(), json!({}));

    let mut names = Vec::new();
    let mut page_sizes = Vec::new();
    let mut params = None;
    loop {
        let page = client.request("tools/list", params).expect("tools/list");
        let tools = page["tools"].as_array().expect("tools is an array");
        page_sizes.push(tools.len());
        names.extend(
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        match page.get("nextCursor") {
            Some(Value::String(cursor)) => params = Some(json!({ "cursor": cursor })),
            None => break,
            Some(other) => panic!("nextCursor is not a string: {}", other),
        }
        assert!(page_sizes.len() < 10, "the cursor never ends");
    }
    assert_eq!(page_sizes, vec![2, 2, 1]);
    assert_eq!(names, vec!["t0", "t1", "t2", "t3", "t4"]);
}

// PAG-2, basic/utilities/pagination: an invalid cursor is -32602.
#[test]
fn invalid_cursor_is_invalid_params() {
    let (tool, handler) = text_tool("t", "x");
    let server = Server::builder("paged", "1")
        .page_size(2)
        .tool(tool, handler)
        .build();
    let mut client = connect(&server, json!({}));
    let outcome = client.request("tools/list", Some(json!({"cursor": "not-a-cursor"})));
    expect_error(
        outcome,
        ErrorCode::INVALID_PARAMS,
        "tools/list with a bad cursor",
    );
}

// TOOL-6, server/tools "Error Handling": an unknown tool is -32602.
#[test]
fn unknown_tool_is_invalid_params() {
    let (tool, handler) = text_tool("known", "x");
    let server = Server::builder("tools", "1").tool(tool, handler).build();
    let mut client = connect(&server, json!({}));
    let outcome = client.request(
        "tools/call",
        Some(json!({"name": "unknown", "arguments": {}})),
    );
    expect_error(
        outcome,
        ErrorCode::INVALID_PARAMS,
        "tools/call of an unknown tool",
    );
}

// TOOL-6, server/tools "Error Handling": a handler's Err is a result with
// isError: true carrying the message.
#[test]
fn tool_error_becomes_an_is_error_result() {
    let server = Server::builder("tools", "1")
        .tool(
            Tool::new("fail", any_object()),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Err(Error::msg("the disk is full"))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let result = call_tool(&mut client, "fail", json!({}));
    assert_eq!(result["isError"], true, "{}", result);
    assert!(
        first_text(&result).contains("the disk is full"),
        "the message is missing from {}",
        result
    );
}

// TOOL-6, server/tools "Error Handling": an argument of the wrong type is an
// input validation failure, reported as an isError result.
#[test]
fn wrongly_typed_argument_is_an_is_error_result() {
    let server = Server::builder("tools", "1")
        .tool(
            Tool::new(
                "repeat",
                json!({
                    "type": "object",
                    "properties": {"count": {"type": "integer"}},
                    "required": ["count"]
                }),
            ),
            |_: &RequestContext, args: JsonObject| {
                Ok(CallToolResult::text(format!("{}", args["count"])))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let result = call_tool(&mut client, "repeat", json!({"count": "five"}));
    assert_eq!(result["isError"], true, "{}", result);
    assert!(
        first_text(&result).contains("count"),
        "the message does not name the argument: {}",
        result
    );
}

// server/tools "Calling Tools" (CallToolRequest.params.arguments is
// optional): a call without `arguments` reaches the handler with {}.
#[test]
fn missing_arguments_reach_the_handler_as_an_empty_object() {
    let server = Server::builder("tools", "1")
        .tool(
            Tool::new("count_args", json!({"type": "object", "properties": {}})),
            |_: &RequestContext, args: JsonObject| {
                Ok(CallToolResult::text(format!("{} arguments", args.len())))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let result = client
        .request("tools/call", Some(json!({"name": "count_args"})))
        .expect("a call without arguments succeeds");
    assert_eq!(first_text(&result), "0 arguments");
    assert!(
        result.get("isError").map_or(true, |e| e == false),
        "{}",
        result
    );
}

// docs/STYLE.md section 3 (handler panic -> INTERNAL_ERROR; the connection lives
// on), basic "Error codes" -32603.
#[test]
fn handler_panic_is_internal_error_and_the_session_lives_on() {
    let (tool, handler) = text_tool("fine", "still here");
    let server = Server::builder("tools", "1")
        .tool(
            Tool::new("explode", any_object()),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                panic!("the tool exploded on purpose")
            },
        )
        .tool(tool, handler)
        .build();
    let mut client = connect(&server, json!({}));
    let outcome = client.request("tools/call", Some(json!({"name": "explode"})));
    expect_error(outcome, ErrorCode::INTERNAL_ERROR, "a panicking tool");

    client.request("ping", None).expect("ping after the panic");
    let result = call_tool(&mut client, "fine", json!({}));
    assert_eq!(first_text(&result), "still here");
    let again = client.request("tools/call", Some(json!({"name": "explode"})));
    expect_error(again, ErrorCode::INTERNAL_ERROR, "a second panic");
}

// TOOL-3, TOOL-5, BASE-8 (server/tools "Tool", "Structured Content"): the
// inputSchema and outputSchema are listed verbatim ($schema, $defs,
// additionalProperties survive) and structuredContent is returned as given.
#[test]
fn schemas_and_structured_content_survive_verbatim() {
    let input_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"}
        },
        "additionalProperties": false
    });
    let output_schema = json!({
        "type": "object",
        "properties": {"temperature": {"type": "number"}, "tags": {"type": "array"}},
        "required": ["temperature"]
    });
    let structured = json!({"temperature": 21.5, "tags": ["a", "b"], "nested": {"n": null}});
    let answer = structured.clone();
    let server = Server::builder("tools", "1")
        .tool(
            Tool::new("weather", input_schema.clone()).with_output_schema(output_schema.clone()),
            move |_: &RequestContext, _: JsonObject| Ok(CallToolResult::structured(answer.clone())),
        )
        .build();
    let mut client = connect(&server, json!({}));

    let listed = client.request("tools/list", None).expect("tools/list");
    assert_eq!(listed["tools"][0]["inputSchema"], input_schema);
    assert_eq!(listed["tools"][0]["outputSchema"], output_schema);

    let result = call_tool(
        &mut client,
        "weather",
        json!({"name": "x", "address": {"city": "Oslo"}}),
    );
    assert_eq!(result["structuredContent"], structured);
    let text: Value = serde_json::from_str(first_text(&result)).expect("the text block is JSON");
    assert_eq!(
        text, structured,
        "TOOL-5: the text block mirrors structuredContent"
    );
}

// ---------------------------------------------------------------------------
// Resources and prompts
// ---------------------------------------------------------------------------

fn resource_server() -> Server {
    Server::builder("resources", "1")
        .resource(
            Resource::new("test://static", "static").with_mime_type("text/plain"),
            |_: &RequestContext, uri: &str| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "static text",
                )]))
            },
        )
        .resource(
            Resource::new("test://other", "other"),
            |_: &RequestContext, uri: &str| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "other text",
                )]))
            },
        )
        .resource_template(
            ResourceTemplate::new("test://items/{id}/detail", "item"),
            |_: &RequestContext, uri: &str, vars: &TemplateVariables| {
                let id = vars.get("id").cloned().unwrap_or_default();
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    format!("item {}", id),
                )]))
            },
        )
        .build()
}

// RES-1, server/resources "Reading Resources", "Resource Templates": fixed
// URIs and template URIs are read, the template's variables reach the
// handler.
#[test]
fn resources_read_serves_fixed_uris_and_templates() {
    let mut client = connect(&resource_server(), json!({}));

    let listed = client
        .request("resources/list", None)
        .expect("resources/list");
    assert_eq!(listed["resources"][0]["uri"], "test://static");
    let templates = client
        .request("resources/templates/list", None)
        .expect("resources/templates/list");
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "test://items/{id}/detail"
    );

    let fixed = client
        .request("resources/read", Some(json!({"uri": "test://static"})))
        .expect("read a fixed resource");
    assert_eq!(
        fixed["contents"],
        json!([{"uri": "test://static", "mimeType": "text/plain", "text": "static text"}])
    );

    let item = client
        .request(
            "resources/read",
            Some(json!({"uri": "test://items/42/detail"})),
        )
        .expect("read through a template");
    assert_eq!(item["contents"][0]["uri"], "test://items/42/detail");
    assert_eq!(item["contents"][0]["text"], "item 42");
}

// RES-4, server/resources "Error Handling": an unknown URI is -32002 with
// data.uri.
#[test]
fn unknown_resource_is_resource_not_found() {
    let mut client = connect(&resource_server(), json!({}));
    for uri in ["test://missing", "test://items/42/elsewhere"] {
        let outcome = client.request("resources/read", Some(json!({ "uri": uri })));
        let error = expect_error(outcome, ErrorCode::RESOURCE_NOT_FOUND, uri);
        assert_eq!(error.data, Some(json!({ "uri": uri })));
    }
}

// RES-3, server/resources "Subscriptions": notifications/resources/updated
// goes only to sessions subscribed to that URI, and stops after
// unsubscribe.
#[test]
fn resource_updated_reaches_only_subscribers() {
    let server = resource_server();
    let handle = server.handle();
    let mut subscriber = connect(&server, json!({}));
    let mut bystander = connect(&server, json!({}));
    subscriber
        .request("resources/subscribe", Some(json!({"uri": "test://static"})))
        .expect("resources/subscribe");

    handle.notify_resource_updated("test://static");
    let got = messages_before_ping(&mut subscriber);
    assert_eq!(got.len(), 1, "the subscriber got {:?}", got);
    match &got[0] {
        Message::Notification(n) => {
            assert_eq!(n.method, "notifications/resources/updated");
            assert_eq!(n.params, Some(json!({"uri": "test://static"})));
        }
        other => panic!("expected notifications/resources/updated, got {:?}", other),
    }
    let stray = messages_before_ping(&mut bystander);
    assert!(
        stray.is_empty(),
        "a session that did not subscribe got {:?}",
        stray
    );

    handle.notify_resource_updated("test://other");
    let stray = messages_before_ping(&mut subscriber);
    assert!(
        stray.is_empty(),
        "an update for another URI arrived: {:?}",
        stray
    );

    subscriber
        .request(
            "resources/unsubscribe",
            Some(json!({"uri": "test://static"})),
        )
        .expect("resources/unsubscribe");
    handle.notify_resource_updated("test://static");
    let stray = messages_before_ping(&mut subscriber);
    assert!(
        stray.is_empty(),
        "an update arrived after unsubscribe: {:?}",
        stray
    );
}

fn prompt_server() -> Server {
    Server::builder("prompts", "1")
        .prompt(
            Prompt::new("greet")
                .with_description("Greets someone")
                .with_argument(PromptArgument::new("name", "Who to greet", true))
                .with_argument(PromptArgument::new("mood", "How", false)),
            |_: &RequestContext, args: std::collections::BTreeMap<String, String>| {
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    ContentBlock::text(format!("Hello, {}", args["name"])),
                )]))
            },
        )
        .build()
}

// PRM-3, server/prompts "Error Handling": a missing required argument is
// -32602; with it the prompt renders.
#[test]
fn prompt_missing_required_argument_is_invalid_params() {
    let mut client = connect(&prompt_server(), json!({}));
    let outcome = client.request(
        "prompts/get",
        Some(json!({"name": "greet", "arguments": {"mood": "happy"}})),
    );
    expect_error(
        outcome,
        ErrorCode::INVALID_PARAMS,
        "prompts/get without `name`",
    );
    let outcome = client.request("prompts/get", Some(json!({"name": "greet"})));
    expect_error(
        outcome,
        ErrorCode::INVALID_PARAMS,
        "prompts/get without arguments",
    );

    let result = client
        .request(
            "prompts/get",
            Some(json!({"name": "greet", "arguments": {"name": "Ada"}})),
        )
        .expect("prompts/get with the required argument");
    assert_eq!(result["messages"][0]["role"], "user");
    assert_eq!(result["messages"][0]["content"]["text"], "Hello, Ada");
}

// PRM-3, server/prompts "Error Handling": an unknown prompt is -32602.
#[test]
fn unknown_prompt_is_invalid_params() {
    let mut client = connect(&prompt_server(), json!({}));
    let outcome = client.request("prompts/get", Some(json!({"name": "nope"})));
    expect_error(
        outcome,
        ErrorCode::INVALID_PARAMS,
        "prompts/get of an unknown prompt",
    );
}

// ---------------------------------------------------------------------------
// Completion and logging
// ---------------------------------------------------------------------------

// CMP-1, CMP-2, server/utilities/completion: the handler's suggestions are
// returned for the typed prefix.
#[test]
fn completion_returns_the_handlers_suggestions() {
    let server = Server::builder("complete", "1")
        .completion(|_: &RequestContext, params: CompleteRequestParams| {
            let prefix = params.argument.value;
            let values = ["alpha", "alpine", "beta"]
                .iter()
                .filter(|v| v.starts_with(&prefix))
                .map(|v| v.to_string())
                .collect();
            Ok(CompleteResult::new(values))
        })
        .build();
    let mut client = connect(&server, json!({}));
    let result = client
        .request(
            "completion/complete",
            Some(json!({
                "ref": {"type": "ref/prompt", "name": "anything"},
                "argument": {"name": "arg", "value": "al"}
            })),
        )
        .expect("completion/complete");
    assert_eq!(result["completion"]["values"], json!(["alpha", "alpine"]));
    assert_eq!(result["completion"]["total"], 2);
    assert_eq!(result["completion"]["hasMore"], false);
}

// CMP-3, server/utilities/completion "Error Handling": without a completion
// handler completion/complete is -32601.
#[test]
fn completion_without_a_handler_is_method_not_found() {
    let (tool, handler) = text_tool("t", "x");
    let server = Server::builder("no-complete", "1")
        .tool(tool, handler)
        .build();
    let mut client = connect(&server, json!({}));
    let outcome = client.request(
        "completion/complete",
        Some(json!({
            "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "a", "value": ""}
        })),
    );
    expect_error(outcome, ErrorCode::METHOD_NOT_FOUND, "completion/complete");
}

// LOG-2, server/utilities/logging "Setting Log Level": after setLevel only
// messages at or above the level are sent.
#[test]
fn log_messages_below_the_set_level_are_not_sent() {
    let server = Server::builder("logs", "1")
        .tool(
            Tool::new("chatty", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                for level in [
                    LoggingLevel::Debug,
                    LoggingLevel::Info,
                    LoggingLevel::Warning,
                    LoggingLevel::Error,
                ] {
                    ctx.log(level, level.as_str());
                }
                Ok(CallToolResult::text("logged"))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let result = client
        .request("logging/setLevel", Some(json!({"level": "warning"})))
        .expect("logging/setLevel");
    assert_eq!(result, json!({}));

    call_tool(&mut client, "chatty", json!({}));
    let levels: Vec<Value> = client
        .take_notifications()
        .into_iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "notifications/message" => {
                n.params.map(|p| p["level"].clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(levels, vec![json!("warning"), json!("error")]);
}

// LOG-2, server/utilities/logging "Error Handling": an unknown level is
// -32602.
#[test]
fn invalid_log_level_is_invalid_params() {
    let server = Server::builder("logs", "1").build();
    let mut client = connect(&server, json!({}));
    let outcome = client.request("logging/setLevel", Some(json!({"level": "verbose"})));
    expect_error(
        outcome,
        ErrorCode::INVALID_PARAMS,
        "logging/setLevel verbose",
    );
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

fn progress_server() -> Server {
    Server::builder("progress", "1")
        .tool(
            Tool::new("work", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(2.0), Some("halfway"));
                ctx.notify_progress(2.0, Some(2.0), None);
                Ok(CallToolResult::text("worked"))
            },
        )
        .build()
}

fn progress_notifications(client: &mut MemoryClient) -> Vec<Value> {
    client
        .take_notifications()
        .into_iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "notifications/progress" => n.params,
            _ => None,
        })
        .collect()
}

// PROG-1, basic/utilities/progress: without a progressToken notify_progress
// sends nothing.
#[test]
fn progress_without_a_token_sends_nothing() {
    let mut client = connect(&progress_server(), json!({}));
    let result = call_tool(&mut client, "work", json!({}));
    assert_eq!(first_text(&result), "worked");
    let progress = progress_notifications(&mut client);
    assert!(
        progress.is_empty(),
        "progress without a token: {:?}",
        progress
    );
}

// PROG-1, PROG-2, basic/utilities/progress: the token is echoed with its
// JSON type (string or integer), and progress grows.
#[test]
fn progress_echoes_the_token_with_its_json_type() {
    let mut client = connect(&progress_server(), json!({}));
    for token in [json!("tok-1"), json!(7)] {
        client
            .request(
                "tools/call",
                Some(json!({"name": "work", "_meta": {"progressToken": token}})),
            )
            .expect("tools/call with a progress token");
        let progress = progress_notifications(&mut client);
        assert_eq!(
            progress,
            vec![
                json!({"progressToken": token, "progress": 1, "total": 2, "message": "halfway"}),
                json!({"progressToken": token, "progress": 2, "total": 2}),
            ]
        );
        assert_eq!(
            progress[0]["progressToken"].is_string(),
            token.is_string(),
            "the token changed its JSON type"
        );
    }
}

// ---------------------------------------------------------------------------
// Cancellation
// ---------------------------------------------------------------------------

// CAN-1, CAN-7, basic/utilities/cancellation: a handler blocked until
// cancelled sees is_cancelled, its response is never sent, and the hook
// reports Cancelled with the reason.
#[test]
fn cancelled_request_gets_no_response() {
    let (started_tx, started) = unbounded();
    let (seen_tx, seen) = unbounded();
    let (hook, outcomes) = outcome_recorder();
    let server = Server::builder("cancel", "1")
        .tool(
            Tool::new("block", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                // Handlers poll their flag; the bound only ends a failing test.
                let deadline = Instant::now() + WAIT;
                while !ctx.is_cancelled() && Instant::now() < deadline {
                    thread::sleep(Duration::from_millis(1));
                }
                let _ = seen_tx.send(ctx.is_cancelled());
                Ok(CallToolResult::text("finished anyway"))
            },
        )
        .on_request_finished(hook)
        .build();
    let mut client = connect(&server, json!({}));

    let id = client.send_request("tools/call", Some(json!({"name": "block"})));
    recv(&started, "the start of the blocking handler");
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id.to_value(), "reason": "user pressed stop"})),
    );
    assert!(
        recv(&seen, "the handler's end"),
        "the handler never saw is_cancelled"
    );
    let outcome = outcomes.next_for("tools/call");
    assert_eq!(
        outcome.status,
        RequestStatus::Cancelled {
            reason: Some("user pressed stop".to_string())
        }
    );
    // The hook runs after the response would have been written.
    let before = messages_before_ping(&mut client);
    assert!(
        !before.iter().any(|m| is_response_to(m, &id)),
        "a response to the cancelled request was sent: {:?}",
        before
    );
}

// CAN-2, CAN-3, basic/utilities/cancellation: cancels for unknown or
// finished requests, and malformed cancels, are ignored without a reply.
#[test]
fn cancel_for_an_unknown_or_finished_request_is_ignored() {
    let (tool, handler) = text_tool("quick", "done");
    let server = Server::builder("cancel", "1").tool(tool, handler).build();
    let mut client = connect(&server, json!({}));
    let finished = client.send_request("tools/call", Some(json!({"name": "quick"})));
    client.wait_response(&finished).expect("quick finishes");

    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": finished.to_value(), "reason": "too late"})),
    );
    client.notify("notifications/cancelled", Some(json!({"requestId": 999})));
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": "never-sent"})),
    );
    client.notify("notifications/cancelled", Some(json!({"requestId": null})));
    client.notify("notifications/cancelled", Some(json!({"reason": "no id"})));
    client.notify("notifications/cancelled", None);
    let replies = messages_before_ping(&mut client);
    assert!(replies.is_empty(), "cancels got replies: {:?}", replies);

    let result = call_tool(&mut client, "quick", json!({}));
    assert_eq!(first_text(&result), "done");
}

// CAN-4, LC-5, basic/utilities/cancellation: a cancel naming the initialize
// request does nothing: initialize is answered and the session works.
#[test]
fn cancel_naming_initialize_does_nothing() {
    let (hook, outcomes) = outcome_recorder();
    let (tool, handler) = text_tool("t", "x");
    let server = Server::builder("cancel", "1")
        .tool(tool, handler)
        .on_request_finished(hook)
        .build();
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    let id = client.send_request(
        "initialize",
        initialize_params("2025-11-25", json!({}), "c"),
    );
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id.to_value(), "reason": "changed my mind"})),
    );
    let result = client.wait_response(&id).expect("initialize is answered");
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(outcomes.next_for("initialize").status, RequestStatus::Ok);
    client.notify("notifications/initialized", None);

    let replies = messages_before_ping(&mut client);
    assert!(replies.is_empty(), "the cancel got a reply: {:?}", replies);
    let listed = client
        .request("tools/list", None)
        .expect("the session is initialized");
    assert_eq!(listed["tools"][0]["name"], "t");
}

// CAN-5, basic/utilities/cancellation: cancelling a request whose handler
// waits in create_message sends notifications/cancelled for the nested
// request, and the blocked call returns a Cancelled error.
#[test]
fn cancel_reaches_the_nested_sampling_request() {
    let (outcome_tx, outcome_rx) = unbounded::<Result<CreateMessageResult, Error>>();
    let (hook, outcomes) = outcome_recorder();
    let server = Server::builder("cancel", "1")
        .tool(
            Tool::new("ask_model", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let outcome = ctx.create_message(CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text("What is 2 + 2?")],
                    20,
                ));
                let _ = outcome_tx.send(outcome);
                Ok(CallToolResult::text("not sent"))
            },
        )
        .on_request_finished(hook)
        .build();
    let mut client = connect(&server, json!({"sampling": {}}));

    let id = client.send_request("tools/call", Some(json!({"name": "ask_model"})));
    let nested = match next_message(&mut client, "the sampling/createMessage request") {
        Message::Request(r) if r.method == "sampling/createMessage" => r.id,
        other => panic!("expected sampling/createMessage, got {:?}", other),
    };
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id.to_value(), "reason": "user pressed stop"})),
    );
    match next_message(
        &mut client,
        "notifications/cancelled for the nested request",
    ) {
        Message::Notification(n) if n.method == "notifications/cancelled" => {
            let params = n.params.expect("the cancel has params");
            assert_eq!(params["requestId"], nested.to_value());
        }
        other => panic!("expected notifications/cancelled, got {:?}", other),
    }
    let blocked = recv(&outcome_rx, "the end of the blocked create_message");
    match blocked {
        Err(e) => assert!(e.is_cancelled(), "create_message failed with {:?}", e),
        Ok(r) => panic!("create_message returned {:?} after the cancel", r),
    }
    assert!(matches!(
        outcomes.next_for("tools/call").status,
        RequestStatus::Cancelled { .. }
    ));
    let before = messages_before_ping(&mut client);
    assert!(
        !before.iter().any(|m| is_response_to(m, &id)),
        "a response to the cancelled request was sent: {:?}",
        before
    );
}

// ---------------------------------------------------------------------------
// Requests to the client
// ---------------------------------------------------------------------------

/// A server with one tool, `ask`, that runs `call` and answers its
/// description.
fn asking_server(call: impl Fn(&RequestContext) -> String + Send + Sync + 'static) -> Server {
    Server::builder("asker", "1")
        .tool(
            Tool::new("ask", any_object()),
            move |ctx: &RequestContext, _: JsonObject| Ok(CallToolResult::text(call(ctx))),
        )
        .build()
}

/// Calls `ask` and returns its text; asserts nothing was sent to the client.
fn ask_without_capability(server: &Server, capabilities: Value) -> String {
    let mut client = connect(server, capabilities);
    let result = call_tool(&mut client, "ask", json!({}));
    let text = first_text(&result).to_string();
    let sent = messages_before_ping(&mut client);
    assert!(sent.is_empty(), "the client was sent {:?}", sent);
    text
}

// SAMP-1, LC-4, client/sampling: create_message without the client's
// sampling capability fails with CapabilityMissing and sends nothing.
#[test]
fn create_message_without_sampling_capability_fails() {
    let server = asking_server(|ctx| {
        describe(ctx.create_message(CreateMessageRequestParams::new(
            vec![SamplingMessage::user_text("hi")],
            10,
        )))
    });
    assert_eq!(
        ask_without_capability(&server, json!({"roots": {}, "elicitation": {}})),
        "missing sampling"
    );
}

// ELIC-1, client/elicitation "Capabilities": a form elicitation needs the
// form mode (a client declaring only url mode is not asked).
#[test]
fn elicit_form_without_form_capability_fails() {
    let server = asking_server(|ctx| {
        describe(ctx.elicit(ElicitRequestFormParams::new(
            "Your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )))
    });
    assert_eq!(
        ask_without_capability(&server, json!({"elicitation": {"url": {}}})),
        "missing elicitation.form"
    );
    assert_eq!(
        ask_without_capability(&server, json!({"sampling": {}})),
        "missing elicitation.form"
    );
}

// ELIC-1, client/elicitation "Capabilities": a URL elicitation needs the url
// mode (`elicitation: {}` means form only).
#[test]
fn elicit_url_without_url_capability_fails() {
    let server = asking_server(|ctx| {
        describe(ctx.elicit(ElicitRequestUrlParams::new(
            "Sign in",
            "https://example.com/login",
            "el-1",
        )))
    });
    assert_eq!(
        ask_without_capability(&server, json!({"elicitation": {}})),
        "missing elicitation.url"
    );
    assert_eq!(
        ask_without_capability(&server, json!({"elicitation": {"form": {}}})),
        "missing elicitation.url"
    );
}

// ROOT-1, client/roots: list_roots without the roots capability fails.
#[test]
fn list_roots_without_roots_capability_fails() {
    let server = asking_server(|ctx| describe(ctx.list_roots()));
    assert_eq!(
        ask_without_capability(&server, json!({"sampling": {}})),
        "missing roots"
    );
}

// ELIC-1, client/elicitation "URL Mode": with the url capability the client
// gets elicitation/create with mode, url and elicitationId, and its answer
// reaches the handler.
#[test]
fn elicit_url_mode_reaches_the_client() {
    let server = asking_server(|ctx| {
        match ctx.elicit(ElicitRequestUrlParams::new(
            "Sign in to continue",
            "https://example.com/login?session=abc",
            "el-42",
        )) {
            Ok(result) => serde_json::to_value(result.action)
                .map(|v| format!("action={}", v))
                .unwrap_or_default(),
            Err(e) => format!("failed: {}", e),
        }
    });
    let (asked_tx, asked) = unbounded();
    let mut client = connect(&server, json!({"elicitation": {"url": {}}}));
    client.on_server_request(move |request| {
        let _ = asked_tx.send(request.clone());
        Ok(json!({"action": "accept"}))
    });
    let result = call_tool(&mut client, "ask", json!({}));
    assert_eq!(first_text(&result), "action=\"accept\"");

    let request = recv(&asked, "the elicitation/create request");
    assert_eq!(request.method, "elicitation/create");
    let params = request.params.expect("elicitation/create has params");
    assert_eq!(params["mode"], "url");
    assert_eq!(params["url"], "https://example.com/login?session=abc");
    assert_eq!(params["elicitationId"], "el-42");
    assert_eq!(params["message"], "Sign in to continue");
}

// ---------------------------------------------------------------------------
// Changes while serving, instrumentation, ids
// ---------------------------------------------------------------------------

// TOOL-2, server/tools "List Changed Notification": add_tool and
// remove_tool send notifications/tools/list_changed; removing nothing
// sends nothing.
#[test]
fn adding_and_removing_tools_sends_list_changed() {
    let (tool, handler) = text_tool("first", "1");
    let server = Server::builder("dynamic", "1").tool(tool, handler).build();
    let handle = server.handle();
    let mut client = connect(&server, json!({}));

    let (tool, handler) = text_tool("second", "2");
    handle.edit(|edit| edit.add_tool(tool, handler));
    let sent = messages_before_ping(&mut client);
    assert_eq!(
        notification_methods(&sent),
        vec!["notifications/tools/list_changed"]
    );
    let listed = client.request("tools/list", None).expect("tools/list");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools is an array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, vec!["first", "second"]);
    assert_eq!(
        first_text(&call_tool(&mut client, "second", json!({}))),
        "2"
    );

    assert!(handle.edit(|edit| edit.remove_tool("second")));
    let sent = messages_before_ping(&mut client);
    assert_eq!(
        notification_methods(&sent),
        vec!["notifications/tools/list_changed"]
    );
    let outcome = client.request("tools/call", Some(json!({"name": "second"})));
    expect_error(outcome, ErrorCode::INVALID_PARAMS, "a removed tool");

    assert!(!handle.edit(|edit| edit.remove_tool("never-added")));
    let sent = messages_before_ping(&mut client);
    assert!(sent.is_empty(), "removing nothing sent {:?}", sent);
}

// docs/STYLE.md section 2 (instrumentation hook), basic "Error codes": the hook
// reports method, duration and outcome (ok, error code) for each request.
#[test]
fn request_hook_reports_method_duration_and_outcome() {
    let (hook, outcomes) = outcome_recorder();
    let server = Server::builder("measured", "1")
        .tool(
            Tool::new("pause", any_object()),
            |_: &RequestContext, _: JsonObject| {
                // A measurable duration for the report, not synchronization.
                thread::sleep(Duration::from_millis(30));
                Ok(CallToolResult::text("paused"))
            },
        )
        .tool(
            Tool::new("fail", any_object()),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Err(Error::msg("no"))
            },
        )
        .on_request_finished(hook)
        .build();
    let mut client = connect(&server, json!({}));
    assert_eq!(outcomes.next_for("initialize").status, RequestStatus::Ok);

    client.request("ping", None).expect("ping");
    assert_eq!(outcomes.next_for("ping").status, RequestStatus::Ok);

    call_tool(&mut client, "pause", json!({}));
    let report = outcomes.next_for("tools/call");
    assert_eq!(report.status, RequestStatus::Ok);
    assert!(
        report.duration >= Duration::from_millis(30),
        "the duration {:?} is shorter than the handler ran",
        report.duration
    );

    let result = call_tool(&mut client, "fail", json!({}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        outcomes.next_for("tools/call").status,
        RequestStatus::Ok,
        "an isError result is still a result"
    );

    let _ = client.request("tools/call", Some(json!({"name": "missing"})));
    assert_eq!(
        outcomes.next_for("tools/call").status,
        RequestStatus::Error(ErrorCode::INVALID_PARAMS)
    );

    let _ = client.request("made/up", None);
    assert_eq!(
        outcomes.next_for("made/up").status,
        RequestStatus::Error(ErrorCode::METHOD_NOT_FOUND)
    );
}

/// Adds a tool `hold` that reports its start on the receiver and answers
/// "released" once the sender sends (or an error after `WAIT`).
fn with_hold(
    builder: tiny_mcp::ServerBuilder,
) -> (
    tiny_mcp::ServerBuilder,
    crossbeam_channel::Receiver<()>,
    crossbeam_channel::Sender<()>,
) {
    let (started_tx, started) = unbounded();
    let (release, release_rx) = unbounded::<()>();
    let builder = builder.tool(
        Tool::new("hold", any_object()),
        move |_: &RequestContext, _: JsonObject| {
            let _ = started_tx.send(());
            match release_rx.recv_timeout(WAIT) {
                Ok(()) => Ok(CallToolResult::text("released")),
                Err(_) => Ok(CallToolResult::error("never released")),
            }
        },
    );
    (builder, started, release)
}

// BASE-2 for quick tools, which a connection runs on its reading thread
// without entering them in the in-flight table: a quick call reusing the
// id of a call still running is refused with -32600; the running call
// still answers; after it, the same id is free for a quick call, and a
// cancel naming that finished call is ignored (CAN-1): the next request
// is the next answer.
#[test]
fn quick_call_reusing_a_running_id_is_refused() {
    let (builder, started, release) = with_hold(Server::builder("ids", "1"));
    let server = builder
        .quick_tool(
            Tool::new("now", any_object()),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("quick")),
        )
        .build();
    let mut client = connect(&server, json!({}));
    let id = RequestId::Number(78);
    let call = |name: &str| Message::request(id.clone(), "tools/call", Some(json!({"name": name})));
    let answer = |client: &mut MemoryClient, what: &str| match next_message(client, what) {
        Message::Response(Response {
            id: Some(got),
            outcome,
        }) => {
            assert_eq!(got, id, "{}", what);
            outcome
        }
        other => panic!("expected {} for id 78, got {:?}", what, other),
    };

    client.send(call("hold"));
    recv(&started, "the start of the held request");
    client.send(call("now"));
    match answer(&mut client, "the refusal of the quick duplicate") {
        Err(error) => assert_eq!(error.code, ErrorCode::INVALID_REQUEST, "{:?}", error),
        Ok(result) => panic!("the duplicate quick call ran: {}", result),
    }
    release.send(()).expect("the handler waits for its release");
    let held = answer(&mut client, "the held call's result").expect("a result");
    assert_eq!(first_text(&held), "released");

    client.send(call("now"));
    let quick = answer(&mut client, "the quick call's result").expect("a result");
    assert_eq!(first_text(&quick), "quick");
    client.send(Message::notification(
        "notifications/cancelled",
        Some(json!({"requestId": 78, "reason": "too late"})),
    ));
    client.send(call("now"));
    let again = answer(&mut client, "the next quick call's result").expect("a result");
    assert_eq!(first_text(&again), "quick");
}

// BASE-2, basic "Requests" (ids must not be reused while in use): a
// request whose id is still in flight is refused with -32600, and the
// first request still gets its own response.
#[test]
fn duplicate_in_flight_request_id_is_refused() {
    let (builder, started, release) = with_hold(Server::builder("ids", "1"));
    let server = builder.build();
    let mut client = connect(&server, json!({}));
    let id = RequestId::Number(77);
    let call = || Message::request(id.clone(), "tools/call", Some(json!({"name": "hold"})));

    client.send(call());
    recv(&started, "the start of the first request");
    client.send(call());
    match next_message(&mut client, "the answer to the duplicate") {
        Message::Response(Response {
            id: Some(got),
            outcome: Err(error),
        }) => {
            assert_eq!(got, id);
            assert_eq!(error.code, ErrorCode::INVALID_REQUEST, "{:?}", error);
        }
        other => panic!("expected a -32600 error for id 77, got {:?}", other),
    }

    release.send(()).expect("the handler waits for its release");
    match next_message(&mut client, "the first request's result") {
        Message::Response(Response {
            id: Some(got),
            outcome: Ok(result),
        }) => {
            assert_eq!(got, id);
            assert_eq!(first_text(&result), "released");
        }
        other => panic!("expected the result for id 77, got {:?}", other),
    }
}
