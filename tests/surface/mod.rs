//! Errors and panics reach the caller: `serve_io` returns the writer's
//! failure, a panicking writer thread is reported, and a handler may stop
//! its own HTTP server.

use std::io::{self, Cursor, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tiny_mcp::{CallToolResult, ErrorKind, HttpServer, JsonObject, RequestContext, Server, Tool};

use crate::support::http::{call_body, open_session_on, send, Conn, Req, Response};

fn echo_server() -> Server {
    Server::builder("surface", "1.0.0")
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("echoed")),
        )
        .build()
}

const PING: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

/// A writer whose every write fails, as a closed stdout does.
struct BrokenPipe;

impl Write for BrokenPipe {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            "stdout is closed",
        ))
    }
    fn flush(&mut self) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            "stdout is closed",
        ))
    }
}

/// A writer that panics, as a bug in a user's writer would.
struct Panicking;

impl Write for Panicking {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        panic!("the writer failed");
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

// STDIO-1, basic/transports "stdio" (2025-11-25): stdout is the protocol;
// when writing it fails, serve_io says so instead of returning Ok.
#[test]
fn serve_io_returns_the_writer_error() {
    let input = Cursor::new(PING.repeat(3).into_bytes());
    let error = match echo_server().serve_io(input, BrokenPipe) {
        Err(error) => error,
        Ok(()) => panic!("serve_io returned Ok after stdout broke"),
    };
    match error.kind() {
        ErrorKind::Io(e) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
        other => panic!("expected the writer's I/O error, got {:?}", other),
    }
}

// A panic in a user's writer is reported to the caller as the failed
// write it is, and does not unwind through serve_io.
#[test]
fn serve_io_reports_a_panicking_writer() {
    let input = Cursor::new(PING.as_bytes().to_vec());
    let error = match echo_server().serve_io(input, Panicking) {
        Err(error) => error,
        Ok(()) => panic!("serve_io returned Ok after its writer panicked"),
    };
    match error.kind() {
        ErrorKind::Io(e) => assert!(e.to_string().contains("panicked"), "{}", e),
        other => panic!("expected the failed write, got {:?}", other),
    }
}

/// Serves a server whose `stop` tool calls `HttpServer::shutdown` on its
/// own server; returns the server and its address.
fn stoppable(stateless: bool) -> (Arc<HttpServer>, std::net::SocketAddr) {
    let slot: Arc<Mutex<Option<Arc<HttpServer>>>> = Arc::new(Mutex::new(None));
    let handler_slot = Arc::clone(&slot);
    let server = Server::builder("surface", "1.0.0")
        .tool(
            Tool::new("stop", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                let http = handler_slot.lock().ok().and_then(|mut s| s.take());
                match http {
                    Some(http) => {
                        http.shutdown();
                        Ok(CallToolResult::text("stopping"))
                    }
                    None => Ok(CallToolResult::error("no server to stop")),
                }
            },
        )
        .build();
    let http = match server.http().stateless(stateless).serve("127.0.0.1:0") {
        Ok(http) => Arc::new(http),
        Err(e) => panic!("cannot serve: {}", e),
    };
    let addr = http.local_addr();
    *slot.lock().unwrap() = Some(Arc::clone(&http));
    (http, addr)
}

/// Asserts that the stop call was answered, then that the server stopped.
fn expect_stopped(http: Arc<HttpServer>, addr: std::net::SocketAddr, response: Response) {
    response.expect_status(200, "tools/call stop");
    let answer = response
        .messages()
        .into_iter()
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no response to the stop call: {:?}", response.head));
    assert_eq!(answer["result"]["content"][0]["text"], "stopping");
    assert!(http.join().is_ok(), "join after a handler's shutdown");
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "the listener is still open after shutdown"
    );
}

// HttpServer::shutdown from inside a handler (a tool that stops the
// server) answers the call, does not panic ("Resource deadlock avoided"),
// and leaves join() on the owner's thread to finish the clean-up: in the
// stateless mode, and on a session with an SSE or a JSON answer.
#[test]
fn a_handler_can_stop_its_own_http_server() {
    let (http, addr) = stoppable(true);
    let call = Req::post(call_body(json!(2), "stop", None));
    let response = send(addr, &call, "the stop tool's answer (stateless)");
    expect_stopped(http, addr, response);
    for accept in ["application/json, text/event-stream", "application/json"] {
        let (http, addr) = stoppable(false);
        let mut conn = Conn::open(addr);
        let session = open_session_on(&mut conn, "2025-11-25", json!({}));
        let call = Req::post(call_body(json!(2), "stop", None))
            .session(&session)
            .header("Accept", accept);
        let response = conn.request(&call, "the stop tool's answer (session)");
        expect_stopped(http, addr, response);
    }
}

// DESIGN.md §6 (time bounds), LC-7: a client that stops reading an SSE
// stream cannot make HttpServer::shutdown wait for ever (or for the write
// timeout): after the shutdown grace its socket is closed and every thread
// is joined.
#[test]
fn shutdown_is_bounded_by_a_client_that_stops_reading() {
    let (produced, all_produced) = crossbeam_channel::bounded::<()>(1);
    let produced = Mutex::new(produced);
    let server = Server::builder("surface", "1.0.0")
        .tool(
            Tool::new("flood", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                // 64 MiB of progress: far more than any socket buffers.
                let text = "x".repeat(16 * 1024);
                for step in 0..4096 {
                    ctx.notify_progress(f64::from(step), None, Some(&text));
                }
                if let Ok(produced) = produced.lock() {
                    let _ = produced.send(());
                }
                Ok(CallToolResult::text("flooded"))
            },
        )
        .build();
    let http = match server.http().serve("127.0.0.1:0") {
        Ok(http) => http,
        Err(e) => panic!("cannot serve: {}", e),
    };
    let addr = http.local_addr();
    let mut conn = Conn::open(addr);
    let session = open_session_on(&mut conn, "2025-11-25", json!({}));
    let call = Req::post(call_body(json!(2), "flood", Some("p"))).session(&session);
    // Read only the head: the server's writer then blocks on a full socket.
    let head = conn.start(&call, "the flood's stream head");
    assert!(head.is_sse(), "{:?}", head);
    if all_produced.recv_timeout(Duration::from_secs(20)).is_err() {
        panic!("the flood tool never finished producing");
    }
    let (done, stopped) = crossbeam_channel::bounded(1);
    let stopper = std::thread::spawn(move || {
        http.shutdown();
        let _ = done.send(http.join().is_ok());
    });
    match stopped.recv_timeout(Duration::from_secs(15)) {
        Ok(joined) => assert!(joined, "join reported a failure"),
        Err(_) => panic!("shutdown did not return within 15 s of a client that stopped reading"),
    }
    let _ = stopper.join();
    drop(conn);
}
