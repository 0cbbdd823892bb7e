//! `mcp serve` as a user runs it: the real binary serving the
//! `serve_child` example (cli/examples/serve_child.rs) over Streamable
//! HTTP on 127.0.0.1, driven by the crate's `Client`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use serde_json::json;
use tiny_mcp::{
    CallOptions, CallToolResult, CancelToken, Client, ClientBuilder, ElicitRequestParams,
    ElicitResult, Era, ErrorKind, JsonObject,
};

/// How long a test waits for what should happen at once.
const WAIT: Duration = Duration::from_secs(10);

/// A running `mcp serve`, ended when dropped.
struct Serving {
    process: Child,
    url: String,
    /// Its stderr after the URL, line by line.
    stderr: Receiver<String>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn child_server() -> String {
    let mut path = PathBuf::from(env!("CARGO_BIN_EXE_mcp"));
    path.pop();
    path.push("examples");
    path.push("serve_child");
    path.to_string_lossy().into_owned()
}

/// Starts `mcp serve` for the child server with `extra` options and reads
/// the URL it prints.
fn serve(extra: &[&str]) -> Serving {
    let mut process = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "--stdio", &child_server(), "--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp serve");
    let output = process.stderr.take().expect("stderr");
    let (lines, stderr) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            match line {
                Ok(line) => {
                    let _ = lines.send(line);
                }
                Err(_) => break,
            }
        }
    });
    let mut serving = Serving {
        process,
        url: String::new(),
        stderr,
    };
    let line = serving
        .stderr
        .recv_timeout(WAIT)
        .expect("mcp serve printed no URL");
    let url = line
        .strip_prefix("mcp serve: listening on ")
        .unwrap_or_else(|| panic!("not the URL line: {}", line));
    serving.url = url.to_string();
    serving
}

fn builder() -> ClientBuilder {
    Client::builder("serve-test", "1.0.0")
        .era(Era::V2025_11_25)
        .request_timeout(WAIT)
        .on_elicitation(|request| match request {
            ElicitRequestParams::Form(_) => {
                let mut values = JsonObject::new();
                values.insert("name".into(), json!("Ada"));
                Ok(ElicitResult::accept(Some(values)))
            }
            _ => Ok(ElicitResult::decline()),
        })
}

fn connect(serving: &Serving) -> Client {
    builder().connect_http(&serving.url).expect("connect")
}

fn text(result: &CallToolResult) -> String {
    let block = serde_json::to_value(&result.content[0]).expect("content");
    block["text"].as_str().unwrap_or("").to_string()
}

fn call(client: &Client, name: &str) -> String {
    let result = client
        .call_tool(name, json!({}))
        .unwrap_or_else(|e| panic!("{} failed: {}", name, e));
    text(&result)
}

// basic/lifecycle, server/tools: initialize, list and call reach the stdio
// server; its serverInfo comes back.
#[test]
fn serve_lists_and_calls() {
    let serving = serve(&[]);
    let client = connect(&serving);
    assert_eq!(
        client.server_info().map(|i| i.name.as_str()),
        Some("serve-child")
    );
    let tools = client.list_tools().expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "echo"), "{:?}", tools);
    let result = client
        .call_tool("echo", json!({"text": "hi"}))
        .expect("echo");
    assert_eq!(text(&result), "hi");
    client.ping().expect("ping");
}

// basic/utilities/progress, client/elicitation: the child's progress and
// its elicitation reach the HTTP client, and the answer goes back.
#[test]
fn serve_relays_progress_and_elicitation() {
    let serving = serve(&[]);
    let client = connect(&serving);
    assert_eq!(call(&client, "ask"), "Ada");
    let (sender, progress) = mpsc::channel();
    let sender = Mutex::new(sender);
    let options = CallOptions::new().on_progress(move |p| {
        if let Ok(sender) = sender.lock() {
            let _ = sender.send((p.progress, p.message.clone()));
        }
    });
    client
        .request_with("tools/call", json!({"name": "progress"}), &options)
        .expect("progress");
    let seen: Vec<(f64, Option<String>)> = progress.try_iter().collect();
    assert_eq!(seen, vec![(1.0, Some("half way".into())), (2.0, None)]);
}

// basic/utilities/cancellation: a cancel of the HTTP client reaches the
// child, whose call sees it: a 2025-11-25 notifications/cancelled, and a
// 2026-07-28 client closing its request's stream (CANCEL-2).
#[test]
fn serve_forwards_cancellation() {
    let serving = serve(&[]);
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let client = builder()
            .era(era)
            .connect_http(&serving.url)
            .expect("connect");
        let before: usize = call(&client, "cancelled").parse().expect("a count");
        let token = CancelToken::new();
        let canceller = Mutex::new(token.clone());
        // The child's first progress says the call runs there: cancel then.
        let options = CallOptions::new()
            .cancel_token(token)
            .on_progress(move |_| {
                if let Ok(token) = canceller.lock() {
                    token.cancel();
                }
            });
        let outcome = client.call_tool_with("wait", json!({}), &options);
        assert!(outcome.expect_err("cancelled").is_cancelled());
        // The child counts the call once its handler saw the cancel.
        let deadline = std::time::Instant::now() + WAIT;
        while call(&client, "cancelled") != (before + 1).to_string() {
            assert!(
                std::time::Instant::now() < deadline,
                "the child never saw the cancel ({:?})",
                era
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

// basic/transports "Session Management": one child per session by
// default, one for all with --shared.
#[test]
fn serve_starts_a_child_per_session_unless_shared() {
    let serving = serve(&[]);
    let (a, b) = (connect(&serving), connect(&serving));
    assert_ne!(call(&a, "pid"), call(&b, "pid"));
    let shared = serve(&["--shared"]);
    let (a, b) = (connect(&shared), connect(&shared));
    assert_eq!(call(&a, "pid"), call(&b, "pid"));
}

// A child that exits: the call gets a JSON-RPC error naming it, the session
// ends (404), and the client's next request gets a new session and child.
#[test]
fn a_crashed_child_is_a_clear_error_then_a_new_session() {
    let serving = serve(&[]);
    let client = connect(&serving);
    let before = call(&client, "pid");
    let error = client.call_tool("crash", json!({})).expect_err("crashed");
    match error.kind() {
        ErrorKind::Peer(object) => assert!(
            object.message.contains("exited"),
            "not a clear error: {}",
            object.message
        ),
        other => panic!("expected a JSON-RPC error, got {:?}", other),
    }
    let after = call(&client, "pid");
    assert_ne!(before, after, "the same child answered");
}

// --shared: a child that exits is started again for the next request.
#[test]
fn a_shared_child_is_started_again() {
    let serving = serve(&["--shared"]);
    let client = connect(&serving);
    let before = call(&client, "pid");
    assert!(client.call_tool("crash", json!({})).is_err());
    // The restart waits out a back-off of 1 s at first.
    let deadline = std::time::Instant::now() + WAIT;
    let after = loop {
        match client.call_tool("pid", json!({})) {
            Ok(result) => break text(&result),
            Err(e) => {
                assert!(std::time::Instant::now() < deadline, "no restart: {}", e);
                thread::sleep(Duration::from_millis(100));
            }
        }
    };
    assert_ne!(before, after);
}

// 2026-07-28 (basic/versioning): a client of the new era is served by a
// 2025-era child, through the session the proxy holds.
#[test]
fn a_2026_client_is_served() {
    let serving = serve(&[]);
    let client = Client::builder("serve-test", "1.0.0")
        .request_timeout(WAIT)
        .connect_http(&serving.url)
        .expect("connect");
    assert_eq!(client.era(), Era::V2026_07_28);
    let result = client
        .call_tool("echo", json!({"text": "new era"}))
        .expect("echo");
    assert_eq!(text(&result), "new era");
}

// SEP-2322 (2026-07-28): the child's elicitation during a call becomes an
// input_required round; the retry's answer reaches the waiting child call.
#[test]
fn a_2026_client_answers_the_childs_elicitation_by_a_retry() {
    let serving = serve(&[]);
    let client = builder()
        .era(Era::V2026_07_28)
        .connect_http(&serving.url)
        .expect("connect");
    assert_eq!(call(&client, "ask"), "Ada");
    assert_eq!(call(&client, "ask"), "Ada", "a second call parks anew");
    let (sender, progress) = mpsc::channel();
    let sender = Mutex::new(sender);
    let options = CallOptions::new().on_progress(move |p| {
        if let Ok(sender) = sender.lock() {
            let _ = sender.send(p.progress);
        }
    });
    client
        .call_tool_with("progress", json!({}), &options)
        .expect("progress");
    assert_eq!(progress.try_iter().collect::<Vec<f64>>(), vec![1.0, 2.0]);
}

// LISTEN-* (2026-07-28): the child's list change reaches a listen stream
// of a 2026-07-28 client.
#[test]
fn list_changes_reach_listen_streams() {
    let serving = serve(&["--shared"]);
    let (sender, changes) = mpsc::channel();
    let sender = Mutex::new(sender);
    let client = Client::builder("serve-test", "1.0.0")
        .request_timeout(WAIT)
        .on_notification(move |n| {
            if let Ok(sender) = sender.lock() {
                let _ = sender.send(n.method.clone());
            }
        })
        .connect_http(&serving.url)
        .expect("connect");
    assert_eq!(client.era(), Era::V2026_07_28);
    let filter = tiny_mcp::SubscriptionFilter::new().tools_list_changed();
    let subscription = client.listen(&filter).expect("listen");
    assert_eq!(call(&client, "change"), "changed");
    let method = changes.recv_timeout(WAIT).expect("no list change arrived");
    assert_eq!(method, "notifications/tools/list_changed");
    subscription.close();
}

// --token-file: requests without an accepted bearer token get 401.
#[test]
fn a_token_file_guards_the_endpoint() {
    let path = std::env::temp_dir().join(format!("mcp-serve-tokens-{}", std::process::id()));
    std::fs::write(&path, "# tokens\nsecret-one\n\nsecret-two\n").expect("write tokens");
    let serving = serve(&["--token-file", &path.to_string_lossy()]);
    let refused = builder().connect_http(&serving.url).expect_err("no token");
    assert!(
        matches!(refused.kind(), ErrorKind::Http { status: 401, .. }),
        "{:?}",
        refused
    );
    let client = builder()
        .bearer_token(|| Some("secret-two".to_string()))
        .connect_http(&serving.url)
        .expect("with a token");
    assert_eq!(call(&client, "echo"), "");
    let _ = std::fs::remove_file(&path);
}

// basic/authorization (RFC 9728): with --authorization-server the endpoint
// is a protected resource: its metadata names the server, and a token of
// the file opens a session bound to it.
#[test]
fn a_token_file_with_an_authorization_server_is_a_protected_resource() {
    use std::io::{Read, Write};
    let path = std::env::temp_dir().join(format!("mcp-serve-as-tokens-{}", std::process::id()));
    std::fs::write(&path, "secret-one\n").expect("write tokens");
    let issuer = "https://auth.example.com";
    let serving = serve(&[
        "--token-file",
        &path.to_string_lossy(),
        "--authorization-server",
        issuer,
    ]);
    let authority = serving
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut socket = std::net::TcpStream::connect(&authority).expect("connect");
    let request = format!(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        authority
    );
    socket.write_all(request.as_bytes()).expect("write");
    let mut answer = String::new();
    socket.read_to_string(&mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", answer);
    assert!(answer.contains(issuer), "{}", answer);
    let client = builder()
        .bearer_token(|| Some("secret-one".to_string()))
        .connect_http(&serving.url)
        .expect("with a token");
    assert_eq!(call(&client, "echo"), "");
    let _ = std::fs::remove_file(&path);
}
