//! The client against a server that speaks only the HTTP+SSE transport of
//! 2024-11-05 (basic/transports (2025-11-25) "Backwards Compatibility"):
//! a fake one on a loopback socket. GET /sse is the event stream, whose
//! first event names the endpoint; POST /messages?sessionId=abc is
//! answered `202`, the JSON-RPC answer going out on the stream; POST /sse
//! is `405`.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{CallOptions, Client, ClientBuilder, Era, ErrorKind, Root};

/// What the fake server does on GET /sse.
#[derive(Clone)]
enum Get {
    /// An event stream whose first event names this endpoint.
    Stream(String),
    /// An event stream without any event.
    Silent,
    /// `404`.
    Missing,
}

#[derive(Default)]
struct Seen {
    /// Every request head, in order.
    heads: Vec<String>,
    /// The event stream, chunked.
    stream: Option<TcpStream>,
    /// The id of the `tools/call` waiting for `roots/list`'s answer.
    call: Option<Value>,
}

struct Fake {
    url: String,
    seen: Arc<Mutex<Seen>>,
    /// One message when the GET stream's connection is closed by the
    /// client.
    get_closed: Receiver<()>,
}

fn fake(get: Get) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (closed, get_closed) = bounded(4);
    let state = Arc::clone(&seen);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(stream) => stream,
                Err(_) => return,
            };
            let (state, get, closed) = (Arc::clone(&state), get.clone(), closed.clone());
            thread::spawn(move || serve(stream, &state, &get, &closed));
        }
    });
    Fake {
        url,
        seen,
        get_closed,
    }
}

/// A request's head (its lines, CRLF-ended) and body, as
/// `hostile::read_request` reads them.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let text = super::hostile::read_request(reader)?;
    let (head, body) = text.split_once("\r\n\n")?;
    Some((format!("{}\r\n", head), body.as_bytes().to_vec()))
}

fn serve(stream: TcpStream, seen: &Mutex<Seen>, get: &Get, closed: &Sender<()>) {
    let mut out = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while let Some((head, body)) = read_request(&mut reader) {
        seen.lock().heads.push(head.clone());
        if head.starts_with("GET /sse ") {
            open_stream(&mut out, seen, get);
            // The client sends nothing more here: end of input is its close.
            let _ = reader.read(&mut [0u8; 1]);
            let _ = closed.send(());
            return;
        }
        if head.starts_with("POST /messages?sessionId=abc ") {
            let _ = out.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 8\r\n\r\nAccepted");
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            answer(seen, &message);
            continue;
        }
        let status = match head.starts_with("POST /sse ") {
            true => "405 Method Not Allowed",
            false => "404 Not Found",
        };
        let reply = format!("HTTP/1.1 {}\r\nContent-Length: 9\r\n\r\nnot here.", status);
        let _ = out.write_all(reply.as_bytes());
    }
}

fn open_stream(out: &mut TcpStream, seen: &Mutex<Seen>, get: &Get) {
    let endpoint = match get {
        Get::Missing => {
            let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            return;
        }
        Get::Silent => None,
        Get::Stream(endpoint) => Some(endpoint),
    };
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    out.write_all(head.as_bytes()).unwrap();
    let mut stream = out.try_clone().unwrap();
    if let Some(endpoint) = endpoint {
        chunk(
            &mut stream,
            &format!("event: endpoint\ndata: {}\n\n", endpoint),
        );
    }
    seen.lock().stream = Some(stream);
}

fn chunk(out: &mut TcpStream, text: &str) {
    let _ = out.write_all(format!("{:x}\r\n{}\r\n", text.len(), text).as_bytes());
}

/// Sends `message` on the event stream as a `message` event.
fn send(seen: &Mutex<Seen>, message: Value) {
    let mut guard = seen.lock();
    let stream = guard.stream.as_mut().expect("the event stream is open");
    chunk(stream, &format!("event: message\ndata: {}\n\n", message));
}

/// What the fake 2024-11-05 server answers, on the stream.
fn answer(seen: &Mutex<Seen>, message: &Value) {
    let id = message["id"].clone();
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "old", "version": "0.1"}
        }),
        Some("tools/list") => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}
        ]}),
        Some("tools/call") => {
            // Progress, then a question to the client; the answer to the
            // call waits for the client's answer.
            let token = message["params"]["_meta"]["progressToken"].clone();
            let progress = json!({"progressToken": token, "progress": 1, "total": 2});
            send(
                seen,
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}),
            );
            seen.lock().call = Some(id);
            send(
                seen,
                json!({"jsonrpc": "2.0", "id": "s-1", "method": "roots/list"}),
            );
            return;
        }
        Some(_) => {
            let error = json!({"code": -32601, "message": "no such method"});
            send(seen, json!({"jsonrpc": "2.0", "id": id, "error": error}));
            return;
        }
        None if id == json!("s-1") => {
            let call = seen.lock().call.take().unwrap_or(Value::Null);
            let uri = message["result"]["roots"][0]["uri"].clone();
            let text = format!("roots: {}", uri);
            let result = json!({"content": [{"type": "text", "text": text}]});
            send(
                seen,
                json!({"jsonrpc": "2.0", "id": call, "result": result}),
            );
            return;
        }
        None => return,
    };
    if !id.is_null() {
        send(seen, json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}

fn builder() -> ClientBuilder {
    Client::builder("legacy-test", "1")
        .request_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(5))
        .bearer_token(|| Some("t-1".into()))
        .roots(vec![Root::new("file:///work")])
}

fn message_of(err: &tiny_mcp::Error) -> String {
    match err.kind() {
        ErrorKind::Protocol(message) => message.clone(),
        other => panic!("expected a protocol error, got {:?}", other),
    }
}

// basic/transports (2025-11-25) "Backwards Compatibility": POST initialize
// gets 405, so the client GETs the URL, takes the endpoint event, and
// speaks the 2024-11-05 transport: messages POSTed there (202), answers,
// notifications and server requests on the stream; the bearer token on
// every request; close ends the stream.
#[test]
fn a_2024_11_05_server_is_spoken_to_over_http_and_sse() {
    let server = fake(Get::Stream("/messages?sessionId=abc".into()));
    let client = builder().connect_http(&server.url).expect("connect");
    assert_eq!(client.protocol_version(), "2024-11-05");
    assert_eq!(client.era(), Era::V2025_11_25);
    assert_eq!(client.server_info().map(|i| i.name.as_str()), Some("old"));
    let tools = client.list_tools().unwrap();
    assert_eq!(tools[0].name, "echo");
    let (progress, got_progress) = bounded(4);
    let options = CallOptions::new().on_progress(move |p| {
        let _ = progress.try_send(p.progress);
    });
    let answer = client.call_tool_with("echo", json!({}), &options).unwrap();
    let text = serde_json::to_value(&answer.content).unwrap()[0]["text"].clone();
    assert_eq!(text, "roots: \"file:///work\"");
    assert_eq!(got_progress.try_recv(), Ok(1.0));
    client.close();
    server
        .get_closed
        .recv_timeout(Duration::from_secs(5))
        .expect("closing ends the GET stream");
    let heads = server.seen.lock().heads.clone();
    let gets = heads.iter().filter(|h| h.starts_with("GET /sse ")).count();
    let posts = heads
        .iter()
        .filter(|h| h.starts_with("POST /messages"))
        .count();
    assert_eq!((gets, posts), (1, 5), "{:#?}", heads);
    for head in heads.iter().filter(|h| !h.starts_with("POST /sse")) {
        assert!(head.contains("Authorization: Bearer t-1"), "{}", head);
    }
}

// basic/transports (2025-11-25) "Backwards Compatibility": with the
// fallback off (and in 2026-07-28, which has no such transport) the
// POST's refusal is the error, and no GET is tried.
#[test]
fn without_the_fallback_the_posts_refusal_is_the_error() {
    let server = fake(Get::Stream("/messages?sessionId=abc".into()));
    let off = builder().http_sse_fallback(false);
    let v2026 = builder().era(Era::V2026_07_28);
    for attempt in [off, v2026] {
        let err = attempt.connect_http(&server.url).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Http { status: 405, .. }),
            "{:?}",
            err
        );
    }
    let heads = server.seen.lock().heads.clone();
    assert!(
        heads.iter().all(|h| h.starts_with("POST /sse")),
        "{:#?}",
        heads
    );
}

// basic/transports (2025-11-25) "Backwards Compatibility": a server that
// refuses the POST and gives no endpoint event (GET 404, or a stream
// without events until the connect timeout) gets an error naming both
// attempts.
#[test]
fn a_server_speaking_neither_transport_gets_an_error_naming_both() {
    let missing = fake(Get::Missing);
    let err = builder().connect_http(&missing.url).unwrap_err();
    let text = message_of(&err);
    assert!(text.contains("neither"), "{}", text);
    assert!(text.contains("HTTP 405"), "{}", text);
    assert!(text.contains("HTTP 404"), "{}", text);
    let silent = fake(Get::Silent);
    let started = std::time::Instant::now();
    let err = builder()
        .connect_timeout(Duration::from_millis(300))
        .connect_http(&silent.url)
        .unwrap_err();
    let text = message_of(&err);
    assert!(text.contains("neither"), "{}", text);
    assert!(text.contains("no endpoint event"), "{}", text);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

// 2024-11-05 transports "Security Warning" and RFC 6454: an endpoint on
// another origin (here another port of the same host) is refused before
// anything is sent to it.
#[test]
fn an_endpoint_on_another_origin_is_refused() {
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/messages", elsewhere.local_addr().unwrap());
    let server = fake(Get::Stream(endpoint));
    let err = builder().connect_http(&server.url).unwrap_err();
    let text = message_of(&err);
    assert!(text.contains("origin"), "{}", text);
    elsewhere.set_nonblocking(true).unwrap();
    assert!(
        elsewhere.accept().is_err(),
        "the other origin was contacted"
    );
}
