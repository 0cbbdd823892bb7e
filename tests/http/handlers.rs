//! What becomes of a request's handler over HTTP: cancellation when the
//! client leaves or the job waits in the queue, requests to a JSON-only
//! client, numbers, shutdown, and hooks that panic.

use super::raw::{echo_server, post_head};
use crate::support::http::WAIT;
use crate::support::recv;
use serde_json::{json, Value};
use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

// MHTTP-7 (2026-07-28): a client that goes away cancels its request even
// before the handler sent anything.
#[test]
fn request_2026_is_cancelled_when_the_client_leaves_before_any_message() {
    let (started_tx, started) = crossbeam_channel::bounded(1);
    let (cancelled_tx, cancelled) = crossbeam_channel::bounded(1);
    let server = Server::builder("hardening", "1.0.0")
        .tool(
            Tool::new("wait", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                let deadline = std::time::Instant::now() + WAIT;
                while !ctx.is_cancelled() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let _ = cancelled_tx.send(ctx.is_cancelled());
                Ok(CallToolResult::text("late"))
            },
        )
        .build();
    let http = server.http().serve("127.0.0.1:0").expect("serve");
    let stream = call_2026(http.local_addr(), "wait");
    recv(&started, "the handler to start");
    drop(stream);
    assert!(
        recv(&cancelled, "the handler to end"),
        "the handler must see the cancellation"
    );
    http.shutdown();
}

/// Opens a connection and POSTs a 2026-07-28 `tools/call` of `tool`
/// declaring no capability; the caller drops the stream to leave.
fn call_2026(addr: std::net::SocketAddr, tool: &str) -> TcpStream {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    })
    .to_string();
    let head = format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {}\r\nContent-Length: {}\r\n",
        tool,
        body.len()
    );
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .write_all(format!("{}{}", post_head(addr, &head), body).as_bytes())
        .expect("write");
    stream
}

// CANCEL-2, MHTTP-7 (2026-07-28): a handler sleeping in `ctx.sleep` is
// woken when the client closes the request's connection, with the
// cancellation error, long before its 60 s pass.
#[test]
fn request_2026_sleep_ends_when_the_client_leaves() {
    let (started_tx, started) = crossbeam_channel::bounded(1);
    let (ended_tx, ended) = crossbeam_channel::bounded(1);
    let server = Server::builder("sleeper", "1.0.0")
        .tool(
            Tool::new("sleep", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                let outcome = ctx.sleep(Duration::from_secs(60));
                let _ = ended_tx.send(matches!(&outcome, Err(e) if e.is_cancelled()));
                outcome?;
                Ok(CallToolResult::text("slept"))
            },
        )
        .build();
    let http = server.http().serve("127.0.0.1:0").expect("serve");
    let stream = call_2026(http.local_addr(), "sleep");
    recv(&started, "the handler to start sleeping");
    let left_at = std::time::Instant::now();
    drop(stream);
    assert!(
        recv(&ended, "the end of ctx.sleep after the client left"),
        "ctx.sleep did not end with the cancellation error"
    );
    assert!(
        left_at.elapsed() < WAIT,
        "woken after {:?}",
        left_at.elapsed()
    );
    http.shutdown();
}

// HTTP-13, ELIC-1: a JSON answer carries no request to the client, so a
// handler's elicitation on a client that accepts only JSON fails at once
// (a tool error), instead of waiting for the client-request timeout.
#[test]
fn json_only_clients_fail_requests_to_the_client_at_once() {
    use crate::support::http::{call_body, open_session_on, Conn, Req};
    let server = Server::builder("hardening", "1.0.0")
        .tool(
            Tool::new("ask", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| {
                let form =
                    tiny_mcp::ElicitRequestFormParams::new("name?", json!({"type": "object"}));
                ctx.elicit(form)?;
                Ok(CallToolResult::text("answered"))
            },
        )
        .build();
    let http = server.http().serve("127.0.0.1:0").expect("serve");
    let mut conn = Conn::open(http.local_addr());
    let session = open_session_on(&mut conn, "2025-11-25", json!({"elicitation": {}}));
    let call = Req::post(call_body(json!(2), "ask", None))
        .session(&session)
        .header("Accept", "application/json");
    let response = conn.request(&call, "the answer of a JSON-only call that elicits");
    response.expect_status(200, "tools/call ask");
    let message = response.json();
    assert_eq!(message["result"]["isError"], true, "{}", message);
    http.shutdown();
}

// CAN-1, CAN-3: a request cancelled while it waits for a worker is not run
// at all (and gets no response).
#[test]
fn a_job_cancelled_in_the_queue_never_runs() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (release, released) = crossbeam_channel::bounded::<()>(1);
    let released = Mutex::new(released);
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let server = Server::builder("hardening", "1.0.0")
        .max_workers(1)
        .tool(
            Tool::new("block", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                if let Ok(released) = released.lock() {
                    let _ = released.recv_timeout(WAIT);
                }
                Ok(CallToolResult::text("released"))
            },
        )
        .tool(
            Tool::new("count", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(CallToolResult::text("counted"))
            },
        )
        .build();
    let mut client = server.connect_memory();
    client.initialize(json!({})).expect("initialize");
    let block = client.send_request("tools/call", Some(json!({"name": "block"})));
    let queued = client.send_request("tools/call", Some(json!({"name": "count"})));
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": queued.to_value(), "reason": "changed my mind"})),
    );
    let _ = release.send(());
    client
        .wait_response(&block)
        .expect("the blocking call answers");
    let after = client.send_request("tools/call", Some(json!({"name": "count"})));
    client.wait_response(&after).expect("the last call answers");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the cancelled job ran");
}

// Issue 14 item 8: numbers keep every digit on their way through a tool
// (serde_json's float_roundtrip): 1e70 comes back as 1e70, not
// 9.999999999999999e69.
#[test]
fn numbers_round_trip_exactly() {
    let server = Server::builder("numbers", "1")
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |_: &RequestContext, args: JsonObject| {
                Ok(CallToolResult::structured(Value::Object(args)))
            },
        )
        .build();
    let mut client = crate::support::connect(&server, json!({}));
    let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"big":1e70,"pi":3.141592653589793,"tiny":5e-324}}}"#;
    let request: tiny_mcp::Message = tiny_mcp::Message::parse(line.as_bytes()).unwrap();
    client.send(request);
    let answer = client
        .wait_response(&tiny_mcp::RequestId::Number(7))
        .unwrap();
    let back = &answer["structuredContent"];
    assert_eq!(back["big"].as_f64(), Some(1e70));
    assert_eq!(back["pi"].as_f64(), Some(std::f64::consts::PI));
    assert_eq!(back["tiny"].as_f64(), Some(5e-324));
    assert_eq!(back["big"].to_string(), "1e70");
}

// Issue 14 item 7, DESIGN.md §6: HttpServer::shutdown returns although a
// handler ignores its cancellation: after `handler_exit_timeout` its
// worker is left running, detached.
#[test]
fn http_shutdown_returns_despite_a_handler_that_ignores_cancellation() {
    use crate::support::http::{call_body, open_session_on, Conn, Req};

    let (release, released) = crossbeam_channel::bounded::<()>(1);
    let (started, running) = crossbeam_channel::bounded::<()>(1);
    let (released, started) = (Mutex::new(released), Mutex::new(started));
    let server = Server::builder("hardening", "1.0.0")
        .handler_exit_timeout(Duration::from_millis(200))
        .tool(
            Tool::new("stubborn", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                if let Ok(started) = started.lock() {
                    let _ = started.send(());
                }
                if let Ok(released) = released.lock() {
                    let _ = released.recv_timeout(Duration::from_secs(30));
                }
                Ok(CallToolResult::text("late"))
            },
        )
        .build();
    let http = server
        .http()
        .shutdown_grace(Duration::from_millis(100))
        .serve("127.0.0.1:0")
        .unwrap();
    let mut conn = Conn::open(http.local_addr());
    let session = open_session_on(&mut conn, "2025-11-25", json!({}));
    conn.send(&Req::post(call_body(json!(2), "stubborn", None)).session(&session));
    crate::support::recv(&running, "the stubborn handler's start");
    let (done, returned) = crossbeam_channel::bounded(1);
    let stopping = std::thread::spawn(move || {
        http.shutdown();
        let _ = done.send(());
    });
    let outcome = returned.recv_timeout(Duration::from_secs(10));
    let _ = release.send(());
    let _ = stopping.join();
    assert!(outcome.is_ok(), "shutdown did not return");
}

// A hook that panics is a bug of the program's, not the end of serving:
// on_request_finished's panic is caught (its worker goes on, even the last
// one; an inline request is still answered), and a before_request hook's
// is a 500, each time.
#[test]
fn panicking_hooks_do_not_stop_serving() {
    use crate::support::http::{rpc, send, Req};
    let server = echo_server();
    let panicky = Server::builder("hooks", "1")
        .max_workers(1)
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("echo")),
        )
        .on_request_finished(|_: &tiny_mcp::RequestOutcome| panic!("a hook's bug"))
        .build();
    let mut client = crate::support::connect(&panicky, json!({}));
    for _ in 0..3 {
        let answer = crate::support::call_tool(&mut client, "echo", json!({}));
        assert_eq!(crate::support::first_text(&answer), "echo");
        assert!(client.request("ping", None).is_ok());
    }
    let http = server
        .http()
        .before_request(
            |_: &tiny_mcp::HttpRequestHead<'_>, _: Option<&tiny_mcp::Principal>| {
                panic!("a hook's bug")
            },
        )
        .serve("127.0.0.1:0")
        .expect("serve");
    for _ in 0..3 {
        let answer = send(
            http.local_addr(),
            &Req::post(rpc(json!(1), "ping", json!({}))),
            "a ping",
        );
        assert_eq!(answer.status(), 500, "{}", answer.text());
    }
    http.shutdown();
}
