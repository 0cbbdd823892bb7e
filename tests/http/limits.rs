//! The limits of DESIGN.md section 6 over HTTP: descriptors, connections,
//! sessions, retained replay bytes, clients that never read.

use super::raw::{echo_server, exchange, ping_request};
use crate::support::http::WAIT;
use crate::support::recv;
use crossbeam_channel::Receiver;
use serde_json::json;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

/// User plus system CPU time of process `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid)).unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

// DESIGN.md §6: when the process runs out of file descriptors (EMFILE),
// the acceptor backs off instead of spinning, logs once per episode, and
// serves again as soon as descriptors free up.
#[test]
fn descriptor_exhaustion_backs_off_and_recovers() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let example = crate::support::example_path("everything");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 40 && exec \"$0\" --http 127.0.0.1:0")
        .arg(&example)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example under ulimit -n 40");
    let pid = child.id();
    let mut stderr = io::BufReader::new(child.stderr.take().expect("stderr"));
    // Killed and reaped when the test ends, also when an assertion fails.
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Reaped(child);
    let mut first = String::new();
    stderr
        .read_line(&mut first)
        .expect("the example's first line");
    let addr = super::raw::address_in(&first);
    let (lines, line_count) = crossbeam_channel::unbounded::<String>();
    let log_reader = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    // Hold more connections than the process has descriptors.
    let held: Vec<TcpStream> = (0..80)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    assert!(held.len() > 40, "only {} connections opened", held.len());
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(2)); // a measurement window
    let spent = cpu_ticks(pid) - before;
    assert!(
        spent < 50,
        "the acceptor spun: {} ticks of CPU in 2 s",
        spent
    );
    drop(held);
    // Served again once descriptors are free (the pause is at most 1 s).
    let request = ping_request(addr);
    let answer = exchange(addr, request.as_bytes()).unwrap_or_default();
    assert!(
        answer.starts_with("HTTP/1.1 400"),
        "not served again: {:?}",
        answer
    );
    drop(child);
    let _ = log_reader.join();
    let logged: Vec<String> = line_count.try_iter().collect();
    assert!(
        logged.len() < 20,
        "{} log lines: {:?}",
        logged.len(),
        &logged[..5.min(logged.len())]
    );
}

// HTTP-16, DESIGN.md §6: a client flooding `initialize` cannot lock the
// others out: when the table is full, a session never used since its
// `initialize` makes room before a used one, and only a table full of
// sessions that hold something (a GET stream here) answers 503.
#[test]
fn an_initialize_flood_evicts_only_unused_sessions() {
    use crate::support::http::{initialize_body, open_session, rpc, send, Req};
    let http = echo_server()
        .http()
        .max_sessions(4)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let ping = |session: &str| {
        let req = Req::post(rpc(json!(9), "ping", json!({}))).session(session);
        send(addr, &req, "a ping on a session").status()
    };
    let used = open_session(addr, "2025-11-25", json!({}));
    assert_eq!(ping(&used), 200);
    for _ in 0..20 {
        let flood = Req::post(initialize_body(json!(1), "2025-11-25", json!({})));
        let response = send(addr, &flood, "a flooding initialize");
        response.expect_status(
            200,
            "an initialize while the table is full of unused sessions",
        );
    }
    assert_eq!(ping(&used), 200, "the used session was evicted");
    let others: Vec<String> = (0..3)
        .map(|_| open_session(addr, "2025-11-25", json!({})))
        .collect();
    let mut streams = Vec::new();
    for session in others.iter().chain(Some(&used)) {
        assert_eq!(ping(session), 200);
        let mut conn = crate::support::http::Conn::open(addr);
        assert_eq!(conn.start(&Req::get(session), "a GET stream").status, 200);
        streams.push(conn);
    }
    let refused = send(
        addr,
        &Req::post(initialize_body(json!(1), "2025-11-25", json!({}))),
        "an initialize with every session holding a stream",
    );
    refused.expect_status(503, "a table full of used sessions");
    http.shutdown();
}

/// A server whose `big` tool sends progress, waits for the test, then
/// answers 40 KiB; and calls of it whose client leaves before the answer,
/// so that the answer is retained for resumption.
struct BigCalls {
    server: Server,
    release: crossbeam_channel::Sender<()>,
    finishes: Receiver<String>,
}

impl BigCalls {
    fn new() -> BigCalls {
        let (release, released) = crossbeam_channel::unbounded::<()>();
        let released = Mutex::new(released);
        let (finished, finishes) = crossbeam_channel::unbounded::<String>();
        let finished = Mutex::new(finished);
        let server = Server::builder("hardening", "1.0.0")
            .tool(
                Tool::new("big", json!({"type": "object"})),
                move |ctx: &RequestContext, _: JsonObject| {
                    ctx.notify_progress(1.0, None, None);
                    if let Ok(released) = released.lock() {
                        let _ = released.recv_timeout(WAIT);
                    }
                    Ok(CallToolResult::text("x".repeat(40 * 1024)))
                },
            )
            .on_request_finished(move |outcome: &tiny_mcp::RequestOutcome| {
                if let Ok(finished) = finished.lock() {
                    let _ = finished.send(outcome.method.clone());
                }
            })
            .build();
        BigCalls {
            server,
            release,
            finishes,
        }
    }

    /// Call `n` of `big` on `session`; the client leaves after the
    /// progress, and the call finishes into the stream's replay buffer.
    fn left_early(&self, addr: SocketAddr, session: &str, n: i64) {
        use crate::support::http::{call_body, Conn, Req};
        let mut conn = Conn::open(addr);
        let call = Req::post(call_body(json!(n), "big", Some("p"))).session(session);
        conn.start(&call, "a big call's stream");
        while conn
            .next_event("the big call's progress")
            .map_or(false, |e| e.message().is_none())
        {}
        drop(conn); // The client leaves before the answer.
        let _ = self.release.send(());
        while recv(&self.finishes, "the big call's end") != "tools/call" {}
    }
}

// DESIGN.md §6 (retained bytes): a session keeps at most
// `max_retained_bytes_per_session` of finished streams for resumption;
// opening a stream forgets the oldest past it, and resuming one of those
// gets the clear "ended" answer, while the newest still resumes.
#[test]
fn retained_replay_bytes_are_bounded_per_session() {
    use crate::support::http::{call_body, open_session, Conn, Req};
    let big = BigCalls::new();
    let http = big
        .server
        .http()
        .max_retained_bytes_per_session(64 * 1024)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    for n in 1..=4 {
        big.left_early(addr, &session, n);
    }
    let release = &big.release;
    // A fifth call opens a stream, which forgets the oldest past the limit.
    let _ = release.send(());
    let fifth = Req::post(call_body(json!(5), "big", None)).session(&session);
    Conn::open(addr).request(&fifth, "the fifth call");
    let resume = |id: &str| {
        let req = Req::get(&session).header("Last-Event-ID", id);
        let mut conn = Conn::open(addr);
        let head = conn.start(&req, "a resume");
        (head.status, conn)
    };
    let (oldest, _) = resume("1-1");
    assert_eq!(oldest, 400, "the oldest stream should be forgotten");
    let (newest, mut conn) = resume("4-1");
    assert_eq!(newest, 200, "the newest stream should resume");
    let replayed = conn.next_message("the newest stream's replay");
    assert!(replayed.is_object());
    http.shutdown();
}

// DESIGN.md §6 (retained streams): a session keeps at most
// `max_retained_streams` finished streams for resumption; opening one past
// it forgets the oldest, whose resume gets 400, while the newer ones
// still resume.
#[test]
fn retained_streams_are_bounded_per_session() {
    use crate::support::http::{open_session, Conn, Req};
    let big = BigCalls::new();
    let http = big
        .server
        .http()
        .max_retained_streams(2)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    for n in 1..=3 {
        big.left_early(addr, &session, n);
    }
    let resume = |id: &str| {
        let req = Req::get(&session).header("Last-Event-ID", id);
        Conn::open(addr).start(&req, "a resume").status
    };
    assert_eq!(resume("1-1"), 400, "the oldest stream should be forgotten");
    assert_eq!(resume("3-1"), 200, "the newest stream should resume");
    http.shutdown();
}

// Issue 14 item 2, DESIGN.md §6: past max_connections a connection is
// refused at once with 503 and closed, by the acceptor (no thread of its
// own), while the connections already open are served.
#[test]
fn connections_past_the_limit_get_503() {
    use crate::support::http::{open_session_on, rpc, send, Conn, Req};

    let server = Server::builder("hardening", "1.0.0").build();
    let http = server
        .http()
        .max_connections(2)
        .serve("127.0.0.1:0")
        .unwrap();
    let addr = http.local_addr();
    let mut held = Vec::new();
    for _ in 0..2 {
        // Answered, and the connection (keep-alive) stays open, counted.
        let mut conn = Conn::open(addr);
        let session = open_session_on(&mut conn, "2025-11-25", json!({}));
        held.push((conn, session));
    }
    let ping = rpc(json!(1), "ping", json!({}));
    let refused = send(addr, &Req::post(ping.clone()), "a third connection");
    assert_eq!(refused.status(), 503);
    // The open connections are still served.
    let (conn, session) = &mut held[0];
    let answer = conn.request(&Req::post(ping).session(session), "a ping on a held one");
    assert_eq!(answer.status(), 200, "{}", answer.text());
}

// Issue 14 item 6, DESIGN.md §6: retained replay bytes are bounded across
// sessions too. A session that never opens another stream cannot keep the
// server's whole allowance: when another session's stream takes the
// server past `max_retained_bytes`, the oldest finished streams of the
// sessions least recently seen are forgotten (their resume gets 400
// "ended"), and the newest still resume.
#[test]
fn retained_replay_bytes_are_bounded_across_sessions() {
    use crate::support::http::{call_body, open_session, Conn, Req};
    let big = BigCalls::new();
    let http = big
        .server
        .http()
        .max_retained_bytes(100 * 1024)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let first = open_session(addr, "2025-11-25", json!({}));
    for n in 1..=3 {
        big.left_early(addr, &first, n); // 120 KiB retained by the first session
    }
    let release = &big.release;
    let second = open_session(addr, "2025-11-25", json!({}));
    let _ = release.send(());
    let call = Req::post(call_body(json!(9), "big", None)).session(&second);
    Conn::open(addr).request(&call, "the second session's call");
    let resume = |id: &str| {
        let req = Req::get(&first).header("Last-Event-ID", id);
        Conn::open(addr).start(&req, "a resume").status
    };
    assert_eq!(resume("1-1"), 400, "the oldest stream should be forgotten");
    assert_eq!(resume("3-1"), 200, "the newest stream should resume");
    http.shutdown();
}

// Issue 14 item 5, DESIGN.md §6: with `max_sessions_per_peer`, one
// address cannot fill the session table even with sessions it uses: its
// `initialize` past the limit ends its own oldest session (HTTP-18: that
// id then gets 404), and the table keeps room for everyone else.
#[test]
fn a_peer_s_sessions_are_bounded_by_its_own_oldest() {
    use crate::support::http::{open_session, rpc, send, Req};
    let http = echo_server()
        .http()
        .max_sessions(4)
        .max_sessions_per_peer(2)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let ping = |session: &str| {
        let req = Req::post(rpc(json!(9), "ping", json!({}))).session(session);
        send(addr, &req, "a ping on a session").status()
    };
    let mut sessions = Vec::new();
    for _ in 0..6 {
        let session = open_session(addr, "2025-11-25", json!({}));
        assert_eq!(ping(&session), 200, "a new session is served");
        sessions.push(session);
    }
    let statuses: Vec<u16> = sessions.iter().map(|s| ping(s)).collect();
    assert_eq!(statuses, [404, 404, 404, 404, 200, 200]);
    http.shutdown();
}

// Issue 14 item 7, DESIGN.md §6 (`write_timeout`): a client that never
// reads its GET stream holds a connection only until one write has
// blocked for `write_timeout`. Then the connection is closed (its place
// among `max_connections` is free again, which is what this test waits
// for, by trying to connect) while the server goes on serving, and the
// stream stays replayable (HTTP-14: `Last-Event-ID`).
#[test]
fn a_client_that_never_reads_is_dropped_and_its_stream_replays() {
    use crate::support::http::{open_session_on, rpc, send, Conn, Req};
    let server = echo_server();
    let http = server
        .http()
        .max_connections(2)
        .write_timeout(Duration::from_millis(200))
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let mut held = Conn::open(addr);
    let session = open_session_on(&mut held, "2025-11-25", json!({}));
    let mut stalled = Conn::open(addr);
    let head = stalled.start(&Req::get(&session), "the GET stream");
    assert_eq!(head.status, 200);
    // More than the socket buffers hold: a write blocks, and times out.
    let big = "x".repeat(64 * 1024);
    for _ in 0..160 {
        server
            .handle()
            .log(tiny_mcp::LoggingLevel::Info, None, big.as_str());
    }
    let ping = Req::post(rpc(json!(1), "ping", json!({}))).session(&session);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let status = send(addr, &ping, "a ping on a third connection").status();
        if status == 200 {
            break; // the stalled connection was closed
        }
        assert_eq!(status, 503, "the held connections are at the limit");
        assert!(
            std::time::Instant::now() < deadline,
            "the stalled connection was never closed"
        );
    }
    drop(stalled);
    // On the held connection: the probe's may still count as open.
    let resume = Req::get(&session).header("Last-Event-ID", "0-1");
    let head = held.start(&resume, "the resumed GET stream");
    assert_eq!(head.status, 200, "the stream should replay");
    let replayed = held.next_message("a replayed log message");
    assert_eq!(replayed["method"], "notifications/message");
    http.shutdown();
}

// Issue 28 item 8, DESIGN.md §6: a GET stream whose client closed its
// connection ends within a second, not at the next keepalive write (15 s
// by default, the interval here, or the one after): its connection's
// place under `max_connections` is free again, and the client
// reconnecting at the cap gets its session's GET stream.
#[test]
fn a_closed_get_stream_frees_its_connection_at_once() {
    closed_get_stream_frees_its_connection(false);
}

// Issue 28 item 8: the same when the client's connection was reset (RST).
#[test]
fn a_reset_get_stream_frees_its_connection_at_once() {
    closed_get_stream_frees_its_connection(true);
}

fn closed_get_stream_frees_its_connection(reset: bool) {
    use crate::support::http::{close_with_reset, open_session_on, read_status, Conn, Req};
    let http = echo_server()
        .http()
        .max_connections(1)
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let mut conn = Conn::open(addr);
    let session = open_session_on(&mut conn, "2025-11-25", json!({}));
    if reset {
        conn.send(&Req::get(&session));
        let mut socket = conn.into_socket();
        assert_eq!(read_status(&mut socket, "the GET stream"), 200);
        close_with_reset(socket);
    } else {
        let head = conn.start(&Req::get(&session), "the GET stream");
        head.expect_status(200, "the GET stream");
        conn.next_event("the GET's priming event");
        drop(conn);
    }
    let closed = std::time::Instant::now();
    loop {
        let mut again = Conn::open(addr);
        let head = again.start(&Req::get(&session), "the reconnecting GET");
        if head.status == 200 {
            assert!(head.is_sse(), "{:?}", head);
            break;
        }
        assert_eq!(head.status, 503, "only the connection limit refuses it");
        assert!(
            closed.elapsed() < WAIT,
            "the closed GET stream still held its connection after {:?}",
            WAIT
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    http.shutdown();
}
