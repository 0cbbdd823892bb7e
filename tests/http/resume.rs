//! Resuming and taking over GET streams: every event exactly once, an
//! ended stream says so, a reconnecting GET takes over a dead one.

use std::sync::Mutex;

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::http::{initialize_body, rpc, Conn, Req, LATEST};

use super::raw::echo_server;
use super::serve;
use crate::support::http::WAIT;

// HTTP-12: a client whose GET stream connection died reconnects at once:
// the new GET finds the old writer's client gone and takes the stream,
// instead of 409 until the next keepalive write notices.
#[test]
fn a_reconnecting_get_takes_over_a_dead_stream() {
    use crate::support::http::{open_session, Conn, Req};
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    let mut first = Conn::open(addr);
    let head = first.start(&Req::get(&session), "the first GET stream");
    head.expect_status(200, "the first GET");
    first.next_event("the first GET's priming event");
    drop(first); // The client's connection dies without a word.
    let mut second = Conn::open(addr);
    let head = second.start(&Req::get(&session), "the reconnecting GET");
    head.expect_status(200, "a GET after the first one's client left");
    http.shutdown();
}

// HTTP-12, issue 28 item 8: the same when the client's connection was
// reset (RST) rather than closed: a reset is a client gone too, not a
// live stream that makes the reconnecting GET wait for 409.
#[test]
fn a_reconnecting_get_takes_over_a_reset_stream() {
    use crate::support::http::{close_with_reset, open_session, read_status, Conn, Req};
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    let mut first = Conn::open(addr);
    first.send(&Req::get(&session));
    let mut socket = first.into_socket();
    assert_eq!(read_status(&mut socket, "the first GET stream"), 200);
    // The rest of the head and the priming event are left unread.
    close_with_reset(socket);
    let mut second = Conn::open(addr);
    let head = second.start(&Req::get(&session), "the reconnecting GET");
    head.expect_status(200, "a GET after the first one's connection was reset");
    http.shutdown();
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

fn open_session_on(conn: &mut Conn) -> String {
    let init = Req::post(initialize_body(json!(1), LATEST, json!({})));
    let response = conn.request(&init, "initialize");
    response
        .header("mcp-session-id")
        .expect("a session id")
        .to_string()
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

fn echo(_: &RequestContext, args: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    Ok(CallToolResult::text(
        args.get("text").and_then(Value::as_str).unwrap_or(""),
    ))
}

fn echo_tool() -> Tool {
    Tool::new("echo", json!({"type": "object"}))
}
