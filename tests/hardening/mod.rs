//! Regressions found by trying the server as a hostile peer: HTTP framing,
//! sockets that must close, cancellation before a handler's first message,
//! and the end-of-input grace on stdio.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

const WAIT: Duration = Duration::from_secs(5);

fn wait_for<T>(receiver: &Receiver<T>, what: &str) -> T {
    match receiver.recv_timeout(WAIT) {
        Ok(value) => value,
        Err(_) => panic!("{} never arrived (waited {:?})", what, WAIT),
    }
}

fn echo_server() -> Server {
    Server::builder("hardening", "1.0.0")
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("echoed")),
        )
        .build()
}

/// Sends raw bytes and reads until the server closes the connection;
/// `None` if it did not close within the wait.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> Option<String> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    stream.write_all(bytes).expect("write");
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Some(String::from_utf8_lossy(&out).into_owned()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                return Some(String::from_utf8_lossy(&out).into_owned())
            }
            Err(_) => return None,
        }
    }
}

fn post_head(addr: SocketAddr, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{}\r\n",
        addr, extra
    )
}

/// A whole `ping` POST after which the server closes the connection.
fn ping_request(addr: SocketAddr) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let extra = format!("Content-Length: {}\r\nConnection: close\r\n", body.len());
    format!("{}{}", post_head(addr, &extra), body)
}

// HTTP-2 (limits): a chunk size that overflows is refused, not a panic.
#[test]
fn huge_chunk_size_is_refused_and_the_server_lives() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let request = format!(
        "{}1\r\n{{\r\nffffffffffffffff\r\n",
        post_head(addr, "Transfer-Encoding: chunked\r\n")
    );
    let answer = exchange(addr, request.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 413"), "{}", answer);
    let ping = ping_request(addr);
    let answer = exchange(addr, ping.as_bytes()).expect("closed after Connection: close");
    assert!(
        answer.starts_with("HTTP/1.1 "),
        "the server still answers: {}",
        answer
    );
    http.shutdown();
}

// HTTP-2: ambiguous framing (Content-Length with chunked, two Hosts) is a
// 400 and the connection closes, so no request hides in a body.
#[test]
fn ambiguous_framing_is_refused() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let smuggle = format!(
        "{}0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: {}\r\n\r\n",
        post_head(addr, "Content-Length: 40\r\nTransfer-Encoding: chunked\r\n"),
        addr
    );
    let answer = exchange(addr, smuggle.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    assert_eq!(
        answer.matches("HTTP/1.1").count(),
        1,
        "one response only: {}",
        answer
    );
    let two_hosts = post_head(addr, "Host: evil.example.com\r\nContent-Length: 0\r\n");
    let answer = exchange(addr, two_hosts.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    let weird_coding = post_head(addr, "Transfer-Encoding: gzip, chunked\r\n");
    let answer = exchange(addr, weird_coding.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    http.shutdown();
}

// HTTP-1: after an error response the server closes the socket at once.
#[test]
fn error_responses_close_the_connection() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let answer =
        exchange(addr, b"garbage\r\n\r\n").expect("closed without waiting for another client");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    http.shutdown();
}

// MHTTP-7 (2026-07-28): a client that goes away cancels its request even
// before the handler sent anything.
#[test]
fn modern_request_is_cancelled_when_the_client_leaves_before_any_message() {
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
    let addr = http.local_addr();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "wait", "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    })
    .to_string();
    let request = format!(
        "{}{}",
        post_head(
            addr,
            &format!(
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: wait\r\nContent-Length: {}\r\n",
                body.len()
            )
        ),
        body
    );
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(request.as_bytes()).expect("write");
    wait_for(&started, "the handler to start");
    drop(stream);
    assert!(
        wait_for(&cancelled, "the handler to end"),
        "the handler must see the cancellation"
    );
    http.shutdown();
}

/// A writer whose bytes the test can read afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn lines(out: &Shared) -> Vec<Value> {
    let bytes = out.0.lock().expect("lock").clone();
    String::from_utf8(bytes)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON message per line"))
        .collect()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

// STDIO-3: a client that pipes requests and closes stdin still gets the
// answers of handlers that finish within the grace period, even ones that
// check for cancellation first.
#[test]
fn end_of_input_lets_quick_handlers_answer() {
    let server = Server::builder("hardening", "1.0.0")
        .tool(
            Tool::new("careful", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.check_cancelled()?;
                Ok(CallToolResult::text("done"))
            },
        )
        .build();
    let input = format!(
        "{}\n{}\n",
        INIT, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"careful"}}"#
    );
    let out = Shared::default();
    server
        .serve_io(io::Cursor::new(input.into_bytes()), out.clone())
        .expect("serve_io");
    let answers = lines(&out);
    let call = answers
        .iter()
        .find(|m| m["id"] == 2)
        .expect("the call's answer");
    assert_eq!(call["result"]["content"][0]["text"], "done");
    assert!(call["result"].get("isError").is_none(), "{}", call);
}

/// Records the results its `after` hook sees.
struct Recorder(Arc<Mutex<Vec<Value>>>);

impl tiny_mcp::Interceptor for Recorder {
    fn after(&self, _: &RequestContext, outcome: tiny_mcp::HandlerOutcome<'_>) {
        if let tiny_mcp::HandlerOutcome::Result(value) = outcome {
            self.0.lock().expect("lock").push(value.clone());
        }
    }
}

/// The answer to request 2 of `server` over stdio, after `INIT`.
fn call_over_stdio(server: Server, call: &str) -> Value {
    let input = format!("{}\n{}\n", INIT, call);
    let out = Shared::default();
    server
        .serve_io(io::Cursor::new(input.into_bytes()), out.clone())
        .expect("serve_io");
    let answers = lines(&out);
    let answer = answers.iter().find(|m| m["id"] == 2);
    answer.expect("the call's answer").clone()
}

// server/tools "Structured Content": a tool's result reaches a stdio client
// written straight from its type, and an interceptor still sees it as a
// value, the same one the client gets.
#[test]
fn tool_results_reach_stdio_clients_and_interceptors_alike() {
    let structured = |_: &RequestContext, _: JsonObject| {
        Ok(CallToolResult::text_and_structured(
            "{\"n\":1}",
            json!({"n": 1}),
        ))
    };
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s"}}"#;
    let build = || {
        Server::builder("hardening", "1.0.0")
            .tool(Tool::new("s", json!({"type": "object"})), structured)
    };
    let plain = call_over_stdio(build().build(), call);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watched = call_over_stdio(build().intercept(Recorder(Arc::clone(&seen))).build(), call);
    assert_eq!(
        plain["result"]["structuredContent"],
        json!({"n": 1}),
        "{}",
        plain
    );
    assert_eq!(plain["result"]["content"][0]["text"], "{\"n\":1}");
    assert_eq!(plain, watched);
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen, vec![plain["result"].clone()]);
}

// CAN-1: handlers still running after the grace are cancelled and write
// nothing.
#[test]
fn end_of_input_cancels_slow_handlers_after_the_grace() {
    let server = Server::builder("hardening", "1.0.0")
        .end_of_input_grace(Duration::from_millis(20))
        .tool(
            Tool::new("stubborn", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| {
                let deadline = std::time::Instant::now() + WAIT;
                while !ctx.is_cancelled() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(CallToolResult::text("too late"))
            },
        )
        .build();
    let input = format!(
        "{}\n{}\n",
        INIT, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stubborn"}}"#
    );
    let out = Shared::default();
    server
        .serve_io(io::Cursor::new(input.into_bytes()), out.clone())
        .expect("serve_io");
    let answers = lines(&out);
    assert!(answers.iter().any(|m| m["id"] == 1), "initialize answered");
    assert!(
        answers.iter().all(|m| m["id"] != 2),
        "no answer after the cancel: {:?}",
        answers
    );
}

// RFC 9110 §8.6, RFC 9112 §7.1 (DESIGN.md §6: framing two parsers could
// read differently is refused): a signed Content-Length or chunk size, and
// a chunk-size line ended by a bare LF, get 400 and the connection closes.
#[test]
fn signed_lengths_and_bare_lf_chunks_are_refused() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let requests = [
        format!(
            "{}{}",
            post_head(addr, &format!("Content-Length: +{}\r\n", body.len())),
            body
        ),
        format!(
            "{}+{:x}\r\n{}\r\n0\r\n\r\n",
            post_head(addr, "Transfer-Encoding: chunked\r\n"),
            body.len(),
            body
        ),
        format!(
            "{}{:x}\n{}\r\n0\r\n\r\n",
            post_head(addr, "Transfer-Encoding: chunked\r\n"),
            body.len(),
            body
        ),
    ];
    for request in requests {
        let answer = exchange(addr, request.as_bytes()).expect("the connection must close");
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "{:?}: {}",
            request,
            answer
        );
    }
    http.shutdown();
}

// RFC 9112 §3.2.2: a server must accept the absolute form of a request
// target (`POST http://host/mcp`).
#[test]
fn absolute_form_targets_are_served() {
    let http = echo_server()
        .http()
        .stateless(true)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let head = post_head(
        addr,
        &format!("Content-Length: {}\r\nConnection: close\r\n", body.len()),
    )
    .replacen("POST /mcp ", &format!("POST http://{}/mcp ", addr), 1);
    let answer = exchange(addr, format!("{}{}", head, body).as_bytes()).expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", answer);
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

/// User plus system CPU time of process `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid)).unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

// DESIGN.md §6: when the process runs out of file descriptors (EMFILE),
// the acceptor backs off instead of spinning, logs once per episode, and
// serves again as soon as descriptors free up.
#[test]
fn descriptor_exhaustion_backs_off_and_recovers() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let example = crate::support::example_path("everything");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 40 && exec \"$0\" --http 127.0.0.1:0")
        .arg(&example)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example under ulimit -n 40");
    let pid = child.id();
    let mut stderr = io::BufReader::new(child.stderr.take().expect("stderr"));
    // Killed and reaped when the test ends, also when an assertion fails.
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Reaped(child);
    let mut first = String::new();
    stderr
        .read_line(&mut first)
        .expect("the example's first line");
    let addr: SocketAddr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {:?}", first));
    let (lines, line_count) = crossbeam_channel::unbounded::<String>();
    let log_reader = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    // Hold more connections than the process has descriptors.
    let held: Vec<TcpStream> = (0..80)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    assert!(held.len() > 40, "only {} connections opened", held.len());
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(2)); // a measurement window
    let spent = cpu_ticks(pid) - before;
    assert!(
        spent < 50,
        "the acceptor spun: {} ticks of CPU in 2 s",
        spent
    );
    drop(held);
    // Served again once descriptors are free (the pause is at most 1 s).
    let request = ping_request(addr);
    let answer = exchange(addr, request.as_bytes()).unwrap_or_default();
    assert!(
        answer.starts_with("HTTP/1.1 400"),
        "not served again: {:?}",
        answer
    );
    drop(child);
    let _ = log_reader.join();
    let logged: Vec<String> = line_count.try_iter().collect();
    assert!(
        logged.len() < 20,
        "{} log lines: {:?}",
        logged.len(),
        &logged[..5.min(logged.len())]
    );
}

/// Sends `bytes` one at a time, `gap` apart, as a slow client does, then
/// reads what the server answered before it closed.
fn trickle(addr: SocketAddr, bytes: &[u8], gap: Duration) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    for byte in bytes {
        if stream.write_all(&[*byte]).is_err() {
            break; // The server closed the connection.
        }
        std::thread::sleep(gap); // The slow client's pace, not a wait for the server.
    }
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

// RFC 9110 §15.5.9, DESIGN.md §6: a head or a body trickled byte by byte
// cannot hold a connection past its deadline: 408, and the connection
// closes, although no single read waited long.
#[test]
fn slow_heads_and_bodies_get_408() {
    let http = echo_server()
        .http()
        .request_head_timeout(Duration::from_millis(300))
        .request_body_timeout(Duration::from_millis(300))
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let head = post_head(addr, "Content-Length: 40\r\n");
    let answer = trickle(addr, head.as_bytes(), Duration::from_millis(50));
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "slow head: {:?}",
        answer
    );
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    stream.write_all(head.as_bytes()).expect("the head");
    for _ in 0..40 {
        if stream.write_all(b" ").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50)); // The slow client's pace.
    }
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let answer = String::from_utf8_lossy(&out);
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "slow body: {:?}",
        answer
    );
    http.shutdown();
}

// RFC 9112 §6.1 (HTTP/1.0 has no chunked coding): an HTTP/1.0 client's SSE
// answer is close-delimited: no `Transfer-Encoding`, the events as they
// are, and the connection closes at the end.
#[test]
fn http10_streams_are_close_delimited() {
    let http = echo_server()
        .http()
        .stateless(true)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let body =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{}",
        addr,
        body.len(),
        body
    );
    let answer = exchange(addr, request.as_bytes()).expect("the connection must close");
    let (head, events) = answer.split_once("\r\n\r\n").expect("a head");
    assert!(head.starts_with("HTTP/1.1 200"), "{}", head);
    assert!(head.contains("text/event-stream"), "{}", head);
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding"),
        "{}",
        head
    );
    assert!(head.contains("Connection: close"), "{}", head);
    assert!(
        events.starts_with("id: ") || events.starts_with("event: "),
        "{:?}",
        events
    );
    assert!(events.contains(r#""text":"echoed""#), "{:?}", events);
    http.shutdown();
}

/// Input that reaches its end only once `gate` opens (a handler started).
struct GatedInput {
    data: io::Cursor<Vec<u8>>,
    gate: Receiver<()>,
}

impl Read for GatedInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.data.read(buf)?;
        if n == 0 {
            let _ = self.gate.recv_timeout(WAIT);
        }
        Ok(n)
    }
}

// DESIGN.md §6: end of input returns although a handler ignores its
// cancellation: after `handler_exit_timeout` its thread is left running.
#[test]
fn end_of_input_returns_despite_a_handler_that_ignores_cancellation() {
    let (release, released) = crossbeam_channel::bounded::<()>(1);
    let (started, gate) = crossbeam_channel::bounded::<()>(1);
    let released = Mutex::new(released);
    let started = Mutex::new(started);
    let server = Server::builder("hardening", "1.0.0")
        .end_of_input_grace(Duration::from_millis(0))
        .handler_exit_timeout(Duration::from_millis(200))
        .tool(
            Tool::new("stubborn", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                if let Ok(started) = started.lock() {
                    let _ = started.send(());
                }
                // Ignores cancellation; ends only when the test releases it.
                if let Ok(released) = released.lock() {
                    let _ = released.recv_timeout(Duration::from_secs(30));
                }
                Ok(CallToolResult::text("late"))
            },
        )
        .build();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stubborn"}}"#,
        "",
    ]
    .join("\n");
    let reader = io::BufReader::new(GatedInput {
        data: io::Cursor::new(input.into_bytes()),
        gate,
    });
    let (done, returned) = crossbeam_channel::bounded(1);
    let served = std::thread::spawn(move || {
        let outcome = server.serve_io(reader, io::sink());
        let _ = done.send(outcome.is_ok());
    });
    let outcome = returned.recv_timeout(Duration::from_secs(10));
    let _ = release.send(());
    let _ = served.join();
    assert_eq!(
        outcome,
        Ok(true),
        "serve_io did not return after end of input"
    );
}

// HTTP-16, DESIGN.md §6: a client flooding `initialize` cannot lock the
// others out: when the table is full, a session never used since its
// `initialize` makes room, a session in use does not, and only a table
// full of used sessions answers 503.
#[test]
fn an_initialize_flood_evicts_only_unused_sessions() {
    use crate::support::http::{initialize_body, open_session, rpc, send, Req};
    let http = echo_server()
        .http()
        .max_sessions(4)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let ping = |session: &str| {
        let req = Req::post(rpc(json!(9), "ping", json!({}))).session(session);
        send(addr, &req, "a ping on a session").status()
    };
    let used = open_session(addr, "2025-11-25", json!({}));
    assert_eq!(ping(&used), 200);
    for _ in 0..20 {
        let flood = Req::post(initialize_body(json!(1), "2025-11-25", json!({})));
        let response = send(addr, &flood, "a flooding initialize");
        response.expect_status(
            200,
            "an initialize while the table is full of unused sessions",
        );
    }
    assert_eq!(ping(&used), 200, "the used session was evicted");
    let others: Vec<String> = (0..3)
        .map(|_| open_session(addr, "2025-11-25", json!({})))
        .collect();
    for session in &others {
        assert_eq!(ping(session), 200);
    }
    let refused = send(
        addr,
        &Req::post(initialize_body(json!(1), "2025-11-25", json!({}))),
        "an initialize with every session in use",
    );
    refused.expect_status(503, "a table full of used sessions");
    http.shutdown();
}

/// A server whose `big` tool sends progress, waits for the test, then
/// answers 40 KiB; and calls of it whose client leaves before the answer,
/// so that the answer is retained for resumption.
struct BigCalls {
    server: Server,
    release: crossbeam_channel::Sender<()>,
    finishes: Receiver<String>,
}

impl BigCalls {
    fn new() -> BigCalls {
        let (release, released) = crossbeam_channel::unbounded::<()>();
        let released = Mutex::new(released);
        let (finished, finishes) = crossbeam_channel::unbounded::<String>();
        let finished = Mutex::new(finished);
        let server = Server::builder("hardening", "1.0.0")
            .tool(
                Tool::new("big", json!({"type": "object"})),
                move |ctx: &RequestContext, _: JsonObject| {
                    ctx.notify_progress(1.0, None, None);
                    if let Ok(released) = released.lock() {
                        let _ = released.recv_timeout(WAIT);
                    }
                    Ok(CallToolResult::text("x".repeat(40 * 1024)))
                },
            )
            .on_request_finished(move |outcome: &tiny_mcp::RequestOutcome| {
                if let Ok(finished) = finished.lock() {
                    let _ = finished.send(outcome.method.clone());
                }
            })
            .build();
        BigCalls {
            server,
            release,
            finishes,
        }
    }

    /// Call `n` of `big` on `session`; the client leaves after the
    /// progress, and the call finishes into the stream's replay buffer.
    fn left_early(&self, addr: SocketAddr, session: &str, n: i64) {
        use crate::support::http::{call_body, Conn, Req};
        let mut conn = Conn::open(addr);
        let call = Req::post(call_body(json!(n), "big", Some("p"))).session(session);
        conn.start(&call, "a big call's stream");
        while conn
            .next_event("the big call's progress")
            .map_or(false, |e| e.message().is_none())
        {}
        drop(conn); // The client leaves before the answer.
        let _ = self.release.send(());
        while wait_for(&self.finishes, "the big call's end") != "tools/call" {}
    }
}

// DESIGN.md §6 (retained bytes): a session keeps at most
// `max_retained_bytes_per_session` of finished streams for resumption;
// opening a stream forgets the oldest past it, and resuming one of those
// gets the clear "ended" answer, while the newest still resumes.
#[test]
fn retained_replay_bytes_are_bounded_per_session() {
    use crate::support::http::{call_body, open_session, Conn, Req};
    let big = BigCalls::new();
    let http = big
        .server
        .http()
        .max_retained_bytes_per_session(64 * 1024)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    for n in 1..=4 {
        big.left_early(addr, &session, n);
    }
    let release = &big.release;
    // A fifth call opens a stream, which forgets the oldest past the limit.
    let _ = release.send(());
    let fifth = Req::post(call_body(json!(5), "big", None)).session(&session);
    Conn::open(addr).request(&fifth, "the fifth call");
    let resume = |id: &str| {
        let req = Req::get(&session).header("Last-Event-ID", id);
        let mut conn = Conn::open(addr);
        let head = conn.start(&req, "a resume");
        (head.status, conn)
    };
    let (oldest, _) = resume("1-1");
    assert_eq!(oldest, 400, "the oldest stream should be forgotten");
    let (newest, mut conn) = resume("4-1");
    assert_eq!(newest, 200, "the newest stream should resume");
    let replayed = conn.next_message("the newest stream's replay");
    assert!(replayed.is_object());
    http.shutdown();
}

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

// Issue 14 item 2, DESIGN.md §6: past max_connections a connection is
// refused at once with 503 and closed, by the acceptor (no thread of its
// own), while the connections already open are served.
#[test]
fn connections_past_the_limit_get_503() {
    use crate::support::http::{open_session_on, rpc, send, Conn, Req};

    let server = Server::builder("hardening", "1.0.0").build();
    let http = server
        .http()
        .max_connections(2)
        .serve("127.0.0.1:0")
        .unwrap();
    let addr = http.local_addr();
    let mut held = Vec::new();
    for _ in 0..2 {
        // Answered, and the connection (keep-alive) stays open, counted.
        let mut conn = Conn::open(addr);
        let session = open_session_on(&mut conn, "2025-11-25", json!({}));
        held.push((conn, session));
    }
    let ping = rpc(json!(1), "ping", json!({}));
    let refused = send(addr, &Req::post(ping.clone()), "a third connection");
    assert_eq!(refused.status(), 503);
    // The open connections are still served.
    let (conn, session) = &mut held[0];
    let answer = conn.request(&Req::post(ping).session(session), "a ping on a held one");
    assert_eq!(answer.status(), 200, "{}", answer.text());
}

// Issue 14 item 6, DESIGN.md §6: retained replay bytes are bounded across
// sessions too. A session that never opens another stream cannot keep the
// server's whole allowance: when another session's stream takes the
// server past `max_retained_bytes`, the oldest finished streams of the
// sessions least recently seen are forgotten (their resume gets 400
// "ended"), and the newest still resume.
#[test]
fn retained_replay_bytes_are_bounded_across_sessions() {
    use crate::support::http::{call_body, open_session, Conn, Req};
    let big = BigCalls::new();
    let http = big
        .server
        .http()
        .max_retained_bytes(100 * 1024)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let first = open_session(addr, "2025-11-25", json!({}));
    for n in 1..=3 {
        big.left_early(addr, &first, n); // 120 KiB retained by the first session
    }
    let release = &big.release;
    let second = open_session(addr, "2025-11-25", json!({}));
    let _ = release.send(());
    let call = Req::post(call_body(json!(9), "big", None)).session(&second);
    Conn::open(addr).request(&call, "the second session's call");
    let resume = |id: &str| {
        let req = Req::get(&first).header("Last-Event-ID", id);
        Conn::open(addr).start(&req, "a resume").status
    };
    assert_eq!(resume("1-1"), 400, "the oldest stream should be forgotten");
    assert_eq!(resume("3-1"), 200, "the newest stream should resume");
    http.shutdown();
}

// Issue 14 item 5, DESIGN.md §6: with `max_sessions_per_peer`, one
// address cannot fill the session table even with sessions it uses: its
// `initialize` past the limit ends its own oldest session (HTTP-18: that
// id then gets 404), and the table keeps room for everyone else.
#[test]
fn a_peer_s_sessions_are_bounded_by_its_own_oldest() {
    use crate::support::http::{open_session, rpc, send, Req};
    let http = echo_server()
        .http()
        .max_sessions(4)
        .max_sessions_per_peer(2)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let ping = |session: &str| {
        let req = Req::post(rpc(json!(9), "ping", json!({}))).session(session);
        send(addr, &req, "a ping on a session").status()
    };
    let mut sessions = Vec::new();
    for _ in 0..6 {
        let session = open_session(addr, "2025-11-25", json!({}));
        assert_eq!(ping(&session), 200, "a new session is served");
        sessions.push(session);
    }
    let statuses: Vec<u16> = sessions.iter().map(|s| ping(s)).collect();
    assert_eq!(statuses, [404, 404, 404, 404, 200, 200]);
    http.shutdown();
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

// Issue 14 item 7, DESIGN.md §6 (`write_timeout`): a client that never
// reads its GET stream holds a connection only until one write has
// blocked for `write_timeout`. Then the connection is closed (its place
// among `max_connections` is free again, which is what this test waits
// for, by trying to connect) while the server goes on serving, and the
// stream stays replayable (HTTP-14: `Last-Event-ID`).
#[test]
fn a_client_that_never_reads_is_dropped_and_its_stream_replays() {
    use crate::support::http::{open_session_on, rpc, send, Conn, Req};
    let server = echo_server();
    let http = server
        .http()
        .max_connections(2)
        .write_timeout(Duration::from_millis(200))
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let mut held = Conn::open(addr);
    let session = open_session_on(&mut held, "2025-11-25", json!({}));
    let mut stalled = Conn::open(addr);
    let head = stalled.start(&Req::get(&session), "the GET stream");
    assert_eq!(head.status, 200);
    // More than the socket buffers hold: a write blocks, and times out.
    let big = "x".repeat(64 * 1024);
    for _ in 0..160 {
        server
            .handle()
            .log(tiny_mcp::LoggingLevel::Info, None, big.as_str());
    }
    let ping = Req::post(rpc(json!(1), "ping", json!({}))).session(&session);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let status = send(addr, &ping, "a ping on a third connection").status();
        if status == 200 {
            break; // the stalled connection was closed
        }
        assert_eq!(status, 503, "the held connections are at the limit");
        assert!(
            std::time::Instant::now() < deadline,
            "the stalled connection was never closed"
        );
    }
    drop(stalled);
    // On the held connection: the probe's may still count as open.
    let resume = Req::get(&session).header("Last-Event-ID", "0-1");
    let head = held.start(&resume, "the resumed GET stream");
    assert_eq!(head.status, 200, "the stream should replay");
    let replayed = held.next_message("a replayed log message");
    assert_eq!(replayed["method"], "notifications/message");
    http.shutdown();
}
