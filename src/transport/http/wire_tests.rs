//! Unit tests of `wire.rs` on a loopback socket: framing that another
//! parser could read otherwise is refused, and what a request makes the
//! reader allocate follows the bytes it sent.

use std::io::{BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Duration;

use super::*;
use crate::test_alloc::peak_during;

/// A connection's server side, after the client sent `bytes` and ended
/// its side.
fn sent(bytes: &[u8]) -> TcpStream {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    client.write_all(bytes).unwrap();
    client.shutdown(Shutdown::Write).unwrap();
    server
}

const LIMITS: Limits = Limits {
    max_body: 4 * 1024 * 1024,
    head_timeout: Duration::from_secs(5),
    body_timeout: Duration::from_secs(5),
};

/// The request in `bytes`, read as a connection reads it.
fn read(bytes: &[u8]) -> Result<HttpRequest, ReadError> {
    let server = sent(bytes);
    let mut reader = BufReader::new(Timed::new(&server, Duration::from_secs(5)));
    read_head(&mut reader, &LIMITS)?.read_body(&mut reader, &LIMITS)
}

fn post(framing: &str, body: &str) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\n{}\r\n\r\n{}",
        framing, body
    )
    .into_bytes()
}

// Issue 14 item 1: a head that announces 4 MiB (a length, or one chunk)
// and sends three bytes makes the reader hold kilobytes, not megabytes:
// buffers grow with the bytes that arrive (RFC 9112 §6, §7.1 leave the
// size to the sender; the memory is the receiver's).
#[test]
fn announced_sizes_allocate_nothing() {
    let length = post("Content-Length: 4000000", "abc");
    let chunk = post("Transfer-Encoding: chunked", "3fffff\r\nabc");
    for bytes in [length, chunk].iter() {
        let server = sent(bytes);
        let (result, peak) = peak_during(|| {
            let mut reader = BufReader::new(Timed::new(&server, Duration::from_secs(5)));
            read_head(&mut reader, &LIMITS)?.read_body(&mut reader, &LIMITS)
        });
        assert!(result.is_err(), "a body that ended early was accepted");
        assert!(peak < 256 * 1024, "{} bytes held for a 3-byte body", peak);
    }
}

// RFC 9112 §6.3, §7.1: Content-Length is 1*DIGIT and a chunk size
// 1*HEXDIG; a sign or leading whitespace is refused (400), not read the
// way another parser might read it (request smuggling).
#[test]
fn signs_and_leading_whitespace_are_refused() {
    let refused = [
        post("Content-Length: +3", "abc"),
        post("Content-Length: 3 3", "abc"),
        post("Transfer-Encoding: chunked", "+3\r\nabc\r\n0\r\n\r\n"),
        post("Transfer-Encoding: chunked", " 3\r\nabc\r\n0\r\n\r\n"),
        post("Transfer-Encoding: chunked", "\t3\r\nabc\r\n0\r\n\r\n"),
        post("Transfer-Encoding: chunked", "3\nabc\r\n0\r\n\r\n"),
    ];
    for bytes in refused.iter() {
        let what = String::from_utf8_lossy(bytes);
        assert!(
            matches!(read(bytes), Err(ReadError::Malformed(_))),
            "accepted: {:?}",
            what
        );
    }
    let fine = read(&post(
        "Transfer-Encoding: chunked",
        "3;x=1\r\nabc\r\n0\r\n\r\n",
    ));
    assert_eq!(fine.unwrap().body, b"abc");
    let fine = read(&post("Content-Length: 3", "abc"));
    assert_eq!(fine.unwrap().body, b"abc");
}
