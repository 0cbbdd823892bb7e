//! What the test modules share: bounded waits, shortcuts for the in-memory
//! client, a recorder for the instrumentation hook, and a line-oriented
//! JSON-RPC client for a server running as a child process.
//!
//! Every wait here is bounded, and the panic message at the bound says what
//! never arrived. Nothing sleeps to synchronize.

pub mod forms;
pub mod http;

use std::env;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::{json, Value};
use tiny_mcp::Message;
use tiny_mcp::{ErrorCode, ErrorObject, MemoryClient, RequestOutcome, Server};

/// How long a test waits for something that should happen at once before
/// it gives up and fails.
pub const WAIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------
// In-memory client
// ---------------------------------------------------------------------------

/// Connects to `server` in memory and completes the handshake, declaring
/// `capabilities`.
pub fn connect(server: &Server, capabilities: Value) -> MemoryClient {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    if let Err(e) = client.initialize(capabilities) {
        panic!("initialize failed: {}", e);
    }
    client
}

/// Calls tool `name` and returns its result; panics on a JSON-RPC error.
pub fn call_tool(client: &mut MemoryClient, name: &str, arguments: Value) -> Value {
    let params = json!({ "name": name, "arguments": arguments });
    match client.request("tools/call", Some(params)) {
        Ok(result) => result,
        Err(e) => panic!("tools/call {} failed: {}", name, e),
    }
}

/// Asserts that `outcome` is a JSON-RPC error with `code`; returns it.
pub fn expect_error(
    outcome: Result<Value, ErrorObject>,
    code: ErrorCode,
    what: &str,
) -> ErrorObject {
    match outcome {
        Ok(result) => panic!(
            "{}: expected error {}, got the result {}",
            what, code.0, result
        ),
        Err(e) => {
            assert_eq!(e.code, code, "{}: wrong error code in {:?}", what, e);
            e
        }
    }
}

/// The text of the first content block of a `CallToolResult`.
pub fn first_text(result: &Value) -> &str {
    match result["content"][0]["text"].as_str() {
        Some(text) => text,
        None => panic!("no text in the first content block of {}", result),
    }
}

/// The next message from the server not yet taken; `what` names it.
pub fn next_message(client: &mut MemoryClient, what: &str) -> Message {
    match client.recv_timeout(WAIT) {
        Some(message) => message,
        None => panic!("{} never arrived (waited {:?})", what, WAIT),
    }
}

/// Receives from `receiver`, failing the test if `what` never arrives.
pub fn recv<T>(receiver: &Receiver<T>, what: &str) -> T {
    match receiver.recv_timeout(WAIT) {
        Ok(value) => value,
        Err(_) => panic!("{} never arrived (waited {:?})", what, WAIT),
    }
}

/// Sends `ping` and returns every message received before its answer.
///
/// The in-memory client hands messages to the dispatcher synchronously,
/// and the server writes in order, so anything the server sent before it
/// answered the ping is in the returned list.
pub fn messages_before_ping(client: &mut MemoryClient) -> Vec<Message> {
    let id = client.send_request("ping", None);
    let mut before = Vec::new();
    loop {
        match next_message(client, "the answer to ping") {
            Message::Response(r) if r.id.as_ref() == Some(&id) => {
                assert!(r.outcome.is_ok(), "ping failed: {:?}", r.outcome);
                return before;
            }
            other => before.push(other),
        }
    }
}

/// Collects what [`tiny_mcp::ServerBuilder::on_request_finished`] reports.
pub struct Outcomes {
    receiver: Receiver<RequestOutcome>,
}

/// A hook to install with `on_request_finished`, and where its reports go.
pub fn outcome_recorder() -> (impl Fn(&RequestOutcome) + Send + Sync + 'static, Outcomes) {
    let (sender, receiver): (Sender<RequestOutcome>, _) = crossbeam_channel::unbounded();
    let hook = move |outcome: &RequestOutcome| {
        let _ = sender.send(outcome.clone());
    };
    (hook, Outcomes { receiver })
}

impl Outcomes {
    /// The next report for `method`, skipping reports for other methods.
    pub fn next_for(&self, method: &str) -> RequestOutcome {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.receiver.recv_timeout(left) {
                Ok(outcome) if outcome.method == method => return outcome,
                Ok(_) => {}
                Err(_) => panic!("no on_request_finished report for {} arrived", method),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// A server in a child process, spoken to over stdin and stdout
// ---------------------------------------------------------------------------

/// The path of example `name`, built by cargo next to the test binary:
/// `target/debug/deps/tests-xxx` -> `target/debug/examples/name`.
pub fn example_path(name: &str) -> PathBuf {
    let exe = env::current_exe().expect("the test binary knows its own path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    profile_dir
        .join("examples")
        .join(format!("{}{}", name, env::consts::EXE_SUFFIX))
}

/// The `mcp` command of the workspace's `cli/` package, built beside the
/// examples by `cargo build -p tiny-mcp-cli` (scripts/test-all.sh does so
/// before the tests); a test that needs it fails with that advice when it
/// is missing.
pub fn mcp_path() -> PathBuf {
    let path = example_path("mcp")
        .with_file_name("..")
        .join(format!("mcp{}", env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build the command first (cargo build -p tiny-mcp-cli)",
        path.display()
    );
    path
}

/// A server running as a child process, with one JSON-RPC message per line
/// on its stdin and stdout.
///
/// A reader thread turns stdout into lines on a channel, so every read has
/// a timeout. Dropping it kills the child.
pub struct ChildServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    reader: Option<JoinHandle<()>>,
}

impl ChildServer {
    /// Starts example `name` with no arguments (the example serves stdio).
    ///
    /// Its stderr is discarded unless `TINY_MCP_TEST_STDERR` is set.
    pub fn spawn_example(name: &str) -> ChildServer {
        let path = example_path(name);
        assert!(
            path.exists(),
            "example binary {} not found; `cargo test` builds it (or run `cargo build --example {}`)",
            path.display(),
            name
        );
        let stderr = if env::var_os("TINY_MCP_TEST_STDERR").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        let mut child = Command::new(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {}", path.display(), e));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout was piped");
        let (sender, lines) = crossbeam_channel::unbounded();
        let reader = thread::Builder::new()
            .name("test-child-stdout".into())
            .spawn(move || {
                let mut stdout = BufReader::new(stdout);
                loop {
                    let mut line = Vec::new();
                    match stdout.read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {
                            if line.last() == Some(&b'\n') {
                                line.pop();
                            }
                            if sender.send(line).is_err() {
                                return;
                            }
                        }
                    }
                }
            })
            .expect("the reader thread starts");
        ChildServer {
            child,
            stdin,
            lines,
            reader: Some(reader),
        }
    }

    /// Starts example `name` and completes the handshake, declaring
    /// `capabilities`; returns the `initialize` result.
    pub fn initialized(name: &str, capabilities: Value) -> (ChildServer, Value) {
        let mut server = ChildServer::spawn_example(name);
        server.send(&json!({
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "tiny-mcp-tests", "version": "0.0.0"}
            }
        }));
        let (response, _) = server.wait_response(&json!("init"), "the initialize result");
        let result = response["result"].clone();
        assert!(result.is_object(), "initialize failed: {}", response);
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (server, result)
    }

    /// Writes `bytes` to the child's stdin as they are (no newline added).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("cannot write to the server's stdin: {}", e));
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("a Value serializes");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Writes a request with this `id` (any JSON value, sent as is).
    pub fn request(&mut self, id: Value, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Writes a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Closes the child's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line of stdout, waiting at most `timeout`.
    pub fn next_line(&self, timeout: Duration, what: &str) -> Vec<u8> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("{} never arrived on stdout (waited {:?})", what, timeout)
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("stdout closed while waiting for {}", what)
            }
        }
    }

    /// The next message on stdout, waiting at most `timeout`. Asserts that
    /// the line is exactly one JSON-RPC 2.0 object (STDIO-1, STDIO-2).
    pub fn next_message_within(&self, timeout: Duration, what: &str) -> Value {
        parse_line(&self.next_line(timeout, what))
    }

    /// The next message on stdout, waiting at most [`WAIT`].
    pub fn next_message(&self, what: &str) -> Value {
        self.next_message_within(WAIT, what)
    }

    /// Waits for the response with `id` (matching its JSON type); returns
    /// it with every message that came before it.
    pub fn wait_response(&self, id: &Value, what: &str) -> (Value, Vec<Value>) {
        self.wait_response_within(id, WAIT, what)
    }

    /// As [`wait_response`](Self::wait_response), waiting at most `timeout`.
    pub fn wait_response_within(
        &self,
        id: &Value,
        timeout: Duration,
        what: &str,
    ) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + timeout;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.next_message_within(left, what);
            if is_response(&message) && message.get("id") == Some(id) {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// Closes stdin, reads every remaining message until stdout closes, and
    /// waits for the process to exit; all within `timeout`.
    pub fn finish(&mut self, timeout: Duration) -> (ExitStatus, Vec<Value>) {
        let deadline = Instant::now() + timeout;
        self.close_stdin();
        let mut rest = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => rest.push(parse_line(&line)),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "the server did not close stdout within {:?} of end of input",
                    timeout
                ),
            }
        }
        // Stdout is closed: the process is exiting. Wait for its status,
        // still within the bound.
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return (status, rest),
                Ok(None) if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(5));
                }
                Ok(None) => panic!(
                    "the server closed stdout but did not exit within {:?} of end of input",
                    timeout
                ),
                Err(e) => panic!("cannot wait for the server: {}", e),
            }
        }
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Parses one stdout line, asserting it is exactly one JSON-RPC 2.0 object.
pub fn parse_line(line: &[u8]) -> Value {
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => panic!("stdout line is not UTF-8 ({}): {:?}", e, line),
    };
    let message: Value = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(e) => panic!("stdout line is not one JSON value ({}): {}", e, text),
    };
    assert!(
        message.is_object() && message["jsonrpc"] == "2.0",
        "stdout line is not a JSON-RPC 2.0 message: {}",
        text
    );
    message
}

/// `true` for a JSON-RPC response (a result or an error, no method).
pub fn is_response(message: &Value) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
}

// ---------------------------------------------------------------------------
// The example serving HTTP in a child process
// ---------------------------------------------------------------------------

/// The `everything` example serving HTTP with `args`; killed on drop.
pub struct Example {
    child: std::process::Child,
    /// Where it serves.
    pub addr: std::net::SocketAddr,
}

impl Example {
    /// Starts it on a free port and waits (at most 10 s) until it says it
    /// is serving.
    pub fn start(args: &[&str]) -> Example {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        Example::start_on(([127, 0, 0, 1], port).into(), args)
    }

    /// Starts it on `addr` (where one just ended: a restart).
    pub fn start_on(addr: std::net::SocketAddr, args: &[&str]) -> Example {
        let path = crate::support::example_path("everything");
        let mut child = std::process::Command::new(&path)
            .arg("--http")
            .arg(addr.to_string())
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {}", path.display(), e));
        let stderr = child.stderr.take().expect("stderr");
        let (ready, serving) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if line.contains("serving MCP on") {
                    let _ = ready.send(());
                }
            }
        });
        let example = Example { child, addr };
        serving
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the example did not start serving (build it with the features of this test run: cargo build --examples [--features …])");
        example
    }
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Blocks a handler until the test releases it or the request is
/// cancelled (its flag looked at between short receive timeouts: one wait
/// cannot watch both), at most [`WAIT`]. Returns `true` when it was
/// cancelled.
pub fn wait_release_or_cancel(ctx: &tiny_mcp::RequestContext, release: &Receiver<()>) -> bool {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if ctx.is_cancelled() {
            return true;
        }
        if release.recv_timeout(Duration::from_millis(5)).is_ok() {
            return false;
        }
    }
    ctx.is_cancelled()
}
