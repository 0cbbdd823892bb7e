//! Raw sockets for the HTTP tests: a small echo server, bytes in, bytes
//! out until the server closes.

use crate::support::http::WAIT;
use serde_json::json;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

pub(super) fn echo_server() -> Server {
    Server::builder("hardening", "1.0.0")
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("echoed")),
        )
        .build()
}

/// Sends raw bytes and reads until the server closes the connection;
/// `None` if it did not close within the wait.
pub(super) fn exchange(addr: SocketAddr, bytes: &[u8]) -> Option<String> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    stream.write_all(bytes).expect("write");
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Some(String::from_utf8_lossy(&out).into_owned()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                return Some(String::from_utf8_lossy(&out).into_owned())
            }
            Err(_) => return None,
        }
    }
}

pub(super) fn post_head(addr: SocketAddr, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{}\r\n",
        addr, extra
    )
}

/// A whole `ping` POST after which the server closes the connection.
pub(super) fn ping_request(addr: SocketAddr) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let extra = format!("Content-Length: {}\r\nConnection: close\r\n", body.len());
    format!("{}{}", post_head(addr, &extra), body)
}

/// The address in an example's first line (`… http://ADDR/mcp`).
pub(super) fn address_in(first: &str) -> SocketAddr {
    first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {:?}", first))
}
