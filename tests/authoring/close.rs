//! Ownership that shuts down cleanly (issue 13, item 5): closing a server
//! stops its transports and drops its handlers; weak handles do not keep
//! it alive; the `graceful_shutdown` example exits 0 on SIGTERM.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::json;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::{call_tool, connect, example_path, recv};

const WAIT: Duration = Duration::from_secs(10);

/// A server whose one tool owns `sender`, as a program's job queue would.
fn server_owning(sender: crossbeam_channel::Sender<String>) -> Server {
    Server::builder("owner", "1")
        .tool(
            Tool::new("send", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                let _ = sender.send("job".into());
                Ok(CallToolResult::text("sent"))
            },
        )
        .build()
}

// Closing drops the handlers, and with them what they own: the program's
// `for job in receiver` ends although the Server and a handle still exist.
#[test]
fn closing_drops_the_handlers() {
    let (sender, receiver) = crossbeam_channel::unbounded();
    let server = server_owning(sender);
    let handle = server.handle();
    let mut client = connect(&server, json!({}));
    call_tool(&mut client, "send", json!({}));
    assert_eq!(receiver.recv_timeout(WAIT).as_deref(), Ok("job"));
    assert!(!handle.is_closed());
    handle.close();
    handle.close(); // a second close does nothing
    assert!(server.is_closed());
    assert_eq!(
        receiver.recv_timeout(WAIT),
        Err(crossbeam_channel::RecvTimeoutError::Disconnected),
        "the tool (and its sender) outlived close"
    );
}

// A weak handle gives a strong one while the server is open, and none
// once it is closed or gone.
#[test]
fn weak_handles_do_not_keep_the_server() {
    let server = Server::builder("weak", "1").build();
    let weak = server.handle().downgrade();
    assert!(weak.upgrade().is_some());
    server.close();
    assert!(weak.upgrade().is_none());
    let (sender, receiver) = crossbeam_channel::unbounded::<String>();
    let server = server_owning(sender);
    let weak = server.handle().downgrade();
    drop(server);
    assert!(weak.upgrade().is_none());
    assert_eq!(
        receiver.recv_timeout(WAIT),
        Err(crossbeam_channel::RecvTimeoutError::Disconnected)
    );
}

// serve_io notices the close once its reader returns: the next line is not
// acted on, and serving returns Ok although input never ended.
#[test]
fn serve_io_returns_after_close() {
    let server = Server::builder("io", "1").build();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let (reader, writer) = (BufReader::new(theirs.try_clone().unwrap()), theirs);
    let serving = server.clone();
    let (done, finished) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = done.send(serving.serve_io(reader, writer));
    });
    let mut lines = BufReader::new(ours.try_clone().unwrap());
    let mut ours = ours;
    writeln!(ours, r#"{{"jsonrpc":"2.0","id":1,"method":"ping"}}"#).unwrap();
    let mut answer = String::new();
    lines.read_line(&mut answer).unwrap();
    assert!(answer.contains(r#""id":1"#), "{}", answer);
    server.close();
    writeln!(ours, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).unwrap();
    let served = recv(&finished, "serve_io's return after close");
    assert!(served.is_ok(), "{:?}", served);
}

// An HttpServer's join returns once the server is closed, and the port no
// longer accepts (basic/lifecycle "Shutdown": the server closes its side).
#[test]
fn closing_ends_http_serving() {
    let server = Server::builder("http", "1").build();
    let http = server.serve_http("127.0.0.1:0").unwrap();
    let addr = http.local_addr();
    let (done, joined) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = done.send(http.join());
    });
    server.close();
    let result = recv(&joined, "HttpServer::join after close");
    assert!(result.is_ok(), "{:?}", result);
    assert!(std::net::TcpStream::connect(addr).is_err());
    // A server closed before it serves stops at once.
    let http = server.serve_http("127.0.0.1:0").unwrap();
    assert!(http.join().is_ok());
}

// The graceful_shutdown example over stdio: SIGTERM while stdin stays open
// (a read is blocked) closes the server, the worker thread ends, and the
// process exits 0 after saying so.
#[test]
fn the_example_shuts_down_on_sigterm() {
    let path = example_path("graceful_shutdown");
    let mut child = Command::new(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {}", path.display(), e));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"ping"}}"#).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":1"#), "{}", line);
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let stderr = child.stderr.take().unwrap();
    let (done, exited) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let said: Vec<String> = BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .collect();
        let _ = done.send((child.wait(), said));
    });
    let (status, said) = recv(&exited, "the example's exit after SIGTERM");
    assert!(status.unwrap().success(), "{:?}", said);
    assert!(
        said.iter().any(|l| l.contains("no more jobs")),
        "{:?}",
        said
    );
    assert_eq!(said.last().map(String::as_str), Some("shut down cleanly"));
    drop(stdin);
}

// Server::close from a handler on HTTP "returns at once, also when called
// from a handler": that handler's request is spared and still answers,
// while `HttpServer::join` on the program's thread cleans up.
#[test]
fn closing_from_a_handler_still_answers_it() {
    use crate::support::http::{call_body, open_session_on, Conn, Req};

    let (joining, joined_started) = crossbeam_channel::bounded::<()>(1);
    let joined_started = std::sync::Mutex::new(joined_started);
    let server = Server::builder("closer", "1")
        .tool(
            Tool::new("stop", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.server().close();
                if let Ok(started) = joined_started.lock() {
                    let _ = started.recv_timeout(WAIT);
                }
                Ok(CallToolResult::text("stopping"))
            },
        )
        .build();
    let http = server.serve_http("127.0.0.1:0").unwrap();
    let mut conn = Conn::open(http.local_addr());
    let session = open_session_on(&mut conn, "2025-11-25", json!({}));
    let (done, joined) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = joining.send(());
        let _ = done.send(http.join());
    });
    let call = Req::post(call_body(json!(2), "stop", None))
        .session(&session)
        .header("Accept", "application/json, text/event-stream");
    let answer = conn.request(&call, "the stopping call");
    assert_eq!(answer.status(), 200, "{}", answer.text());
    let result = answer.rpc();
    assert_eq!(
        result["result"]["content"][0]["text"], "stopping",
        "{}",
        result
    );
    assert!(recv(&joined, "HttpServer::join after close").is_ok());
}

// A closed server takes no more handlers: an edit after close is dropped
// (with a warning), so what it would add is not kept alive.
#[test]
fn a_closed_server_takes_no_more_handlers() {
    let server = Server::builder("closed", "1").offer_tools().build();
    server.close();
    let (sender, receiver) = crossbeam_channel::unbounded::<String>();
    server.handle().edit(|edit| {
        edit.add_tool(
            Tool::new("late", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                let _ = sender.send("late".into());
                Ok(CallToolResult::text("late"))
            },
        )
    });
    assert!(server.handle().tool_names().is_empty());
    assert_eq!(
        receiver.recv_timeout(WAIT),
        Err(crossbeam_channel::RecvTimeoutError::Disconnected),
        "the late tool was kept"
    );
}

/// A tool whose `Drop` calls the server, as a handler that owns a
/// resource announcing its end might.
struct CallsOnDrop(tiny_mcp::ServerHandle);

impl tiny_mcp::ToolHandler for CallsOnDrop {
    fn call(&self, _: &RequestContext, _: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
        Ok(CallToolResult::text("old"))
    }
}

impl Drop for CallsOnDrop {
    fn drop(&mut self) {
        self.0.edit(|edit| edit.remove_prompt("none"));
        self.0.notify_tools_list_changed();
    }
}

// A handler replaced or removed while serving is dropped after the
// registry's lock is released: its Drop may call the server without a
// deadlock.
#[test]
fn replaced_handlers_may_call_the_server_as_they_go() {
    let server = Server::builder("drops", "1").offer_tools().build();
    let handle = server.handle();
    let tool = || Tool::new("t", json!({"type": "object"}));
    handle.edit(|edit| edit.add_tool(tool(), CallsOnDrop(server.handle())));
    let (done, finished) = crossbeam_channel::bounded(1);
    let edits = server.handle();
    thread::spawn(move || {
        let again = CallsOnDrop(edits.clone());
        edits.edit(|edit| edit.add_tool(tool(), again)); // replaces one
        edits.edit(|edit| edit.remove_tool("t")); // removes the other
        edits.edit(|edit| edit.clear_tools());
        let _ = done.send(());
    });
    recv(
        &finished,
        "the edits (a Drop that calls the server deadlocked)",
    );
    assert!(handle.tool_names().is_empty());
}
