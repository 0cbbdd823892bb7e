//! HTTP/1.1 framing: chunk sizes, lengths, targets, slow heads and
//! bodies, HTTP/1.0 streams, and closing after an error.

use super::raw::{echo_server, exchange, ping_request, post_head};
use crate::support::http::WAIT;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

// HTTP-2 (limits): a chunk size that overflows is refused, not a panic.
#[test]
fn huge_chunk_size_is_refused_and_the_server_lives() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let request = format!(
        "{}1\r\n{{\r\nffffffffffffffff\r\n",
        post_head(addr, "Transfer-Encoding: chunked\r\n")
    );
    let answer = exchange(addr, request.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 413"), "{}", answer);
    let ping = ping_request(addr);
    let answer = exchange(addr, ping.as_bytes()).expect("closed after Connection: close");
    assert!(
        answer.starts_with("HTTP/1.1 "),
        "the server still answers: {}",
        answer
    );
    http.shutdown();
}

// HTTP-2: ambiguous framing (Content-Length with chunked, two Hosts) is a
// 400 and the connection closes, so no request hides in a body.
#[test]
fn ambiguous_framing_is_refused() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let smuggle = format!(
        "{}0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: {}\r\n\r\n",
        post_head(addr, "Content-Length: 40\r\nTransfer-Encoding: chunked\r\n"),
        addr
    );
    let answer = exchange(addr, smuggle.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    assert_eq!(
        answer.matches("HTTP/1.1").count(),
        1,
        "one response only: {}",
        answer
    );
    let two_hosts = post_head(addr, "Host: evil.example.com\r\nContent-Length: 0\r\n");
    let answer = exchange(addr, two_hosts.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    let weird_coding = post_head(addr, "Transfer-Encoding: gzip, chunked\r\n");
    let answer = exchange(addr, weird_coding.as_bytes()).expect("the connection must close");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    http.shutdown();
}

// HTTP-1: after an error response the server closes the socket at once.
#[test]
fn error_responses_close_the_connection() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let answer =
        exchange(addr, b"garbage\r\n\r\n").expect("closed without waiting for another client");
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", answer);
    http.shutdown();
}

// RFC 9110 §8.6, RFC 9112 §7.1 (DESIGN.md §6: framing two parsers could
// read differently is refused): a signed Content-Length or chunk size, and
// a chunk-size line ended by a bare LF, get 400 and the connection closes.
#[test]
fn signed_lengths_and_bare_lf_chunks_are_refused() {
    let http = echo_server().http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let requests = [
        format!(
            "{}{}",
            post_head(addr, &format!("Content-Length: +{}\r\n", body.len())),
            body
        ),
        format!(
            "{}+{:x}\r\n{}\r\n0\r\n\r\n",
            post_head(addr, "Transfer-Encoding: chunked\r\n"),
            body.len(),
            body
        ),
        format!(
            "{}{:x}\n{}\r\n0\r\n\r\n",
            post_head(addr, "Transfer-Encoding: chunked\r\n"),
            body.len(),
            body
        ),
    ];
    for request in requests {
        let answer = exchange(addr, request.as_bytes()).expect("the connection must close");
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "{:?}: {}",
            request,
            answer
        );
    }
    http.shutdown();
}

// RFC 9112 §3.2.2: a server must accept the absolute form of a request
// target (`POST http://host/mcp`).
#[test]
fn absolute_form_targets_are_served() {
    let http = echo_server()
        .http()
        .stateless(true)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let head = post_head(
        addr,
        &format!("Content-Length: {}\r\nConnection: close\r\n", body.len()),
    )
    .replacen("POST /mcp ", &format!("POST http://{}/mcp ", addr), 1);
    let answer = exchange(addr, format!("{}{}", head, body).as_bytes()).expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", answer);
    http.shutdown();
}

/// Sends `bytes` one at a time, `gap` apart, as a slow client does, then
/// reads what the server answered before it closed.
fn trickle(addr: SocketAddr, bytes: &[u8], gap: Duration) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    for byte in bytes {
        if stream.write_all(&[*byte]).is_err() {
            break; // The server closed the connection.
        }
        std::thread::sleep(gap); // The slow client's pace, not a wait for the server.
    }
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

// RFC 9110 §15.5.9, DESIGN.md §6: a head or a body trickled byte by byte
// cannot hold a connection past its deadline: 408, and the connection
// closes, although no single read waited long.
#[test]
fn slow_heads_and_bodies_get_408() {
    let http = echo_server()
        .http()
        .request_head_timeout(Duration::from_millis(300))
        .request_body_timeout(Duration::from_millis(300))
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let head = post_head(addr, "Content-Length: 40\r\n");
    let answer = trickle(addr, head.as_bytes(), Duration::from_millis(50));
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "slow head: {:?}",
        answer
    );
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    stream.write_all(head.as_bytes()).expect("the head");
    for _ in 0..40 {
        if stream.write_all(b" ").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50)); // The slow client's pace.
    }
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let answer = String::from_utf8_lossy(&out);
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "slow body: {:?}",
        answer
    );
    http.shutdown();
}

// RFC 9112 §6.1 (HTTP/1.0 has no chunked coding): an HTTP/1.0 client's SSE
// answer is close-delimited: no `Transfer-Encoding`, the events as they
// are, and the connection closes at the end.
#[test]
fn http10_streams_are_close_delimited() {
    let http = echo_server()
        .http()
        .stateless(true)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let body =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{}",
        addr,
        body.len(),
        body
    );
    let answer = exchange(addr, request.as_bytes()).expect("the connection must close");
    let (head, events) = answer.split_once("\r\n\r\n").expect("a head");
    assert!(head.starts_with("HTTP/1.1 200"), "{}", head);
    assert!(head.contains("text/event-stream"), "{}", head);
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding"),
        "{}",
        head
    );
    assert!(head.contains("Connection: close"), "{}", head);
    assert!(
        events.starts_with("id: ") || events.starts_with("event: "),
        "{:?}",
        events
    );
    assert!(events.contains(r#""text":"echoed""#), "{:?}", events);
    http.shutdown();
}
