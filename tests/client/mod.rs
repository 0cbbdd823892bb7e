//! The blocking client against the `everything` example, over stdio (a
//! child process) and Streamable HTTP (on 127.0.0.1), in both eras.

mod breaker;
mod bridge;
mod challenges;
mod events;
mod fake;
mod headers;
mod hostile;
mod http_sse;
mod mcp_cli;
mod oauth;
mod oauth_server;
#[cfg(unix)]
mod old_servers;
mod polling;
mod recovery;
mod redirects;
mod refused;
#[cfg(target_os = "linux")]
mod shutdown;
mod stale;
#[cfg(feature = "tasks")]
mod tasks;
#[cfg(feature = "tls")]
mod tls;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CancelToken, Client, ClientBuilder, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Era, ErrorKind, LoggingLevel, Reference, Root, StderrMode,
};

use crate::support::{example_path, Example};

/// Where a test client connects.
enum Via {
    Stdio,
    Http(Example),
}

fn builder() -> ClientBuilder {
    Client::builder("tiny-mcp-client-test", "1.0.0")
        .request_timeout(Duration::from_secs(20))
        .stderr(StderrMode::Capture)
        .on_sampling(|params| {
            let text = params.messages[0].content["text"]
                .as_str()
                .unwrap_or("")
                .to_string();
            Ok(CreateMessageResult::assistant_text(
                format!("echo of {}", text),
                "test-model",
            ))
        })
        .on_elicitation(|request| match request {
            ElicitRequestParams::Form(_) => {
                let mut values = tiny_mcp::JsonObject::new();
                values.insert("username".into(), json!("ada"));
                values.insert("email".into(), json!("ada@example.com"));
                values.insert("name".into(), json!("Ada"));
                Ok(ElicitResult::accept(Some(values)))
            }
            _ => Ok(ElicitResult::decline()),
        })
        .roots(vec![Root::new("file:///work").with_name("work")])
}

fn connect(via: &Via, b: ClientBuilder) -> Client {
    match via {
        Via::Stdio => b
            .connect_stdio(Command::new(example_path("everything")))
            .expect("connect over stdio"),
        Via::Http(example) => b
            .connect_http(&format!("http://{}/mcp", example.addr))
            .expect("connect over HTTP"),
    }
}

fn each(f: impl Fn(&Via, Option<Era>)) {
    let http = Via::Http(Example::start(&[]));
    for via in [&Via::Stdio, &http] {
        for era in [None, Some(Era::V2025_11_25)] {
            f(via, era);
        }
    }
}

fn client(via: &Via, era: Option<Era>) -> Client {
    match era {
        Some(era) => connect(via, builder().era(era)),
        None => connect(via, builder()),
    }
}

fn text(result: &tiny_mcp::CallToolResult) -> String {
    let value = serde_json::to_value(&result.content).unwrap();
    value[0]["text"].as_str().unwrap_or("").to_string()
}

// basic/versioning (VER-3, DISC-3): the client tries 2026-07-28 first; a
// pinned era speaks only that one (lifecycle "Version Negotiation").
#[test]
fn eras_are_negotiated_and_pinned() {
    each(|via, era| {
        let c = client(via, era);
        match era {
            None => {
                assert_eq!(c.era(), Era::V2026_07_28);
                assert_eq!(c.protocol_version(), "2026-07-28");
                assert!(c.session_id().is_none());
            }
            Some(_) => {
                assert_eq!(c.era(), Era::V2025_11_25);
                assert_eq!(c.protocol_version(), "2025-11-25");
                assert_eq!(c.session_id().is_some(), matches!(via, Via::Http(_)));
            }
        }
        assert!(
            c.server_info().map_or(false, |i| !i.name.is_empty()),
            "{:?}",
            c.server_info()
        );
        assert!(c.server_capabilities().tools.is_some());
        c.ping().expect("ping");
    });
}

// Every typed request, in both eras and on both transports.
#[test]
fn typed_requests_in_both_eras() {
    each(|via, era| {
        let c = client(via, era);
        let tools = c.list_tools().expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "echo"), "{:?}", era);
        let echoed = c
            .call_tool("echo", json!({"text": "hi"}))
            .expect("tools/call");
        assert_eq!(text(&echoed), "hi");
        let failed = c
            .call_tool("test_error_handling", Value::Null)
            .expect("tools/call");
        assert_eq!(failed.is_error, Some(true));
        let unknown = c.call_tool("no_such_tool", Value::Null).unwrap_err();
        assert!(
            matches!(unknown.kind(), ErrorKind::Peer(e) if e.code.0 == -32602),
            "{:?}",
            unknown
        );
        let resources = c.list_resources().expect("resources/list");
        assert!(resources.iter().any(|r| r.uri == "test://static-text"));
        assert!(!c.list_resource_templates().expect("templates").is_empty());
        let read = c
            .read_resource("test://static-text")
            .expect("resources/read");
        assert_eq!(read.contents.len(), 1);
        let prompts = c.list_prompts().expect("prompts/list");
        assert!(prompts.iter().any(|p| p.name == "test_simple_prompt"));
        let prompt = c
            .get_prompt(
                "test_prompt_with_arguments",
                &[("arg1", "a"), ("arg2", "b")],
            )
            .expect("prompts/get");
        assert!(!prompt.messages.is_empty());
        let reference = Reference::Prompt {
            name: "test_prompt_with_arguments".into(),
        };
        let done = c
            .complete(reference, "arg1", "test", &[("arg2", "x")])
            .expect("completion/complete");
        assert_eq!(done.completion.values, vec!["testValue1", "testValue2"]);
        c.set_logging_level(LoggingLevel::Debug)
            .expect("logging level");
        let raw = c
            .request("tools/list", Value::Null)
            .expect("generic request");
        assert!(raw["tools"].is_array());
    });
}

// client/sampling, client/elicitation, client/roots: the same closures
// answer 2025-11-25 server requests and 2026-07-28 input_required rounds.
#[test]
fn server_requests_are_answered_in_both_eras() {
    each(|via, era| {
        let c = client(via, era);
        let sampled = c
            .call_tool("test_sampling", json!({"prompt": "hello"}))
            .expect("sampling");
        assert_eq!(text(&sampled), "LLM response: echo of hello", "{:?}", era);
        let elicited = c
            .call_tool("test_elicitation", json!({"message": "who?"}))
            .expect("elicitation");
        assert!(
            text(&elicited).contains("ada@example.com"),
            "{}",
            text(&elicited)
        );
        let roots = c.call_tool("test_roots", Value::Null).expect("roots");
        assert!(text(&roots).contains("file:///work"), "{}", text(&roots));
    });
}

// basic/utilities/progress: the client sets the token and routes the
// server's notifications to the call's callback.
#[test]
fn progress_reaches_its_call() {
    each(|via, era| {
        let c = client(via, era);
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| s.lock().push(p.progress));
        let result = c
            .call_tool_with("test_tool_with_progress", Value::Null, &options)
            .expect("call");
        assert!(text(&result).starts_with("progress-"), "{}", text(&result));
        assert_eq!(*seen.lock(), vec![0.0, 50.0, 100.0], "{:?}", era);
    });
}

// basic/utilities/cancellation: a call cancelled from another thread
// returns at once; the connection stays usable. The cancel is triggered by
// the first progress notification, so the call is known to be running.
#[test]
fn a_call_is_cancelled_from_another_thread() {
    each(|via, era| {
        let c = client(via, era);
        let token = CancelToken::new();
        let (tx, rx) = crossbeam_channel::bounded(1);
        let options = CallOptions::new()
            .cancel_token(token.clone())
            .on_progress(move |_| {
                let _ = tx.try_send(());
            });
        let canceller = std::thread::spawn(move || {
            rx.recv_timeout(Duration::from_secs(10))
                .expect("a progress notification");
            token.cancel();
        });
        let err = c
            .call_tool_with("slow", json!({"seconds": 30}), &options)
            .unwrap_err();
        assert!(err.is_cancelled(), "{:?}", err);
        canceller.join().unwrap();
        assert_eq!(
            text(&c.call_tool("echo", json!({"text": "after"})).unwrap()),
            "after"
        );
    });
}

// A timeout cancels the call the same way and says what timed out.
#[test]
fn a_call_times_out() {
    each(|via, era| {
        let c = client(via, era);
        let options = CallOptions::new().timeout(Duration::from_millis(300));
        let err = c
            .call_tool_with("slow", json!({"seconds": 30}), &options)
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Timeout { method, .. } if method == "tools/call"),
            "{:?}",
            err
        );
        assert_eq!(
            text(&c.call_tool("echo", json!({"text": "still"})).unwrap()),
            "still"
        );
    });
}

// Calls from several threads at once run concurrently on one client.
#[test]
fn calls_from_many_threads_share_one_client() {
    each(|via, era| {
        let c = Arc::new(client(via, era));
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let c = Arc::clone(&c);
                let done = Arc::clone(&done);
                std::thread::spawn(move || {
                    for j in 0..10 {
                        let want = format!("{}-{}", i, j);
                        let got = c.call_tool("echo", json!({"text": want})).unwrap();
                        assert_eq!(text(&got), want);
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(done.load(Ordering::SeqCst), 80);
    });
}

/// Ends session `session` on the example at `addr` with a raw DELETE.
fn delete_session(addr: std::net::SocketAddr, session: &str) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n",
        addr, session
    );
    std::io::Write::write_all(&mut stream, delete.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.1 204"),
        "{}",
        answer
    );
}

// 2025-11-25 transports "Session Management": a 404 on the session is
// reported as its end without reinitialize_on_expiry; with it (the
// default) the client starts a new session and sends the request again.
#[test]
fn an_ended_http_session_is_reported_or_renewed() {
    let example = Example::start(&[]);
    let addr = example.addr;
    let via = Via::Http(example);
    let c = connect(
        &via,
        builder()
            .era(Era::V2025_11_25)
            .reinitialize_on_expiry(false),
    );
    delete_session(addr, &c.session_id().expect("a session id"));
    let err = c.call_tool("echo", json!({"text": "x"})).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::SessionExpired), "{:?}", err);
    let renewing = connect(&via, builder().era(Era::V2025_11_25));
    let old = renewing.session_id().expect("a session id");
    delete_session(addr, &old);
    let answer = renewing
        .call_tool("echo", json!({"text": "again"}))
        .expect("a new session");
    assert_eq!(text(&answer), "again");
    let new = renewing.session_id().expect("the new session id");
    assert_ne!(old, new);
}

// basic/authorization: the bearer token provider, and a 401's challenge
// handed back for the program to act on (RFC 9728 §5.1).
#[test]
fn bearer_tokens_and_challenges() {
    let example = Example::start(&["--auth-demo"]);
    let url = format!("http://{}/mcp", example.addr);
    let err = builder().connect_http(&url).unwrap_err();
    match err.kind() {
        ErrorKind::Http {
            status: 401,
            challenge: Some(c),
            ..
        } => {
            let metadata = c.resource_metadata.as_deref().unwrap_or("");
            assert!(
                metadata.contains("/.well-known/oauth-protected-resource"),
                "{}",
                metadata
            );
        }
        other => panic!("expected a 401 with a challenge, got {:?}", other),
    }
    let c = builder()
        .bearer_token(|| Some("user-token".into()))
        .connect_http(&url)
        .unwrap();
    assert_eq!(
        text(&c.call_tool("echo", json!({"text": "ok"})).unwrap()),
        "ok"
    );
}

// STDIO: a server that exits is reported on the waiting call, with its
// stderr; the child is reaped on close.
#[test]
fn a_stdio_server_that_exits_fails_the_call() {
    let mut command = Command::new("sh");
    command.args(["-c", "read line; echo 'going away' >&2; exit 3"]);
    let err = builder().connect_stdio(command).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("exited") && message.contains("going away"),
        "{}",
        message
    );
}

/// Runs the `mcp` example with `args`; its exit code and stdout.
fn mcp(args: &[&str]) -> (i32, String) {
    let config = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-command-line");
    let output = Command::new(crate::support::mcp_path())
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the mcp example");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code().unwrap_or(-1), stdout)
}

// The `mcp` command line: JSON out by default, a readable form with
// --pretty, and exit codes that tell a tool error (1), usage (2), a
// protocol error (3) and a connection failure (4) apart.
#[test]
fn the_mcp_command_line() {
    let server = example_path("everything");
    let server = server.to_str().unwrap();
    let (code, out) = mcp(&["--stdio", server, "tools"]);
    assert_eq!(code, 0);
    let tools: Value = serde_json::from_str(&out).expect("one line of JSON");
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "echo"));
    let (code, out) = mcp(&["--stdio", server, "call", "echo", "text=hi", "--pretty"]);
    assert_eq!((code, out.trim()), (0, "hi"));
    let (code, out) = mcp(&[
        "--stdio",
        server,
        "--era",
        "2025-11-25",
        "call",
        "test_sampling",
        "--json",
        r#"{"prompt":"x"}"#,
    ]);
    assert_eq!(code, 0, "{}", out);
    assert!(out.contains("Sampling not supported"), "{}", out);
    let (code, _) = mcp(&["--stdio", server, "call", "test_error_handling"]);
    assert_eq!(code, 1);
    let (code, _) = mcp(&["--stdio", server, "read", "test://nope"]);
    assert_eq!(code, 3);
    let (code, _) = mcp(&["--stdio", server, "frobnicate"]);
    assert_eq!(code, 2);
    let (code, _) = mcp(&["--http", "http://127.0.0.1:1/mcp", "info"]);
    assert_eq!(code, 4);
    let example = Example::start(&["--auth-demo"]);
    let url = format!("http://{}/mcp", example.addr);
    let (code, _) = mcp(&["--http", &url, "tools"]);
    assert_eq!(code, 4, "no token: 401");
    let (code, out) = mcp(&["--http", &url, "--token", "user-token", "info"]);
    assert_eq!(code, 0);
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["era"], "2026-07-28");
}

// HTTP-4 (2026-07-28): the client mirrors x-mcp-header arguments in
// Mcp-Param-* headers, learnt from the tool list; a call of a tool it has
// not listed yet gets -32020 from the server, and the client lists the
// tools and retries once, so the call succeeds either way.
#[test]
fn mcp_param_headers_follow_the_tool_list() {
    let via = Via::Http(Example::start(&[]));
    let c = connect(&via, builder());
    assert_eq!(c.era(), Era::V2026_07_28);
    let first = c
        .call_tool("test_custom_header", json!({"region": "Zürich"}))
        .unwrap();
    assert!(text(&first).contains("Zürich"), "{}", text(&first));
    let again = c
        .call_tool("test_custom_header", json!({"region": "eu-west"}))
        .unwrap();
    assert!(text(&again).contains("eu-west"), "{}", text(&again));
}

// Change notifications on request: subscriptions/listen in 2026-07-28
// (LISTEN-3: acknowledged before listen returns, LISTEN-4: the honoured
// filter), the GET stream of a 2025-11-25 HTTP session, and nothing to
// open on 2025-11-25 stdio. Closing ends it; the client carries on.
#[test]
fn listen_brings_change_notifications_in_both_eras() {
    each(|via, era| {
        let (tx, rx) = crossbeam_channel::unbounded();
        let b = builder().on_notification(move |n| {
            let _ = tx.send(n.method.clone());
        });
        let c = match era {
            Some(era) => connect(via, b.era(era)),
            None => connect(via, b),
        };
        let subscription = c
            .listen(&tiny_mcp::SubscriptionFilter::new().tools_list_changed())
            .expect("listen");
        if c.era() == Era::V2026_07_28 {
            assert_eq!(subscription.honored(), &json!({"toolsListChanged": true}));
        }
        c.call_tool("notify_changed", Value::Null)
            .expect("notify_changed");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let method = rx
                .recv_timeout(left)
                .expect("notifications/tools/list_changed");
            if method == "notifications/tools/list_changed" {
                break;
            }
        }
        subscription.close();
        assert_eq!(
            text(&c.call_tool("echo", json!({"text": "on"})).unwrap()),
            "on"
        );
    });
}
