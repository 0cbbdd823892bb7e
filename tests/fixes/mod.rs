//! Fixes for what users hit when they tried the crate (issue 8, protocol
//! items 1 to 10), each a test that failed before its fix. Requirement ids
//! are those of `docs/requirements/`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitRequestFormParams, HttpServer, JsonObject, MemoryClient, Message,
    ReadResourceResult, RequestContext, ResourceContents, ResourceTemplate, Server, Tool,
};

use crate::support::http::{initialize_body, rpc, Conn, Req, Response};
use crate::support::{example_path, recv};

const MODERN: &str = "2026-07-28";
const LATEST: &str = "2025-11-25";
const WAIT: Duration = Duration::from_secs(5);

fn envelope(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// `params` with a 2026-07-28 envelope.
fn modern(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = envelope(capabilities);
    params
}

fn serve(builder: tiny_mcp::HttpServerBuilder) -> HttpServer {
    match builder.serve("127.0.0.1:0") {
        Ok(http) => http,
        Err(e) => panic!("cannot serve on 127.0.0.1:0: {}", e),
    }
}

fn echo_tool() -> Tool {
    Tool::new("echo", json!({"type": "object"}))
}

fn echo(_: &RequestContext, args: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    Ok(CallToolResult::text(
        args.get("text").and_then(Value::as_str).unwrap_or(""),
    ))
}

/// The JSON-RPC error code of a response message.
fn code(message: &Value) -> i64 {
    message["error"]["code"].as_i64().unwrap_or(0)
}

fn memory(server: &Server) -> MemoryClient {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client
}

fn read_message(client: &mut MemoryClient, what: &str) -> Value {
    match client.recv_timeout(WAIT) {
        Some(message) => serde_json::from_str(&message.to_json_string()).unwrap_or(Value::Null),
        None => panic!("{} never arrived (waited {:?})", what, WAIT),
    }
}

// 1. HTTP-11 (2026-07-28): GET and DELETE have no meaning without a
// session in 2026-07-28: 405 with `Allow: POST`; with a live 2025-11-25
// session they keep theirs.
#[test]
fn get_and_delete_under_a_2026_header_are_405() {
    let http = serve(
        Server::builder("fixes", "1")
            .tool(echo_tool(), echo)
            .build()
            .http(),
    );
    let addr = http.local_addr();
    for method in ["GET", "DELETE"] {
        let mut conn = Conn::open(addr);
        let raw = format!(
            "{} /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: {}\r\n\r\n",
            method, addr, MODERN
        );
        conn.send_raw(raw.as_bytes());
        let head = conn.read_head("the answer to a 2026-07-28 GET or DELETE");
        head.expect_status(405, method);
        assert_eq!(head.header("allow"), Some("POST"), "{}: {:?}", method, head);
    }
    let mut conn = Conn::open(addr);
    let init = Req::post(initialize_body(json!(1), LATEST, json!({})));
    let response = conn.request(&init, "initialize");
    let id = response
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let delete = Req::delete(&id).header("MCP-Protocol-Version", LATEST);
    conn.request(&delete, "DELETE of a live session")
        .expect_status(200, "DELETE naming a live session");
    http.shutdown();
}

/// POSTs `body` under 2026-07-28 routing headers plus one raw header line.
fn post_with_raw_header(addr: std::net::SocketAddr, body: &str, raw_header: &[u8]) -> Response {
    let mut bytes = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {}\r\n\
         Mcp-Method: resources/read\r\nContent-Length: {}\r\n",
        addr,
        MODERN,
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(raw_header);
    bytes.extend_from_slice(b"\r\n\r\n");
    bytes.extend_from_slice(body.as_bytes());
    let mut conn = Conn::open(addr);
    conn.send_raw(&bytes);
    let head = conn.read_head("the answer to a raw header");
    let body = conn.read_body("the answer's body");
    Response { head, body }
}

// 2. HTTP-3 (2026-07-28): non-ASCII header values travel base64-wrapped;
// a raw one, or bytes that are not UTF-8, are a malformed header: 400 with
// -32020 and the request's id.
#[test]
fn raw_non_ascii_routing_headers_are_refused() {
    let server = Server::builder("fixes", "1")
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "t"),
            |_: &RequestContext, uri: &str, _: &tiny_mcp::TemplateVariables| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "x",
                )]))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let uri = "test://template/caf\u{e9}/data";
    let body = rpc(
        json!(9),
        "resources/read",
        modern(json!({ "uri": uri }), json!({})),
    );
    let mut utf8 = b"Mcp-Name: ".to_vec();
    utf8.extend_from_slice(uri.as_bytes());
    let mut latin1 = b"Mcp-Name: test://template/caf".to_vec();
    latin1.extend_from_slice(b"\xe9/data");
    for raw in [utf8, latin1] {
        let response = post_with_raw_header(addr, &body, &raw);
        response.expect_status(400, "a raw non-ASCII Mcp-Name");
        let message = response.json();
        assert_eq!(code(&message), -32020, "{}", message);
        assert_eq!(message["id"], 9, "the error names the request: {}", message);
    }
    http.shutdown();
}

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

// 5. BASE-2, LISTEN-5 (2026-07-28): an open listen stream is a request in
// flight: a request reusing its id gets -32600 and the stream lives on.
#[test]
fn a_live_listen_id_cannot_be_reused() {
    let server = Server::builder("fixes", "1")
        .tool(echo_tool(), echo)
        .build();
    let mut client = memory(&server);
    let listen = |id: i64| {
        Message::from_value(
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": modern(json!({"notifications": {"toolsListChanged": true}}), json!({}))}),
        )
        .unwrap()
    };
    client.send(listen(5));
    let ack = read_message(&mut client, "the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    client.send(listen(5));
    let second = read_message(&mut client, "the answer to a second listen with id 5");
    assert_eq!(
        (second["id"].clone(), code(&second)),
        (json!(5), -32600),
        "{}",
        second
    );
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": modern(json!({"name": "echo", "arguments": {"text": "x"}}), json!({}))});
    client.send(Message::from_value(call).unwrap());
    let refused = read_message(&mut client, "the answer to a call with id 5");
    assert_eq!(code(&refused), -32600, "{}", refused);
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
        "params": modern(json!({}), json!({}))});
    client.send(Message::from_value(list).unwrap());
    let refused = read_message(&mut client, "the answer to a list with id 5");
    assert_eq!(code(&refused), -32600, "an inline request too: {}", refused);
    server.handle().close_listen_streams();
    let result = read_message(&mut client, "the listen stream's result");
    assert_eq!(result["result"]["resultType"], "complete", "{}", result);
    assert_eq!(result["id"], 5);
}

/// A tool that sends progress 1, waits for `release`, then sends progress
/// 2 and 3 and answers: events before and after a dropped connection.
fn stepping_server(release: Receiver<()>) -> Server {
    let release = Mutex::new(release);
    Server::builder("fixes", "1")
        .tool(
            Tool::new("steps", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(3.0), None);
                if let Ok(release) = release.lock() {
                    let _ = release.recv_timeout(WAIT);
                }
                ctx.notify_progress(2.0, Some(3.0), None);
                ctx.notify_progress(3.0, Some(3.0), None);
                Ok(CallToolResult::text("done"))
            },
        )
        .build()
}

fn open_session_on(conn: &mut Conn) -> String {
    let init = Req::post(initialize_body(json!(1), LATEST, json!({})));
    let response = conn.request(&init, "initialize");
    response
        .header("mcp-session-id")
        .expect("a session id")
        .to_string()
}

// 6. HTTP-15: resuming twice in a row delivers every event exactly once: a
// resumed stream's priming id never points past what it has yet to send.
#[test]
fn resuming_twice_loses_nothing() {
    let (release, released) = crossbeam_channel::unbounded();
    let http = serve(stepping_server(released).http());
    let addr = http.local_addr();
    let mut conn = Conn::open(addr);
    let session = open_session_on(&mut conn);
    let call = rpc(
        json!(2),
        "tools/call",
        json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let head = conn.start(&Req::post(call).session(&session), "the call's stream");
    assert!(head.is_sse(), "{:?}", head);
    let mut seen: Vec<Value> = Vec::new();
    let mut last_id = None;
    while seen.is_empty() {
        let event = conn.next_event("the first progress").expect("an event");
        last_id = event.id.clone().or(last_id);
        seen.extend(event.message());
    }
    drop(conn);
    let _ = release.send(());
    // Resume once and drop right after the priming event.
    let mut first = Conn::open(addr);
    let resume = Req::get(&session).header("Last-Event-ID", last_id.as_deref().unwrap());
    first.start(&resume, "the first resume");
    let priming = first
        .next_event("the resumed priming event")
        .expect("an event");
    assert!(priming.is_priming(), "{:?}", priming);
    drop(first);
    // Resume from the priming event's id: everything left must come.
    let mut second = Conn::open(addr);
    let resume = Req::get(&session).header("Last-Event-ID", priming.id.as_deref().unwrap());
    second.start(&resume, "the second resume");
    while !seen.iter().any(|m| m["id"] == 2) {
        match second.next_event("the rest of the stream") {
            Some(event) => seen.extend(event.message()),
            None => break,
        }
    }
    let progress: Vec<Value> = seen
        .iter()
        .map(|m| m["params"]["progress"].clone())
        .collect();
    assert_eq!(
        progress,
        vec![json!(1), json!(2), json!(3), Value::Null],
        "{:?}",
        seen
    );
    http.shutdown();
}

// 7. HTTP-15: a Last-Event-ID naming a stream that ended and was forgotten
// gets its own answer (400, saying so), not 409 (a second GET stream) or
// 404 (session gone).
#[test]
fn resuming_an_ended_stream_says_so() {
    let server = Server::builder("fixes", "1")
        .tool(echo_tool(), echo)
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let mut conn = Conn::open(addr);
    let session = open_session_on(&mut conn);
    let call = rpc(
        json!(2),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    );
    let req = Req::post(call)
        .session(&session)
        .header("Accept", "text/event-stream");
    let response = conn.request(&req, "the call's stream");
    let last = response.events().iter().rev().find_map(|e| e.id.clone());
    let last = last.expect("the stream's events have ids");
    let resume = Req::get(&session).header("Last-Event-ID", &last);
    let answer = conn.request(&resume, "the resume of an ended stream");
    answer.expect_status(400, "resuming an ended stream");
    let message = answer.json();
    let text = message["error"]["message"].as_str().unwrap_or("");
    assert!(text.contains("ended"), "{}", message);
    http.shutdown();
}

fn asking_server() -> Server {
    Server::builder("fixes", "1")
        .tool(
            Tool::new("confirm", json!({"type": "object"})),
            |ctx: &RequestContext, args: JsonObject| {
                let question = args.get("message").and_then(Value::as_str).unwrap_or("?");
                let form = ElicitRequestFormParams::new(question, json!({"type": "object"}));
                let answer = ctx.elicit(form)?;
                Ok(CallToolResult::text(format!("{:?}", answer.action)))
            },
        )
        .build()
}

// 8. MRTR-5 and the MRTR server guidance: a requestState answers only the
// request it was minted for, arguments included.
#[test]
fn request_state_is_bound_to_the_arguments() {
    let server = asking_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {"form": {}}});
    let ask = |message: &str| json!({"name": "confirm", "arguments": {"message": message}});
    let first = client
        .request(
            "tools/call",
            Some(modern(ask("Delete repo A?"), caps.clone())),
        )
        .unwrap();
    assert_eq!(first["resultType"], "input_required", "{}", first);
    let state = first["requestState"].clone();
    let key = first["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answers = json!({ key: {"action": "accept", "content": {}} });
    let mut retry = modern(ask("Delete repo B?"), caps.clone());
    retry["requestState"] = state.clone();
    retry["inputResponses"] = answers.clone();
    let err = client.request("tools/call", Some(retry)).unwrap_err();
    assert_eq!(err.code.0, -32602, "{:?}", err);
    let mut same = modern(ask("Delete repo A?"), caps);
    same["requestState"] = state;
    same["inputResponses"] = answers;
    let done = client.request("tools/call", Some(same)).unwrap();
    assert_eq!(done["content"][0]["text"], "Accept", "{}", done);
}

// 9. MOD-3 (2026-07-28): capabilities follow what can be served: the first
// tool added while serving declares `tools`; `offer_prompts` declares
// prompts up front.
#[test]
fn capabilities_follow_what_is_added_while_serving() {
    let server = Server::builder("fixes", "1").offer_prompts().build();
    assert!(server.capabilities().tools.is_none());
    assert!(
        server.capabilities().prompts.is_some(),
        "offer_prompts declares prompts"
    );
    server
        .handle()
        .edit(|edit| edit.add_tool(echo_tool(), echo));
    assert!(
        server.capabilities().tools.is_some(),
        "add_tool declares tools"
    );
    let mut client = memory(&server);
    let listed = client
        .request("tools/list", Some(modern(json!({}), json!({}))))
        .unwrap();
    assert_eq!(listed["tools"][0]["name"], "echo", "{}", listed);
    let prompts = client
        .request("prompts/list", Some(modern(json!({}), json!({}))))
        .unwrap();
    assert_eq!(prompts["prompts"], json!([]));
    let discovered = client
        .request("server/discover", Some(modern(json!({}), json!({}))))
        .unwrap();
    assert!(
        discovered["capabilities"]["tools"].is_object(),
        "{}",
        discovered
    );
}

// 10. LC-7: at end of input the log says what happens when it happens: a
// request that answers within the grace period is not said to be cancelled.
#[test]
fn end_of_input_logs_are_honest() {
    let path = example_path("everything");
    let mut child = Command::new(&path)
        .env("TINY_MCP_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {}", path.display(), e));
    let lines = [
        initialize_body(json!(1), LATEST, json!({})),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        rpc(
            json!(2),
            "tools/call",
            json!({"name": "slow", "arguments": {"seconds": 0.3}}),
        ),
    ];
    let input = format!("{}\n", lines.join("\n"));
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input.as_bytes()).expect("write stdin");
    }
    let mut stdout = String::new();
    let mut stderr = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout);
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    let _ = child.wait();
    assert!(
        stdout.contains("\"id\":2"),
        "the slow call was answered: {}",
        stdout
    );
    assert!(stderr.contains("stdin closed"), "{}", stderr);
    assert!(
        !stderr.contains("cancelling"),
        "an answered request was logged as cancelled: {}",
        stderr
    );
}
