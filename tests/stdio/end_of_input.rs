//! End of input on stdio: the grace period, cancellation after it, a
//! handler that ignores it, honest logs; and results written straight from
//! their type.

use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::example_path;
use crate::support::http::{initialize_body, rpc, LATEST};

use crate::support::WAIT;

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
