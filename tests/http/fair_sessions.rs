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
