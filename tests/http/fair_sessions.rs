//! Issue 27 item 2, DESIGN.md §6 and §26: one client cannot fill the
//! session table. A full table evicts its least recently used session that
//! holds nothing, and each peer address holds at most its share.

use super::*;

fn ping_status(addr: SocketAddr, session: &str) -> u16 {
    let req = Req::post(rpc(json!(9), "ping", json!({}))).session(session);
    send(addr, &req, "a ping on a session").status()
}

// HTTP-18, basic/transports "Session Management": a table full of sessions
// that were each used once (an `initialize` then a `ping`) still takes a new
// client: the least recently used idle session is evicted (its id then gets
// 404) instead of the new `initialize` getting 503.
#[test]
fn a_full_table_evicts_its_least_recently_used_idle_session() {
    let http = serve(echo_server().http().max_sessions(4));
    let addr = http.local_addr();
    let mut sessions = Vec::new();
    for _ in 0..4 {
        let session = open_session(addr, LATEST, json!({}));
        assert_eq!(ping_status(addr, &session), 200);
        sessions.push(session);
    }
    let init = Req::post(initialize_body(json!(1), LATEST, json!({})));
    let newcomer = send(addr, &init, "an initialize on a full table");
    assert_eq!(newcomer.status(), 200, "{}", newcomer.text());
    let statuses: Vec<u16> = sessions.iter().map(|s| ping_status(addr, s)).collect();
    assert_eq!(statuses, [404, 200, 200, 200]);
    http.shutdown();
}

// HTTP-18, RES-3 (server/resources "Subscriptions"): a session subscribed
// to a resource holds something, so a full table evicts the least
// recently used session that holds nothing instead, and answers 503 only
// when every session holds something.
#[test]
fn a_subscribed_session_is_not_evicted() {
    use tiny_mcp::{ReadResourceResult, Resource, ResourceContents};
    let server = Server::builder("subscribed", "1")
        .resource(
            Resource::new("test://a", "a"),
            |_: &RequestContext, uri: &str| {
                let text = ResourceContents::text(uri, "text/plain", "a");
                Ok(ReadResourceResult::new(vec![text]))
            },
        )
        .build();
    let http = serve(server.http().max_sessions(2));
    let addr = http.local_addr();
    let subscribed = open_session(addr, LATEST, json!({}));
    let subscribe = rpc(json!(2), "resources/subscribe", json!({"uri": "test://a"}));
    let answer = send(
        addr,
        &Req::post(subscribe).session(&subscribed),
        "subscribe",
    );
    assert_eq!(answer.status(), 200, "{}", answer.text());
    let idle = open_session(addr, LATEST, json!({}));
    assert_eq!(ping_status(addr, &idle), 200);
    let _newcomer = open_session(addr, LATEST, json!({}));
    assert_eq!(
        ping_status(addr, &subscribed),
        200,
        "the subscribed session went"
    );
    assert_eq!(ping_status(addr, &idle), 404, "the idle session stayed");
    http.shutdown();
}

// HTTP-18, DESIGN.md §6 (`max_sessions_per_peer`): a peer at its share
// whose every session holds something (here an open GET stream) is
// refused with 503 and a message saying why; its sessions live on.
#[test]
fn a_peer_at_its_share_of_busy_sessions_gets_503() {
    let http = serve(echo_server().http().max_sessions_per_peer(2));
    let addr = http.local_addr();
    let mut streams = Vec::new();
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let session = open_session(addr, LATEST, json!({}));
        let mut conn = Conn::open(addr);
        let head = conn.start(&Req::get(&session), "a GET stream");
        assert_eq!(head.status, 200);
        streams.push(conn);
        sessions.push(session);
    }
    let init = Req::post(initialize_body(json!(1), LATEST, json!({})));
    let refused = send(addr, &init, "an initialize past the peer's share");
    assert_eq!(refused.status(), 503, "{}", refused.text());
    assert!(refused
        .text()
        .contains("too many sessions from this address"));
    for session in &sessions {
        assert_eq!(ping_status(addr, session), 200);
    }
    http.shutdown();
}

/// Everything a connection gets until the server closes it.
fn read_to_close(conn: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    conn.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut out = Vec::new();
    let _ = conn.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

// Issue 27 item 5, DESIGN.md §6 (`first_request_timeout`): a connection
// that sends nothing is answered 408 and closed at the first-request
// deadline, not held for the keep-alive idle timeout; its place is free.
#[test]
fn a_connection_that_sends_nothing_gets_408() {
    let http = serve(
        echo_server()
            .http()
            .first_request_timeout(Duration::from_millis(300))
            .connection_idle_timeout(Duration::from_secs(60)),
    );
    let addr = http.local_addr();
    let started = Instant::now();
    let mut silent = std::net::TcpStream::connect(addr).expect("connect");
    let answer = read_to_close(&mut silent);
    assert!(answer.starts_with("HTTP/1.1 408"), "{:?}", answer);
    assert!(started.elapsed() < Duration::from_secs(30));
    // A client that sends its request at once is served as before.
    let session = open_session(addr, LATEST, json!({}));
    assert_eq!(ping_status(addr, &session), 200);
    http.shutdown();
}

// Issue 27 item 5, DESIGN.md §6 (`max_connections_per_peer`): one address
// holds at most its share of connections; one more gets 503 and is
// closed, while its open connections are still served. With per-peer
// shares off (behind a proxy) the cap does not apply.
#[test]
fn one_peer_holds_at_most_its_share_of_connections() {
    let http = serve(echo_server().http().max_connections_per_peer(2));
    let addr = http.local_addr();
    let mut held: Vec<(Conn, String)> = (0..2)
        .map(|_| {
            let mut conn = Conn::open(addr);
            let session = open_session_on(&mut conn, LATEST, json!({}));
            (conn, session)
        })
        .collect();
    let mut third = std::net::TcpStream::connect(addr).expect("connect");
    let answer = read_to_close(&mut third);
    assert!(answer.starts_with("HTTP/1.1 503"), "{:?}", answer);
    let (conn, session) = &mut held[0];
    let ping = Req::post(rpc(json!(1), "ping", json!({}))).session(session);
    assert_eq!(conn.request(&ping, "a ping on a held one").status(), 200);
    http.shutdown();

    let http = serve(
        echo_server()
            .http()
            .max_connections_per_peer(2)
            .per_peer_shares(false),
    );
    let addr = http.local_addr();
    let held: Vec<Conn> = (0..3)
        .map(|_| {
            let mut conn = Conn::open(addr);
            open_session_on(&mut conn, LATEST, json!({}));
            conn
        })
        .collect();
    assert_eq!(held.len(), 3);
    http.shutdown();
}

// Issue 27 item 7, DESIGN.md §26 ("Logs"): 200 requests with a 60 KB
// `Host` (each refused 403 by the DNS-rebinding check, SEC-1) leave a
// few short lines in the log of the `everything` example, not 12 MB.
#[test]
fn a_flood_of_huge_host_headers_cannot_fill_the_log() {
    use std::io::{BufRead, Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(crate::support::example_path("everything"))
        .args(["--http", "127.0.0.1:0"])
        .env("TINY_MCP_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    stderr
        .read_line(&mut first)
        .expect("the example's first line");
    let addr = super::raw::address_in(&first);
    // Drained as it comes, so that a flooded log cannot stall the server.
    let drained = std::thread::spawn(move || {
        let mut logged = Vec::new();
        let _ = stderr.read_to_end(&mut logged);
        logged
    });
    let host = "h".repeat(60 * 1024);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{}",
        host,
        body.len(),
        body
    );
    for _ in 0..200 {
        let mut conn = std::net::TcpStream::connect(addr).expect("connect");
        conn.write_all(request.as_bytes()).expect("write");
        let answer = read_to_close(&mut conn);
        assert!(answer.starts_with("HTTP/1.1 403"), "{:.80}", answer);
    }
    let _ = child.kill();
    let _ = child.wait();
    let logged = drained.join().expect("the log reader");
    let text = String::from_utf8_lossy(&logged);
    assert!(
        logged.len() < 4096,
        "{} bytes logged: {:.300}",
        logged.len(),
        text
    );
}
