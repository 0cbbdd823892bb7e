//! Issue 27 item 1, DESIGN.md §26: one caller, or one peer address, holds
//! at most its share of the worker pool; its calls past the share wait for
//! its own to end, while other callers are served. The server here has 8
//! workers: 2 per caller and 4 per peer by default. Peers are told apart
//! by a header the server trusts (`peer_address_header`), since every
//! client of a test is 127.0.0.1.

use super::*;

use crossbeam_channel::Sender;
use tiny_mcp::{Client, Era};

/// A server with `hold` (reports its start, then waits until the test
/// drops the release sender) and `work` (answers at once, on a worker).
fn shared_server(started: Sender<()>, release: Receiver<()>) -> Server {
    Server::builder("shares", "1.0.0")
        .max_workers(8)
        .tool(
            Tool::new("hold", json!({"type": "object"})),
            move |_: &RequestContext, _: JsonObject| {
                let _ = started.send(());
                let _ = release.recv();
                Ok(CallToolResult::text("held"))
            },
        )
        .tool(
            Tool::new("work", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("done")),
        )
        .build()
}

/// Serves it on 127.0.0.1:0, counting the requests that reach the
/// endpoint (the hook runs before the request is read further).
fn serve_counted(server: Server, arrived: Sender<()>) -> HttpServer {
    serve(
        server
            .http()
            .peer_address_header("x-test-peer")
            .before_request(
                move |_: &tiny_mcp::HttpRequestHead<'_>, _: Option<&tiny_mcp::Principal>| {
                    let _ = arrived.send(());
                    Ok(())
                },
            ),
    )
}

fn client(addr: SocketAddr, era: Era, peer: &str) -> Client {
    Client::builder("shares-test", "1.0.0")
        .era(era)
        .header("X-Test-Peer", peer)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&format!("http://{}/mcp", addr))
        .expect("connect")
}

/// Calls `hold` `count` times at once from `client`; the threads end with
/// the calls.
fn flood(client: &Arc<Client>, count: usize) -> Vec<thread::JoinHandle<bool>> {
    (0..count)
        .map(|_| {
            let client = Arc::clone(client);
            thread::spawn(move || client.call_tool("hold", json!({})).is_ok())
        })
        .collect()
}

fn wait_for(receiver: &Receiver<()>, count: usize, what: &str) {
    for i in 0..count {
        if receiver.recv_timeout(Duration::from_secs(10)).is_err() {
            panic!("{}: only {} of {} came", what, i, count);
        }
    }
}

/// `work` from `client` is answered while the flood holds its share (the
/// bound only turns a wait into a failure).
fn assert_served(client: &Client, what: &str) {
    let started = Instant::now();
    let result = client.call_tool("work", json!({}));
    assert!(
        matches!(&result, Ok(r) if r.is_error != Some(true)),
        "{}: {:?} after {:?}",
        what,
        result,
        started.elapsed()
    );
}

fn assert_all_held(flood: Vec<thread::JoinHandle<bool>>) {
    for call in flood {
        assert_eq!(call.join().ok(), Some(true), "every held call is answered");
    }
}

/// A served `shared_server` and the test's ends of its channels.
struct Bench {
    http: HttpServer,
    started: Receiver<()>,
    arrived: Receiver<()>,
    release: Option<Sender<()>>,
}

impl Bench {
    fn new() -> Bench {
        let (started_tx, started) = unbounded();
        let (release_tx, release) = unbounded::<()>();
        let (arrived_tx, arrived) = unbounded();
        let http = serve_counted(shared_server(started_tx, release), arrived_tx);
        Bench {
            http,
            started,
            arrived,
            release: Some(release_tx),
        }
    }

    fn client(&self, era: Era, peer: &str) -> Client {
        client(self.http.local_addr(), era, peer)
    }

    /// `count` held calls from a new client of `peer`, once all reached
    /// the server.
    fn flood(&self, era: Era, peer: &str, count: usize) -> Vec<thread::JoinHandle<bool>> {
        let flooder = Arc::new(self.client(era, peer));
        while self.arrived.try_recv().is_ok() {}
        let calls = flood(&flooder, count);
        wait_for(&self.arrived, count, "the flood's requests");
        calls
    }

    /// Lets every held call end and checks that each was answered.
    fn release(mut self, calls: Vec<thread::JoinHandle<bool>>) {
        drop(self.release.take());
        assert_all_held(calls);
    }
}

// Issue 27 item 1: 2026-07-28 stateless calls of one peer (no principal,
// no session: the caller is the peer) take 2 of the 8 workers; another
// peer's ordinary call is served at once; the waiting calls run later.
#[test]
fn one_peer_stateless_calls_leave_workers_for_others() {
    let bench = Bench::new();
    let calls = bench.flood(Era::V2026_07_28, "10.0.0.1", 8);
    wait_for(&bench.started, 2, "the flood's share");
    let other = bench.client(Era::V2026_07_28, "10.0.0.2");
    assert_served(&other, "another peer, while one peer holds its share");
    assert!(
        bench.started.try_recv().is_err(),
        "only the share of the flood runs"
    );
    bench.release(calls);
}

// Issue 27 item 1: one 2025-11-25 session's fire-and-forget calls take its
// share (2); another session of the same peer is still served (it has its
// own share, and the peer's share of 4 has room).
#[test]
fn one_session_leaves_workers_for_the_next_session() {
    let bench = Bench::new();
    let calls = bench.flood(Era::V2025_11_25, "10.0.0.1", 8);
    wait_for(&bench.started, 2, "the session's share");
    let next = bench.client(Era::V2025_11_25, "10.0.0.1");
    assert_served(&next, "a second session of the same peer");
    bench.release(calls);
}

// Issue 27 item 1: three sessions of one peer hold at most the peer's
// share (4 of 8) together; a session of another peer is served.
#[test]
fn many_sessions_of_one_peer_hold_the_peer_share() {
    let bench = Bench::new();
    let mut calls = Vec::new();
    for _ in 0..3 {
        calls.extend(bench.flood(Era::V2025_11_25, "10.0.0.1", 3));
    }
    wait_for(&bench.started, 4, "the peer's share");
    let other = bench.client(Era::V2025_11_25, "10.0.0.2");
    assert_served(&other, "another peer, while one peer holds its share");
    assert!(
        bench.started.try_recv().is_err(),
        "the peer holds 4 workers, no more"
    );
    bench.release(calls);
}
