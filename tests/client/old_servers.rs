//! The client against 2025-era stdio servers that do not know
//! `server/discover`, and the handshake that must never be cancelled.
//! The servers are `tests/fixtures/old-server.sh` in one of its
//! modes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_mcp::{Client, ClientBuilder, Era, ErrorKind, StderrMode};

/// Room for starting processes and threads on a busy machine.
const SLACK: Duration = Duration::from_millis(1500);

/// `sh old-server.sh mode [record]`.
fn old_server(mode: &str, record: Option<&PathBuf>) -> Command {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/old-server.sh");
    let mut command = Command::new("sh");
    command.arg(script).arg(mode);
    if let Some(record) = record {
        command.arg(record);
    }
    command
}

fn builder() -> ClientBuilder {
    Client::builder("old-servers-test", "1")
        .stderr(StderrMode::Capture)
        .shutdown_timeout(Duration::from_secs(2))
}

/// A file for a server to record its input in, removed when dropped.
struct Record(PathBuf);

impl Record {
    fn new(name: &str) -> Record {
        let path =
            std::env::temp_dir().join(format!("tiny-mcp-{}-{}.jsonl", name, std::process::id()));
        let _ = std::fs::remove_file(&path);
        Record(path)
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// basic/lifecycle "Initialization" and basic/utilities/cancellation
// (2025-11-25): "The initialize request MUST NOT be cancelled by
// clients". A server that never answers gets no notifications/cancelled
// for it, nor for the server/discover probe, when connecting times out.
#[test]
fn a_timed_out_handshake_is_never_cancelled() {
    for era in [Some(Era::V2025_11_25), None] {
        let record = Record::new(&format!("deaf-{:?}", era));
        let mut b = builder().request_timeout(Duration::from_millis(300));
        if let Some(era) = era {
            b = b.era(era);
        }
        let err = b
            .connect_stdio(old_server("deaf", Some(&record.0)))
            .unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{:?}", err);
        // Connecting closed the server and waited for it: its record is
        // complete.
        let lines = record.lines();
        assert!(lines.iter().any(|l| l.contains("\"id\":1")), "{:?}", lines);
        assert!(
            !lines.iter().any(|l| l.contains("notifications/cancelled")),
            "{:?}",
            lines
        );
    }
}

/// Connects to the fixture in `mode`; the client and how long it took.
fn connect_old(mode: &str, b: ClientBuilder) -> (Client, Duration) {
    let began = Instant::now();
    let client = b
        .connect_stdio(old_server(mode, None))
        .unwrap_or_else(|e| panic!("connect to the {} server: {}", mode, e));
    let took = began.elapsed();
    assert_eq!(client.era(), Era::V2025_11_25, "{}", mode);
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.ping().expect("ping after connecting");
    (client, took)
}

// basic/versioning (2026-07-28) DISC-3 and basic/lifecycle (2025-11-25):
// a 2025-era stdio server that never answers the unknown server/discover
// is spoken to with initialize once the probe's deadline (2 s by default)
// has passed.
#[test]
fn a_silent_old_server_is_reached_after_the_probe() {
    let (_client, took) = connect_old("silent", builder());
    eprintln!(
        "connecting to a silent 2025-era stdio server took {:?}",
        took
    );
    assert!(took >= Duration::from_secs(2), "{:?}", took);
    assert!(took < Duration::from_secs(2) + SLACK, "{:?}", took);
}

// DISC-3: a 2025-era stdio server that exits on server/discover is
// started again, once, and spoken to with initialize.
#[test]
fn an_old_server_that_exits_on_discover_is_started_again() {
    let b = builder().probe_timeout(Duration::from_secs(5));
    let (client, took) = connect_old("exit", b);
    assert!(took < SLACK, "{:?}", took);
    assert!(client.server_pid().is_some());
}

// DISC-3: an answer to server/discover that comes after the probe's
// deadline (here 3 s later, while the server goes on) finds nobody
// waiting and is ignored; the connection goes on.
#[test]
fn a_late_answer_to_discover_is_ignored() {
    let (tx, rx) = crossbeam_channel::unbounded();
    let b = builder()
        .probe_timeout(Duration::from_millis(300))
        .on_notification(move |n| {
            let _ = tx.send(n.params.clone());
        });
    let (client, took) = connect_old("late", b);
    assert!(took < Duration::from_millis(300) + SLACK, "{:?}", took);
    // The server says when it has sent its late answer.
    let said = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the notification after the late answer");
    assert_eq!(said.unwrap_or(Value::Null)["data"], "answered late");
    client.ping().expect("a ping after the late answer");
}

// basic/lifecycle "Version Negotiation": a pinned era skips the probe:
// the server sees initialize first.
#[test]
fn a_pinned_era_sends_no_probe() {
    let record = Record::new("pinned");
    let client = builder()
        .era(Era::V2025_11_25)
        .connect_stdio(old_server("exit", Some(&record.0)))
        .expect("connect");
    client.ping().expect("ping");
    let lines = record.lines();
    assert!(
        lines[0].contains("\"method\":\"initialize\""),
        "{:?}",
        lines
    );
    assert!(!lines.iter().any(|l| l.contains("server/discover")));
}

/// What a fake 2025-era HTTP server does with `server/discover`.
#[derive(Debug, Clone, Copy)]
enum HttpDiscover {
    /// `500`, `text/plain`.
    PlainError,
    /// Nothing: the connection stays open, unanswered.
    Silence,
}

/// A 2025-era Streamable HTTP server on 127.0.0.1: `initialize` gets a
/// session, notifications `202`, other requests an empty result; the URL.
fn old_http_server(discover: HttpDiscover) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(stream) => stream,
                Err(_) => return,
            };
            thread::spawn(move || serve_http(stream, discover));
        }
    });
    url
}

fn serve_http(stream: TcpStream, discover: HttpDiscover) {
    let mut out = match stream.try_clone() {
        Ok(out) => out,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    while let Some((method, body)) = read_http_request(&mut reader) {
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let reply = match (method.as_str(), request["method"].as_str()) {
            ("POST", Some("server/discover")) => match discover {
                HttpDiscover::PlainError => {
                    http_reply("500 Internal Server Error", "text/plain", "", "oops")
                }
                HttpDiscover::Silence => {
                    // Holds the connection until the client drops it.
                    let _ = reader.read_to_end(&mut Vec::new());
                    return;
                }
            },
            ("POST", Some("initialize")) => http_reply(
                "200 OK",
                "application/json",
                "Mcp-Session-Id: old-1\r\n",
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"old-http","version":"1"}}}}}}"#,
                    request["id"]
                ),
            ),
            ("POST", _) if request.get("id").is_none() => {
                http_reply("202 Accepted", "text/plain", "", "")
            }
            ("POST", _) => http_reply(
                "200 OK",
                "application/json",
                "",
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
                    request["id"]
                ),
            ),
            ("DELETE", _) => http_reply("200 OK", "text/plain", "", ""),
            _ => http_reply("405 Method Not Allowed", "text/plain", "", ""),
        };
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// One request's method and body (by `Content-Length`); `None` at the end.
fn read_http_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let method = line.split_whitespace().next()?.to_string();
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((method, body))
}

fn http_reply(status: &str, media: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {}\r\nContent-Type: {}\r\n{}Content-Length: {}\r\n\r\n{}",
        status,
        media,
        extra,
        body.len(),
        body
    )
}

// DISC-3 over Streamable HTTP: a 2025-era server that answers the probe
// with a 500 that is not JSON-RPC, or never answers it, is spoken to with
// initialize.
#[test]
fn an_old_http_server_is_reached_after_a_failed_probe() {
    for discover in [HttpDiscover::PlainError, HttpDiscover::Silence] {
        let url = old_http_server(discover);
        let began = Instant::now();
        let client = builder()
            .probe_timeout(Duration::from_millis(500))
            .connect_http(&url)
            .unwrap_or_else(|e| panic!("{:?}: {}", discover, e));
        assert!(began.elapsed() < Duration::from_millis(500) + SLACK);
        assert_eq!(client.era(), Era::V2025_11_25, "{:?}", discover);
        assert_eq!(client.session_id().as_deref(), Some("old-1"));
        client.ping().expect("ping");
    }
}
