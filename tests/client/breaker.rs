//! Hostile servers against the blocking client (a review round): each test
//! is a bug that was found, bounded in time, and fails while it is there.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{CallOptions, Client, Era, ErrorKind, SubscriptionFilter};

use super::fake::{self, Fake, Reply};

/// Runs `f` on a thread of its own; `None` when it did not end within
/// `limit` (the thread is left behind).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

/// Reads one request head and its `Content-Length` body; `None` at EOF.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let end = line == "\r\n" || line == "\n";
        head.push_str(&line);
        if end {
            break;
        }
    }
    let length = head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            match n.eq_ignore_ascii_case("content-length") {
                true => v.trim().parse::<usize>().ok(),
                false => None,
            }
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((head, body))
}

// wire.rs `Conn::one_head`: "a response head | 64 KiB" (DESIGN.md §6, the
// client's table). A header line that never ends is read whole by
// `read_until` before the size is checked, so the server decides how much
// memory the client takes (until the call's deadline).
#[test]
fn a_response_head_line_that_never_ends_is_bounded() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let written = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&written);
    thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut out = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let _ = read_request(&mut reader);
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\nX-Flood: ");
        let block = vec![b'a'; 64 * 1024];
        // Up to 256 MiB, or until the client hangs up.
        for _ in 0..4096 {
            if out.write_all(&block).is_err() {
                return;
            }
            counted.fetch_add(block.len(), Ordering::SeqCst);
        }
    });
    let outcome = within(Duration::from_secs(30), move || {
        Client::builder("breaker", "1")
            .era(Era::V2025_11_25)
            .request_timeout(Duration::from_secs(8))
            .connect_http(&url)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let outcome = outcome.expect("the client returns within its deadline");
    assert!(outcome.is_err());
    let written = written.load(Ordering::SeqCst);
    // Socket buffers hold a few MiB; the client must stop reading at 64 KiB.
    assert!(
        written < 32 * 1024 * 1024,
        "the client read {} MiB of one header line ({:?})",
        written >> 20,
        outcome
    );
}

// recover.rs / listen.rs `GetStream::keep`: a cancel (dropping the
// Subscription, closing the Client) that comes while the GET stream is being
// opened again is missed when that GET then meets a `404`: the thread waits
// for the next session with `FOREVER` and `SessionEpoch::wake` already
// happened, so `Subscription::drop` joins it forever.
#[test]
fn a_subscription_dropped_while_its_get_stream_reopens_is_not_held() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&gets);
    let server = Fake::start(move |request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        if request.method == "GET" {
            return match counted.fetch_add(1, Ordering::SeqCst) {
                // The first stream ends at once.
                0 => Reply::Close(fake::SSE_HEAD.as_bytes().to_vec()),
                // The server restarted meanwhile: slow, then 404.
                _ => {
                    thread::sleep(Duration::from_millis(1500));
                    Reply::Keep(fake::answer(404, "text/plain", "no session", ""))
                }
            };
        }
        Reply::Keep(fake::answer(404, "text/plain", "?", ""))
    });
    let client = Client::builder("breaker", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(10))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    let subscription = client.listen(&SubscriptionFilter::new()).unwrap();
    // The first stream ended; the pause (250 ms) passed; the second GET waits.
    let deadline = Instant::now() + Duration::from_secs(5);
    while gets.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(gets.load(Ordering::SeqCst), 2);
    let dropped = within(Duration::from_secs(8), move || drop(subscription));
    assert!(
        dropped.is_some(),
        "dropping the subscription hangs (its thread waits for a session forever)"
    );
}

/// A 2025-11-25 fake whose first session ends on the first `tools/call`
/// (404) and whose second `initialize` takes `slow`.
fn renewing_server(slow: Duration, calls: Arc<AtomicUsize>) -> Fake {
    let inits = AtomicUsize::new(0);
    Fake::start(move |request| {
        let session = request.header("mcp-session-id").map(str::to_string);
        match request.rpc().as_str() {
            "initialize" => {
                let n = inits.fetch_add(1, Ordering::SeqCst) + 1;
                if n > 1 {
                    thread::sleep(slow);
                }
                let body = fake::result(
                    request,
                    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}"#,
                );
                Reply::Keep(fake::json(&body, &format!("Mcp-Session-Id: s-{}\r\n", n)))
            }
            m if m.starts_with("notifications/") => Reply::Keep(fake::accepted()),
            "tools/call" => {
                calls.fetch_add(1, Ordering::SeqCst);
                match session.as_deref() {
                    Some("s-1") => Reply::Keep(fake::answer(404, "text/plain", "gone", "")),
                    Some(_) => Reply::Keep(fake::json(&fake::text_result(request, "ok"), "")),
                    // What the SDK servers answer a request without a session id.
                    None => Reply::Keep(fake::answer(
                        400,
                        "text/plain",
                        "Bad Request: Mcp-Session-Id header is required",
                        "",
                    )),
                }
            }
            _ => Reply::Keep(fake::answer(404, "text/plain", "?", "")),
        }
    })
}

// recover.rs `Client::new_session`: a call's own timeout ("one request
// (`request_timeout`, per call `CallOptions::timeout`) ... cancelled as by a
// token") does not bound the new session it starts: `initialize` and the
// restored subscriptions each get the full `request_timeout`, under the
// `reinitializing` lock. A call of 300 ms lasts as long as the server takes
// to answer the new `initialize`.
#[test]
fn a_call_that_meets_a_404_keeps_its_own_deadline() {
    let server = renewing_server(Duration::from_secs(4), Arc::default());
    let client = Client::builder("breaker", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    let began = Instant::now();
    let options = CallOptions::new().timeout(Duration::from_millis(300));
    let outcome = client.call_tool_with("t", json!({}), &options);
    let took = began.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "a 300 ms call took {:?} ({:?})",
        took,
        outcome.map(|_| ())
    );
}

// recover.rs: "Several threads can meet the same 404: the first makes the
// new session, the others find it made and use it." A request sent while
// another thread renews goes out with no session id at all
// (`forget_session` before `initialize`): the server's 400 for a missing
// session id comes back while the client has no session, so it is not
// taken for the session's end, and the call fails.
#[test]
fn a_call_made_while_another_thread_renews_the_session_succeeds() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = renewing_server(Duration::from_millis(1500), Arc::clone(&calls));
    let client = Arc::new(
        Client::builder("breaker", "1")
            .era(Era::V2025_11_25)
            .request_timeout(Duration::from_secs(10))
            .connect_http(&server.url("/mcp"))
            .unwrap(),
    );
    let first = Arc::clone(&client);
    let a = thread::spawn(move || first.call_tool("t", json!({})).map(|_| ()));
    // A's call met its 404 and A is in the slow `initialize`.
    let deadline = Instant::now() + Duration::from_secs(5);
    while calls.load(Ordering::SeqCst) < 1 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    thread::sleep(Duration::from_millis(300));
    let second = Arc::clone(&client);
    let b = within(Duration::from_secs(10), move || {
        second
            .call_tool("t", json!({}))
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let a = a.join().unwrap();
    assert!(a.is_ok(), "{:?}", a);
    let b = b.expect("B returns");
    assert!(b.is_ok(), "B, sent during A's renewal: {:?}", b);
    let without: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.rpc() == "tools/call" && r.header("mcp-session-id").is_none())
        .collect();
    assert!(
        without.is_empty(),
        "sent without a session id: {}",
        without.len()
    );
}

// http.rs `session_ended`: a `400` whose body says "session" anywhere is
// taken for the session's end before the body is read as the server's
// JSON-RPC error. A tool's invalid-params error that names a `session_id`
// argument throws the session away (the old one is never DELETEd), starts
// a new one, runs the call again, and the caller gets `SessionExpired`
// instead of the server's `-32602`.
#[test]
fn a_json_rpc_error_in_a_400_that_names_a_session_argument_is_the_servers_error() {
    let inits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&inits);
    let server = Fake::start(move |request| {
        if request.rpc() == "initialize" {
            counted.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"Invalid params: session_id must be a UUID"}}}}"#,
            request.json()["id"]
        );
        Reply::Keep(fake::answer(400, "application/json", &body, ""))
    });
    let client = Client::builder("breaker", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(10))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    let err = client
        .call_tool("book", json!({"session_id": "x"}))
        .unwrap_err();
    let calls = server
        .requests()
        .iter()
        .filter(|r| r.rpc() == "tools/call")
        .count();
    assert!(
        matches!(err.kind(), ErrorKind::Peer(e) if e.code.0 == -32602),
        "{:?}",
        err
    );
    assert_eq!(inits.load(Ordering::SeqCst), 1, "a second initialize");
    assert_eq!(calls, 1, "the call was sent again");
}

/// A 2024-11-05 HTTP+SSE server whose POSTs are answered in HTTP/1.0
/// (Python's `http.server` default), which closes the connection after
/// each answer (RFC 9112 §9.3: no `keep-alive` option, so not persistent).
fn http10_2025_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let events: Arc<parking_lot::Mutex<Option<TcpStream>>> = Arc::default();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(stream) => stream,
                Err(_) => return,
            };
            let events = Arc::clone(&events);
            thread::spawn(move || {
                let mut out = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                let (head, body) = match read_request(&mut reader) {
                    Some(request) => request,
                    None => return,
                };
                if head.starts_with("GET /sse ") {
                    let _ = out.write_all(
                        b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: /messages?sessionId=abc\n\n",
                    );
                    *events.lock() = Some(out);
                    let _ = reader.read(&mut [0u8; 1]);
                    return;
                }
                if !head.starts_with("POST /messages?sessionId=abc ") {
                    let _ = out
                        .write_all(b"HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
                    return;
                }
                let _ = out.write_all(b"HTTP/1.0 202 Accepted\r\nContent-Length: 0\r\n\r\n");
                drop(out);
                drop(reader);
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let id = &message["id"];
                let result = match message["method"].as_str() {
                    Some("initialize") => {
                        json!({"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}})
                    }
                    Some("tools/list") => json!({"tools": []}),
                    _ => return,
                };
                let answer = json!({"jsonrpc":"2.0","id":id,"result":result});
                if let Some(stream) = events.lock().as_mut() {
                    let _ = write!(stream, "event: message\ndata: {}\n\n", answer);
                }
            });
        }
    });
    url
}

// http_sse.rs `Poster::post` keeps a connection whose answer was HTTP/1.0
// without `keep-alive` (wire.rs `Head::keeps_alive` looks only for
// `Connection: close`); the next POST, within a second, is written on the
// closed socket, and a failed POST ends the whole link (no second try, as
// `http/send.rs` has).
#[test]
fn a_2024_server_answering_in_http_1_0_is_spoken_to() {
    let url = http10_2025_server();
    let outcome = within(Duration::from_secs(20), move || {
        let client = Client::builder("breaker", "1")
            .request_timeout(Duration::from_secs(5))
            .probe_timeout(Duration::from_secs(1))
            .connect_http(&url)
            .map_err(|e| format!("connect: {}", e))?;
        for _ in 0..3 {
            client
                .list_tools()
                .map_err(|e| format!("tools/list: {}", e))?;
        }
        Ok::<(), String>(())
    });
    let outcome = outcome.expect("returns");
    assert!(outcome.is_ok(), "{:?}", outcome);
}

// stdio/process.rs `Process::spawn`: the error of a command that cannot
// start is `format!("{:?}", command)`, and `Command`'s Debug shows the
// environment given with `.env()`, where a server's API key goes.
#[test]
fn a_command_that_cannot_start_does_not_show_its_environment() {
    let mut command = std::process::Command::new("/nonexistent/mcp-server");
    command.env("GITHUB_TOKEN", "ghp_secret_value_123");
    let err = Client::builder("breaker", "1")
        .connect_stdio(command)
        .unwrap_err();
    assert!(
        !err.to_string().contains("ghp_secret_value_123"),
        "the secret is in the error: {}",
        err
    );
}

// http.rs `HttpLink::request`: a cancel shuts the call's socket down, and
// the read of its event stream then ends as the server's end of stream
// would (EOF, not an error): the call takes it for a dropped stream, sleeps
// the server's `retry:` (up to 5 s) and sends a resuming GET before it
// notices the token. "A cancelled call (a `CancelToken`, or its timeout)"
// should end at once.
#[test]
fn a_cancelled_call_on_a_resumable_stream_ends_at_once() {
    let server = Fake::start(|request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        if request.rpc() == "tools/call" {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
            let event = "id: 1\nretry: 5000\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n";
            return Reply::Hold(format!("{}{}", head, event).into_bytes());
        }
        Reply::Keep(fake::answer(405, "text/plain", "no", ""))
    });
    let client = Client::builder("breaker", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    let token = tiny_mcp::CancelToken::new();
    let cancel = token.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(500));
        cancel.cancel();
    });
    let began = Instant::now();
    let options = CallOptions::new().cancel_token(token);
    let err = client
        .call_tool_with("slow", json!({}), &options)
        .unwrap_err();
    let took = began.elapsed();
    let gets = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .count();
    assert!(
        took < Duration::from_millis(1500) && gets == 0,
        "cancelled after 500 ms, returned after {:?} ({:?}), {} resuming GETs",
        took,
        err,
        gets
    );
}

// examples/mcp.rs `place`: an error that does not name the host is
// prefixed with the whole URL, query and all, where an API key may be
// (`?api_key=…`); the redirect errors drop the query for that reason.
#[test]
fn the_mcp_cli_does_not_print_the_query_of_its_url() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/mcp?api_key=SECRET123",
        listener.local_addr().unwrap()
    );
    // Accepts, reads, never answers.
    thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let output = within(Duration::from_secs(20), move || {
        std::process::Command::new(crate::support::mcp_path())
            .args(["--http", &url, "--timeout", "1", "tools"])
            .output()
            .unwrap()
    })
    .expect("mcp returns");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(!stderr.contains("SECRET123"), "{}", stderr);
}
