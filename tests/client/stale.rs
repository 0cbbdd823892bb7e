//! A pooled keep-alive connection that the server closed while it sat
//! idle (a restart, its idle timeout) is not an error: the request that
//! found it closed, with not one byte of an answer, goes again on a new
//! connection (RFC 9112 §9.3.1 "Retrying Requests").

use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, Client, Era, ErrorKind, JsonObject, RequestContext, Server, Tool};

use super::fake::{self, Fake, Reply};

fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(&result.content).unwrap();
    value[0]["text"].as_str().unwrap_or("").to_string()
}

// RFC 9112 §9.3.1: a server that answers with keep-alive and closes the
// connection right after; the next call, written on that pooled
// connection, is sent again on a new one and succeeds. A fresh connection
// closed without an answer is an error, and is not tried again.
#[test]
fn a_pooled_connection_closed_by_the_server_is_replaced() {
    let server = Fake::start(|request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        let arguments = &request.json()["params"]["arguments"];
        let answer = fake::text_result(request, arguments["text"].as_str().unwrap_or(""));
        match arguments["text"].as_str() {
            // Keep-alive as far as the client knows, then closed.
            Some("first") => Reply::Close(fake::json(&answer, "")),
            Some("hang up") => Reply::Close(Vec::new()),
            _ => Reply::Keep(fake::json(&answer, "")),
        }
    });
    let client = Client::builder("stale-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    let first = client.call_tool("t", json!({"text": "first"})).unwrap();
    assert_eq!(text(&first), "first");
    let closed_on = server.requests().last().unwrap().conn;
    server.wait_closed(closed_on);
    let second = client.call_tool("t", json!({"text": "second"})).unwrap();
    assert_eq!(text(&second), "second");
    let requests = server.requests();
    let last = requests.last().unwrap();
    assert!(last.conn > closed_on, "{:?}", last);
    let calls =
        |requests: &[fake::Request]| requests.iter().filter(|r| r.rpc() == "tools/call").count();
    let before = calls(&server.requests());
    let err = client
        .call_tool("t", json!({"text": "hang up"}))
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Io(_)), "{:?}", err);
    // On the pooled connection, then once on a fresh one.
    assert_eq!(calls(&server.requests()), before + 2, "sent twice");
}

/// A server with one tool, `echo`, that answers its `text`.
fn echo_server() -> Server {
    let schema = json!({"type": "object"});
    Server::builder("restarted", "1")
        .tool(
            Tool::new("echo", schema),
            |_: &RequestContext, args: JsonObject| {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                Ok(CallToolResult::text(text))
            },
        )
        .build()
}

// RFC 9112 §9.3.1, with the crate's own server shut down and a new one
// started on the same port: the stale pooled connection is replaced, and
// the next call succeeds in both eras: in 2026-07-28 (stateless) at once,
// in 2025-11-25 on a new session (transports "Session Management"), with
// no failed call in between. Without session renewal the 2025-11-25 call
// gets SessionExpired, not an I/O error.
#[test]
fn a_restarted_server_is_reached_on_a_new_connection() {
    for (era, renew) in [
        (Era::V2026_07_28, true),
        (Era::V2025_11_25, true),
        (Era::V2025_11_25, false),
    ] {
        let first = echo_server().serve_http("127.0.0.1:0").unwrap();
        let addr = first.local_addr();
        let client = Client::builder("stale-test", "1")
            .era(era)
            .reinitialize_on_expiry(renew)
            .request_timeout(Duration::from_secs(20))
            .connect_http(&format!("http://{}/mcp", addr))
            .unwrap();
        let before = client.call_tool("echo", json!({"text": "a"})).unwrap();
        assert_eq!(text(&before), "a");
        first.shutdown();
        let _second = echo_server().serve_http(addr).unwrap();
        let after = client.call_tool("echo", json!({"text": "b"}));
        if renew {
            assert_eq!(text(&after.unwrap()), "b", "{:?}", era);
        } else {
            let err = after.unwrap_err();
            assert!(matches!(err.kind(), ErrorKind::SessionExpired), "{:?}", err);
        }
    }
}

// basic/transports (2025-11-25), the client's request timeout: a pooled
// connection that carried a call with a longer deadline still meets the
// next call's shorter one (its socket timeout was set for the first
// call); a silent server fails the call with Timeout at its deadline, not
// the first call's.
#[test]
fn a_pooled_connection_meets_a_shorter_deadline() {
    let server = Fake::start(|request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        match request.json()["params"]["arguments"]["text"].as_str() {
            Some("silence") => Reply::Hold(Vec::new()),
            _ => Reply::Keep(fake::json(&fake::text_result(request, "ok"), "")),
        }
    });
    let client = Client::builder("stale-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(8))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    client.call_tool("t", json!({"text": "warm"})).unwrap();
    let short = tiny_mcp::CallOptions::new().timeout(Duration::from_secs(5));
    let began = std::time::Instant::now();
    let err = client
        .call_tool_with("t", json!({"text": "silence"}), &short)
        .unwrap_err();
    let took = began.elapsed();
    assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{:?}", err);
    // The old socket timeout (8 s) would end the wait at 8 s.
    assert!(took < Duration::from_millis(7500), "{:?}", took);
}
