//! The client against servers that misbehave: each gets a clear error
//! within the timeout, never a hang or a panic. Servers here are scripts
//! on loopback sockets: a line-oriented one for `connect_io`, and a raw
//! HTTP/1.1 one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use tiny_mcp::{Client, ClientBuilder, Era, ErrorKind};

const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private"}"#;

fn quick() -> ClientBuilder {
    Client::builder("hostile-test", "1").request_timeout(Duration::from_millis(1500))
}

/// A line server: `answer(request)` gives the lines to send back. The
/// client side is returned as (reader, writer) for `connect_io`.
fn line_server(
    answer: impl Fn(&Value) -> Vec<String> + Send + 'static,
) -> (BufReader<TcpStream>, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    // Nagle's delay would make every round trip 40 ms.
    client.set_nodelay(true).unwrap();
    server.set_nodelay(true).unwrap();
    thread::spawn(move || {
        let mut out = server.try_clone().unwrap();
        for line in BufReader::new(server).lines() {
            let line = match line {
                Ok(line) => line,
                Err(_) => return,
            };
            let request = match serde_json::from_str::<Value>(&line) {
                Ok(request) => request,
                Err(_) => continue,
            };
            for reply in answer(&request) {
                if out
                    .write_all(reply.as_bytes())
                    .and_then(|_| out.write_all(b"\n"))
                    .is_err()
                {
                    return;
                }
            }
        }
    });
    (BufReader::new(client.try_clone().unwrap()), client)
}

fn result(request: &Value, result: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        request["id"], result
    )
}

/// Answers discover, then `call` for tools/call.
fn server_2026(
    call: impl Fn(&Value) -> Vec<String> + Send + 'static,
) -> (BufReader<TcpStream>, TcpStream) {
    line_server(move |request| match request["method"].as_str() {
        Some("server/discover") => vec![result(request, DISCOVER)],
        Some("tools/call") => call(request),
        _ => Vec::new(),
    })
}

fn call_err(io: (BufReader<TcpStream>, TcpStream)) -> tiny_mcp::Error {
    let client = quick().connect_io(io.0, io.1).expect("connect");
    client.call_tool("t", Value::Null).unwrap_err()
}

/// As `call_err`, for answers that are not timeouts: a deadline long
/// enough for a loaded machine.
fn answer_err(io: (BufReader<TcpStream>, TcpStream)) -> tiny_mcp::Error {
    let client = Client::builder("hostile-test", "1")
        .request_timeout(Duration::from_secs(20))
        .connect_io(io.0, io.1)
        .expect("connect");
    client.call_tool("t", Value::Null).unwrap_err()
}

fn is_timeout(e: &tiny_mcp::Error) -> bool {
    matches!(e.kind(), ErrorKind::Timeout { .. })
}

// Garbage instead of JSON-RPC, a wrong id, or silence: the call times out
// (the garbage is logged and dropped, STDIO-1).
#[test]
fn garbage_wrong_ids_and_silence_time_out() {
    let garbage = call_err(server_2026(|_| {
        vec!["this is not json".into(), "{\"jsonrpc\":\"2.0\"}".into()]
    }));
    assert!(is_timeout(&garbage), "{:?}", garbage);
    let wrong = call_err(server_2026(|r| {
        vec![format!(
            r#"{{"jsonrpc":"2.0","id":"x{}","result":{{}}}}"#,
            r["id"]
        )]
    }));
    assert!(is_timeout(&wrong), "{:?}", wrong);
    let silent = call_err(server_2026(|_| Vec::new()));
    assert!(is_timeout(&silent), "{:?}", silent);
}

// A server that closes its output: the waiting call fails at once with a
// protocol error that says so, not a timeout.
#[test]
fn a_server_that_hangs_up_fails_the_call() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    thread::spawn(move || {
        let mut out = server.try_clone().unwrap();
        let mut lines = BufReader::new(server).lines();
        if let Some(Ok(line)) = lines.next() {
            let request: Value = serde_json::from_str(&line).unwrap();
            let _ = writeln!(out, "{}", result(&request, DISCOVER));
        }
        let _ = lines.next();
        let _ = out.shutdown(std::net::Shutdown::Both);
    });
    let c = Client::builder("t", "1")
        .request_timeout(Duration::from_secs(30))
        .connect_io(BufReader::new(client.try_clone().unwrap()), client)
        .unwrap();
    let err = c.call_tool("t", Value::Null).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Protocol(m) if m.contains("closed")),
        "{:?}",
        err
    );
    assert!(
        c.call_tool("t", Value::Null).is_err(),
        "later calls fail too"
    );
}

// A flood of notifications, and a line over max_message_bytes, before the
// answer: the notifications reach the callback, the long line is dropped,
// and the answer still arrives.
#[test]
fn floods_and_oversized_lines_do_not_lose_the_answer() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s = Arc::clone(&seen);
    let io = server_2026(|r| {
        let mut lines: Vec<String> = (0..5000)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":{}}}}}"#, i))
            .collect();
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"pad":"{}"}}}}"#,
            "a".repeat(4096)
        ));
        lines.push(result(
            r,
            r#"{"resultType":"complete","content":[{"type":"text","text":"ok"}]}"#,
        ));
        lines
    });
    let client = Client::builder("t", "1")
        .max_message_bytes(2048)
        .request_timeout(Duration::from_secs(20))
        .on_notification(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .connect_io(io.0, io.1)
        .unwrap();
    let answer = client.call_tool("t", Value::Null).unwrap();
    assert_eq!(
        serde_json::to_value(&answer.content).unwrap()[0]["text"],
        "ok"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 5000);
}

// A result of the wrong shape is a protocol error naming the method.
#[test]
fn a_result_of_the_wrong_shape_is_a_protocol_error() {
    let err = answer_err(server_2026(|r| {
        vec![result(
            r,
            r#"{"resultType":"complete","content":"not a list"}"#,
        )]
    }));
    assert!(
        matches!(err.kind(), ErrorKind::Protocol(m) if m.contains("tools/call")),
        "{:?}",
        err
    );
}

// MRTR: a server that asks for input forever is stopped after 16 rounds.
#[test]
fn endless_input_rounds_are_cut_off() {
    let err = answer_err(server_2026(|r| {
        vec![result(
            r,
            r#"{"resultType":"input_required","requestState":"s"}"#,
        )]
    }));
    assert!(
        matches!(err.kind(), ErrorKind::Protocol(m) if m.contains("16")),
        "{:?}",
        err
    );
}

// ---------------------------------------------------------------------------
// HTTP

/// What a scripted HTTP server does with one request.
enum Reply {
    /// Writes the bytes, keeps the connection.
    Keep(Vec<u8>),
    /// Writes the bytes, then closes.
    Close(Vec<u8>),
    /// Writes the head, then the line every 100 ms, for at most 10 s.
    Drip(Vec<u8>, Vec<u8>),
}

/// One scripted HTTP exchange: the request (head, a blank line, body) and
/// the reply; `None` closes the connection at once.
type Script = dyn Fn(&str) -> Option<Reply> + Send + Sync;

/// An HTTP server answering each request as `script` says; the requests
/// it got are kept, in order.
fn http_server(script: Arc<Script>) -> (String, Arc<parking_lot::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let heads = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(stream) => stream,
                Err(_) => return,
            };
            let (script, seen) = (Arc::clone(&script), Arc::clone(&seen));
            thread::spawn(move || serve_one(stream, &*script, &seen));
        }
    });
    (url, heads)
}

pub(super) fn read_request(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let length = head
        .lines()
        .find_map(|l| {
            let l = l.to_ascii_lowercase();
            l.strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(format!("{}\n{}", head, String::from_utf8_lossy(&body)))
}

fn serve_one(stream: TcpStream, script: &Script, seen: &parking_lot::Mutex<Vec<String>>) {
    let mut out = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some(text) = read_request(&mut reader) {
        seen.lock().push(text.clone());
        match script(&text) {
            Some(Reply::Keep(bytes)) => {
                if out.write_all(&bytes).is_err() {
                    return;
                }
            }
            Some(Reply::Close(bytes)) => {
                let _ = out.write_all(&bytes);
                return;
            }
            Some(Reply::Drip(head, line)) => {
                let mut ok = out.write_all(&head).is_ok();
                for _ in 0..100 {
                    if !ok {
                        break;
                    }
                    thread::sleep(Duration::from_millis(100));
                    ok = out.write_all(&line).is_ok();
                }
                return;
            }
            None => return,
        }
    }
}

/// The JSON-RPC id in a request's body.
fn id_of(text: &str) -> Value {
    let body = text
        .split_once("\n{")
        .map(|(_, b)| format!("{{{}", b))
        .unwrap_or_default();
    serde_json::from_str::<Value>(&body)
        .map(|v| v["id"].clone())
        .unwrap_or(Value::Null)
}

fn json_response(body: &str, extra: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n{}",
        body.len(),
        extra,
        body
    )
    .into_bytes()
}

/// The 2025-11-25 handshake of a fake server with session `s-1`.
fn handshake(text: &str) -> Option<Reply> {
    if text.contains("\"initialize\"") {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fake","version":"1"}}}}}}"#,
            id_of(text)
        );
        return Some(Reply::Keep(json_response(&body, "Mcp-Session-Id: s-1\r\n")));
    }
    if text.contains("notifications/") {
        return Some(Reply::Keep(
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ));
    }
    None
}

// 2025-11-25 "Resumability and Redelivery": a POST stream that drops
// after one event is resumed with a GET carrying its id as Last-Event-ID
// and the session id, and the answer arrives there.
#[test]
fn a_dropped_stream_is_resumed_with_last_event_id() {
    let call_id = Arc::new(parking_lot::Mutex::new(Value::Null));
    let id = Arc::clone(&call_id);
    let script: Arc<Script> = Arc::new(move |text: &str| {
        if let Some(reply) = handshake(text) {
            return Some(reply);
        }
        if text.starts_with("POST") && text.contains("tools/call") {
            *id.lock() = id_of(text);
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            return Some(Reply::Close(
                format!("{}id: 7-1\r\nretry: 10\r\ndata:\r\n\r\n", head).into_bytes(),
            ));
        }
        if text.starts_with("GET") && text.to_ascii_lowercase().contains("last-event-id: 7-1") {
            let event = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"resumed"}}]}}}}"#,
                id.lock()
            );
            let body = format!("id: 7-2\r\ndata: {}\r\n\r\n", event);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            return Some(Reply::Keep(format!("{}{}", head, body).into_bytes()));
        }
        None
    });
    let (url, heads) = http_server(script);
    let client = quick()
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(10))
        .connect_http(&url)
        .unwrap();
    let answer = client.call_tool("t", Value::Null).unwrap();
    assert_eq!(
        serde_json::to_value(&answer.content).unwrap()[0]["text"],
        "resumed"
    );
    let heads = heads.lock();
    let get = heads
        .iter()
        .find(|h| h.starts_with("GET"))
        .expect("a resuming GET");
    assert!(get.contains("Mcp-Session-Id: s-1"), "{}", get);
}

/// The `server/discover` answer of a 2026-07-28 fake HTTP server.
fn discover_reply(text: &str) -> Option<Reply> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        id_of(text),
        DISCOVER
    );
    Some(Reply::Keep(json_response(&body, "")))
}

/// A `tools/call` against a 2026-07-28 HTTP server whose other requests
/// `call` answers; the call's error.
fn http_2026_call(call: fn(&str) -> Option<Reply>) -> tiny_mcp::Error {
    http_2026_call_by(quick(), call)
}

/// As [`http_2026_call`], by a client built with `builder`.
fn http_2026_call_by(builder: ClientBuilder, call: fn(&str) -> Option<Reply>) -> tiny_mcp::Error {
    let script: Arc<Script> = Arc::new(move |text: &str| {
        if text.contains("server/discover") {
            discover_reply(text)
        } else {
            call(text)
        }
    });
    let (url, _) = http_server(script);
    let client = builder.connect_http(&url).expect("connect");
    client.call_tool("t", Value::Null).unwrap_err()
}

// HTTP servers that misbehave: garbage for a head, a stream that ends
// without the answer (2026-07-28 has no resumption, REM-4), silence, and
// a JSON body that answers another id.
#[test]
fn misbehaving_http_servers_get_clear_errors() {
    let case = http_2026_call;
    let garbage = case(|_| Some(Reply::Close(b"SMTP ready\r\n\r\n".to_vec())));
    assert!(matches!(garbage.kind(), ErrorKind::Io(_)), "{:?}", garbage);
    let ended = case(|_| {
        Some(Reply::Close(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n\r\n".to_vec()))
    });
    assert!(
        matches!(ended.kind(), ErrorKind::Protocol(m) if m.contains("ended")),
        "{:?}",
        ended
    );
    let silent = case(|_| {
        thread::sleep(Duration::from_secs(2));
        None
    });
    assert!(is_timeout(&silent), "{:?}", silent);
    let other = case(|_| {
        Some(Reply::Keep(json_response(
            r#"{"jsonrpc":"2.0","id":999,"result":{}}"#,
            "",
        )))
    });
    assert!(
        matches!(other.kind(), ErrorKind::Protocol(_)),
        "{:?}",
        other
    );
    // Keepalive comments forever: the deadline still holds.
    let dripping = case(|_| {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n".to_vec();
        Some(Reply::Drip(head, b": keepalive\r\n\r\n".to_vec()))
    });
    assert!(is_timeout(&dripping), "{:?}", dripping);
}

// RFC 9112 §7.1, DESIGN.md §6 (issue 27 item 9): a chunk announcing more
// than the answer may hold (the largest u64, or past max_message_bytes)
// fails the call at once with a clear error, not after the timeout: the
// client waits 60 s, and the error must not be the timeout's.
#[test]
fn an_impossible_chunk_size_fails_at_once() {
    let sizes: [fn(&str) -> Option<Reply>; 2] = [
        |_| Some(Reply::Keep(chunked_head("ffffffffffffffff"))),
        |_| Some(Reply::Keep(chunked_head("2000000"))),
    ];
    for call in sizes {
        let patient = Client::builder("hostile-test", "1").request_timeout(Duration::from_secs(60));
        let err = http_2026_call_by(patient, call);
        assert!(!is_timeout(&err), "{:?}", err);
        assert!(err.to_string().contains("over the limit of"), "{}", err);
    }
}

/// A 200 JSON answer whose first chunk announces `size` (hex) bytes and
/// brings one.
fn chunked_head(size: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n\r\n{}\r\n{{",
        size
    )
    .into_bytes()
}

// CANCEL-2: a 2026-07-28 call over HTTP whose server has not answered yet
// (not even the head) is cancelled by its token at once: the client closes
// the connection.
#[test]
fn a_cancel_reaches_a_call_still_waiting_for_its_head() {
    let (arrived, wait_arrival) = crossbeam_channel::bounded::<()>(1);
    let script: Arc<Script> = Arc::new(move |text: &str| {
        if text.contains("server/discover") {
            return discover_reply(text);
        }
        let _ = arrived.try_send(());
        // No answer: the connection stays open until the client closes it.
        Some(Reply::Drip(Vec::new(), Vec::new()))
    });
    let (url, _) = http_server(script);
    let client = Client::builder("t", "1")
        .request_timeout(Duration::from_secs(30))
        .connect_http(&url)
        .unwrap();
    let token = tiny_mcp::CancelToken::new();
    let canceller = {
        let token = token.clone();
        thread::spawn(move || {
            wait_arrival
                .recv_timeout(Duration::from_secs(10))
                .expect("the call arrived");
            token.cancel();
        })
    };
    let options = tiny_mcp::CallOptions::new().cancel_token(token);
    let err = client
        .call_tool_with("t", Value::Null, &options)
        .unwrap_err();
    assert!(err.is_cancelled(), "{:?}", err);
    canceller.join().unwrap();
}

// A server that stops reading its input: the call still ends at its
// deadline, and dropping the client does not wait for the stuck write
// (one writer thread owns the output, through a bounded queue).
#[test]
fn a_server_that_stops_reading_cannot_hold_the_client() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client_side = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server_side, _) = listener.accept().unwrap();
    let mut out = server_side.try_clone().unwrap();
    let first = thread::spawn(move || {
        // Reads only the discover request, answers it, then stops reading.
        let mut line = String::new();
        let _ = BufReader::new(&server_side).read_line(&mut line);
        let request: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let _ = writeln!(out, "{}", result(&request, DISCOVER));
        server_side
    });
    let client = quick()
        .connect_io(
            BufReader::new(client_side.try_clone().unwrap()),
            client_side,
        )
        .expect("connect");
    let _server_side = first.join().unwrap();
    let huge = "x".repeat(64 * 1024 * 1024);
    let err = client
        .call_tool("t", serde_json::json!({ "text": huge }))
        .unwrap_err();
    assert!(is_timeout(&err), "{:?}", err);
    drop(client);
}

// HTTP answers that trickle: a head that never ends, a body that never
// ends, an event that never ends (only comments): the call's deadline
// holds across every read. A flood of interim (1xx) responses is refused.
#[test]
fn trickling_http_answers_meet_the_deadline() {
    let case = http_2026_call;
    let head = case(|_| {
        Some(Reply::Drip(
            b"HTTP/1.1 200 OK\r\n".to_vec(),
            b"X-Pad: a\r\n".to_vec(),
        ))
    });
    assert!(is_timeout(&head), "{:?}", head);
    let body = case(|_| {
        let head =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
        Some(Reply::Drip(head.to_vec(), b" ".to_vec()))
    });
    assert!(is_timeout(&body), "{:?}", body);
    let event = case(|_| {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {\r\n";
        Some(Reply::Drip(head.to_vec(), b": still here\r\n".to_vec()))
    });
    assert!(is_timeout(&event), "{:?}", event);
    let interim = case(|_| Some(Reply::Close(b"HTTP/1.1 100 Continue\r\n\r\n".repeat(20))));
    assert!(
        format!("{:?}", interim).contains("interim"),
        "{:?}",
        interim
    );
}

// GEN-5, REM-3: in 2026-07-28 a server sends no requests; one that does
// gets -32601 and the program's closures do not run. MRTR-1: only
// tools/call, prompts/get and resources/read may answer input_required.
#[test]
fn a_2026_server_cannot_send_requests_or_ask_for_input_on_lists() {
    let (seen, replies) = crossbeam_channel::unbounded::<Value>();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let io = line_server(move |message| {
        if message.get("method").is_none() {
            let _ = seen.send(message.clone());
            return Vec::new();
        }
        match message["method"].as_str() {
            Some("server/discover") => vec![result(message, DISCOVER)],
            Some("tools/call") => vec![
                r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#.to_string(),
                result(message, r#"{"resultType":"complete","content":[]}"#),
            ],
            Some("tools/list") => vec![result(
                message,
                r#"{"resultType":"input_required","requestState":"s"}"#,
            )],
            _ => Vec::new(),
        }
    });
    let client = Client::builder("t", "1")
        .request_timeout(Duration::from_secs(10))
        .on_roots(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(tiny_mcp::ListRootsResult::new(Vec::new()))
        })
        .connect_io(io.0, io.1)
        .unwrap();
    client.call_tool("t", Value::Null).expect("the call itself");
    let lists = client.list_tools().unwrap_err();
    assert!(
        matches!(lists.kind(), ErrorKind::Protocol(m) if m.contains("MRTR-1")),
        "{:?}",
        lists
    );
    let answer = replies
        .recv_timeout(Duration::from_secs(10))
        .expect("an answer to s1");
    assert_eq!(answer["id"], "s1", "{}", answer);
    assert_eq!(answer["error"]["code"], -32601, "{}", answer);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the roots closure ran");
}
