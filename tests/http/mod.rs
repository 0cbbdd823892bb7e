//! The Streamable HTTP transport (2025-11-25) over real sockets: each test
//! serves the small server it needs on 127.0.0.1:0 and speaks raw HTTP/1.1
//! to it through `support::http`. One test per behaviour.
//!
//! Tests synchronize with tool handlers through channels. A handler that
//! must wait for the test blocks in [`block_until`], which also watches the
//! request's cancellation flag (one wait cannot watch both a channel and
//! the flag, so the flag is looked at between short receive timeouts).

use std::net::SocketAddr;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError};
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, CreateMessageRequestParams, HttpServer, HttpServerBuilder, JsonObject,
    RequestContext, SamplingMessage, Server, Tool,
};

use crate::support::http::{
    call_body, initialize_body, is_method, is_response, is_uuid_v4, notification, open_session,
    open_session_on, rpc, send, Conn, Req, Response, ACCEPT_BOTH, LATEST, WAIT,
};

mod fair_sessions;
mod framing;
mod handlers;
mod limits;
mod raw;
mod resume;
mod trace_headers;
mod worker_shares;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn any_object() -> Value {
    json!({"type": "object"})
}

/// Binds `builder` on an ephemeral loopback port.
fn serve(builder: HttpServerBuilder) -> HttpServer {
    match builder.serve("127.0.0.1:0") {
        Ok(http) => http,
        Err(e) => panic!("cannot serve on 127.0.0.1:0: {}", e),
    }
}

/// A server with one tool, `echo`, that answers `echoed`.
fn echo_server() -> Server {
    Server::builder("echo", "1.0.0")
        .tool(
            Tool::new("echo", any_object()),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("echoed")),
        )
        .build()
}

/// Receives from `receiver`, failing the test if `what` never arrives.
fn wait_for<T>(receiver: &Receiver<T>, what: &str) -> T {
    match receiver.recv_timeout(WAIT) {
        Ok(value) => value,
        Err(_) => panic!("{} never arrived (waited {:?})", what, WAIT),
    }
}

/// How a handler blocked in [`block_until`] stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Wake {
    /// The test sent on the release channel.
    Released,
    /// The request was cancelled.
    Cancelled,
    /// The limit passed.
    TimedOut,
    /// The test dropped the release channel (it failed or ended).
    Abandoned,
}

/// Blocks a handler until the test releases it, the request is cancelled,
/// or `limit` passes.
fn block_until(ctx: &RequestContext, release: &Receiver<()>, limit: Duration) -> Wake {
    let deadline = Instant::now() + limit;
    loop {
        if ctx.is_cancelled() {
            return Wake::Cancelled;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left == Duration::from_secs(0) {
            return Wake::TimedOut;
        }
        match release.recv_timeout(left.min(Duration::from_millis(10))) {
            Ok(()) => return Wake::Released,
            Err(RecvTimeoutError::Disconnected) => return Wake::Abandoned,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

fn ping_body(id: i64) -> String {
    rpc(json!(id), "ping", json!({}))
}

/// POSTs `ping` on session `session` with `req_change` applied to the
/// request, on a new connection.
fn ping(addr: SocketAddr, session: &str, req_change: impl Fn(Req) -> Req) -> Response {
    send(
        addr,
        &req_change(Req::post(ping_body(1)).session(session)),
        "the answer to ping",
    )
}

/// Asserts that `response` answers ping with `{}`.
fn assert_pong(response: &Response, what: &str) {
    response.expect_status(200, what);
    let answer = response.rpc();
    assert_eq!(answer["result"], json!({}), "{}: {}", what, answer);
}

/// The text of the first content block of a tools/call response.
fn result_text(response: &Value) -> &str {
    match response["result"]["content"][0]["text"].as_str() {
        Some(text) => text,
        None => panic!("no text in the tools/call response {}", response),
    }
}

/// Opens the session's GET stream on a new connection and reads its head
/// (and the priming event, for 2025-11-25 sessions); the stream is then
/// attached on the server.
fn open_get(addr: SocketAddr, session: &str, primed: bool) -> Conn {
    let mut conn = Conn::open(addr);
    let head = conn.start(&Req::get(session), "the GET stream's head");
    head.expect_status(200, "GET");
    assert!(head.is_sse(), "the GET stream is not SSE: {:?}", head);
    if primed {
        match conn.next_event("the GET stream's priming event") {
            Some(event) => assert!(event.is_priming(), "not a priming event: {:?}", event),
            None => panic!("the GET stream ended at once"),
        }
    }
    conn
}

/// `true` for a response whose `id` is `id`.
fn answers(message: &Value, id: &Value) -> bool {
    is_response(message) && &message["id"] == id
}

// ---------------------------------------------------------------------------
// 1. Sessions
// ---------------------------------------------------------------------------

// HTTP-16, basic/transports "Session Management": initialize mints an
// Mcp-Session-Id, a random (v4) UUID in visible ASCII, unique per session.
#[test]
fn initialize_mints_a_uuid_v4_session_id() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let response = send(
        addr,
        &Req::post(initialize_body(json!(1), LATEST, json!({}))),
        "the initialize response",
    );
    response.expect_status(200, "initialize");
    assert_eq!(response.rpc()["result"]["protocolVersion"], LATEST);
    let id = match response.header("mcp-session-id") {
        Some(id) => id.to_string(),
        None => panic!("no Mcp-Session-Id on {:?}", response.head),
    };
    assert!(is_uuid_v4(&id), "not a v4 UUID: {:?}", id);
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let other = open_session(addr, LATEST, json!({}));
    assert_ne!(id, other, "two sessions got the same id");
    http.shutdown();
}

// HTTP-17: a request other than initialize without Mcp-Session-Id gets 400
// (and -32600, DIGEST section 9).
#[test]
fn request_without_session_id_is_400() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let _session = open_session(addr, LATEST, json!({}));
    let response = send(addr, &Req::post(ping_body(2)), "the answer to ping");
    response.expect_status(400, "ping without a session id");
    assert_eq!(response.error_code(), -32600);
    http.shutdown();
}

// HTTP-18: a session id the server never minted gets 404.
#[test]
fn unknown_session_id_is_404() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let _session = open_session(addr, LATEST, json!({}));
    for unknown in ["no-such-session", "6f1c1f5e-2f55-4b5e-9a4e-0c7d2b1f3a9d"] {
        let response = ping(addr, unknown, |r| r);
        response.expect_status(404, unknown);
    }
    http.shutdown();
}

// HTTP-19, HTTP-18: DELETE ends the session; its id then gets 404.
#[test]
fn delete_ends_the_session() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    assert_pong(&ping(addr, &session, |r| r), "ping before DELETE");
    let deleted = send(addr, &Req::delete(&session), "the answer to DELETE");
    assert!(
        (200..300).contains(&deleted.status()),
        "DELETE was refused: {:?}",
        deleted
    );
    ping(addr, &session, |r| r).expect_status(404, "ping after DELETE");
    send(addr, &Req::get(&session), "the answer to GET").expect_status(404, "GET after DELETE");
    send(addr, &Req::delete(&session), "the second DELETE")
        .expect_status(404, "DELETE of a deleted session");
    http.shutdown();
}

// HTTP-18: a session left idle past session_idle_timeout is ended, and its
// id then gets 404.
#[test]
fn idle_session_expires_with_404() {
    let idle = Duration::from_millis(50);
    let http = serve(echo_server().http().session_idle_timeout(idle));
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    // Waiting past the timeout is the behaviour under test, not a way to
    // synchronize with anything.
    thread::sleep(idle * 3);
    ping(addr, &session, |r| r).expect_status(404, "ping on an expired session");
    http.shutdown();
}

// HTTP-16 (a server MAY mint a session id): stateless mode mints none and
// serves tools/call without one.
#[test]
fn stateless_mode_mints_no_session_and_serves_tools_call() {
    let http = serve(echo_server().http().stateless(true));
    let addr = http.local_addr();
    let init = send(
        addr,
        &Req::post(initialize_body(json!(1), LATEST, json!({}))),
        "the initialize response",
    );
    init.expect_status(200, "stateless initialize");
    assert_eq!(init.header("mcp-session-id"), None, "{:?}", init.head);
    let called = send(
        addr,
        &Req::post(call_body(json!(2), "echo", None)),
        "the tools/call response",
    );
    called.expect_status(200, "stateless tools/call");
    assert_eq!(called.header("mcp-session-id"), None, "{:?}", called.head);
    let answer = called.rpc();
    assert_eq!(answer["id"], 2);
    assert_eq!(result_text(&answer), "echoed");
    http.shutdown();
}

// HTTP-16, limits: past max_sessions live sessions that each hold
// something (here a GET stream), initialize gets 503 and mints nothing; a
// freed slot is usable again.
#[test]
fn initialize_past_max_sessions_is_503() {
    let http = serve(echo_server().http().max_sessions(1));
    let addr = http.local_addr();
    let first = open_session(addr, LATEST, json!({}));
    let mut stream = Conn::open(addr);
    assert_eq!(stream.start(&Req::get(&first), "a GET stream").status, 200);
    let refused = send(
        addr,
        &Req::post(initialize_body(json!(1), LATEST, json!({}))),
        "the second initialize response",
    );
    refused.expect_status(503, "initialize past max_sessions");
    assert_eq!(refused.header("mcp-session-id"), None);
    send(addr, &Req::delete(&first), "the answer to DELETE");
    let _second = open_session(addr, LATEST, json!({}));
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 2. Initialize on HTTP
// ---------------------------------------------------------------------------

// LC-8, DIGEST 6.4 (SDK convention): initialize carrying a live session id
// is 400 + -32600, and the session keeps working.
#[test]
fn initialize_on_a_live_session_is_400_and_the_session_survives() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let again = send(
        addr,
        &Req::post(initialize_body(json!(7), LATEST, json!({}))).session(&session),
        "the answer to the second initialize",
    );
    again.expect_status(400, "initialize on a live session");
    assert_eq!(again.error_code(), -32600);
    assert_eq!(again.rpc()["id"], 7);
    assert_pong(
        &ping(addr, &session, |r| r),
        "ping after the refused initialize",
    );
    http.shutdown();
}

// BASE-1, HTTP-16: an initialize with "jsonrpc": "1.0" is refused with a 4xx
// and mints no session.
#[test]
fn initialize_with_jsonrpc_1_0_mints_no_session() {
    let http = serve(echo_server().http());
    let body = json!({
        "jsonrpc": "1.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST,
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}
        }
    });
    let response = send(
        http.local_addr(),
        &Req::post(body.to_string()),
        "the answer to initialize",
    );
    assert!(
        (400..500).contains(&response.status()),
        "expected a 4xx, got {:?} {:?}",
        response.head,
        response.text()
    );
    assert_eq!(
        response.header("mcp-session-id"),
        None,
        "{:?}",
        response.head
    );
    assert_eq!(response.error_code(), -32600);
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 3. POST bodies and media types
// ---------------------------------------------------------------------------

// HTTP-2, DIGEST 9: a JSON array (a batch) is 400 + -32600.
#[test]
fn array_body_is_400_invalid_request() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let batch = format!("[{}]", ping_body(1));
    let response = send(addr, &Req::post(batch).session(&session), "the answer");
    response.expect_status(400, "a batch");
    assert_eq!(response.error_code(), -32600);
    http.shutdown();
}

// HTTP-2, DIGEST 9: JSON that is not an object is 400 + -32600.
#[test]
fn non_object_body_is_400_invalid_request() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = send(addr, &Req::post("5").session(&session), "the answer");
    response.expect_status(400, "the body 5");
    assert_eq!(response.error_code(), -32600);
    http.shutdown();
}

// BASE-1, DIGEST 9: a body that is not JSON is 400 + -32700.
#[test]
fn unparsable_body_is_400_parse_error() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = send(
        addr,
        &Req::post(r#"{"jsonrpc": "2.0", "id": "#).session(&session),
        "the answer",
    );
    response.expect_status(400, "broken JSON");
    assert_eq!(response.error_code(), -32700);
    http.shutdown();
}

// DIGEST 6.4 (SDK convention), limits: a body over max_body_bytes is 413,
// and the server keeps serving.
#[test]
fn body_over_max_body_bytes_is_413() {
    let http = serve(echo_server().http().max_body_bytes(256));
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let big = rpc(json!(1), "ping", json!({ "pad": "x".repeat(1024) }));
    let response = send(addr, &Req::post(big).session(&session), "the answer");
    response.expect_status(413, "a 1 KiB body over a 256 B limit");
    assert_pong(&ping(addr, &session, |r| r), "ping after the 413");
    http.shutdown();
}

// DIGEST 6.4 (SDK convention), limits: a chunked body that grows past
// max_body_bytes is 413 too.
#[test]
fn chunked_body_over_max_body_bytes_is_413() {
    let http = serve(echo_server().http().max_body_bytes(256));
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let big = rpc(json!(1), "ping", json!({ "pad": "x".repeat(1024) }));
    let mut raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: {}\r\nMcp-Session-Id: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        addr, ACCEPT_BOTH, session
    );
    for piece in big.as_bytes().chunks(100) {
        raw.push_str(&format!("{:x}\r\n", piece.len()));
        raw.push_str(std::str::from_utf8(piece).expect("ASCII"));
        raw.push_str("\r\n");
    }
    raw.push_str("0\r\n\r\n");
    let mut conn = Conn::open(addr);
    conn.send_raw(raw.as_bytes());
    let head = conn.read_head("the answer to a chunked body");
    head.expect_status(413, "a chunked body over the limit");
    http.shutdown();
}

// HTTP-3: an accepted notification gets 202 with no body.
#[test]
fn notification_is_202_with_an_empty_body() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = send(
        addr,
        &Req::post(notification("notifications/roots/list_changed", json!({}))).session(&session),
        "the answer to a notification",
    );
    response.expect_status(202, "a notification");
    assert!(response.body.is_empty(), "a body: {:?}", response.text());
    http.shutdown();
}

// HTTP-3: a JSON-RPC response from the client gets 202 with no body.
#[test]
fn client_response_is_202() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let answer = json!({"jsonrpc": "2.0", "id": "nobody-asked", "result": {}});
    let response = send(
        addr,
        &Req::post(answer.to_string()).session(&session),
        "the answer to a client response",
    );
    response.expect_status(202, "a client response");
    assert!(response.body.is_empty(), "a body: {:?}", response.text());
    http.shutdown();
}

// HTTP-2, DIGEST 6.4: a Content-Type other than JSON is 415.
#[test]
fn text_plain_content_type_is_415() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = ping(addr, &session, |r| r.header("Content-Type", "text/plain"));
    response.expect_status(415, "Content-Type: text/plain");
    http.shutdown();
}

// HTTP-2: the JSON media type is matched without its parameters and
// case-insensitively (RFC 9110 section 8.3.1).
#[test]
fn json_content_type_is_matched_leniently() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    for content_type in ["application/json; charset=utf-8", "Application/JSON"] {
        let response = ping(addr, &session, |r| r.header("Content-Type", content_type));
        assert_pong(&response, content_type);
    }
    http.shutdown();
}

// HTTP-2, HTTP-4: Accept: */* takes either kind of answer.
#[test]
fn accept_wildcard_is_served() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    assert_pong(
        &ping(addr, &session, |r| r.header("Accept", "*/*")),
        "ping with Accept: */*",
    );
    let called = send(
        addr,
        &Req::post(call_body(json!(3), "echo", None))
            .session(&session)
            .header("Accept", "*/*"),
        "the tools/call response",
    );
    called.expect_status(200, "tools/call with Accept: */*");
    assert_eq!(result_text(&called.rpc()), "echoed");
    http.shutdown();
}

// HTTP-4: a client that accepts only text/event-stream gets SSE, even for
// an answer the server would otherwise send as JSON.
#[test]
fn accept_event_stream_alone_is_served_as_sse() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let pong = ping(addr, &session, |r| r.header("Accept", "text/event-stream"));
    assert!(
        pong.head.is_sse(),
        "ping was not answered as SSE: {:?}",
        pong
    );
    assert_pong(&pong, "ping with Accept: text/event-stream");
    let called = send(
        addr,
        &Req::post(call_body(json!(3), "echo", None))
            .session(&session)
            .header("Accept", "text/event-stream"),
        "the tools/call response",
    );
    called.expect_status(200, "tools/call");
    assert!(called.head.is_sse(), "{:?}", called.head);
    assert_eq!(result_text(&called.rpc()), "echoed");
    http.shutdown();
}

// HTTP-4: a client that accepts only application/json gets tools/call
// answered as one JSON object.
#[test]
fn accept_json_alone_gets_tools_call_as_json() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let called = send(
        addr,
        &Req::post(call_body(json!(4), "echo", None))
            .session(&session)
            .header("Accept", "application/json"),
        "the tools/call response",
    );
    called.expect_status(200, "tools/call with Accept: application/json");
    assert_eq!(
        called.header("content-type"),
        Some("application/json"),
        "{:?}",
        called.head
    );
    let answer = called.json();
    assert_eq!(answer["id"], 4);
    assert_eq!(result_text(&answer), "echoed");
    http.shutdown();
}

// HTTP-2, DIGEST 6.4: an Accept with neither JSON nor SSE is 406.
#[test]
fn accept_image_png_is_406() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = ping(addr, &session, |r| r.header("Accept", "image/png"));
    response.expect_status(406, "Accept: image/png");
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 4. SSE response streams
// ---------------------------------------------------------------------------

// HTTP-4, MHTTP-5: tools/call is answered on an SSE stream that proxies
// must not cache or buffer.
#[test]
fn tools_call_is_answered_with_an_event_stream() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let called = send(
        addr,
        &Req::post(call_body(json!(5), "echo", None)).session(&session),
        "the tools/call response",
    );
    called.expect_status(200, "tools/call");
    assert_eq!(called.header("content-type"), Some("text/event-stream"));
    assert_eq!(called.header("cache-control"), Some("no-cache"));
    assert_eq!(called.header("x-accel-buffering"), Some("no"));
    let answer = called.rpc();
    assert_eq!(answer["id"], 5);
    assert_eq!(result_text(&answer), "echoed");
    http.shutdown();
}

// HTTP-7, PROG-1: a request's progress notifications ride its POST stream,
// before its result, which ends the stream.
#[test]
fn progress_arrives_on_the_post_stream_before_the_result() {
    let server = Server::builder("progress", "1")
        .tool(
            Tool::new("count", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(2.0), Some("one"));
                ctx.notify_progress(2.0, Some(2.0), Some("two"));
                Ok(CallToolResult::text("counted"))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let called = send(
        addr,
        &Req::post(call_body(json!(6), "count", Some("tok"))).session(&session),
        "the tools/call stream",
    );
    called.expect_status(200, "tools/call");
    let messages = called.messages();
    assert_eq!(messages.len(), 3, "{:?}", messages);
    for (i, message) in messages[..2].iter().enumerate() {
        assert!(is_method(message, "notifications/progress"), "{}", message);
        assert_eq!(message["params"]["progressToken"], "tok");
        assert_eq!(message["params"]["progress"], json!(i + 1));
    }
    assert!(answers(&messages[2], &json!(6)), "{}", messages[2]);
    assert_eq!(result_text(&messages[2]), "counted");
    http.shutdown();
}

// HTTP-7: events are streamed as they are sent, not collected until the
// result. The tool sends progress 1, then waits until the test has read
// it over HTTP before it sends progress 2; a buffering server deadlocks
// here, and the bounded waits turn that into a failure.
#[test]
fn post_stream_delivers_each_event_as_it_is_sent() {
    let (ack_tx, ack_rx) = unbounded::<()>();
    let server = Server::builder("streaming", "1")
        .tool(
            Tool::new("steps", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(2.0), Some("first"));
                let wake = block_until(ctx, &ack_rx, WAIT);
                if wake != Wake::Released {
                    return Ok(CallToolResult::error(format!(
                        "progress 1 was never acknowledged: {:?}",
                        wake
                    )));
                }
                ctx.notify_progress(2.0, Some(2.0), Some("second"));
                Ok(CallToolResult::text("done"))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut post = Conn::open(addr);
    let head = post.start(
        &Req::post(call_body(json!(7), "steps", Some("s"))).session(&session),
        "the tools/call head",
    );
    head.expect_status(200, "tools/call");
    let first = post.next_message("progress 1 (sent before the tool blocks)");
    assert!(is_method(&first, "notifications/progress"), "{}", first);
    assert_eq!(first["params"]["progress"], 1);
    ack_tx.send(()).expect("the tool is waiting");
    let second = post.next_message("progress 2");
    assert!(is_method(&second, "notifications/progress"), "{}", second);
    assert_eq!(second["params"]["progress"], 2);
    let result = post.next_message("the tools/call result");
    assert!(answers(&result, &json!(7)), "{}", result);
    assert_eq!(result_text(&result), "done");
    http.shutdown();
}

// HTTP-13, HTTP-7: two requests in flight on one session each get only
// their own progress notifications and their own result.
#[test]
fn concurrent_posts_each_get_only_their_own_progress() {
    let (arrived_tx, arrived_rx) = unbounded::<String>();
    let (release_tx, release_rx) = unbounded::<()>();
    let server = Server::builder("concurrent", "1")
        .tool(
            Tool::new("work", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let token = match ctx.progress_token() {
                    Some(token) => token.to_value().as_str().unwrap_or("?").to_string(),
                    None => "none".to_string(),
                };
                ctx.notify_progress(1.0, None, None);
                let _ = arrived_tx.send(token.clone());
                let wake = block_until(ctx, &release_rx, WAIT);
                if wake != Wake::Released {
                    return Ok(CallToolResult::error(format!("not released: {:?}", wake)));
                }
                ctx.notify_progress(2.0, None, None);
                Ok(CallToolResult::text(token))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut streams = Vec::new();
    for (id, token) in [(10, "a"), (11, "b")] {
        let mut conn = Conn::open(addr);
        let head = conn.start(
            &Req::post(call_body(json!(id), "work", Some(token))).session(&session),
            "a tools/call head",
        );
        head.expect_status(200, "tools/call");
        streams.push((id, token, conn));
    }
    // Both handlers are running at once before either may finish.
    let mut tokens = vec![
        wait_for(&arrived_rx, "the first handler's start"),
        wait_for(&arrived_rx, "the second handler's start"),
    ];
    tokens.sort();
    assert_eq!(tokens, ["a", "b"]);
    release_tx.send(()).expect("the handlers are waiting");
    release_tx.send(()).expect("the handlers are waiting");
    for (id, token, mut conn) in streams {
        let messages = conn.rest("the rest of a tools/call stream");
        let progress: Vec<&Value> = messages
            .iter()
            .filter(|m| is_method(m, "notifications/progress"))
            .collect();
        assert_eq!(progress.len(), 2, "stream {}: {:?}", token, messages);
        for p in progress {
            assert_eq!(
                p["params"]["progressToken"], token,
                "stream {}: {}",
                token, p
            );
        }
        let responses: Vec<&Value> = messages.iter().filter(|m| is_response(m)).collect();
        assert_eq!(responses.len(), 1, "stream {}: {:?}", token, messages);
        assert_eq!(responses[0]["id"], id);
        assert_eq!(result_text(responses[0]), token);
    }
    http.shutdown();
}

// HTTP-7, DIGEST 13.1 (SEP-2260): a tool's sampling request goes on its own
// POST stream, not the GET stream; the client's answer is POSTed (202) and
// the tool's result follows on the same stream.
#[test]
fn sampling_request_rides_the_calling_post_stream() {
    let server = Server::builder("sampling", "1")
        .tool(
            Tool::new("ask", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                let answer = ctx.create_message(CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text("What is 2 + 2?")],
                    16,
                ))?;
                Ok(CallToolResult::text(answer.text().unwrap_or("no text")))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({"sampling": {}}));
    let mut get = open_get(addr, &session, true);
    let mut post = Conn::open(addr);
    post.start(
        &Req::post(call_body(json!(12), "ask", None)).session(&session),
        "the tools/call head",
    )
    .expect_status(200, "tools/call");
    let request = post.next_message("the sampling/createMessage request");
    assert!(is_method(&request, "sampling/createMessage"), "{}", request);
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "4"},
            "model": "test-model",
            "stopReason": "endTurn"
        }
    });
    send(
        addr,
        &Req::post(answer.to_string()).session(&session),
        "the answer to the sampling response",
    )
    .expect_status(202, "the client's sampling response");
    let result = post.next_message("the tools/call result");
    assert!(answers(&result, &json!(12)), "{}", result);
    assert_eq!(result_text(&result), "4");
    assert_eq!(
        post.rest("the end of the tools/call stream"),
        Vec::<Value>::new()
    );
    // The GET stream is in order: had the sampling request gone there, it
    // would come before this notification.
    server.handle().notify_tools_list_changed();
    let first = get.next_message("tools/list_changed on the GET stream");
    assert!(
        is_method(&first, "notifications/tools/list_changed"),
        "{}",
        first
    );
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 5. The GET stream
// ---------------------------------------------------------------------------

// HTTP-11, TOOL-2: a change notification from the ServerHandle reaches the
// session's open GET stream.
#[test]
fn tools_list_changed_reaches_the_get_stream() {
    let server = echo_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut get = open_get(addr, &session, true);
    server.handle().notify_tools_list_changed();
    let message = get.next_message("tools/list_changed on the GET stream");
    assert!(
        is_method(&message, "notifications/tools/list_changed"),
        "{}",
        message
    );
    assert_eq!(message.get("id"), None, "a notification has no id");
    http.shutdown();
}

// HTTP-10, DIGEST 6.2 (SDK convention): a second concurrent GET stream on
// one session gets 409.
#[test]
fn second_get_stream_is_409() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let _get = open_get(addr, &session, true);
    let second = send(addr, &Req::get(&session), "the answer to the second GET");
    second.expect_status(409, "a second GET stream");
    http.shutdown();
}

// HTTP-5, HTTP-6: for a 2025-11-25 session every SSE stream starts with a
// priming event (an id and empty data) carrying retry.
#[test]
fn streams_are_primed_for_2025_11_25() {
    let http = serve(echo_server().http().sse_retry(Duration::from_millis(750)));
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut get = Conn::open(addr);
    get.start(&Req::get(&session), "the GET head")
        .expect_status(200, "GET");
    let first = get.next_event("the GET stream's first event");
    let priming = match first {
        Some(event) => event,
        None => panic!("the GET stream ended at once"),
    };
    assert!(priming.is_priming(), "not a priming event: {:?}", priming);
    assert_eq!(priming.retry, Some(750), "{:?}", priming);
    let called = send(
        addr,
        &Req::post(call_body(json!(13), "echo", None)).session(&session),
        "the tools/call stream",
    );
    let events = called.events();
    assert!(
        events
            .first()
            .map_or(false, |e| e.is_priming() && e.retry == Some(750)),
        "the POST stream is not primed: {:?}",
        events
    );
    http.shutdown();
}

// HTTP-5 (2025-11-25): a session that negotiated 2025-03-26 gets no priming
// event, whose empty data older clients cannot parse.
#[test]
fn streams_are_not_primed_for_2025_03_26() {
    let server = echo_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, "2025-03-26", json!({}));
    let mut get = open_get(addr, &session, false);
    server.handle().notify_tools_list_changed();
    match get.next_event("the GET stream's first event") {
        Some(event) => {
            assert!(!event.is_priming(), "a priming event: {:?}", event);
            let message = event.message().expect("the event carries a message");
            assert!(is_method(&message, "notifications/tools/list_changed"));
        }
        None => panic!("the GET stream ended at once"),
    }
    let called = send(
        addr,
        &Req::post(call_body(json!(14), "echo", None)).session(&session),
        "the tools/call stream",
    );
    let events = called.events();
    assert!(
        events.iter().all(|e| !e.is_priming()),
        "the POST stream is primed: {:?}",
        events
    );
    assert_eq!(result_text(&called.rpc()), "echoed");
    http.shutdown();
}

// HTTP-15, HTTP-14: a GET with Last-Event-ID replays what the GET stream
// missed while disconnected.
#[test]
fn get_with_last_event_id_replays_missed_messages() {
    let server = echo_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let last_id = primed_get_then_drop(addr, &session);
    let handle = server.handle();
    handle.notify_tools_list_changed();
    handle.notify_prompts_list_changed();
    let mut resumed = resume(addr, &session, &last_id);
    let first = resumed.next_message("the first missed notification");
    assert!(
        is_method(&first, "notifications/tools/list_changed"),
        "{}",
        first
    );
    let second = resumed.next_message("the second missed notification");
    assert!(
        is_method(&second, "notifications/prompts/list_changed"),
        "{}",
        second
    );
    http.shutdown();
}

// HTTP-15, HTTP-11: the resumed GET stream is the session's live GET
// stream: what is sent after resuming arrives on it too.
#[test]
fn resumed_get_stream_receives_later_messages() {
    let server = echo_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let last_id = primed_get_then_drop(addr, &session);
    let handle = server.handle();
    handle.notify_tools_list_changed();
    let mut resumed = resume(addr, &session, &last_id);
    let missed = resumed.next_message("the missed notification");
    assert!(
        is_method(&missed, "notifications/tools/list_changed"),
        "{}",
        missed
    );
    handle.notify_prompts_list_changed();
    let live = resumed.next_message("a notification sent after resuming");
    assert!(
        is_method(&live, "notifications/prompts/list_changed"),
        "{}",
        live
    );
    http.shutdown();
}

/// Opens the session's GET stream, reads its priming event, and drops the
/// connection; returns the priming event's id.
fn primed_get_then_drop(addr: SocketAddr, session: &str) -> String {
    let mut get = Conn::open(addr);
    get.start(&Req::get(session), "the GET head")
        .expect_status(200, "GET");
    match get.next_event("the priming event") {
        Some(event) if event.is_priming() => event.id.expect("a priming event has an id"),
        other => panic!("expected a priming event, got {:?}", other),
    }
}

/// Resumes a stream of `session` with a GET carrying `Last-Event-ID`.
fn resume(addr: SocketAddr, session: &str, last_id: &str) -> Conn {
    let mut resumed = Conn::open(addr);
    let head = resumed.start(
        &Req::get(session).header("Last-Event-ID", last_id),
        "the resumed GET head",
    );
    head.expect_status(200, "a GET with Last-Event-ID");
    assert!(head.is_sse(), "{:?}", head);
    resumed
}

// HTTP-9, HTTP-15: a dropped POST connection does not cancel the request,
// and a GET with the POST stream's Last-Event-ID receives its result.
#[test]
fn dropped_post_stream_resumes_on_get() {
    let (started_tx, started_rx) = unbounded::<()>();
    let (release_tx, release_rx) = unbounded::<()>();
    let (wake_tx, wake_rx) = unbounded::<Wake>();
    let server = Server::builder("resume", "1")
        .tool(
            Tool::new("slow", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                let wake = block_until(ctx, &release_rx, WAIT);
                let _ = wake_tx.send(wake);
                Ok(CallToolResult::text("finished"))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut post = Conn::open(addr);
    post.start(
        &Req::post(call_body(json!(15), "slow", None)).session(&session),
        "the tools/call head",
    )
    .expect_status(200, "tools/call");
    let last_id = match post.next_event("the POST stream's priming event") {
        Some(event) if event.is_priming() => event.id.expect("a priming event has an id"),
        other => panic!("expected a priming event, got {:?}", other),
    };
    wait_for(&started_rx, "the tool's start");
    drop(post);
    let mut resumed = resume(addr, &session, &last_id);
    release_tx.send(()).expect("the tool is waiting");
    assert_eq!(wait_for(&wake_rx, "the tool's wake-up"), Wake::Released);
    let result = resumed.next_message("the tools/call result on the resumed stream");
    assert!(answers(&result, &json!(15)), "{}", result);
    assert_eq!(result_text(&result), "finished");
    assert_eq!(
        resumed.rest("the end of the resumed stream"),
        Vec::<Value>::new()
    );
    http.shutdown();
}

// HTTP-10: a server without a standalone stream (stateless mode) answers
// GET with 405 and an Allow header; DELETE likewise.
#[test]
fn get_in_stateless_mode_is_405_with_allow() {
    let http = serve(echo_server().http().stateless(true));
    let addr = http.local_addr();
    let get = send(
        addr,
        &Req::get("unused").without("Mcp-Session-Id"),
        "the answer to GET",
    );
    get.expect_status(405, "GET in stateless mode");
    let allow = get.header("allow").unwrap_or("");
    assert!(allow.contains("POST"), "Allow: {:?}", allow);
    assert!(!allow.contains("GET"), "Allow: {:?}", allow);
    let delete = send(
        addr,
        &Req::delete("unused").without("Mcp-Session-Id"),
        "the answer to DELETE",
    );
    delete.expect_status(405, "DELETE in stateless mode");
    http.shutdown();
}

// HTTP-10, HTTP-1: the GET stream stays open while a long tool runs, and
// other POSTs of the session are served meanwhile.
#[test]
fn get_stream_stays_open_while_a_long_tool_runs() {
    let (started_tx, started_rx) = unbounded::<()>();
    let (release_tx, release_rx) = unbounded::<()>();
    let server = Server::builder("long", "1")
        .tool(
            Tool::new("long", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                match block_until(ctx, &release_rx, Duration::from_secs(30)) {
                    Wake::Released => Ok(CallToolResult::text("finished")),
                    other => Ok(CallToolResult::error(format!("{:?}", other))),
                }
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut get = open_get(addr, &session, true);
    let mut post = Conn::open(addr);
    post.start(
        &Req::post(call_body(json!(16), "long", None)).session(&session),
        "the tools/call head",
    )
    .expect_status(200, "tools/call");
    wait_for(&started_rx, "the long tool's start");
    let mut other = Conn::open(addr);
    let pong = other.request(
        &Req::post(ping_body(17)).session(&session),
        "the answer to ping while the tool runs",
    );
    assert_pong(&pong, "ping while the tool runs");
    let listed = other.request(
        &Req::post(rpc(json!(18), "tools/list", json!({}))).session(&session),
        "the answer to tools/list while the tool runs",
    );
    listed.expect_status(200, "tools/list");
    assert_eq!(listed.rpc()["result"]["tools"][0]["name"], "long");
    server.handle().notify_tools_list_changed();
    let changed = get.next_message("tools/list_changed while the tool runs");
    assert!(is_method(&changed, "notifications/tools/list_changed"));
    release_tx.send(()).expect("the tool is waiting");
    let result = post.next_message("the long tool's result");
    assert!(answers(&result, &json!(16)), "{}", result);
    assert_eq!(result_text(&result), "finished");
    server.handle().notify_tools_list_changed();
    let after = get.next_message("tools/list_changed after the tool finished");
    assert!(is_method(&after, "notifications/tools/list_changed"));
    http.shutdown();
}

// MHTTP-5, HTTP-12: an idle SSE stream carries keep-alive comments at the
// sse_keep_alive interval.
#[test]
fn idle_sse_stream_sends_keep_alive_comments() {
    let http = serve(
        echo_server()
            .http()
            .sse_keep_alive(Duration::from_millis(20)),
    );
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut get = open_get(addr, &session, true);
    match get.next_block("a keep-alive comment") {
        Some(block) => assert!(block.is_comment(), "not a comment: {:?}", block),
        None => panic!("the GET stream ended"),
    }
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 6. MCP-Protocol-Version
// ---------------------------------------------------------------------------

// HTTP-20, HTTP-21: a supported version in MCP-Protocol-Version is
// accepted, even one older than the session negotiated.
#[test]
fn protocol_version_2025_03_26_is_accepted_on_a_2025_11_25_session() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = ping(addr, &session, |r| {
        r.header("MCP-Protocol-Version", "2025-03-26")
    });
    assert_pong(&response, "ping with MCP-Protocol-Version: 2025-03-26");
    http.shutdown();
}

// HTTP-21: an unsupported MCP-Protocol-Version is 400.
#[test]
fn unsupported_protocol_version_header_is_400() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = ping(addr, &session, |r| {
        r.header("MCP-Protocol-Version", "1999-01-01")
    });
    response.expect_status(400, "MCP-Protocol-Version: 1999-01-01");
    assert_eq!(response.error_code(), -32600);
    http.shutdown();
}

// HTTP-20: a request without MCP-Protocol-Version is served.
#[test]
fn absent_protocol_version_header_is_accepted() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let response = ping(addr, &session, |r| r.without("MCP-Protocol-Version"));
    assert_pong(&response, "ping without MCP-Protocol-Version");
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 7. Cancellation
// ---------------------------------------------------------------------------

// CAN-1, HTTP-9: notifications/cancelled POSTed for a running request sets
// its flag, and its stream ends without a result.
#[test]
fn cancelled_notification_stops_the_running_request() {
    let (started_tx, started_rx) = unbounded::<()>();
    let (wake_tx, wake_rx) = unbounded::<Wake>();
    let (_hold, never_rx) = unbounded::<()>();
    let server = Server::builder("cancel", "1")
        .tool(
            Tool::new("spin", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                let _ = wake_tx.send(block_until(ctx, &never_rx, WAIT));
                Ok(CallToolResult::text("finished anyway"))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut post = Conn::open(addr);
    post.start(
        &Req::post(call_body(json!(20), "spin", None)).session(&session),
        "the tools/call head",
    )
    .expect_status(200, "tools/call");
    wait_for(&started_rx, "the tool's start");
    let cancel = notification(
        "notifications/cancelled",
        json!({"requestId": 20, "reason": "user pressed stop"}),
    );
    send(
        addr,
        &Req::post(cancel).session(&session),
        "the answer to notifications/cancelled",
    )
    .expect_status(202, "notifications/cancelled");
    assert_eq!(wait_for(&wake_rx, "the tool's wake-up"), Wake::Cancelled);
    let rest = post.rest("the end of the cancelled request's stream");
    assert!(
        !rest.iter().any(|m| answers(m, &json!(20))),
        "the cancelled request was answered: {:?}",
        rest
    );
    assert!(!post.was_cut(), "the stream was cut, not ended");
    http.shutdown();
}

// CAN-5, CAN-1: cancelling a request that waits in create_message sends
// notifications/cancelled for the nested request on the parent's POST
// stream, and the parent gets no result.
#[test]
fn cancel_during_sampling_cancels_the_nested_request_on_the_post_stream() {
    let (outcome_tx, outcome_rx) = unbounded::<bool>();
    let server = Server::builder("cancel-sampling", "1")
        .tool(
            Tool::new("ask", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let outcome = ctx.create_message(CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text("What is 2 + 2?")],
                    16,
                ));
                let _ = outcome_tx.send(matches!(&outcome, Err(e) if e.is_cancelled()));
                Ok(CallToolResult::text("not sent"))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({"sampling": {}}));
    let mut post = Conn::open(addr);
    post.start(
        &Req::post(call_body(json!(21), "ask", None)).session(&session),
        "the tools/call head",
    )
    .expect_status(200, "tools/call");
    let request = post.next_message("the sampling/createMessage request");
    assert!(is_method(&request, "sampling/createMessage"), "{}", request);
    let cancel = notification(
        "notifications/cancelled",
        json!({"requestId": 21, "reason": "user pressed stop"}),
    );
    send(
        addr,
        &Req::post(cancel).session(&session),
        "the answer to notifications/cancelled",
    )
    .expect_status(202, "notifications/cancelled");
    let nested_cancel = post.next_message("notifications/cancelled for the nested request");
    assert!(
        is_method(&nested_cancel, "notifications/cancelled"),
        "{}",
        nested_cancel
    );
    assert_eq!(nested_cancel["params"]["requestId"], request["id"]);
    assert!(
        wait_for(&outcome_rx, "the end of create_message"),
        "create_message did not fail as cancelled"
    );
    let rest = post.rest("the end of the cancelled request's stream");
    assert!(
        !rest.iter().any(|m| answers(m, &json!(21))),
        "the cancelled request was answered: {:?}",
        rest
    );
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 8. DNS rebinding
// ---------------------------------------------------------------------------

// SEC-1, DIGEST 8: a foreign Host is 403 before any MCP handling (no 400
// for the missing session, no session minted).
#[test]
fn foreign_host_is_403_before_mcp_handling() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let ping = send(
        addr,
        &Req::post(ping_body(1)).header("Host", "evil.example.com"),
        "the answer to ping",
    );
    ping.expect_status(403, "Host: evil.example.com without a session");
    let init = send(
        addr,
        &Req::post(initialize_body(json!(1), LATEST, json!({}))).header("Host", "evil.example.com"),
        "the answer to initialize",
    );
    init.expect_status(403, "initialize with Host: evil.example.com");
    assert_eq!(init.header("mcp-session-id"), None);
    http.shutdown();
}

// SEC-1: a present, foreign Origin is 403.
#[test]
fn foreign_origin_is_403() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let init = send(
        addr,
        &Req::post(initialize_body(json!(1), LATEST, json!({})))
            .header("Origin", "http://evil.example.com"),
        "the answer to initialize",
    );
    init.expect_status(403, "Origin: http://evil.example.com");
    assert_eq!(init.header("mcp-session-id"), None);
    http.shutdown();
}

// SEC-1, SEC-2: loopback Host and Origin values are allowed, by address and
// by the name localhost.
#[test]
fn loopback_host_and_origin_are_allowed() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let port = addr.port();
    for host in [format!("127.0.0.1:{}", port), format!("localhost:{}", port)] {
        let origin = format!("http://{}", host);
        let init = send(
            addr,
            &Req::post(initialize_body(json!(1), LATEST, json!({})))
                .header("Host", &host)
                .header("Origin", &origin),
            "the initialize response",
        );
        init.expect_status(200, &host);
        assert!(init.header("mcp-session-id").is_some(), "{:?}", init.head);
    }
    http.shutdown();
}

// ---------------------------------------------------------------------------
// 9. Shutdown
// ---------------------------------------------------------------------------

// LC-7, CAN-1: shutdown returns promptly while a GET stream is open and a
// tool runs; the tool sees cancellation and the client's streams end.
#[test]
fn shutdown_is_prompt_with_an_open_stream_and_a_running_tool() {
    let (started_tx, started_rx) = unbounded::<()>();
    let (wake_tx, wake_rx) = unbounded::<Wake>();
    let (_hold, never_rx) = unbounded::<()>();
    let server = Server::builder("shutdown", "1")
        .tool(
            Tool::new("forever", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                let _ = wake_tx.send(block_until(ctx, &never_rx, Duration::from_secs(30)));
                Ok(CallToolResult::text("stopped"))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let mut get = open_get(addr, &session, true);
    let mut post = Conn::open(addr);
    post.start(
        &Req::post(call_body(json!(30), "forever", None)).session(&session),
        "the tools/call head",
    )
    .expect_status(200, "tools/call");
    wait_for(&started_rx, "the tool's start");
    let (done_tx, done_rx) = unbounded::<Duration>();
    thread::spawn(move || {
        let started = Instant::now();
        http.shutdown();
        let _ = done_tx.send(started.elapsed());
    });
    let took = wait_for(&done_rx, "the return of http.shutdown()");
    assert!(took < Duration::from_secs(2), "shutdown took {:?}", took);
    assert_eq!(wait_for(&wake_rx, "the tool's wake-up"), Wake::Cancelled);
    get.rest("the end of the GET stream");
    post.rest("the end of the POST stream");
}

// ---------------------------------------------------------------------------
// 10. Bursts
// ---------------------------------------------------------------------------

/// Opens `n` connections at once (threads released together by a barrier),
/// each sending initialize; returns each one's time from connect to the
/// whole response.
fn burst_of_initializes(addr: SocketAddr, n: usize) -> Vec<Duration> {
    let barrier = Arc::new(Barrier::new(n));
    thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let barrier = Arc::clone(&barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let started = Instant::now();
                    let mut conn = Conn::open(addr);
                    let response = conn.request(
                        &Req::post(initialize_body(json!(i), LATEST, json!({}))),
                        "a burst initialize response",
                    );
                    let took = started.elapsed();
                    response.expect_status(200, "a burst initialize");
                    assert!(response.header("mcp-session-id").is_some());
                    took
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| match t.join() {
                Ok(took) => took,
                Err(_) => panic!("a burst connection failed"),
            })
            .collect()
    })
}

fn assert_all_within(latencies: &mut [Duration], bound: Duration, what: &str) {
    latencies.sort();
    let slowest = latencies[latencies.len() - 1];
    assert!(
        slowest < bound,
        "{}: the slowest of {} initializes took {:?} (median {:?}; slowest five {:?})",
        what,
        latencies.len(),
        slowest,
        latencies[latencies.len() / 2],
        &latencies[latencies.len() - 5..]
    );
}

// HTTP-1 (liveness; thread per connection): 64 connections opening at once
// are each answered within 1 s, none queued behind another.
#[test]
fn burst_of_64_initializes_is_answered_within_1s() {
    let http = serve(echo_server().http());
    let mut latencies = burst_of_initializes(http.local_addr(), 64);
    assert_all_within(&mut latencies, Duration::from_secs(1), "no open streams");
    http.shutdown();
}

// HTTP-1, HTTP-10: with 200 sessions each holding a GET stream open, a
// burst of 64 new connections is still answered within 1 s each.
#[test]
fn burst_of_64_initializes_with_200_open_get_streams_is_answered_within_1s() {
    let http = serve(echo_server().http());
    let addr = http.local_addr();
    let mut setup = Conn::open(addr);
    let mut streams = Vec::with_capacity(200);
    for _ in 0..200 {
        let session = open_session_on(&mut setup, LATEST, json!({}));
        streams.push(open_get(addr, &session, true));
    }
    let mut latencies = burst_of_initializes(addr, 64);
    assert_all_within(
        &mut latencies,
        Duration::from_secs(1),
        "200 open GET streams",
    );
    drop(streams);
    http.shutdown();
}
