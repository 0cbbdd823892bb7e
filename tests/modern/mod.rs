//! The 2026-07-28 ("modern") era, one test per behaviour. Requirement ids
//! (ERA-*, META-*, VER-*, DISC-*, RES-*, CACHE-*, LISTEN-*, MRTR-*, HTTP-*)
//! are those of `docs/requirements/DIGEST-2026-07-28.md`; its HTTP-* ids are
//! the modern binding's, so they are cited with "(2026-07-28)".
//!
//! Dispatcher tests drive small in-process servers through
//! [`tiny_mcp::MemoryClient`]; stdio tests run the `everything` example as
//! a child process; HTTP tests serve on 127.0.0.1:0 and speak raw HTTP/1.1
//! through `support::http`. Tests wait on channels and reads, never on
//! sleeps; a handler that must wait for the test polls its cancellation
//! flag between short receive timeouts (the flag has no blocking wait).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use serde_json::{json, Value};
use tiny_mcp::{
    CacheScope, CallToolResult, CompleteResult, ContentBlock, CreateMessageRequestParams,
    ElicitRequestFormParams, ErrorCode, ErrorObject, GetPromptResult, HttpServer, InputRequest,
    JsonObject, LoggingLevel, MemoryClient, Prompt, PromptMessage, ReadResourceResult,
    RequestContext, Resource, ResourceContents, ResourceTemplate, SamplingMessage, Server,
    ServerBuilder, TemplateVariables, Tool,
};
use tiny_mcp::{Message, Request};

use crate::support::http::{open_session, rpc, send, Conn, Req, Response};
use crate::support::wait_release_or_cancel;
use crate::support::{connect, expect_error, is_response, next_message, recv, ChildServer, WAIT};

// ---------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------

const MODERN: &str = "2026-07-28";
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

const SERVER_NAME: &str = "modern-tests";
const SERVER_VERSION: &str = "1.2.3";
const INSTRUCTIONS: &str = "Use echo to repeat text.";

const UNSUPPORTED_VERSION: i32 = -32022;
const HEADER_MISMATCH: i32 = -32020;
const MISSING_CAPABILITY: i32 = -32021;

/// A complete envelope (META-1) declaring `capabilities`.
fn envelope(capabilities: Value) -> Value {
    let mut meta = JsonObject::new();
    meta.insert(PROTOCOL_VERSION.into(), json!(MODERN));
    meta.insert(CLIENT_CAPABILITIES.into(), capabilities);
    meta.insert(
        CLIENT_INFO.into(),
        json!({"name": "modern-tests-client", "version": "0.0.0"}),
    );
    Value::Object(meta)
}

/// `params` with `_meta` set to `meta`.
fn with_meta(mut params: Value, meta: Value) -> Value {
    params["_meta"] = meta;
    params
}

/// `params` with a complete envelope declaring `capabilities`.
fn modern(params: Value, capabilities: Value) -> Value {
    with_meta(params, envelope(capabilities))
}

/// `params` with a complete envelope declaring no capability.
fn bare(params: Value) -> Value {
    modern(params, json!({}))
}

/// An envelope with `key` set to `value` (or removed when `value` is null).
fn envelope_with(key: &str, value: Value) -> Value {
    let mut meta = envelope(json!({}));
    match (&mut meta, value) {
        (Value::Object(m), Value::Null) => {
            m.remove(key);
        }
        (Value::Object(m), value) => {
            m.insert(key.to_string(), value);
        }
        _ => unreachable!(),
    }
    meta
}

fn any_object() -> Value {
    json!({"type": "object"})
}

fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}})
}

fn message_to_json(message: &Message) -> Value {
    match serde_json::from_str(&message.to_json_string()) {
        Ok(value) => value,
        Err(e) => panic!("a message did not serialize to JSON: {}", e),
    }
}

fn sub_id(message: &Value) -> &Value {
    &message["params"]["_meta"][SUBSCRIPTION_ID]
}

fn text_of(result: &Value) -> &str {
    match result["content"][0]["text"].as_str() {
        Some(text) => text,
        None => panic!("no text in the first content block of {}", result),
    }
}

/// RES-1, RES-3: a final modern result, stamped with our identity.
fn assert_complete(result: &Value, what: &str) {
    assert_eq!(result["resultType"], "complete", "{}: {}", what, result);
    assert_eq!(
        result["_meta"][SERVER_INFO],
        json!({"name": SERVER_NAME, "version": SERVER_VERSION}),
        "{}: no serverInfo stamp in {}",
        what,
        result
    );
}

/// RES-2: nothing of the modern era on a legacy result.
fn assert_legacy_shape(result: &Value, what: &str) {
    for key in ["resultType", "ttlMs", "cacheScope"] {
        assert!(result.get(key).is_none(), "{}: {} in {}", what, key, result);
    }
    assert!(
        result["_meta"].get(SERVER_INFO).is_none(),
        "{}: serverInfo stamp in {}",
        what,
        result
    );
}

/// CACHE-1: `ttlMs` and `cacheScope` as given.
fn assert_cache(result: &Value, ttl: u64, scope: &str, what: &str) {
    assert_eq!(result["ttlMs"], json!(ttl), "{}: {}", what, result);
    assert_eq!(result["cacheScope"], scope, "{}: {}", what, result);
}

/// A JSON-RPC error's code and data from a raw message.
fn error_of(message: &Value, what: &str) -> (i32, Value) {
    match message["error"]["code"].as_i64() {
        Some(code) => (code as i32, message["error"]["data"].clone()),
        None => panic!("{}: expected an error, got {}", what, message),
    }
}

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------

fn echo(_: &RequestContext, args: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    let text = args.get("text").and_then(Value::as_str).unwrap_or("");
    Ok(CallToolResult::text(text))
}

/// Progress, two log lines and a change notification, then a result.
fn chatty(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    ctx.notify_progress(1.0, Some(2.0), Some("first half"));
    ctx.log(LoggingLevel::Info, "an info line");
    ctx.log(LoggingLevel::Warning, "a warning line");
    ctx.server().notify_tools_list_changed();
    ctx.notify_progress(2.0, Some(2.0), Some("second half"));
    Ok(CallToolResult::text("chatty done"))
}

fn text_contents(uri: &str) -> ReadResourceResult {
    ReadResourceResult::new(vec![ResourceContents::text(uri, "text/plain", "some text")])
}

fn read_text(_: &RequestContext, uri: &str) -> Result<ReadResourceResult, tiny_mcp::Error> {
    Ok(text_contents(uri))
}

fn read_template(
    _: &RequestContext,
    uri: &str,
    vars: &TemplateVariables,
) -> Result<ReadResourceResult, tiny_mcp::Error> {
    match vars.get("id").map(String::as_str) {
        Some("missing") | None => Err(tiny_mcp::Error::resource_not_found(uri)),
        Some(_) => Ok(text_contents(uri)),
    }
}

/// Every kind of thing a modern client can ask for.
fn full_builder() -> ServerBuilder {
    Server::builder(SERVER_NAME, SERVER_VERSION)
        .instructions(INSTRUCTIONS)
        .tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            echo,
        )
        .tool(
            Tool::new("fail", any_object()),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::error("it failed")),
        )
        .tool(Tool::new("chatty", any_object()), chatty)
        .resource(
            Resource::new("test://a", "a").with_mime_type("text/plain"),
            read_text,
        )
        .resource(Resource::new("test://caf\u{e9}", "cafe"), read_text)
        .resource_template(ResourceTemplate::new("test://t/{id}", "t"), read_template)
        .prompt(
            Prompt::new("greet"),
            |_: &RequestContext, _: BTreeMap<String, String>| {
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    ContentBlock::text("hello"),
                )]))
            },
        )
        .prompt(
            Prompt::new("broken"),
            |_: &RequestContext, _: BTreeMap<String, String>| {
                Err(tiny_mcp::Error::msg("the prompt broke"))
            },
        )
        .completion(|_: &RequestContext, _: tiny_mcp::CompleteRequestParams| {
            Ok(CompleteResult::new(vec!["one".into()]))
        })
}

fn full_server() -> Server {
    full_builder().build()
}

// MRTR handlers: each reaches its input requests deterministically.

fn ask_name(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    let answer = ctx.elicit(ElicitRequestFormParams::new("Your name?", name_schema()))?;
    Ok(CallToolResult::text(format!(
        "hello {}",
        content_name(&answer)
    )))
}

fn content_name(answer: &tiny_mcp::ElicitResult) -> String {
    answer
        .content
        .as_ref()
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("nobody")
        .to_string()
}

fn ask_three(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    let answers = ctx.request_inputs(vec![
        (
            "confirm".to_string(),
            InputRequest::elicit(ElicitRequestFormParams::new("Go on?", name_schema())),
        ),
        (
            "summary".to_string(),
            InputRequest::create_message(CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("Summarize")],
                50,
            )),
        ),
        ("where".to_string(), InputRequest::list_roots()),
    ])?;
    let confirm = answers.elicit_result("confirm")?;
    let summary = answers.create_message_result("summary")?;
    let roots = answers.list_roots_result("where")?;
    let first_root = roots.roots.first().map(|r| r.uri.as_str()).unwrap_or("");
    Ok(CallToolResult::text(format!(
        "confirm={} summary={} root={}",
        content_name(&confirm),
        summary.text().unwrap_or(""),
        first_root
    )))
}

/// Two rounds of input, counting its runs in its own state.
fn rounds(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    let round = ctx
        .request_state()
        .and_then(|s| s["round"].as_u64())
        .unwrap_or(0)
        + 1;
    ctx.set_request_state(json!({ "round": round }));
    let a = ctx.request_inputs(vec![(
        "a".to_string(),
        InputRequest::elicit(ElicitRequestFormParams::new("A?", name_schema())),
    )])?;
    let b = ctx.request_inputs(vec![(
        "b".to_string(),
        InputRequest::elicit(ElicitRequestFormParams::new("B?", name_schema())),
    )])?;
    Ok(CallToolResult::text(format!(
        "round {} a={} b={}",
        round,
        content_name(&a.elicit_result("a")?),
        content_name(&b.elicit_result("b")?)
    )))
}

fn sample(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    let answer = ctx.create_message(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text("hi")],
        10,
    ))?;
    Ok(CallToolResult::text(
        answer.text().unwrap_or("").to_string(),
    ))
}

fn mrtr_server() -> Server {
    Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("ask_name", any_object()), ask_name)
        .tool(Tool::new("ask_three", any_object()), ask_three)
        .tool(Tool::new("rounds", any_object()), rounds)
        .tool(Tool::new("sample", any_object()), sample)
        .prompt(
            Prompt::new("ask_name"),
            |ctx: &RequestContext, _: BTreeMap<String, String>| {
                let answer =
                    ctx.elicit(ElicitRequestFormParams::new("Prompt name?", name_schema()))?;
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    ContentBlock::text(content_name(&answer)),
                )]))
            },
        )
        .resource(
            Resource::new("test://secret", "secret"),
            |ctx: &RequestContext, uri: &str| {
                let answer =
                    ctx.elicit(ElicitRequestFormParams::new("Password?", name_schema()))?;
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    content_name(&answer),
                )]))
            },
        )
        .build()
}

fn accept(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

// ---------------------------------------------------------------------------
// In-memory client helpers
// ---------------------------------------------------------------------------

fn memory(server: &Server) -> MemoryClient {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client
}

/// A modern request declaring no capability.
fn mreq(client: &mut MemoryClient, method: &str, params: Value) -> Result<Value, ErrorObject> {
    client.request(method, Some(bare(params)))
}

/// A modern request declaring `capabilities`.
fn mreq_caps(
    client: &mut MemoryClient,
    method: &str,
    params: Value,
    capabilities: Value,
) -> Result<Value, ErrorObject> {
    client.request(method, Some(modern(params, capabilities)))
}

fn ok(outcome: Result<Value, ErrorObject>, what: &str) -> Value {
    match outcome {
        Ok(result) => result,
        Err(e) => panic!("{} failed: {:?}", what, e),
    }
}

/// Locks a memory connection to the modern era with a valid request.
fn lock_modern(client: &mut MemoryClient) {
    let result = ok(
        mreq(client, "server/discover", json!({})),
        "the first server/discover",
    );
    assert_complete(&result, "server/discover");
}

/// Sends a raw JSON-RPC message.
fn send_json(client: &MemoryClient, message: Value) {
    match Message::from_value(message.clone()) {
        Ok(message) => client.send(message),
        Err(e) => panic!("not a JSON-RPC message ({:?}): {}", e.error, message),
    }
}

fn next_json(client: &mut MemoryClient, what: &str) -> Value {
    message_to_json(&next_message(client, what))
}

/// Sends `server/discover` and returns every message the server sent
/// before its answer: the dispatcher answers it inline, in order, so
/// anything already sent is in the list.
fn before_barrier(client: &mut MemoryClient) -> Vec<Value> {
    send_json(
        client,
        json!({"jsonrpc": "2.0", "id": "barrier", "method": "server/discover",
               "params": bare(json!({}))}),
    );
    let mut before = Vec::new();
    loop {
        let message = next_json(client, "the answer to the barrier server/discover");
        if is_response(&message) && message["id"] == "barrier" {
            assert!(message.get("result").is_some(), "barrier: {}", message);
            return before;
        }
        before.push(message);
    }
}

/// Opens a listen stream with `id` on a memory connection; returns the ack.
fn memory_listen(client: &mut MemoryClient, id: Value, filter: Value) -> Value {
    send_json(
        client,
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
               "params": bare(json!({"notifications": filter}))}),
    );
    let ack = next_json(client, "the listen acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "the first message for a listen request: {}",
        ack
    );
    ack
}

// ---------------------------------------------------------------------------
// HTTP helpers
// ---------------------------------------------------------------------------

fn serve(builder: tiny_mcp::HttpServerBuilder) -> HttpServer {
    match builder.serve("127.0.0.1:0") {
        Ok(http) => http,
        Err(e) => panic!("cannot serve on 127.0.0.1:0: {}", e),
    }
}

/// A 2026-07-28 POST with its routing headers (HTTP-2 (2026-07-28)):
/// `params` already carries its envelope.
fn modern_post(id: Value, method: &str, params: Value) -> Req {
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut req = Req::post(rpc(id, method, params))
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", method);
    if matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        if let Some(name) = name {
            req = req.header("Mcp-Name", &name);
        }
    }
    req
}

fn call_req(id: Value, tool: &str, arguments: Value) -> Req {
    modern_post(
        id,
        "tools/call",
        bare(json!({"name": tool, "arguments": arguments})),
    )
}

/// Asserts an error response with this status and code; returns the
/// JSON-RPC message.
fn expect_http_error(response: &Response, status: u16, code: i32, what: &str) -> Value {
    response.expect_status(status, what);
    assert!(
        response
            .header("content-type")
            .map_or(false, |v| v.starts_with("application/json")),
        "{}: error bodies are JSON: {:?}",
        what,
        response.head
    );
    let message = response.json();
    assert_eq!(message["error"]["code"], code, "{}: {}", what, message);
    message
}

fn listen_req(id: Value, filter: Value) -> Req {
    modern_post(
        id,
        "subscriptions/listen",
        bare(json!({ "notifications": filter })),
    )
}

/// Opens a listen stream on a new connection; returns it with its ack.
fn http_listen(addr: SocketAddr, id: Value, filter: Value) -> (Conn, Value) {
    let mut conn = Conn::open(addr);
    let head = conn.start(&listen_req(id, filter), "the listen response head");
    head.expect_status(200, "subscriptions/listen");
    assert!(head.is_sse(), "a listen stream is SSE: {:?}", head);
    let ack = conn.next_message("the listen acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{}",
        ack
    );
    (conn, ack)
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let n = (u32::from(chunk[0]) << 16) | (u32::from(b1) << 8) | u32::from(b2);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

// ===========================================================================
// 1. Eras on memory and stdio
// ===========================================================================

// ERA-1, ERA-2, ERA-5 (2026-07-28): the first request carries the envelope,
// so the connection is modern; `initialize` then gets -32022 naming the
// modern versions and the version it asked for.
#[test]
fn first_modern_request_locks_modern_and_initialize_gets_unsupported_version() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    let error = expect_error(
        client.request(
            "initialize",
            Some(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "late", "version": "1"}
            })),
        ),
        ErrorCode(UNSUPPORTED_VERSION),
        "initialize on a modern connection",
    );
    assert_eq!(
        error.data,
        Some(json!({"supported": [MODERN], "requested": "2025-11-25"}))
    );
    // Still modern afterwards.
    let result = ok(
        mreq(
            &mut client,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        ),
        "tools/call after the refused initialize",
    );
    assert_eq!(text_of(&result), "still here");
}

// ERA-6 (2026-07-28): a modern request on a connection locked to the
// handshake era is -32600.
#[test]
fn modern_request_on_legacy_connection_is_invalid_request() {
    let server = full_server();
    let mut client = connect(&server, json!({}));
    let error = expect_error(
        mreq(&mut client, "tools/list", json!({})),
        ErrorCode::INVALID_REQUEST,
        "a modern tools/list after initialize",
    );
    assert!(
        error.message.contains("handshake") || error.message.contains("initialize"),
        "the message names the era: {}",
        error.message
    );
}

// ERA-1, ERA-2 (2026-07-28): a `_meta` with only a progress token is no
// modern claim, so such a first request (a `ping`, which the handshake era
// answers before `initialize`) locks the connection to the handshake era.
#[test]
fn progress_token_alone_is_not_a_modern_claim() {
    let server = full_server();
    let mut client = memory(&server);
    let pong = ok(
        client.request("ping", Some(json!({"_meta": {"progressToken": 1}}))),
        "ping with only a progress token",
    );
    assert_legacy_shape(&pong, "ping");
    expect_error(
        mreq(&mut client, "server/discover", json!({})),
        ErrorCode::INVALID_REQUEST,
        "a modern request after a legacy first request",
    );
}

// ERA-1, ERA-7 (2026-07-28): `initialize` is legacy even with an envelope,
// and asking for 2026-07-28 is counter-offered 2025-11-25.
#[test]
fn initialize_with_envelope_is_legacy_and_counter_offered() {
    let server = full_server();
    let mut client = memory(&server);
    let result = ok(
        client.request(
            "initialize",
            Some(modern(
                json!({
                    "protocolVersion": MODERN,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"}
                }),
                json!({}),
            )),
        ),
        "initialize with an envelope",
    );
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_legacy_shape(&result, "initialize");
}

// RES-2, ERA-8 (2026-07-28): legacy results carry no resultType, ttlMs,
// cacheScope or serverInfo stamp.
#[test]
fn legacy_results_carry_no_modern_fields() {
    let server = full_server();
    let mut client = connect(&server, json!({}));
    for (method, params) in [
        ("ping", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        ("prompts/get", json!({"name": "greet"})),
        ("logging/setLevel", json!({"level": "info"})),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
    ] {
        let result = ok(client.request(method, Some(params)), method);
        assert_legacy_shape(&result, method);
    }
}

// ERR-2 (2026-07-28): the handshake era keeps -32002 for a missing
// resource.
#[test]
fn legacy_missing_resource_keeps_resource_not_found() {
    let server = full_server();
    let mut client = connect(&server, json!({}));
    expect_error(
        client.request("resources/read", Some(json!({"uri": "test://nope"}))),
        ErrorCode::RESOURCE_NOT_FOUND,
        "legacy resources/read of a missing resource",
    );
}

// ERA-2, ERA-5, VER-4 (2026-07-28): on stdio the first request locks the
// process modern; no discover is needed first; `initialize` then gets
// -32022 with the supported and requested versions.
#[test]
fn stdio_first_modern_request_locks_modern() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!(1),
        "tools/call",
        bare(json!({"name": "echo", "arguments": {"text": "first"}})),
    );
    let (response, before) = child.wait_response(&json!(1), "the first tools/call");
    assert!(before.is_empty(), "nothing before the result: {:?}", before);
    assert_eq!(response["result"]["resultType"], "complete", "{}", response);
    assert_eq!(text_of(&response["result"]), "first");
    child.request(
        json!("init"),
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "late", "version": "1"}}),
    );
    let (response, _) = child.wait_response(&json!("init"), "the answer to initialize");
    let (code, data) = error_of(&response, "initialize on a modern process");
    assert_eq!(code, UNSUPPORTED_VERSION);
    assert_eq!(
        data,
        json!({"supported": [MODERN], "requested": "2025-06-18"})
    );
    child.request(json!(2), "server/discover", bare(json!({})));
    let (response, _) = child.wait_response(&json!(2), "server/discover");
    assert_eq!(response["result"]["supportedVersions"], json!([MODERN]));
}

// ERA-6, RES-2 (2026-07-28): a stdio process locked to the handshake era
// refuses a modern request with -32600 and keeps legacy result shapes.
#[test]
fn stdio_legacy_process_refuses_modern_request() {
    let (mut child, init) = ChildServer::initialized("everything", json!({}));
    assert_legacy_shape(&init, "initialize");
    child.request(json!(1), "tools/list", bare(json!({})));
    let (response, _) = child.wait_response(&json!(1), "a modern tools/list");
    let (code, _) = error_of(&response, "a modern request on a legacy process");
    assert_eq!(code, -32600);
    child.request(json!(2), "tools/list", json!({}));
    let (response, _) = child.wait_response(&json!(2), "a legacy tools/list");
    assert_legacy_shape(&response["result"], "legacy tools/list");
}

// ===========================================================================
// 2. The envelope
// ===========================================================================

// META-2 (2026-07-28): a modern request without `_meta` is -32602.
#[test]
fn missing_meta_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    for params in [
        None,
        Some(json!({})),
        Some(json!({"_meta": "not an object"})),
    ] {
        expect_error(
            client.request("tools/list", params.clone()),
            ErrorCode::INVALID_PARAMS,
            &format!("tools/list with params {:?}", params),
        );
    }
}

// META-2, ERA-1 (2026-07-28): an envelope without a protocol version, or
// without client capabilities, is -32602 naming the missing key.
#[test]
fn incomplete_envelope_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    // Half an envelope is still a modern claim, even first.
    let error = expect_error(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(CLIENT_CAPABILITIES, Value::Null)})),
        ),
        ErrorCode::INVALID_PARAMS,
        "an envelope without clientCapabilities",
    );
    assert!(
        error.message.contains("clientCapabilities"),
        "the message names the key: {}",
        error.message
    );
    // Without the version key it is no claim: ask a connection already
    // locked modern (the state after a failed first request is not pinned
    // down, ERA-2).
    let mut client = memory(&server);
    lock_modern(&mut client);
    let error = expect_error(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(PROTOCOL_VERSION, Value::Null)})),
        ),
        ErrorCode::INVALID_PARAMS,
        "an envelope without protocolVersion",
    );
    assert!(
        error.message.contains("protocolVersion"),
        "the message names the key: {}",
        error.message
    );
}

// META-2 (2026-07-28): `clientInfo` is optional.
#[test]
fn missing_client_info_is_accepted() {
    let server = full_server();
    let mut client = memory(&server);
    let result = ok(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(CLIENT_INFO, Value::Null)})),
        ),
        "tools/list without clientInfo",
    );
    assert_complete(&result, "tools/list");
}

// META-3 (2026-07-28): a version that is not a string is -32602, not
// -32022.
#[test]
fn non_string_version_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    for version in [json!(20260728), json!(["2026-07-28"]), json!(null)] {
        let mut meta = envelope(json!({}));
        meta[PROTOCOL_VERSION] = version.clone();
        expect_error(
            client.request("tools/list", Some(json!({ "_meta": meta }))),
            ErrorCode::INVALID_PARAMS,
            &format!("protocolVersion {}", version),
        );
    }
}

// VER-2, GEN-2 (2026-07-28): an unknown version, or a handshake version
// in an envelope, is -32022 with `{supported, requested}`.
#[test]
fn unsupported_version_is_unsupported_with_data() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    for version in ["2099-01-01", "2025-11-25", "2026-07-28 ", ""] {
        let error = expect_error(
            client.request(
                "tools/list",
                Some(json!({"_meta": envelope_with(PROTOCOL_VERSION, json!(version))})),
            ),
            ErrorCode(UNSUPPORTED_VERSION),
            &format!("version {:?}", version),
        );
        assert_eq!(
            error.data,
            Some(json!({"supported": [MODERN], "requested": version})),
            "version {:?}",
            version
        );
    }
}

// LOG-2 (2026-07-28): an unknown logLevel is -32602.
#[test]
fn unknown_log_level_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    for level in [json!("loud"), json!("INFO"), json!(3)] {
        expect_error(
            client.request(
                "tools/list",
                Some(json!({"_meta": envelope_with(LOG_LEVEL, level.clone())})),
            ),
            ErrorCode::INVALID_PARAMS,
            &format!("logLevel {}", level),
        );
    }
    let result = ok(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(LOG_LEVEL, json!("debug"))})),
        ),
        "a known logLevel",
    );
    assert_complete(&result, "tools/list with logLevel");
}

// META-4, GEN-4 (2026-07-28): capabilities are read from each request; a
// request without `sampling` cannot sample although an earlier one
// declared it.
#[test]
fn capabilities_are_per_request() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let first = ok(
        mreq_caps(
            &mut client,
            "tools/call",
            json!({"name": "sample"}),
            json!({"sampling": {}}),
        ),
        "sample declaring sampling",
    );
    assert_eq!(first["resultType"], "input_required", "{}", first);
    let error = expect_error(
        mreq(&mut client, "tools/call", json!({"name": "sample"})),
        ErrorCode(MISSING_CAPABILITY),
        "sample without sampling in this request",
    );
    assert_eq!(
        error.data.as_ref().map(|d| &d["requiredCapabilities"]),
        Some(&json!({"sampling": {}}))
    );
}

// META-5, GEN-4 (2026-07-28): client identity is this request's, never an
// earlier one's.
#[test]
fn client_info_is_per_request() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("who", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                let name = ctx.client_info().map(|i| i.name).unwrap_or_default();
                Ok(CallToolResult::text(format!("[{}]", name)))
            },
        )
        .build();
    let mut client = memory(&server);
    let named = ok(
        mreq(&mut client, "tools/call", json!({"name": "who"})),
        "who with clientInfo",
    );
    assert_eq!(text_of(&named), "[modern-tests-client]");
    let anonymous = ok(
        client.request(
            "tools/call",
            Some(json!({"name": "who", "_meta": envelope_with(CLIENT_INFO, Value::Null)})),
        ),
        "who without clientInfo",
    );
    assert_eq!(text_of(&anonymous), "[]");
}

// ===========================================================================
// 3. Discovery, result shapes, removed methods, logging
// ===========================================================================

// DISC-2, DISC-3, DISC-4, CACHE-1, RES-3 (2026-07-28): the shape of
// server/discover.
#[test]
fn discover_result_shape() {
    let server = full_server();
    let mut client = memory(&server);
    let result = ok(
        mreq(&mut client, "server/discover", json!({})),
        "server/discover",
    );
    assert_complete(&result, "server/discover");
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    let capabilities = serde_json::to_value(server.capabilities()).unwrap_or(Value::Null);
    assert_eq!(result["capabilities"], capabilities);
    assert!(
        result["capabilities"].get("tasks").is_none(),
        "no core tasks capability (MOD-6)"
    );
    assert_eq!(result["instructions"], INSTRUCTIONS);
    assert_cache(&result, 0, "private", "server/discover");
    assert!(
        result.get("serverInfo").is_none(),
        "identity only in _meta: {}",
        result
    );
    assert!(result.get("protocolVersion").is_none(), "{}", result);
}

// DISC-6, VER-4 (2026-07-28): discover opens nothing and may be repeated
// at any time; other methods need no discover first.
#[test]
fn discover_is_optional_and_repeatable() {
    let server = full_server();
    let mut client = memory(&server);
    let tools = ok(mreq(&mut client, "tools/list", json!({})), "tools/list");
    assert_eq!(tools["tools"].as_array().map(Vec::len), Some(3));
    let first = ok(mreq(&mut client, "server/discover", json!({})), "discover");
    let second = ok(mreq(&mut client, "server/discover", json!({})), "again");
    assert_eq!(first, second);
}

// CACHE-1, RES-1 (2026-07-28): list methods and resources/read carry
// `ttlMs: 0` and `cacheScope: "private"` by default.
#[test]
fn cacheable_results_carry_default_cache_hints() {
    let server = full_server();
    let mut client = memory(&server);
    for (method, params) in [
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        ("resources/read", json!({"uri": "test://t/7"})),
    ] {
        let result = ok(mreq(&mut client, method, params), method);
        assert_complete(&result, method);
        assert_cache(&result, 0, "private", method);
    }
}

// CACHE-1, CACHE-3 (2026-07-28): `cache_hints` sets ttlMs and cacheScope
// on every cacheable result, every page alike.
#[test]
fn cache_hints_setting_changes_hints() {
    let server = full_builder()
        .cache_hints(Duration::from_secs(90), CacheScope::Public)
        .page_size(1)
        .build();
    let mut client = memory(&server);
    for (method, params) in [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
    ] {
        let result = ok(mreq(&mut client, method, params), method);
        assert_cache(&result, 90_000, "public", method);
    }
    let first = ok(mreq(&mut client, "tools/list", json!({})), "page 1");
    let cursor = first["nextCursor"].clone();
    assert!(cursor.is_string(), "a second page exists: {}", first);
    let second = ok(
        mreq(&mut client, "tools/list", json!({ "cursor": cursor })),
        "page 2",
    );
    assert_cache(&second, 90_000, "public", "page 2");
}

// RES-1, RES-3 (2026-07-28): every modern result, cacheable or not, has
// `resultType` and the serverInfo stamp.
#[test]
fn every_modern_result_has_result_type() {
    let server = full_server();
    let mut client = memory(&server);
    for (method, params) in [
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
        ("tools/call", json!({"name": "fail"})),
        ("prompts/get", json!({"name": "greet"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "a", "value": ""}}),
        ),
    ] {
        let result = ok(mreq(&mut client, method, params), method);
        assert_complete(&result, method);
    }
}

// RES-3 (2026-07-28): a serverInfo stamp the handler set is kept.
#[test]
fn handler_server_info_stamp_is_kept() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("stamped", any_object()),
            |_: &RequestContext, _: JsonObject| {
                let mut meta = JsonObject::new();
                meta.insert(SERVER_INFO.into(), json!({"name": "mine", "version": "9"}));
                let mut result = CallToolResult::text("x");
                result.meta = Some(meta);
                Ok(result)
            },
        )
        .build();
    let mut client = memory(&server);
    let result = ok(
        mreq(&mut client, "tools/call", json!({"name": "stamped"})),
        "stamped",
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"][SERVER_INFO],
        json!({"name": "mine", "version": "9"})
    );
}

// ERR-2 (2026-07-28): a missing resource is -32602 with `data.uri`, never
// -32002, whether no resource matches or the handler says so.
#[test]
fn missing_resource_is_invalid_params_with_uri() {
    let server = full_server();
    let mut client = memory(&server);
    for uri in ["test://nope", "test://t/missing"] {
        let error = expect_error(
            mreq(&mut client, "resources/read", json!({ "uri": uri })),
            ErrorCode::INVALID_PARAMS,
            uri,
        );
        assert_eq!(
            error.data.as_ref().map(|d| &d["uri"]),
            Some(&json!(uri)),
            "{:?}",
            error
        );
    }
}

// REM-1 (2026-07-28): removed methods are -32601 on the modern path.
#[test]
fn removed_methods_are_method_not_found() {
    let server = full_server();
    let mut client = memory(&server);
    for (method, params) in [
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "test://a"})),
        ("resources/unsubscribe", json!({"uri": "test://a"})),
        ("tasks/get", json!({"taskId": "t"})),
        ("tasks/result", json!({"taskId": "t"})),
        ("tasks/list", json!({})),
        ("tasks/cancel", json!({"taskId": "t"})),
        ("no/such/method", json!({})),
    ] {
        expect_error(
            mreq(&mut client, method, params),
            ErrorCode::METHOD_NOT_FOUND,
            method,
        );
    }
}

// MOD-3 (2026-07-28): a method behind a capability the server does not
// advertise is -32601.
#[test]
fn method_behind_unadvertised_capability_is_method_not_found() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("echo", any_object()), echo)
        .build();
    let mut client = memory(&server);
    for (method, params) in [
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "greet"})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "a", "value": ""}}),
        ),
    ] {
        expect_error(
            mreq(&mut client, method, params),
            ErrorCode::METHOD_NOT_FOUND,
            method,
        );
    }
}

// LOG-1 (2026-07-28): no `notifications/message` without the request's
// logLevel; with it, only that level and above.
#[test]
fn logs_only_with_log_level_opt_in() {
    let server = full_server();
    let mut client = memory(&server);
    ok(
        mreq(&mut client, "tools/call", json!({"name": "chatty"})),
        "chatty without logLevel",
    );
    let logs: Vec<Value> = client
        .take_notifications()
        .iter()
        .map(message_to_json)
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(logs.is_empty(), "logs without opt-in: {:?}", logs);
    ok(
        client.request(
            "tools/call",
            Some(json!({"name": "chatty", "_meta": envelope_with(LOG_LEVEL, json!("warning"))})),
        ),
        "chatty with logLevel warning",
    );
    let logs: Vec<Value> = client
        .take_notifications()
        .iter()
        .map(message_to_json)
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "only the warning: {:?}", logs);
    assert_eq!(logs[0]["params"]["level"], "warning");
}

// MOD-1, REM-2 (2026-07-28): client notifications other than cancelled
// are ignored without a reply.
#[test]
fn client_notifications_are_ignored() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    client.notify("notifications/initialized", None);
    client.notify("notifications/roots/list_changed", None);
    client.notify(
        "notifications/progress",
        Some(json!({"progressToken": 1, "progress": 1})),
    );
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": "nothing"})),
    );
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "replies to notifications: {:?}", before);
}

// GEN-3 (2026-07-28): the response echoes the id with its JSON type.
#[test]
fn modern_ids_keep_their_json_type() {
    let server = full_server();
    let mut client = memory(&server);
    for id in [json!("7"), json!(7)] {
        send_json(
            &client,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": bare(json!({"name": "echo", "arguments": {"text": "x"}}))}),
        );
        let response = next_json(&mut client, "the tools/call response");
        assert_eq!(response["id"], id, "{}", response);
    }
}

// ===========================================================================
// 4. Streamable HTTP, modern path
// ===========================================================================

// HTTP-1, HTTP-2, HTTP-8 (2026-07-28): a POST with the three routing
// headers is answered with JSON, and no session is minted.
#[test]
fn http_modern_post_is_answered_without_session() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let response = send(
        addr,
        &call_req(json!(1), "echo", json!({"text": "over http"})),
        "a modern tools/call",
    );
    response.expect_status(200, "tools/call");
    assert!(
        response
            .header("content-type")
            .map_or(false, |v| v.starts_with("application/json")),
        "{:?}",
        response.head
    );
    assert!(
        response.header("mcp-session-id").is_none(),
        "no session is minted: {:?}",
        response.head
    );
    let message = response.json();
    assert_eq!(message["id"], 1);
    assert_complete(&message["result"], "tools/call");
    assert_eq!(text_of(&message["result"]), "over http");
    let discover = send(
        addr,
        &modern_post(json!("d"), "server/discover", bare(json!({}))),
        "server/discover",
    );
    discover.expect_status(200, "server/discover");
    assert!(discover.header("mcp-session-id").is_none());
    assert_eq!(
        discover.json()["result"]["supportedVersions"],
        json!([MODERN])
    );
}

// HTTP-2, HTTP-6 step 9, ERA-4, ERR-4 (2026-07-28): each routing header
// missing or different from the body is 400 -32020.
#[test]
fn http_missing_or_mismatched_headers_are_header_mismatch() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let good = || call_req(json!(5), "echo", json!({"text": "x"}));
    let wrong_version_body = Req::post(rpc(
        json!(5),
        "tools/call",
        json!({"name": "echo", "_meta": envelope_with(PROTOCOL_VERSION, json!("2099-01-01"))}),
    ))
    .header("MCP-Protocol-Version", MODERN)
    .header("Mcp-Method", "tools/call")
    .header("Mcp-Name", "echo");
    let cases = vec![
        (
            "no MCP-Protocol-Version",
            good().without("MCP-Protocol-Version"),
        ),
        (
            "MCP-Protocol-Version differs from the body",
            wrong_version_body,
        ),
        ("no Mcp-Method", good().without("Mcp-Method")),
        (
            "Mcp-Method differs",
            good().header("Mcp-Method", "tools/list"),
        ),
        ("no Mcp-Name", good().without("Mcp-Name")),
        ("Mcp-Name differs", good().header("Mcp-Name", "fail")),
        (
            "Mcp-Name with bad base64",
            good().header("Mcp-Name", "=?base64?ZWNo*==?="),
        ),
    ];
    for (what, req) in cases {
        let response = send(addr, &req, what);
        let message = expect_http_error(&response, 400, HEADER_MISMATCH, what);
        assert_eq!(message["id"], 5, "{}: the id is echoed: {}", what, message);
    }
    // resources/read and prompts/get name their target too.
    let read = modern_post(json!(6), "resources/read", bare(json!({"uri": "test://a"})))
        .header("Mcp-Name", "test://b");
    expect_http_error(&send(addr, &read, "read"), 400, HEADER_MISMATCH, "read");
    let get =
        modern_post(json!(7), "prompts/get", bare(json!({"name": "greet"}))).without("Mcp-Name");
    expect_http_error(&send(addr, &get, "get"), 400, HEADER_MISMATCH, "get");
}

// HTTP-5 (2026-07-28): a routing header sent twice is -32020.
#[test]
fn http_duplicate_routing_header_is_header_mismatch() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let body = rpc(json!(1), "tools/list", bare(json!({})));
    for twice in ["MCP-Protocol-Version", "Mcp-Method"] {
        let value = if twice == "Mcp-Method" {
            "tools/list"
        } else {
            MODERN
        };
        let raw = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: {}\r\nMcp-Method: tools/list\r\n{}: {}\r\n\
             Content-Length: {}\r\n\r\n{}",
            addr,
            MODERN,
            twice,
            value,
            body.len(),
            body
        );
        let mut conn = Conn::open(addr);
        conn.send_raw(raw.as_bytes());
        let head = conn.read_head("the answer to a duplicated header");
        let body = conn.read_body("its body");
        let response = Response { head, body };
        expect_http_error(&response, 400, HEADER_MISMATCH, twice);
    }
}

// HTTP-6 steps 9 and 10 (2026-07-28): headers are checked before the
// version, so a bad header with an unsupported version is still -32020;
// with good headers the unsupported version is 400 -32022 with data.
#[test]
fn http_header_check_comes_before_version_check() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let future = |method_header: &str| {
        Req::post(rpc(
            json!(3),
            "tools/list",
            json!({"_meta": envelope_with(PROTOCOL_VERSION, json!("2099-01-01"))}),
        ))
        .header("MCP-Protocol-Version", "2099-01-01")
        .header("Mcp-Method", method_header)
    };
    let response = send(addr, &future("tools/call"), "bad header, unknown version");
    expect_http_error(&response, 400, HEADER_MISMATCH, "bad header first");
    let response = send(addr, &future("tools/list"), "good headers, unknown version");
    let message = expect_http_error(&response, 400, UNSUPPORTED_VERSION, "unknown version");
    assert_eq!(
        message["error"]["data"],
        json!({"supported": [MODERN], "requested": "2099-01-01"})
    );
}

// HTTP-3 (2026-07-28): a `=?base64?…?=` Mcp-Name is decoded before it is
// compared.
#[test]
fn http_base64_name_header_is_decoded() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let uri = "test://caf\u{e9}";
    let sentinel = format!("=?base64?{}?=", base64(uri.as_bytes()));
    let req = modern_post(json!(1), "resources/read", bare(json!({ "uri": uri })))
        .header("Mcp-Name", &sentinel);
    let response = send(addr, &req, "resources/read with a base64 Mcp-Name");
    response.expect_status(200, "base64 Mcp-Name");
    let message = response.json();
    assert_eq!(message["result"]["contents"][0]["uri"], uri, "{}", message);
    // A plain ASCII name may be sent in the sentinel form too.
    let req = call_req(json!(2), "echo", json!({"text": "b64"}))
        .header("Mcp-Name", &format!("=?base64?{}?=", base64(b"echo")));
    let response = send(addr, &req, "tools/call with a base64 Mcp-Name");
    response.expect_status(200, "base64 tool name");
    assert_eq!(text_of(&response.json()["result"]), "b64");
}

// HTTP-6 step 12, REM-1 (2026-07-28): unknown and removed methods are 404
// with a JSON -32601 body.
#[test]
fn http_unknown_and_removed_methods_are_404() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    for method in [
        "no/such/method",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "tasks/list",
    ] {
        let req = modern_post(json!(1), method, bare(json!({"uri": "test://a"})));
        let response = send(addr, &req, method);
        expect_http_error(&response, 404, -32601, method);
    }
}

// META-2, HTTP-6 step 8 (2026-07-28): envelope errors are 400 -32602, and
// come before the header checks.
#[test]
fn http_envelope_errors_are_400() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let with = |meta: Value| {
        Req::post(rpc(json!(1), "tools/list", json!({ "_meta": meta })))
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "tools/list")
    };
    let cases = vec![
        (
            "no clientCapabilities",
            with(envelope_with(CLIENT_CAPABILITIES, Value::Null)),
        ),
        (
            "a numeric protocolVersion",
            with(envelope_with(PROTOCOL_VERSION, json!(2026))),
        ),
        (
            "an unknown logLevel",
            with(envelope_with(LOG_LEVEL, json!("loud"))),
        ),
        (
            "no _meta and a wrong Mcp-Method",
            Req::post(rpc(json!(1), "tools/list", json!({})))
                .header("MCP-Protocol-Version", MODERN)
                .header("Mcp-Method", "tools/call"),
        ),
    ];
    for (what, req) in cases {
        let response = send(addr, &req, what);
        expect_http_error(&response, 400, -32602, what);
    }
}

// MOD-5, HTTP-7 (2026-07-28): a tool failure is a 200 result with
// isError; a handler's -32603 is 200 too.
#[test]
fn http_handler_failures_are_200() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let response = send(addr, &call_req(json!(1), "fail", json!({})), "fail");
    response.expect_status(200, "a tool with isError");
    let message = response.json();
    assert_eq!(message["result"]["isError"], true, "{}", message);
    assert_complete(&message["result"], "isError result");
    let get = modern_post(json!(2), "prompts/get", bare(json!({"name": "broken"})));
    let response = send(addr, &get, "a failing prompt");
    expect_http_error(&response, 200, -32603, "a failing prompt");
}

// HTTP-6 step 5 (2026-07-28): a notification is 202 with an empty body;
// under an unsupported version header it is 400 -32022.
#[test]
fn http_notification_is_202() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 1}})
    .to_string();
    let req = Req::post(body.clone())
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "notifications/cancelled");
    let response = send(addr, &req, "a notification");
    response.expect_status(202, "a notification");
    assert!(response.body.is_empty(), "{:?}", response.text());
    assert!(response.header("mcp-session-id").is_none());
    let req = Req::post(body)
        .header("MCP-Protocol-Version", "2099-01-01")
        .header("Mcp-Method", "notifications/cancelled");
    let response = send(addr, &req, "a notification under an unknown version");
    expect_http_error(&response, 400, UNSUPPORTED_VERSION, "unknown version");
}

// ERA-3, ERA-7 (2026-07-28): an `initialize` body under a 2026-07-28
// header goes to the legacy path: a session and 2025-11-25.
#[test]
fn http_initialize_under_modern_header_goes_legacy() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let req = Req::post(rpc(
        json!(0),
        "initialize",
        json!({"protocolVersion": MODERN, "capabilities": {},
               "clientInfo": {"name": "c", "version": "1"}}),
    ))
    .header("MCP-Protocol-Version", MODERN)
    .header("Mcp-Method", "initialize");
    let response = send(addr, &req, "initialize under a modern header");
    response.expect_status(200, "initialize");
    assert!(
        response.header("mcp-session-id").is_some(),
        "the legacy path mints a session: {:?}",
        response.head
    );
    let result = response.rpc()["result"].clone();
    assert_eq!(result["protocolVersion"], "2025-11-25", "{}", result);
    assert_legacy_shape(&result, "initialize");
}

// HTTP-8, HTTP-9, NOTIF-1, LISTEN-8 (2026-07-28): a request whose handler
// sends progress is answered as SSE: its progress, then its result, with
// no event ids and no change notification.
#[test]
fn http_request_with_progress_is_sse_progress_then_result() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let mut params = bare(json!({"name": "chatty"}));
    params["_meta"]["progressToken"] = json!("tok");
    let req = modern_post(json!(9), "tools/call", params);
    let response = send(addr, &req, "chatty over SSE");
    response.expect_status(200, "chatty");
    assert!(response.head.is_sse(), "{:?}", response.head);
    assert_eq!(response.header("x-accel-buffering"), Some("no"));
    let events = response.events();
    assert!(
        events.iter().all(|e| e.id.is_none()),
        "no event ids (HTTP-1): {:?}",
        events
    );
    let messages = response.messages();
    let methods: Vec<&str> = messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("<response>"))
        .collect();
    assert_eq!(
        methods,
        vec![
            "notifications/progress",
            "notifications/progress",
            "<response>"
        ],
        "{:?}",
        messages
    );
    assert_eq!(messages[0]["params"]["progressToken"], "tok");
    assert_eq!(messages[2]["id"], 9);
    assert_eq!(text_of(&messages[2]["result"]), "chatty done");
}

// CANCEL-2, HTTP-8 (2026-07-28): closing a request's SSE response cancels
// the request; the handler sees its flag set.
#[test]
fn http_closing_the_stream_cancels_the_request() {
    let (seen_tx, seen_rx) = unbounded();
    let (_release_tx, release_rx) = unbounded::<()>();
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("wait", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, None, Some("started"));
                let cancelled = wait_release_or_cancel(ctx, &release_rx);
                let _ = seen_tx.send(cancelled);
                Ok(CallToolResult::text("finished"))
            },
        )
        .build();
    let http = serve(server.http());
    let mut params = bare(json!({"name": "wait"}));
    params["_meta"]["progressToken"] = json!(1);
    let mut conn = Conn::open(http.local_addr());
    let head = conn.start(&modern_post(json!(1), "tools/call", params), "wait");
    assert!(head.is_sse(), "{:?}", head);
    let progress = conn.next_message("the progress notification");
    assert_eq!(progress["method"], "notifications/progress");
    drop(conn);
    assert!(
        recv(&seen_rx, "the handler's report"),
        "the handler was released instead of cancelled"
    );
}

// CANCEL-2 (2026-07-28): over HTTP a `notifications/cancelled` POST is
// 202 and cancels nothing.
#[test]
fn http_cancel_notification_is_ignored() {
    let (release_tx, release_rx) = unbounded::<()>();
    let (started_tx, started_rx) = unbounded::<()>();
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("wait", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                ctx.notify_progress(1.0, None, None);
                let cancelled = wait_release_or_cancel(ctx, &release_rx);
                Ok(CallToolResult::text(if cancelled {
                    "cancelled"
                } else {
                    "released"
                }))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let mut params = bare(json!({"name": "wait"}));
    params["_meta"]["progressToken"] = json!(1);
    let mut conn = Conn::open(addr);
    let head = conn.start(&modern_post(json!(1), "tools/call", params), "wait");
    assert!(head.is_sse(), "{:?}", head);
    recv(&started_rx, "the handler's start");
    let cancel = Req::post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1}})
        .to_string(),
    )
    .header("MCP-Protocol-Version", MODERN)
    .header("Mcp-Method", "notifications/cancelled");
    send(addr, &cancel, "the cancel notification").expect_status(202, "cancel");
    let _ = release_tx.send(());
    let rest = conn.rest("the rest of the wait stream");
    let result = rest.iter().find(|m| is_response(m)).cloned();
    match result {
        Some(result) => assert_eq!(text_of(&result["result"]), "released"),
        None => panic!("no result on the stream: {:?}", rest),
    }
}

// HTTP-6 step 3 (2026-07-28): `Accept` must list both JSON and SSE, and
// this is checked before a notification is accepted.
#[test]
fn http_accept_must_list_both_types() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    for accept in ["application/json", "text/event-stream"] {
        let req = modern_post(json!(1), "tools/list", bare(json!({}))).header("Accept", accept);
        send(addr, &req, accept).expect_status(406, accept);
    }
    let note = Req::post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1}})
        .to_string(),
    )
    .header("MCP-Protocol-Version", MODERN)
    .header("Mcp-Method", "notifications/cancelled")
    .header("Accept", "application/json");
    send(addr, &note, "a notification accepting JSON only")
        .expect_status(406, "a notification accepting JSON only");
}

// HTTP-6 step 4 (2026-07-28): a body that is not JSON is -32700, a batch
// or a posted response -32600; both 400 with a null id.
#[test]
fn http_malformed_bodies_are_400() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                         "params": bare(json!({}))});
    for (what, body, code) in [
        ("not JSON", "{not json".to_string(), -32700),
        ("a batch", json!([request]).to_string(), -32600),
        (
            "a response",
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}).to_string(),
            -32600,
        ),
    ] {
        let req = Req::post(body)
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "tools/list");
        let response = send(addr, &req, what);
        let message = expect_http_error(&response, 400, code, what);
        assert_eq!(message["id"], Value::Null, "{}: {}", what, message);
    }
}

// HTTP-4, HTTP-6 step 11 (2026-07-28): `Mcp-Param-*` headers of
// `x-mcp-header` properties must agree with the arguments.
#[test]
fn http_param_headers_must_match_arguments() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new(
                "region",
                json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "count": {"type": "integer", "x-mcp-header": "Count"}
                }}),
            ),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("ok")),
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let call = |arguments: Value, headers: &[(&str, &str)]| {
        let mut req = call_req(json!(1), "region", arguments);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        req
    };
    let both = json!({"region": "eu", "count": 42});
    let good: Vec<(&str, Req)> = vec![
        (
            "both headers",
            call(
                both.clone(),
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "42")],
            ),
        ),
        (
            "42.0 for 42",
            call(
                both.clone(),
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "42.0")],
            ),
        ),
        (
            "base64 region",
            call(
                both.clone(),
                &[
                    ("Mcp-Param-Region", "=?base64?ZXU=?="),
                    ("Mcp-Param-Count", "42"),
                ],
            ),
        ),
        (
            "absent argument, absent header",
            call(json!({"region": "eu"}), &[("Mcp-Param-Region", "eu")]),
        ),
    ];
    for (what, req) in good {
        send(addr, &req, what).expect_status(200, what);
    }
    let bad: Vec<(&str, Req)> = vec![
        (
            "a different region",
            call(
                both.clone(),
                &[("Mcp-Param-Region", "us"), ("Mcp-Param-Count", "42")],
            ),
        ),
        (
            "a header without its argument",
            call(
                json!({"region": "eu"}),
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "1")],
            ),
        ),
        (
            "an argument without its header",
            call(both, &[("Mcp-Param-Region", "eu")]),
        ),
    ];
    for (what, req) in bad {
        expect_http_error(&send(addr, &req, what), 400, HEADER_MISMATCH, what);
    }
}

// ERA-6 (2026-07-28): a modern claim on a legacy HTTP session is -32600.
#[test]
fn http_modern_claim_on_legacy_session_is_invalid_request() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    let req = Req::post(rpc(json!(4), "tools/list", bare(json!({}))))
        .session(&session)
        .header("MCP-Protocol-Version", "2025-11-25");
    let response = send(addr, &req, "a modern claim on a legacy session");
    assert_eq!(response.error_code(), -32600, "{}", response.text());
}

// ===========================================================================
// 5. subscriptions/listen
// ===========================================================================

// LISTEN-3, LISTEN-4, LISTEN-5 (2026-07-28): the acknowledgement comes
// first and lists only the honoured types.
#[test]
fn listen_ack_lists_only_honoured_types() {
    // Tools only: prompts and resources cannot be honoured.
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("echo", any_object()), echo)
        .build();
    let mut client = memory(&server);
    let ack = memory_listen(
        &mut client,
        json!("L"),
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourcesListChanged": true, "resourceSubscriptions": ["test://a"]}),
    );
    assert_eq!(sub_id(&ack), "L");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    // False flags and empty lists are left out.
    let ack = memory_listen(
        &mut client,
        json!("M"),
        json!({"toolsListChanged": false, "resourceSubscriptions": []}),
    );
    assert_eq!(ack["params"]["notifications"], json!({}));
}

// LISTEN-5, LISTEN-6, LISTEN-9, GEN-3 (2026-07-28): listens with ids 7
// and "7" are two subscriptions, each stamped with its own id and type.
#[test]
fn listen_ids_keep_their_json_type() {
    let server = full_server();
    let mut client = memory(&server);
    let filter = json!({"toolsListChanged": true});
    let ack_number = memory_listen(&mut client, json!(7), filter.clone());
    assert_eq!(sub_id(&ack_number), &json!(7));
    let ack_string = memory_listen(&mut client, json!("7"), filter);
    assert_eq!(sub_id(&ack_string), &json!("7"));
    server.handle().notify_tools_list_changed();
    let before = before_barrier(&mut client);
    let mut stamps: Vec<String> = before
        .iter()
        .map(|m| {
            assert_eq!(m["method"], "notifications/tools/list_changed", "{}", m);
            sub_id(m).to_string()
        })
        .collect();
    stamps.sort();
    assert_eq!(stamps, vec!["\"7\"".to_string(), "7".to_string()]);
}

// LISTEN-7 (2026-07-28): only the requested change types, and updates
// only for the subscribed URIs.
#[test]
fn listen_sends_only_requested_change_types() {
    let server = full_server();
    let handle = server.handle();
    let mut client = memory(&server);
    memory_listen(
        &mut client,
        json!("L"),
        json!({"promptsListChanged": true, "resourceSubscriptions": ["test://a"]}),
    );
    handle.notify_tools_list_changed();
    handle.notify_resources_list_changed();
    handle.notify_resource_updated("test://b");
    handle.notify_prompts_list_changed();
    handle.notify_resource_updated("test://a");
    let before = before_barrier(&mut client);
    let got: Vec<(Value, Value, Value)> = before
        .iter()
        .map(|m| {
            (
                m["method"].clone(),
                m["params"]["uri"].clone(),
                sub_id(m).clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                json!("notifications/prompts/list_changed"),
                Value::Null,
                json!("L")
            ),
            (
                json!("notifications/resources/updated"),
                json!("test://a"),
                json!("L")
            ),
        ]
    );
}

// LISTEN-8 (2026-07-28): a modern connection gets no bare change
// notifications, and progress and logs never carry a subscription id.
#[test]
fn modern_connection_gets_changes_only_on_listen_streams() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    server.handle().notify_tools_list_changed();
    server.handle().notify_prompts_list_changed();
    server.handle().notify_resource_updated("test://a");
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "bare change notifications: {:?}", before);
    memory_listen(&mut client, json!("L"), json!({"toolsListChanged": true}));
    let mut params = json!({"name": "chatty", "_meta": envelope_with(LOG_LEVEL, json!("debug"))});
    params["_meta"]["progressToken"] = json!("p");
    ok(client.request("tools/call", Some(params)), "chatty");
    let notifications: Vec<Value> = client
        .take_notifications()
        .iter()
        .map(message_to_json)
        .collect();
    let methods: Vec<&str> = notifications
        .iter()
        .map(|m| m["method"].as_str().unwrap_or(""))
        .collect();
    assert!(
        methods.contains(&"notifications/progress") && methods.contains(&"notifications/message"),
        "chatty's own notifications arrived: {:?}",
        methods
    );
    for m in &notifications {
        let stamped = !sub_id(m).is_null();
        let change = m["method"] == "notifications/tools/list_changed";
        assert_eq!(stamped, change, "only changes are stamped: {}", m);
    }
}

// LISTEN-11 (2026-07-28): `close_listen_streams` ends each stream with
// its result `{resultType: "complete", _meta: {subscriptionId}}`; nothing
// follows.
#[test]
fn close_listen_streams_sends_the_final_result() {
    let server = full_server();
    let mut client = memory(&server);
    memory_listen(&mut client, json!("L"), json!({"toolsListChanged": true}));
    server.handle().close_listen_streams();
    let last = next_json(&mut client, "the listen result");
    assert_eq!(last["id"], "L", "{}", last);
    let result = &last["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"][SUBSCRIPTION_ID], "L");
    let keys: Vec<&String> = result
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys.len(), 2, "no other fields: {}", result);
    server.handle().notify_tools_list_changed();
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "sent after the close: {:?}", before);
}

// LISTEN-1, LISTEN-2 (2026-07-28): a listen request without
// `notifications`, or with a bad envelope, gets an error and no stream.
#[test]
fn listen_errors_open_no_stream() {
    let server = full_server();
    let mut client = memory(&server);
    lock_modern(&mut client);
    expect_error(
        mreq(&mut client, "subscriptions/listen", json!({})),
        ErrorCode::INVALID_PARAMS,
        "listen without notifications",
    );
    expect_error(
        client.request(
            "subscriptions/listen",
            Some(json!({"notifications": {"toolsListChanged": true},
                        "_meta": envelope_with(PROTOCOL_VERSION, json!("2099-01-01"))})),
        ),
        ErrorCode(UNSUPPORTED_VERSION),
        "listen with an unknown version",
    );
    expect_error(
        client.request(
            "subscriptions/listen",
            Some(json!({"notifications": {"toolsListChanged": true}})),
        ),
        ErrorCode::INVALID_PARAMS,
        "listen without an envelope",
    );
    server.handle().notify_tools_list_changed();
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "a refused listen opened: {:?}", before);
}

// LISTEN-14 (2026-07-28): past `max_listen_streams` a listen request gets
// a clear error before any acknowledgement.
#[test]
fn listen_cap_is_a_clear_error() {
    let server = full_builder().max_listen_streams(1).build();
    let mut client = memory(&server);
    memory_listen(&mut client, json!("one"), json!({"toolsListChanged": true}));
    send_json(
        &client,
        json!({"jsonrpc": "2.0", "id": "two", "method": "subscriptions/listen",
               "params": bare(json!({"notifications": {"toolsListChanged": true}}))}),
    );
    let answer = next_json(&mut client, "the answer to the second listen");
    assert_eq!(answer["id"], "two", "no acknowledgement first: {}", answer);
    let (code, _) = error_of(&answer, "the second listen");
    assert_eq!(code, -32603);
    let message = answer["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("listen"), "a clear message: {}", message);
}

// LISTEN-10, CANCEL-1, LISTEN-8 (2026-07-28): on stdio,
// `notifications/cancelled` naming the listen id stops it without a
// response; before that only the requested type arrived, stamped.
#[test]
fn stdio_cancelled_listen_stops_it() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!("L"),
        "subscriptions/listen",
        bare(json!({"notifications": {"toolsListChanged": true}})),
    );
    let ack = child.next_message("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(sub_id(&ack), "L");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let notify = bare(json!({"name": "notify_changed", "arguments": {}}));
    child.request(json!(1), "tools/call", notify.clone());
    let (_, before) = child.wait_response(&json!(1), "notify_changed's result");
    assert_eq!(before.len(), 1, "only tools/list_changed: {:?}", before);
    assert_eq!(before[0]["method"], "notifications/tools/list_changed");
    assert_eq!(sub_id(&before[0]), "L");
    child.notify("notifications/cancelled", json!({"requestId": "L"}));
    child.request(json!(2), "tools/call", notify);
    let (_, before) = child.wait_response(&json!(2), "the second result");
    assert!(before.is_empty(), "sent after the cancel: {:?}", before);
    let (status, rest) = child.finish(WAIT);
    assert!(status.success(), "{:?}", status);
    assert!(rest.is_empty(), "written at the end: {:?}", rest);
}

// CANCEL-1 (2026-07-28): on stdio a cancelled modern request gets no
// response; the process keeps serving.
#[test]
fn stdio_cancelled_request_gets_no_response() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!(1),
        "tools/call",
        bare(json!({"name": "slow", "arguments": {"seconds": 5}})),
    );
    child.notify("notifications/cancelled", json!({"requestId": 1}));
    child.request(
        json!(2),
        "tools/call",
        bare(json!({"name": "echo", "arguments": {"text": "after"}})),
    );
    let (response, before) = child.wait_response(&json!(2), "echo after the cancel");
    assert_eq!(text_of(&response["result"]), "after");
    let (_, rest) = child.finish(WAIT);
    let answered: Vec<&Value> = before
        .iter()
        .chain(rest.iter())
        .filter(|m| is_response(m) && m["id"] == 1)
        .collect();
    assert!(
        answered.is_empty(),
        "the cancelled request was answered: {:?}",
        answered
    );
}

// LISTEN-12 (2026-07-28): at end of input an open listen gets no
// response.
#[test]
fn stdio_end_of_input_sends_nothing_for_open_listen() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!(5),
        "subscriptions/listen",
        bare(json!({"notifications": {"promptsListChanged": true}})),
    );
    let ack = child.next_message("the acknowledgement");
    assert_eq!(sub_id(&ack), &json!(5));
    let (status, rest) = child.finish(WAIT);
    assert!(status.success(), "{:?}", status);
    assert!(rest.is_empty(), "written at the end: {:?}", rest);
}

// HTTP-9, LISTEN-3..LISTEN-7 (2026-07-28): a listen POST is an SSE stream:
// the ack, then only the requested changes, stamped with the id.
#[test]
fn http_listen_is_sse_ack_then_stamped_changes() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("echo", any_object()), echo)
        .build();
    let handle = server.handle();
    let http = serve(server.http());
    let addr = http.local_addr();
    let mut conn = Conn::open(addr);
    let head = conn.start(
        &listen_req(
            json!("listen-1"),
            json!({"toolsListChanged": true, "promptsListChanged": true}),
        ),
        "the listen head",
    );
    head.expect_status(200, "listen");
    assert!(head.is_sse(), "{:?}", head);
    assert_eq!(head.header("x-accel-buffering"), Some("no"));
    assert_eq!(head.header("cache-control"), Some("no-cache"));
    assert!(head.header("mcp-session-id").is_none());
    let ack = conn.next_event("the ack event");
    let ack = match ack {
        Some(event) => {
            assert!(event.id.is_none(), "no event ids: {:?}", event);
            event.message().unwrap_or(Value::Null)
        }
        None => panic!("the listen stream ended before its ack"),
    };
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(sub_id(&ack), "listen-1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    handle.notify_prompts_list_changed();
    handle.notify_tools_list_changed();
    let change = conn.next_message("tools/list_changed");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(sub_id(&change), "listen-1");
    handle.close_listen_streams();
}

// LISTEN-11 (2026-07-28): `close_listen_streams` sends the listen result
// and ends the HTTP response properly.
#[test]
fn http_close_listen_streams_ends_the_stream_with_its_result() {
    let server = full_server();
    let handle = server.handle();
    let http = serve(server.http());
    let (mut conn, _) = http_listen(
        http.local_addr(),
        json!(3),
        json!({"toolsListChanged": true}),
    );
    handle.close_listen_streams();
    let last = conn.next_message("the listen result");
    assert_eq!(last["id"], 3, "{}", last);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(last["result"]["_meta"][SUBSCRIPTION_ID], 3);
    let rest = conn.rest("the end of the listen stream");
    assert!(rest.is_empty(), "after the result: {:?}", rest);
    assert!(!conn.was_cut(), "the response ended with its last chunk");
}

// LISTEN-8 (2026-07-28): progress and logs go on their request's stream,
// never on a listen stream; change notifications go only on listen streams.
#[test]
fn http_listen_stream_never_carries_progress_or_logs() {
    let server = full_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let (mut listen, _) = http_listen(addr, json!("L"), json!({"toolsListChanged": true}));
    let mut params = json!({"name": "chatty", "_meta": envelope_with(LOG_LEVEL, json!("debug"))});
    params["_meta"]["progressToken"] = json!(1);
    let response = send(addr, &modern_post(json!(2), "tools/call", params), "chatty");
    let methods: Vec<Value> = response
        .messages()
        .iter()
        .map(|m| m["method"].clone())
        .collect();
    assert!(
        !methods.contains(&json!("notifications/tools/list_changed")),
        "a change on a request stream: {:?}",
        methods
    );
    assert!(
        methods.contains(&json!("notifications/message")),
        "{:?}",
        methods
    );
    let next = listen.next_message("chatty's change on the listen stream");
    assert_eq!(
        next["method"], "notifications/tools/list_changed",
        "{}",
        next
    );
    assert_eq!(sub_id(&next), "L");
    server.handle().notify_tools_list_changed();
    let next = listen.next_message("the second change");
    assert_eq!(
        next["method"], "notifications/tools/list_changed",
        "{}",
        next
    );
    server.handle().close_listen_streams();
    let rest = listen.rest("the end of the listen stream");
    assert_eq!(rest.len(), 1, "only the final result: {:?}", rest);
}

// LISTEN-5, LISTEN-9, LISTEN-11 (2026-07-28): two HTTP clients whose
// listen requests both have id 1 are both acknowledged, both get each
// change stamped 1, and each gets its own closing result.
#[test]
fn http_two_clients_with_the_same_listen_id_are_both_served() {
    let server = full_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let filter = json!({"toolsListChanged": true});
    let (mut a, ack_a) = http_listen(addr, json!(1), filter.clone());
    let (mut b, ack_b) = http_listen(addr, json!(1), filter);
    assert_eq!(sub_id(&ack_a), &json!(1));
    assert_eq!(sub_id(&ack_b), &json!(1));
    server.handle().notify_tools_list_changed();
    for (name, conn) in [("A", &mut a), ("B", &mut b)] {
        let change = conn.next_message(&format!("the change on {}", name));
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&change), &json!(1), "{}: {}", name, change);
    }
    server.handle().close_listen_streams();
    for (name, conn) in [("A", &mut a), ("B", &mut b)] {
        let rest = conn.rest(&format!("the end of {}", name));
        let results: Vec<&Value> = rest.iter().filter(|m| is_response(m)).collect();
        assert_eq!(results.len(), 1, "{}: one result: {:?}", name, rest);
        assert_eq!(results[0]["id"], 1);
        assert_eq!(results[0]["result"]["_meta"][SUBSCRIPTION_ID], 1);
    }
}

// LISTEN-10, LISTEN-12, LISTEN-9 (2026-07-28): when one of two clients
// listening with id 1 vanishes, the other stays served; the server frees
// the vanished stream (seen through the stream cap).
#[test]
fn http_vanished_listener_leaves_the_other_served() {
    let server = full_builder().max_listen_streams(2).build();
    let handle = server.handle();
    let http = serve(server.http().sse_keep_alive(Duration::from_millis(20)));
    let addr = http.local_addr();
    let filter = json!({"toolsListChanged": true});
    let (a, _) = http_listen(addr, json!(1), filter.clone());
    let (mut b, _) = http_listen(addr, json!(1), filter.clone());
    drop(a);
    // Until the server notices A is gone, the cap refuses a third stream.
    let deadline = Instant::now() + WAIT;
    let mut c = loop {
        handle.notify_tools_list_changed();
        let change = b.next_message("a change on B");
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&change), &json!(1));
        let mut c = Conn::open(addr);
        let head = c.start(&listen_req(json!(1), filter.clone()), "C's listen head");
        if head.is_sse() {
            let ack = c.next_message("C's acknowledgement");
            assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
            break c;
        }
        let _ = c.read_body("C's refusal");
        assert!(
            Instant::now() < deadline,
            "the server never freed the vanished listener's stream"
        );
        // Pace on B's next keepalive: a read, not a sleep.
        match b.next_block("a keepalive on B") {
            Some(block) => assert!(block.is_comment(), "unexpected on B: {:?}", block),
            None => panic!("B's stream ended"),
        }
    };
    handle.notify_tools_list_changed();
    for (name, conn) in [("B", &mut b), ("C", &mut c)] {
        let change = conn.next_message(&format!("the change on {}", name));
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&change), &json!(1));
    }
    handle.close_listen_streams();
    for (name, conn) in [("B", &mut b), ("C", &mut c)] {
        let rest = conn.rest(&format!("the end of {}", name));
        let results: Vec<&Value> = rest.iter().filter(|m| is_response(m)).collect();
        assert_eq!(results.len(), 1, "{}: its own result: {:?}", name, rest);
        assert_eq!(results[0]["result"]["_meta"][SUBSCRIPTION_ID], 1);
    }
}

// LISTEN-14 (2026-07-28): over HTTP the cap refuses a listen with a JSON
// error (not a stream) before any ack; `max_listen_streams` documents
// -32603 with HTTP 503.
#[test]
fn http_listen_cap_is_a_clear_error() {
    let server = full_builder().max_listen_streams(1).build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let (_first, _) = http_listen(addr, json!(1), json!({"toolsListChanged": true}));
    let response = send(
        addr,
        &listen_req(json!(2), json!({"toolsListChanged": true})),
        "a listen over the cap",
    );
    assert!(!response.head.is_sse(), "no stream: {:?}", response.head);
    let message = expect_http_error(&response, 503, -32603, "listen over the cap");
    assert_eq!(message["id"], 2);
    let text = message["error"]["message"].as_str().unwrap_or("");
    assert!(text.contains("listen"), "a clear message: {}", text);
    server.handle().close_listen_streams();
}

// ===========================================================================
// 6. Multi round-trip requests
// ===========================================================================

/// Calls `tool` with `extra` params (inputResponses, requestState) and
/// `capabilities`.
fn call_mrtr(
    client: &mut MemoryClient,
    tool: &str,
    extra: Value,
    capabilities: Value,
) -> Result<Value, ErrorObject> {
    let mut params = json!({"name": tool, "arguments": {}});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    mreq_caps(client, "tools/call", params, capabilities)
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// MRTR-1, MRTR-4, CACHE-2: an `input_required` result; returns its
/// requests and state.
fn input_required(result: &Value, what: &str) -> (JsonObject, String) {
    assert_eq!(
        result["resultType"], "input_required",
        "{}: {}",
        what, result
    );
    assert!(
        result.get("ttlMs").is_none() && result.get("cacheScope").is_none(),
        "{}: no cache hints on input_required: {}",
        what,
        result
    );
    assert_eq!(result["_meta"][SERVER_INFO]["name"], SERVER_NAME);
    let requests = result["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let state = match result["requestState"].as_str() {
        Some(state) => state.to_string(),
        None => panic!("{}: no requestState in {}", what, result),
    };
    (requests, state)
}

// MRTR-1, MRTR-2, MRTR-3, CACHE-2 (2026-07-28): `ctx.elicit` answers
// input_required with `input-0`; the retry with the answer and state
// completes.
#[test]
fn elicit_returns_input_required_and_the_retry_completes() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "ask_name", json!({}), caps.clone()),
        "ask_name",
    );
    let (requests, state) = input_required(&first, "ask_name");
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        vec!["input-0"],
        "{}",
        first
    );
    let request = &requests["input-0"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your name?");
    assert_eq!(request["params"]["requestedSchema"], name_schema());
    let done = ok(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Ada")}, "requestState": state}),
            caps,
        ),
        "the retry",
    );
    assert_complete(&done, "the retry");
    assert_eq!(text_of(&done), "hello Ada");
}

// MRTR-2 (2026-07-28): several inputs of different kinds in one round,
// under the handler's own keys.
#[test]
fn request_inputs_asks_several_named_inputs_in_one_round() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let first = ok(
        call_mrtr(&mut client, "ask_three", json!({}), all_caps()),
        "ask_three",
    );
    let (requests, state) = input_required(&first, "ask_three");
    let mut kinds: Vec<(String, String)> = requests
        .iter()
        .map(|(k, v)| (k.clone(), v["method"].as_str().unwrap_or("").to_string()))
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![
            ("confirm".to_string(), "elicitation/create".to_string()),
            ("summary".to_string(), "sampling/createMessage".to_string()),
            ("where".to_string(), "roots/list".to_string()),
        ]
    );
    assert_eq!(requests["summary"]["params"]["maxTokens"], 50);
    let answers = json!({
        "confirm": accept("yes"),
        "summary": {"role": "assistant", "content": {"type": "text", "text": "short"},
                    "model": "m"},
        "where": {"roots": [{"uri": "file:///work"}]}
    });
    let done = ok(
        call_mrtr(
            &mut client,
            "ask_three",
            json!({"inputResponses": answers, "requestState": state}),
            all_caps(),
        ),
        "the retry",
    );
    assert_eq!(
        text_of(&done),
        "confirm=yes summary=short root=file:///work"
    );
}

// MRTR-3 (2026-07-28): several rounds; answers and the handler's state
// travel in requestState, so earlier answers need not be resent.
#[test]
fn multi_round_request_carries_answers_and_state() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let r1 = ok(
        call_mrtr(&mut client, "rounds", json!({}), caps.clone()),
        "round 1",
    );
    let (requests, s1) = input_required(&r1, "round 1");
    assert_eq!(requests.keys().collect::<Vec<_>>(), vec!["a"]);
    let r2 = ok(
        call_mrtr(
            &mut client,
            "rounds",
            json!({"inputResponses": {"a": accept("Ann")}, "requestState": s1}),
            caps.clone(),
        ),
        "round 2",
    );
    let (requests, s2) = input_required(&r2, "round 2");
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        vec!["b"],
        "a was answered already: {}",
        r2
    );
    let r3 = ok(
        call_mrtr(
            &mut client,
            "rounds",
            json!({"inputResponses": {"b": accept("Bob")}, "requestState": s2}),
            caps,
        ),
        "round 3",
    );
    assert_eq!(text_of(&r3), "round 3 a=Ann b=Bob");
}

// MRTR-3 (2026-07-28): a tampered or unknown requestState is -32602.
#[test]
fn tampered_or_unknown_request_state_is_invalid_params() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "ask_name", json!({}), caps.clone()),
        "ask_name",
    );
    let (_, state) = input_required(&first, "ask_name");
    let mut tampered = state.clone();
    tampered.push('x');
    for bad in [json!(tampered), json!("nonsense"), json!(""), json!(42)] {
        expect_error(
            call_mrtr(
                &mut client,
                "ask_name",
                json!({"inputResponses": {"input-0": accept("Eve")}, "requestState": bad}),
                caps.clone(),
            ),
            ErrorCode::INVALID_PARAMS,
            &format!("requestState {}", bad),
        );
    }
}

// MRTR-3 (2026-07-28): a requestState issued for another tool is -32602.
#[test]
fn request_state_from_another_tool_is_invalid_params() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "rounds", json!({}), caps.clone()),
        "rounds",
    );
    let (_, state) = input_required(&first, "rounds");
    expect_error(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Eve")}, "requestState": state}),
            caps,
        ),
        ErrorCode::INVALID_PARAMS,
        "rounds' state sent to ask_name",
    );
}

// MRTR-3 (2026-07-28): missing answers get a new input_required, not an
// error; keys nobody asked for are ignored.
#[test]
fn missing_answers_ask_again_and_extra_keys_are_ignored() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "ask_name", json!({}), caps.clone()),
        "ask_name",
    );
    let (_, state) = input_required(&first, "ask_name");
    let again = ok(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"other": accept("x")}, "requestState": state}),
            caps.clone(),
        ),
        "a retry without the answer",
    );
    let (requests, state) = input_required(&again, "the retry without the answer");
    assert_eq!(requests.keys().collect::<Vec<_>>(), vec!["input-0"]);
    let done = ok(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Ada"), "bogus": {"x": 1}},
                   "requestState": state}),
            caps,
        ),
        "a retry with an extra key",
    );
    assert_eq!(text_of(&done), "hello Ada");
}

// MRTR-2, ERR-3 (2026-07-28): asking for input the request's capabilities
// do not cover is -32021 with `data.requiredCapabilities`.
#[test]
fn undeclared_capability_is_missing_required_client_capability() {
    let server = mrtr_server();
    let mut client = memory(&server);
    for (tool, caps, needed) in [
        ("ask_name", json!({}), "elicitation"),
        ("sample", json!({"elicitation": {}}), "sampling"),
        (
            "ask_three",
            json!({"elicitation": {}, "sampling": {}}),
            "roots",
        ),
    ] {
        let error = expect_error(
            call_mrtr(&mut client, tool, json!({}), caps),
            ErrorCode(MISSING_CAPABILITY),
            tool,
        );
        let required = error
            .data
            .as_ref()
            .map(|d| d["requiredCapabilities"].clone())
            .unwrap_or(Value::Null);
        assert!(
            required.get(needed).map_or(false, Value::is_object),
            "{}: requiredCapabilities names {}: {:?}",
            tool,
            needed,
            error
        );
    }
}

// MRTR-1, CACHE-2 (2026-07-28): resources/read may ask for input; its
// input_required carries no cache hints.
#[test]
fn resource_read_can_require_input_without_cache_hints() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        mreq_caps(
            &mut client,
            "resources/read",
            json!({"uri": "test://secret"}),
            caps.clone(),
        ),
        "read test://secret",
    );
    let (_, state) = input_required(&first, "resources/read");
    let done = ok(
        mreq_caps(
            &mut client,
            "resources/read",
            json!({"uri": "test://secret", "requestState": state,
                   "inputResponses": {"input-0": accept("pw")}}),
            caps,
        ),
        "the retry",
    );
    assert_eq!(done["contents"][0]["text"], "pw");
}

// MRTR-1 (2026-07-28): only tools/call, prompts/get and resources/read
// may answer input_required; a completion handler asking for input must
// not produce one.
#[test]
fn completion_never_answers_input_required() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .prompt(
            Prompt::new("p"),
            |_: &RequestContext, _: BTreeMap<String, String>| Ok(GetPromptResult::new(vec![])),
        )
        .completion(|ctx: &RequestContext, _: tiny_mcp::CompleteRequestParams| {
            ctx.elicit(ElicitRequestFormParams::new("Which?", name_schema()))?;
            Ok(CompleteResult::new(vec!["x".into()]))
        })
        .build();
    let mut client = memory(&server);
    let outcome = mreq_caps(
        &mut client,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "p"},
               "argument": {"name": "a", "value": ""}}),
        json!({"elicitation": {}}),
    );
    if let Ok(result) = outcome {
        assert_ne!(
            result["resultType"], "input_required",
            "completion/complete answered input_required: {}",
            result
        );
    }
}

// MRTR-1, MRTR-3 (2026-07-28): prompts/get may ask for input too, and its
// requestState is bound to the method: a tool of the same name refuses it.
#[test]
fn prompt_input_state_is_bound_to_its_method() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        mreq_caps(
            &mut client,
            "prompts/get",
            json!({"name": "ask_name"}),
            caps.clone(),
        ),
        "prompts/get ask_name",
    );
    let (requests, state) = input_required(&first, "prompts/get");
    assert_eq!(requests["input-0"]["params"]["message"], "Prompt name?");
    expect_error(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Eve")}, "requestState": state}),
            caps.clone(),
        ),
        ErrorCode::INVALID_PARAMS,
        "the prompt's state sent to the tool of the same name",
    );
    let done = ok(
        mreq_caps(
            &mut client,
            "prompts/get",
            json!({"name": "ask_name", "requestState": state,
                   "inputResponses": {"input-0": accept("Pat")}}),
            caps,
        ),
        "the prompt's retry",
    );
    assert_complete(&done, "prompts/get retry");
    assert_eq!(done["messages"][0]["content"]["text"], "Pat");
}

// MRTR-2, REM-3 (2026-07-28) with client/elicitation, client/sampling and
// client/roots (2025-11-25): the same handlers work in the handshake era,
// their input requests sent to the client as requests.
#[test]
fn mrtr_handlers_work_in_the_handshake_era() {
    let server = mrtr_server();
    let mut client = connect(&server, all_caps());
    client.on_server_request(|request: &Request| {
        let params = request.params.clone().unwrap_or(Value::Null);
        match request.method.as_str() {
            "elicitation/create" => {
                let message = params["message"].as_str().unwrap_or("").to_string();
                Ok(json!({"action": "accept", "content": {"name": message}}))
            }
            "sampling/createMessage" => Ok(json!({"role": "assistant", "model": "m",
                     "content": {"type": "text", "text": "sampled"}})),
            "roots/list" => Ok(json!({"roots": [{"uri": "file:///legacy"}]})),
            other => Err(ErrorObject::method_not_found(other)),
        }
    });
    let call = |client: &mut MemoryClient, tool: &str| {
        let result = ok(
            client.request("tools/call", Some(json!({"name": tool}))),
            tool,
        );
        assert_legacy_shape(&result, tool);
        text_of(&result).to_string()
    };
    assert_eq!(call(&mut client, "ask_name"), "hello Your name?");
    assert_eq!(
        call(&mut client, "ask_three"),
        "confirm=Go on? summary=sampled root=file:///legacy"
    );
    assert_eq!(call(&mut client, "rounds"), "round 1 a=A? b=B?");
    assert_eq!(call(&mut client, "sample"), "sampled");
}

// MRTR-1..3, ERR-3 (2026-07-28) over HTTP: input_required is 200, the
// retry completes, and a missing capability is 400 -32021.
#[test]
fn http_mrtr_round_trip() {
    let http = serve(mrtr_server().http());
    let addr = http.local_addr();
    let caps = json!({"elicitation": {}});
    let first = send(
        addr,
        &modern_post(
            json!(1),
            "tools/call",
            modern(json!({"name": "ask_name"}), caps.clone()),
        ),
        "ask_name",
    );
    first.expect_status(200, "input_required");
    let (_, state) = input_required(&first.json()["result"], "ask_name over HTTP");
    let retry = modern_post(
        json!(2),
        "tools/call",
        modern(
            json!({"name": "ask_name", "requestState": state,
                   "inputResponses": {"input-0": accept("Http")}}),
            caps,
        ),
    );
    let done = send(addr, &retry, "the retry");
    done.expect_status(200, "the retry");
    assert_eq!(text_of(&done.json()["result"]), "hello Http");
    let refused = send(
        addr,
        &call_req(json!(3), "sample", json!({})),
        "sample without sampling",
    );
    expect_http_error(&refused, 400, MISSING_CAPABILITY, "sample without sampling");
}
