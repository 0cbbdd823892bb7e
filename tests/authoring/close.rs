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
