//! The 2026-07-28 era, one test per behaviour. Requirement ids
//! (ERA-*, META-*, VER-*, DISC-*, RES-*, CACHE-*, LISTEN-*, MRTR-*, HTTP-*)
//! are those of `docs/requirements/DIGEST-2026-07-28.md`; its HTTP-* ids are
//! the 2026-07-28 binding's, so they are cited with "(2026-07-28)".
//!
//! Dispatcher tests drive small in-process servers through
//! [`tiny_mcp::MemoryClient`]; stdio tests run the `everything` example as
//! a child process; HTTP tests serve on 127.0.0.1:0 and speak raw HTTP/1.1
//! through `support::http`. Tests wait on channels and reads, never on
//! sleeps; a handler that must wait for the test polls its cancellation
//! flag between short receive timeouts (one wait cannot watch both).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

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
use crate::support::{connect, expect_error, is_response, next_message, ChildServer, WAIT};

mod envelope;
mod eras;
mod http;
mod listen;
mod results;
mod rounds;

// ---------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------

const V2026: &str = "2026-07-28";
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
    meta.insert(PROTOCOL_VERSION.into(), json!(V2026));
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
fn enveloped(params: Value, capabilities: Value) -> Value {
    with_meta(params, envelope(capabilities))
}

/// `params` with a complete envelope declaring no capability.
fn bare(params: Value) -> Value {
    enveloped(params, json!({}))
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

/// RES-1, RES-3: a final 2026-07-28 result, stamped with our identity.
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

/// RES-2: nothing of the 2026-07-28 era on a 2025-11-25 result.
fn assert_2025_shape(result: &Value, what: &str) {
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

fn echo_tool() -> Tool {
    Tool::new("echo", json!({"type": "object"}))
}

/// The JSON-RPC error code of a response message.
fn code(message: &Value) -> i64 {
    message["error"]["code"].as_i64().unwrap_or(0)
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

/// Every kind of thing a 2026-07-28 client can ask for.
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

/// A 2026-07-28 request declaring no capability.
fn mreq(client: &mut MemoryClient, method: &str, params: Value) -> Result<Value, ErrorObject> {
    client.request(method, Some(bare(params)))
}

/// A 2026-07-28 request declaring `capabilities`.
fn mreq_caps(
    client: &mut MemoryClient,
    method: &str,
    params: Value,
    capabilities: Value,
) -> Result<Value, ErrorObject> {
    client.request(method, Some(enveloped(params, capabilities)))
}

fn ok(outcome: Result<Value, ErrorObject>, what: &str) -> Value {
    match outcome {
        Ok(result) => result,
        Err(e) => panic!("{} failed: {:?}", what, e),
    }
}

/// Locks a memory connection to the 2026-07-28 era with a valid request.
fn lock_2026(client: &mut MemoryClient) {
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
fn post_2026(id: Value, method: &str, params: Value) -> Req {
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut req = Req::post(rpc(id, method, params))
        .header("MCP-Protocol-Version", V2026)
        .header("Mcp-Method", method);
    if matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        if let Some(name) = name {
            req = req.header("Mcp-Name", &name);
        }
    }
    req
}

fn call_req(id: Value, tool: &str, arguments: Value) -> Req {
    post_2026(
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
    post_2026(
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
