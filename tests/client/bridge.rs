//! `mcp bridge --to URL` run as a child process between a local stdio
//! client (the crate's own, speaking 2025-11-25 over the bridge's stdin
//! and stdout) and a remote Streamable HTTP server (the `everything`
//! example, or a scripted fake), in both remote eras: calls, the server's
//! requests (client/sampling, client/elicitation, client/roots),
//! progress, cancellation, a restarted server, the end of stdin, the
//! bridge's headers, and malformed local input.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use tiny_mcp::{CallOptions, CancelToken, Client, Era};

use super::fake::{self, Fake, Reply, Request};
use super::{builder, text};
use crate::support::{mcp_path, Example, WAIT};

fn era_name(era: Era) -> &'static str {
    match era {
        Era::V2025_11_25 => "2025-11-25",
        _ => "2026-07-28",
    }
}

/// The bridge's command line to `url`, speaking `era` to it.
fn bridge_command(url: &str, era: Era, extra: &[&str]) -> Command {
    let mut command = Command::new(mcp_path());
    command
        .args(["bridge", "--to", url, "--era", era_name(era)])
        .args(extra)
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"));
    command
}

/// The local client, through the bridge, to the example at `addr`.
fn bridged(addr: std::net::SocketAddr, era: Era) -> Client {
    let url = format!("http://{}/mcp", addr);
    builder()
        .era(Era::V2025_11_25)
        .connect_stdio(bridge_command(&url, era, &[]))
        .expect("connect through the bridge")
}

/// The example's `session_info`, as JSON.
fn session_info(client: &Client) -> Value {
    let info = client
        .call_tool("session_info", json!({}))
        .expect("session_info");
    serde_json::from_str(&text(&info)).expect("session_info is JSON")
}

// The remote server sees the local client's identity and capabilities
// and speaks its own era to the bridge; the local client gets the remote
// server's identity and the version it asked for (basic/lifecycle
// "Initialization"); calls and the server's requests cross both ways.
#[test]
fn calls_and_server_requests_cross_the_bridge_in_both_remote_eras() {
    let example = Example::start(&[]);
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let c = bridged(example.addr, era);
        assert_eq!(c.protocol_version(), "2025-11-25");
        assert_eq!(c.server_info().unwrap().name, "tiny-mcp-everything");
        let info = session_info(&c);
        assert_eq!(info["protocolVersion"], era_name(era));
        assert_eq!(info["clientInfo"]["name"], "tiny-mcp-client-test");
        assert!(
            info["clientCapabilities"]["sampling"].is_object(),
            "{}",
            info
        );
        let tools = c.list_tools().unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        let echoed = c.call_tool("echo", json!({"text": "over"})).unwrap();
        assert_eq!(text(&echoed), "over");
        let sampled = c
            .call_tool("test_sampling", json!({"prompt": "hello"}))
            .unwrap();
        assert_eq!(text(&sampled), "LLM response: echo of hello", "{:?}", era);
        let elicited = c
            .call_tool("test_elicitation", json!({"message": "who?"}))
            .unwrap();
        assert!(
            text(&elicited).contains("ada@example.com"),
            "{}",
            text(&elicited)
        );
        let roots = c.call_tool("test_roots", Value::Null).unwrap();
        assert!(text(&roots).contains("file:///work"), "{}", text(&roots));
        // The remote server's JSON-RPC error arrives as it sent it.
        let err = c.call_tool("no_such_tool", json!({})).unwrap_err();
        assert!(err.to_string().contains("no_such_tool"), "{}", err);
        // HTTP-4 (2026-07-28): Mcp-Param-* headers, learnt by the bridge.
        let region = c
            .call_tool("test_custom_header", json!({"region": "eu-west"}))
            .unwrap();
        assert!(text(&region).contains("eu-west"), "{}", text(&region));
    }
}

// basic/utilities/progress and cancellation: the server's progress comes
// back under the local client's token, and a cancel from the local client
// cancels the remote handler (it counts the handlers it saw cancelled).
#[test]
fn progress_and_cancellation_cross_the_bridge() {
    let example = Example::start(&[]);
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let c = bridged(example.addr, era);
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| s.lock().push(p.progress));
        c.call_tool_with("test_tool_with_progress", Value::Null, &options)
            .unwrap();
        assert_eq!(*seen.lock(), vec![0.0, 50.0, 100.0], "{:?}", era);

        let before = session_info(&c)["cancelledHandlers"].as_u64().unwrap();
        let token = CancelToken::new();
        let cancel = token.clone();
        let options = CallOptions::new()
            .cancel_token(token)
            .on_progress(move |_| cancel.cancel());
        let err = c
            .call_tool_with("slow", json!({"seconds": 30}), &options)
            .unwrap_err();
        assert!(err.is_cancelled(), "{:?}", err);
        // The remote handler sees its cancellation within a step (100 ms).
        let deadline = Instant::now() + WAIT;
        while session_info(&c)["cancelledHandlers"].as_u64().unwrap() == before {
            assert!(
                Instant::now() < deadline,
                "the remote handler was not cancelled ({:?})",
                era
            );
        }
    }
}

// basic/transports "Session Management": a restarted server has forgotten
// the session; the bridge starts a new one and the local client's next
// call succeeds, its own session untouched.
#[test]
fn a_restarted_remote_server_is_met_with_a_new_session() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let example = Example::start(&[]);
        let addr = example.addr;
        let c = bridged(addr, era);
        assert_eq!(
            text(&c.call_tool("echo", json!({"text": "one"})).unwrap()),
            "one"
        );
        drop(example);
        let _restarted = Example::start_on(addr, &[]);
        let again = c.call_tool("echo", json!({"text": "two"})).unwrap();
        assert_eq!(text(&again), "two", "{:?}", era);
        assert!(!c.list_tools().unwrap().is_empty());
    }
}

// Change notifications reach the local client: the remote session's GET
// stream (2025-11-25), or the bridge's subscriptions/listen stream
// (2026-07-28, LISTEN-3), which names the resources the local client
// subscribed to (server/resources "Subscriptions"). The listen stream is
// opened after initialize, so changes are made until one arrives.
#[test]
fn change_notifications_and_subscriptions_cross_the_bridge() {
    let example = Example::start(&[]);
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let (tx, rx) = crossbeam_channel::unbounded();
        let url = format!("http://{}/mcp", example.addr);
        let c = builder()
            .era(Era::V2025_11_25)
            .on_notification(move |n| {
                let _ = tx.send(n.method.clone());
            })
            .connect_stdio(bridge_command(&url, era, &[]))
            .expect("connect through the bridge");
        c.subscribe(WATCHED).expect("subscribe");
        let mut seen = std::collections::BTreeSet::new();
        let deadline = Instant::now() + WAIT * 2;
        while seen.len() < 2 {
            assert!(Instant::now() < deadline, "{:?}: only {:?}", era, seen);
            c.call_tool("notify_changed", Value::Null).unwrap();
            while let Ok(method) = rx.recv_timeout(std::time::Duration::from_millis(200)) {
                if method.ends_with("tools/list_changed") || method.ends_with("resources/updated") {
                    seen.insert(method);
                }
            }
        }
        c.unsubscribe(WATCHED).expect("unsubscribe");
    }
}

/// The resource of the example that `notify_changed` says was updated.
const WATCHED: &str = "test://watched-resource";

/// A 2025-11-25 server that answers everything with an empty result.
fn plain_fake() -> Fake {
    Fake::start(|request: &Request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        match request.method.as_str() {
            "GET" => Reply::Keep(fake::answer(405, "text/plain", "", "")),
            "DELETE" => Reply::Keep(fake::answer(200, "application/json", "", "")),
            _ if request.json().get("id").is_none() => Reply::Keep(fake::accepted()),
            _ => Reply::Keep(fake::json(&fake::result(request, "{}"), "")),
        }
    })
}

/// The bridge with piped stdio, to `url`.
fn spawn_bridge(url: &str, extra: &[&str]) -> Child {
    bridge_command(url, Era::V2025_11_25, extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the bridge")
}

/// Writes `lines` to the bridge, closes its stdin, and returns what it
/// wrote, once it ended (within [`WAIT`] doubled).
fn run_bridge(mut child: Child, lines: &[&str]) -> (Vec<Value>, std::process::ExitStatus) {
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{}", line).unwrap();
    }
    drop(stdin);
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let read: Vec<Value> = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .map(|line| serde_json::from_str(&line).expect("the bridge writes JSON lines"))
            .collect();
        let _ = tx.send((read, child.wait()));
    });
    let (read, status) = rx.recv_timeout(WAIT * 2).expect("the bridge ended");
    (read, status.unwrap())
}

/// The answer with this id among those the bridge wrote (in any order:
/// each request is answered on a thread of its own).
fn by_id(read: &[Value], id: impl Into<Value>) -> &Value {
    let id = id.into();
    read.iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {} in {:?}", id, read))
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

// The end of stdin ends the bridge (exit 0) after it answered what it was
// sent, and the remote session is ended with DELETE (basic/transports
// "Session Management"); --header and --token go on every request.
#[test]
fn the_end_of_stdin_ends_the_bridge_and_the_remote_session() {
    let server = plain_fake();
    let child = spawn_bridge(
        &server.url("/mcp"),
        &["--header", "X-Tenant: blue", "--token", "t-1"],
    );
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let (read, status) = run_bridge(child, &[INITIALIZE, ping]);
    assert!(status.success(), "{:?}", status);
    assert_eq!(read.len(), 2, "{:?}", read);
    assert_eq!(by_id(&read, 1)["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(&read, "p")["result"], json!({}));
    let requests = server.requests();
    assert_eq!(requests.last().map(|r| r.method.as_str()), Some("DELETE"));
    for request in &requests {
        assert_eq!(request.header("x-tenant"), Some("blue"), "{:?}", request);
        assert_eq!(request.header("authorization"), Some("Bearer t-1"));
    }
}

// The session is ended also when stdin closes right behind a request: the
// request's thread lets go of the remote connection before it says it is
// done, so that closing it is not skipped (several runs: it was a race).
#[test]
fn the_remote_session_is_ended_right_after_the_last_answer() {
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    for run in 0..20 {
        let server = plain_fake();
        let child = spawn_bridge(&server.url("/mcp"), &[]);
        let (read, status) = run_bridge(child, &[INITIALIZE, ping]);
        assert!(status.success());
        assert_eq!(read.len(), 2, "{:?}", read);
        let methods: Vec<String> = server.requests().iter().map(|r| r.method.clone()).collect();
        assert_eq!(
            methods.last().map(String::as_str),
            Some("DELETE"),
            "run {}: {:?}",
            run,
            methods
        );
    }
}

// basic/index (JSON-RPC): what the local client sends that is not a
// message gets -32700 or -32600, and the bridge goes on.
#[test]
fn malformed_local_input_is_answered_and_the_bridge_goes_on() {
    let server = plain_fake();
    let child = spawn_bridge(&server.url("/mcp"), &[]);
    let lines = ["not json", "[1, 2]", "{}", "7", INITIALIZE];
    let (read, status) = run_bridge(child, &lines);
    assert!(status.success());
    let codes: Vec<i64> = read[..4]
        .iter()
        .map(|m| m["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(codes, [-32700, -32600, -32600, -32600], "{:?}", read);
    assert!(read[..4].iter().all(|m| m["id"].is_null()));
    assert_eq!(read[4]["result"]["serverInfo"]["name"], "fake");
}

// The local side speaks the initialize era: a client that probes with
// server/discover first (the 2026-07-28 handshake; the Python SDK's
// default mode) gets -32601, as from any server of that era, and falls
// back to initialize. The probe neither reaches the remote server nor
// connects to it without the client's identity and capabilities.
#[test]
fn server_discover_from_the_local_client_is_method_not_found() {
    let server = plain_fake();
    let child = spawn_bridge(&server.url("/mcp"), &[]);
    let discover = r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}"#;
    let (read, status) = run_bridge(child, &[discover, INITIALIZE]);
    assert!(status.success());
    assert_eq!(read[0]["id"], 0, "{:?}", read);
    assert_eq!(read[0]["error"]["code"], -32601, "{:?}", read);
    assert_eq!(read[1]["result"]["protocolVersion"], "2025-06-18");
    let posted: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.json())
        .collect();
    assert!(
        posted.iter().all(|m| m["method"] != "server/discover"),
        "{:?}",
        posted
    );
    let init = posted.iter().find(|m| m["method"] == "initialize").unwrap();
    assert_eq!(init["params"]["clientInfo"]["name"], "raw", "{}", init);
}

// A remote server that cannot be reached: initialize gets an error that
// names it, not a hang.
#[test]
fn an_unreachable_remote_server_fails_initialize_with_its_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{}/mcp", port);
    let (read, status) = run_bridge(spawn_bridge(&url, &[]), &[INITIALIZE]);
    assert!(status.success());
    let message = read[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("127.0.0.1:{}", port)),
        "{}",
        message
    );
}

// basic/index (JSON-RPC responses): the local client's error answer to a
// request of the remote server's reaches the server as that error, code
// and message, not as a result of the wrong shape.
#[test]
fn the_local_clients_error_answer_reaches_the_remote_server_as_sent() {
    let example = Example::start(&[]);
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let url = format!("http://{}/mcp", example.addr);
        let c = builder()
            .era(Era::V2025_11_25)
            .on_elicitation(|_| {
                Err(tiny_mcp::Error::rpc(tiny_mcp::ErrorObject::new(
                    tiny_mcp::ErrorCode(-1),
                    "declined by the user",
                )))
            })
            .connect_stdio(bridge_command(&url, era, &[]))
            .expect("connect through the bridge");
        // A 2026-07-28 input_required round has no error answers: the
        // call fails, naming the local client's error.
        let text = match c.call_tool("test_elicitation", json!({"message": "who?"})) {
            Ok(elicited) => text(&elicited),
            Err(e) => e.to_string(),
        };
        assert!(
            text.contains("declined by the user") && !text.contains("wrong shape"),
            "{:?}: {}",
            era,
            text
        );
    }
}

// basic/transports "stdio": the client may ignore the server's stderr. A
// local client that closes its end of the bridge's stderr still gets its
// answers: what the bridge notes there is not worth a panic (exit 101).
#[test]
fn a_closed_stderr_does_not_end_the_bridge() {
    let server = plain_fake();
    let mut child = bridge_command(&server.url("/mcp"), Era::V2025_11_25, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the bridge");
    drop(child.stderr.take());
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let stray = r#"{"jsonrpc":"2.0","id":"never-asked","result":{}}"#;
    let (read, status) = run_bridge(child, &[INITIALIZE, stray, ping]);
    assert!(status.success(), "{:?}", status);
    assert_eq!(read.len(), 2, "{:?}", read);
    assert_eq!(by_id(&read, 1)["result"]["serverInfo"]["name"], "fake");
    assert_eq!(by_id(&read, "p")["result"], json!({}));
}

// basic/index "Requests" and JSON-RPC 2.0 §4, §5: a request's id is a
// string or an integer (not null, not a fraction, not an object), and a
// method is a string. The bridge answers such a request with -32600 and
// forwards nothing; a malformed notification gets no answer.
#[test]
fn requests_with_malformed_ids_or_methods_get_invalid_request() {
    let server = plain_fake();
    let child = spawn_bridge(&server.url("/mcp"), &[]);
    let lines = [
        INITIALIZE,
        r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#,
        r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
    ];
    let (read, status) = run_bridge(child, &lines);
    assert!(status.success());
    assert_eq!(read.len(), 6, "{:?}", read);
    assert_eq!(by_id(&read, 1)["result"]["serverInfo"]["name"], "fake");
    assert_eq!(by_id(&read, "p")["result"], json!({}));
    let refused: Vec<&Value> = read.iter().filter(|m| m["error"].is_object()).collect();
    let ids: Vec<&Value> = refused.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(7), &Value::Null, &Value::Null, &Value::Null]);
    for answer in refused {
        assert_eq!(answer["error"]["code"], -32600, "{:?}", read);
    }
    let pings = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.json()["method"] == "ping")
        .count();
    assert_eq!(pings, 1);
}

// basic/transports "stdio" (STDIO-1) and DESIGN.md §7: one message per
// line also for readers that split on U+2028 and U+2029; the bridge
// writes them escaped, as the crate's own stdio output does.
#[test]
fn the_bridge_writes_u2028_and_u2029_escaped() {
    use std::io::Read;
    let example = Example::start(&[]);
    let url = format!("http://{}/mcp", example.addr);
    let mut child = spawn_bridge(&url, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "a\u{2028}b\u{2029}c"}}});
    writeln!(stdin, "{}\n{}", INITIALIZE, call).unwrap();
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!out.contains(['\u{2028}', '\u{2029}']), "{}", out);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", out);
    assert_eq!(
        lines[1]["result"]["content"][0]["text"],
        "a\u{2028}b\u{2029}c"
    );
}

// basic/lifecycle: a client may ping before initialize. The bridge answers
// that ping itself, and the remote server still meets the local client's
// identity and capabilities when initialize comes.
#[test]
fn a_ping_before_initialize_does_not_connect_without_the_local_client() {
    let example = Example::start(&[]);
    let url = format!("http://{}/mcp", example.addr);
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let info = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_info","arguments":{}}}"#;
    let (read, status) = run_bridge(spawn_bridge(&url, &[]), &[ping, initialize, info]);
    assert!(status.success());
    assert_eq!(read[0], json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    let text = by_id(&read, 2)["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    let info: Value = serde_json::from_str(text).unwrap();
    assert_eq!(info["clientInfo"]["name"], "raw", "{}", info);
    assert!(
        info["clientCapabilities"]["sampling"].is_object(),
        "{}",
        info
    );
}

// basic/transports "stdio" ("Shutdown": the client closes stdin and waits
// for the server to exit): a remote server that never answers initialize
// does not keep the bridge from reading stdin, so its end ends the bridge
// at once, not after --timeout.
#[test]
fn a_remote_server_that_never_answers_initialize_does_not_hold_the_bridge() {
    let server = Fake::start(|request: &Request| match request.method.as_str() {
        "POST" => Reply::Hold(Vec::new()),
        _ => Reply::Keep(fake::answer(405, "text/plain", "", "")),
    });
    let child = spawn_bridge(&server.url("/mcp"), &["--timeout", "30"]);
    let started = Instant::now();
    let (read, status) = run_bridge(child, &[INITIALIZE]);
    assert!(status.success(), "{:?}", status);
    assert!(read.is_empty(), "{:?}", read);
    assert!(started.elapsed() < WAIT * 2);
}

// A remote server slow to take a notification (the client waits for its
// 202 up to 10 s) does not hold the bridge's reading of stdin: a ping
// sent after it is answered at once.
#[test]
fn a_remote_server_slow_to_take_notifications_does_not_hold_the_bridge() {
    let server = Fake::start(|request: &Request| {
        if request.rpc() == "notifications/roots/list_changed" {
            return Reply::Hold(Vec::new());
        }
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        match request.method.as_str() {
            "GET" => Reply::Keep(fake::answer(405, "text/plain", "", "")),
            "DELETE" => Reply::Keep(fake::answer(200, "application/json", "", "")),
            _ => Reply::Keep(fake::json(&fake::result(request, "{}"), "")),
        }
    });
    let mut child = spawn_bridge(&server.url("/mcp"), &[]);
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = crossbeam_channel::unbounded();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    writeln!(stdin, "{}", INITIALIZE).unwrap();
    let initialized = rx.recv_timeout(WAIT).expect("the initialize answer");
    assert_eq!(initialized["id"], 1);
    let changed = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    writeln!(stdin, "{}\n{}", changed, ping).unwrap();
    let pong = rx.recv_timeout(WAIT).expect("the ping's answer within 5 s");
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

// A password in the URL's user information is not echoed: not on stderr,
// not to the local client (the crate's own errors show it as `…@`).
#[test]
fn the_bridge_does_not_echo_a_password_in_the_url() {
    use std::io::Read;
    let server = plain_fake();
    let url = server
        .url("/mcp?key=k-secret")
        .replace("http://", "http://ada:pw-secret@");
    let mut child = bridge_command(&url, Era::V2025_11_25, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the bridge");
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let (read, status) = run_bridge(child, &[INITIALIZE]);
    assert!(status.success());
    let stderr = rx.recv_timeout(WAIT).expect("the bridge's stderr");
    let said = format!("{:?}\n{}", read, stderr);
    assert!(said.contains("127.0.0.1"), "{}", said);
    assert!(
        !said.contains("pw-secret") && !said.contains("k-secret"),
        "{}",
        said
    );
}

// 2026-07-28 RES-2: the local client speaks the initialize era, whose
// results carry no resultType, ttlMs, cacheScope or serverInfo stamp
// (some clients validate empty results strictly); the bridge leaves them
// out of a 2026-07-28 server's results.
#[test]
fn a_2026_servers_results_reach_the_local_client_in_its_era() {
    let example = Example::start(&[]);
    let url = format!("http://{}/mcp", example.addr);
    let child = bridge_command(&url, Era::V2026_07_28, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the bridge");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    let (read, status) = run_bridge(child, &[INITIALIZE, list, call]);
    assert!(status.success());
    for id in [2, 3] {
        let result = by_id(&read, id)["result"].as_object().unwrap();
        for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
            assert!(!result.contains_key(key), "{}: {:?}", key, result);
        }
    }
    assert_eq!(by_id(&read, 3)["result"]["content"][0]["text"], "hi");
}

// JSON-RPC 2.0 §5: a response has exactly one of result and error. The
// local client's malformed answer to a request of the remote server's
// fails that request at once (the server gets -32603), not at --timeout.
#[test]
fn a_malformed_answer_from_the_local_client_fails_the_server_request_at_once() {
    let example = Example::start(&[]);
    let url = format!("http://{}/mcp", example.addr);
    let mut child = spawn_bridge(&url, &["--timeout", "30"]);
    let (mut stdin, rx, asked) = elicitation_asked(&mut child);
    let both = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"},
        "error": {"code": -1, "message": "no"}});
    writeln!(stdin, "{}", both).unwrap();
    let answer = rx.recv_timeout(WAIT).expect("the call's answer within 5 s");
    assert_eq!(answer["id"], 2, "{}", answer);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("malformed"), "{}", text);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

// basic/utilities/cancellation: when the local client cancels a call
// while the remote server waits for its answer to an elicitation, that
// elicitation is moot: the bridge cancels it with the local client (which
// would otherwise keep asking its user), ends the call at once instead of
// at --timeout, and answers nothing for it.
#[test]
fn cancelling_a_call_cancels_the_requests_the_bridge_sent_for_it() {
    let example = Example::start(&[]);
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let url = format!("http://{}/mcp", example.addr);
        let mut child = bridge_command(&url, era, &["--timeout", "30"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the bridge");
        let (mut stdin, rx, asked) = elicitation_asked(&mut child);
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
        writeln!(stdin, "{}", cancel).unwrap();
        let told = rx.recv_timeout(WAIT).expect("the bridge's cancellation");
        assert_eq!(told["method"], "notifications/cancelled", "{:?}", era);
        assert_eq!(told["params"]["requestId"], asked["id"]);
        // The bridge goes on, and the cancelled call is not answered.
        writeln!(stdin, "{}", ping).unwrap();
        drop(stdin);
        let mut rest = Vec::new();
        while let Ok(message) = rx.recv_timeout(WAIT) {
            rest.push(message);
        }
        assert!(child.wait().unwrap().success());
        assert!(rest.iter().any(|m| m["id"] == "p"), "{:?}: {:?}", era, rest);
        assert!(rest.iter().all(|m| m["id"] != 2), "{:?}: {:?}", era, rest);
    }
}

// `--header "Authorization: …"` (what mcp-remote users write) is the
// program's own credentials: sent as given, and no login is tried.
#[test]
fn an_authorization_header_is_sent_as_given() {
    let server = plain_fake();
    let child = spawn_bridge(
        &server.url("/mcp"),
        &["--header", "Authorization: Bearer h-1"],
    );
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let (read, status) = run_bridge(child, &[INITIALIZE, ping]);
    assert!(status.success());
    assert_eq!(read.len(), 2, "{:?}", read);
    for request in server.requests() {
        assert_eq!(request.header("authorization"), Some("Bearer h-1"));
    }
}

// A header the remote server can never be sent is a usage error at the
// start (exit 2), not an error on every request; the value is not shown.
#[test]
fn a_header_that_cannot_be_sent_is_a_usage_error() {
    for header in ["Mcp-Session-Id: x", "Bad Name: x", "X-Key: qzw\u{7}vwq"] {
        let out = Command::new(mcp_path())
            .args([
                "bridge",
                "--to",
                "http://127.0.0.1:9/mcp",
                "--header",
                header,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", header);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--header"), "{}", stderr);
        assert!(!stderr.contains("qzw"), "{}", stderr);
    }
}

/// Initializes the bridge `child` (elicitation declared) and calls the
/// example's `test_elicitation`; its stdin, its messages as they come, and
/// the `elicitation/create` it sent for the call.
fn elicitation_asked(
    child: &mut Child,
) -> (
    std::process::ChildStdin,
    crossbeam_channel::Receiver<Value>,
    Value,
) {
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = crossbeam_channel::unbounded();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"who?"}}}"#;
    writeln!(stdin, "{}\n{}", initialize, call).unwrap();
    let asked = loop {
        let message = rx.recv_timeout(WAIT).expect("the elicitation request");
        if message["method"] == "elicitation/create" {
            break message;
        }
    };
    (stdin, rx, asked)
}
