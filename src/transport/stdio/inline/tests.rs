//! Single-threaded serving, driven line by line: the server runs on a
//! thread of the test's, as `serve_stdio` would on a target without
//! threads (the pumped path), and the test answers what it writes.

use std::io::{self, BufReader, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};
use serde_json::{json, Value};

use super::super::tests::OpenInput;
use super::{serve_pumped, serve_unpumped};
use crate::{
    CallToolResult, ElicitAction, ElicitRequestFormParams, Error, JsonObject, RequestContext,
    Server, Tool,
};

const WAIT: Duration = Duration::from_secs(10);

/// Output that hands each written line to the test.
struct Lines(Sender<Value>, Vec<u8>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.1.extend_from_slice(buf);
        while let Some(end) = self.1.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.1.drain(..=end).collect();
            let value = serde_json::from_slice(&line).unwrap_or(Value::Null);
            let _ = self.0.send(value);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A served connection: lines in, messages out, and how serving ended.
struct Peer {
    input: Option<Sender<Vec<u8>>>,
    output: Receiver<Value>,
    served: Receiver<Result<(), Error>>,
}

impl Peer {
    /// Serves `server`, and opens a 2025-11-25 session.
    fn start(server: &Server) -> Peer {
        let peer = Peer::serve(server);
        let caps = json!({"elicitation": {"form": {}}});
        peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": caps,
                       "clientInfo": {"name": "t", "version": "1"}}}));
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(peer.next()["id"], 1);
        peer
    }

    /// Serves `server`; nothing sent yet.
    fn serve(server: &Server) -> Peer {
        let (input, lines) = unbounded();
        let (written, output) = unbounded();
        let (done, served) = unbounded();
        let server = server.clone();
        thread::spawn(move || {
            let reader = BufReader::new(OpenInput(lines, Vec::new()));
            let _ = done.send(serve_pumped(&server, reader, Lines(written, Vec::new())));
        });
        Peer {
            input: Some(input),
            output,
            served,
        }
    }

    fn send(&self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        if let Some(input) = &self.input {
            input.send(line).expect("the server reads");
        }
    }

    fn call(&self, id: u64, name: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": name, "arguments": {}}}));
    }

    fn next(&self) -> Value {
        self.output
            .recv_timeout(WAIT)
            .expect("a message from the server")
    }

    /// Closes the input and returns how serving ended.
    fn end(mut self) -> Result<(), Error> {
        self.input = None;
        self.served.recv_timeout(WAIT).expect("serving returned")
    }
}

/// `ask` elicits a name; `mark` counts its runs.
fn server(marks: &Arc<AtomicUsize>) -> Server {
    let marks = Arc::clone(marks);
    Server::builder("inline", "1")
        .max_workers(0)
        .tool(
            Tool::without_arguments("ask"),
            |ctx: &RequestContext, _: JsonObject| {
                let form = ElicitRequestFormParams::new(
                    "Your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                );
                let answer = ctx.elicit(form)?;
                match (answer.action, answer.content) {
                    (ElicitAction::Accept, Some(content)) => {
                        Ok(CallToolResult::text(content["name"].to_string()))
                    }
                    _ => Ok(CallToolResult::error("no name")),
                }
            },
        )
        .tool(
            Tool::without_arguments("mark"),
            move |_: &RequestContext, _: JsonObject| {
                marks.fetch_add(1, Ordering::SeqCst);
                Ok(CallToolResult::text("marked"))
            },
        )
        .build()
}

// basic/transports "stdio" and client/elicitation (2025-11-25), served
// single-threaded: the elicitation's answer is read by the waiting
// handler; a ping read meanwhile is answered at once; a tools/call read
// meanwhile runs after the waiting one answered, in order.
#[test]
fn a_waiting_handler_reads_its_answer_and_queues_other_calls() {
    let marks = Arc::new(AtomicUsize::new(0));
    let peer = Peer::start(&server(&marks));
    peer.call(2, "ask");
    let question = peer.next();
    assert_eq!(question["method"], "elicitation/create", "{}", question);
    peer.call(3, "mark");
    peer.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert_eq!(peer.next()["id"], 4, "the ping is answered during the wait");
    assert_eq!(marks.load(Ordering::SeqCst), 0, "mark ran before ask ended");
    peer.send(json!({"jsonrpc": "2.0", "id": question["id"],
                     "result": {"action": "accept", "content": {"name": "Ada"}}}));
    let asked = peer.next();
    assert_eq!(asked["id"], 2);
    assert_eq!(
        asked["result"]["content"][0]["text"], "\"Ada\"",
        "{}",
        asked
    );
    let marked = peer.next();
    assert_eq!(marked["id"], 3, "{}", marked);
    assert_eq!(marks.load(Ordering::SeqCst), 1);
    assert!(peer.end().is_ok());
}

// basic/utilities/cancellation (2025-11-25): a cancel of a request read
// while another handler runs takes effect before it starts: it never
// runs and gets no response; serving goes on.
#[test]
fn a_queued_request_cancelled_before_it_starts_never_runs() {
    let marks = Arc::new(AtomicUsize::new(0));
    let peer = Peer::start(&server(&marks));
    peer.call(2, "ask");
    let question = peer.next();
    peer.call(3, "mark");
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 3, "reason": "changed my mind"}}),
    );
    peer.send(json!({"jsonrpc": "2.0", "id": question["id"],
                     "result": {"action": "accept", "content": {"name": "Ada"}}}));
    assert_eq!(peer.next()["id"], 2);
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    let next = peer.next();
    assert_eq!(next["id"], 5, "the cancelled call answered: {}", next);
    assert_eq!(marks.load(Ordering::SeqCst), 0);
    assert!(peer.end().is_ok());
}

// The input ends while a handler waits for its answer: the wait ends
// with the connection's close, the call is still answered (an error
// result), and serving returns.
#[test]
fn end_of_input_during_a_wait_ends_the_wait() {
    let marks = Arc::new(AtomicUsize::new(0));
    let peer = Peer::start(&server(&marks));
    peer.call(2, "ask");
    assert_eq!(peer.next()["method"], "elicitation/create");
    let output = peer.output.clone();
    assert!(peer.end().is_ok());
    let answer = output.recv_timeout(WAIT).expect("the call is answered");
    assert_eq!(answer["id"], 2, "{}", answer);
    assert!(answer.get("error").is_some() || answer["result"]["isError"] == true);
}

// serve_io served single-threaded reads nothing during a handler (its
// reader may borrow): the handler's request to the client fails at once
// instead of waiting, and the lines after it are served in order.
#[test]
fn serve_io_single_threaded_fails_requests_to_the_client_at_once() {
    let marks = Arc::new(AtomicUsize::new(0));
    let server = server(&marks);
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25",
                          "capabilities": {"elicitation": {"form": {}}},
                          "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "ask", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "mark", "arguments": {}}}),
    ]
    .iter()
    .map(|m| format!("{}\n", m))
    .collect::<String>();
    let (written, output) = unbounded();
    let served = serve_unpumped(&server, input.as_bytes(), Lines(written, Vec::new()));
    assert!(served.is_ok(), "{:?}", served);
    let ids: Vec<Value> = output.try_iter().map(|m| m["id"].clone()).collect();
    assert_eq!(
        ids,
        vec![json!(1), json!(2), json!(3)],
        "nothing sent to the client"
    );
    assert_eq!(marks.load(Ordering::SeqCst), 1);
}

/// A 2026-07-28 request's `params`, with the envelope of a client that
/// takes tasks and form elicitation.
#[cfg(feature = "tasks")]
fn enveloped(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    });
    params
}

// SEP-2663 "Task Update Requests" (the tasks extension, 2026-07-28), served
// single-threaded: a task waiting for input reads on, so `tasks/get` shows
// it `input_required`, `tasks/update` is acknowledged and resumes it, and
// the next `tasks/get`, read after it returned, finds it completed.
#[cfg(feature = "tasks")]
#[test]
fn a_task_waiting_for_input_reads_its_tasks_update() {
    let tool = Tool::without_arguments("ask_task").with_task_support(crate::TaskSupport::Required);
    let server = Server::builder("inline", "1")
        .max_workers(0)
        .tool(tool, |ctx: &RequestContext, _: JsonObject| {
            let form = ElicitRequestFormParams::new(
                "Your name?",
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            );
            let answer = ctx.elicit(form)?;
            let name = answer.content.map(|c| c["name"].to_string());
            Ok(CallToolResult::text(name.unwrap_or_default()))
        })
        .build();
    let peer = Peer::serve(&server);
    let request = |id: u64, method: &str, params: Value| {
        peer.send(json!({"jsonrpc": "2.0", "id": id, "method": method,
                         "params": enveloped(params)}));
        let answer = peer.next();
        assert_eq!(answer["id"], id, "{}", answer);
        assert!(answer.get("result").is_some(), "{}", answer);
        answer["result"].clone()
    };
    let created = request(
        2,
        "tools/call",
        json!({"name": "ask_task", "arguments": {}}),
    );
    let task_id = created["taskId"]
        .as_str()
        .expect("a CreateTaskResult")
        .to_string();
    let waiting = request(3, "tasks/get", json!({"taskId": task_id}));
    assert_eq!(waiting["status"], "input_required", "{}", waiting);
    let key = waiting["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("an input request");
    let answer = json!({ key: {"action": "accept", "content": {"name": "Ada"}} });
    request(
        4,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": answer}),
    );
    let done = request(5, "tasks/get", json!({"taskId": task_id}));
    assert_eq!(done["status"], "completed", "{}", done);
    assert_eq!(done["result"]["content"][0]["text"], "\"Ada\"", "{}", done);
    assert!(peer.end().is_ok());
}

/// Says `WouldBlock` `left` times, then gives `data`.
struct NotYet {
    left: usize,
    data: &'static [u8],
}

impl Read for NotYet {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left > 0 {
            self.left -= 1;
            return Err(io::Error::from(io::ErrorKind::WouldBlock));
        }
        self.data.read(buf)
    }
}

// A non-blocking stdin (Node's node:wasi on a pipe) that has no input yet
// is read again, not taken for a failed read that ends serving.
#[test]
fn a_stdin_that_would_block_is_read_again() {
    let mut stdin = super::BlockingStdin(NotYet {
        left: 3,
        data: b"{}\n",
    });
    let mut buf = [0u8; 8];
    let n = stdin.read(&mut buf).expect("read after WouldBlock");
    assert_eq!(&buf[..n], b"{}\n");
}

// Limits (README "Limits", max_in_flight): what a client sends while a
// handler waits is bounded. Calls past max_in_flight get -32603 at once;
// a quick tool's call runs at once (it is not in the in-flight table, so
// it never queues); the queued calls run after the waiting one, in order.
#[test]
fn calls_read_during_a_wait_are_bounded_by_the_in_flight_limit() {
    let marks = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("inline", "1")
        .max_workers(0)
        .max_in_flight(3)
        .tool(
            Tool::without_arguments("ask"),
            |ctx: &RequestContext, _: JsonObject| {
                let form = ElicitRequestFormParams::new("Name?", json!({"type": "object"}));
                ctx.elicit(form)?;
                Ok(CallToolResult::text("asked"))
            },
        )
        .tool(Tool::without_arguments("mark"), {
            let marks = Arc::clone(&marks);
            move |_: &RequestContext, _: JsonObject| {
                marks.fetch_add(1, Ordering::SeqCst);
                Ok(CallToolResult::text("marked"))
            }
        })
        .quick_tool(
            Tool::without_arguments("now"),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("now")),
        )
        .build();
    let peer = Peer::start(&server);
    peer.call(2, "ask");
    let question = peer.next();
    for id in 10..20 {
        peer.call(id, "mark");
    }
    peer.call(30, "now");
    // ask holds one slot, 10 and 11 the other two: 12 to 19 are refused.
    for id in 12..20 {
        let refused = peer.next();
        assert_eq!(refused["id"], id, "{}", refused);
        assert_eq!(refused["error"]["code"], -32603, "{}", refused);
    }
    assert_eq!(peer.next()["id"], 30, "the quick call ran during the wait");
    peer.send(json!({"jsonrpc": "2.0", "id": question["id"],
                     "result": {"action": "accept", "content": {}}}));
    for id in [2, 10, 11] {
        assert_eq!(peer.next()["id"], id);
    }
    assert_eq!(marks.load(Ordering::SeqCst), 2);
    assert!(peer.end().is_ok());
}

// Limits (max_queued_bytes): the requests waiting behind a handler that
// waits for its client are bounded in bytes too (on wasm32 all memory is
// 4 GiB): past the budget a request is answered -32603 at once, the
// first one always fits, and the queued ones run after the wait.
#[test]
fn requests_queued_during_a_wait_are_bounded_in_bytes() {
    let marks = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("inline", "1")
        .max_workers(0)
        .max_queued_bytes(300)
        .tool(
            Tool::without_arguments("ask"),
            |ctx: &RequestContext, _: JsonObject| {
                ctx.elicit(ElicitRequestFormParams::new(
                    "Name?",
                    json!({"type": "object"}),
                ))?;
                Ok(CallToolResult::text("asked"))
            },
        )
        .tool(Tool::new("mark", json!({"type": "object"})), {
            let marks = Arc::clone(&marks);
            move |_: &RequestContext, _: JsonObject| {
                marks.fetch_add(1, Ordering::SeqCst);
                Ok(CallToolResult::text("marked"))
            }
        })
        .build();
    let peer = Peer::start(&server);
    peer.call(2, "ask");
    let question = peer.next();
    // Each line is 133 bytes: two fit in 300, the third does not.
    let padding = "x".repeat(40);
    for id in 10..13 {
        peer.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "mark", "arguments": {"p": padding}}}));
    }
    let refused = peer.next();
    assert_eq!(refused["id"], 12, "{}", refused);
    assert_eq!(refused["error"]["code"], -32603, "{}", refused);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("too many requests queued"), "{}", message);
    peer.send(json!({"jsonrpc": "2.0", "id": question["id"],
                     "result": {"action": "accept", "content": {}}}));
    for id in [2, 10, 11] {
        assert_eq!(peer.next()["id"], id);
    }
    // Served in turn again: the queue's bytes were given back.
    peer.call(13, "mark");
    assert_eq!(peer.next()["id"], 13);
    assert_eq!(marks.load(Ordering::SeqCst), 3);
    assert!(peer.end().is_ok());
}

// Server::close from another thread while the read blocks: serving ends
// at the next line (one thread cannot cut a read), and that line is not
// acted on, as on the threaded path.
#[test]
fn a_close_while_the_read_blocks_leaves_the_next_line_unanswered() {
    let marks = Arc::new(AtomicUsize::new(0));
    let server = server(&marks);
    let peer = Peer::start(&server);
    server.close();
    peer.call(2, "mark");
    let output = peer.output.clone();
    assert!(peer.end().is_ok());
    let after: Vec<Value> = output.try_iter().collect();
    assert!(after.is_empty(), "answered after the close: {:?}", after);
    assert_eq!(marks.load(Ordering::SeqCst), 0);
}
