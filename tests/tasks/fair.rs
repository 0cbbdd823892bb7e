//! Fair shares of tasks (issue 27 items 3 and 6; DESIGN.md §26): one
//! caller cannot hold every running slot, a stateless peer fills its own
//! allowance of the store, unauthenticated tasks live shorter, and a task
//! belongs to its OAuth client, not only to its user (TASK-10).
//!
//! Every loop here is bounded by the small limits the test sets; several
//! peers on loopback are told apart with a trusted `x-test-peer` header.

use serde_json::{json, Value};
use tiny_mcp::TokenError;
use tiny_mcp::{HttpRequestHead, HttpServer, Principal, ProtectedResource, TaskLimits};

use super::{ok, post_2026, task_server, Controls};
use crate::support::http::{initialize_body, notification, rpc, Conn, Req, LATEST};
use crate::support::{connect, recv};

/// The task server with `limits` on 127.0.0.1:0, peers read from
/// `x-test-peer`, and a connection to it.
fn serve_peers(limits: TaskLimits) -> (HttpServer, Controls, Conn) {
    let (server, controls) = task_server(Some(limits));
    let http = server
        .http()
        .peer_address_header("x-test-peer")
        .serve("127.0.0.1:0")
        .expect("serve on 127.0.0.1:0");
    let conn = Conn::open(http.local_addr());
    (http, controls, conn)
}

/// A 2026-07-28 stateless `tools/call` of `tool` from peer `peer`.
fn call_from(conn: &mut Conn, peer: &str, n: u64, tool: &str) -> Value {
    let call =
        post_2026(n, "tools/call", json!({ "name": tool }), tool).header("x-test-peer", peer);
    conn.request(&call, "tools/call").rpc()
}

/// Issue 27 item 3(a): one owner's tasks waiting for input cannot hold
/// every running slot (`max_running_per_owner`, default 8): with
/// `max_running` 9, one stateless peer's ninth task waiting for input is
/// refused with `-32603` naming the limit, and another peer's task still
/// starts. Before the fix the first peer took all nine slots.
#[test]
fn one_owner_cannot_take_every_running_slot() {
    let limits = TaskLimits {
        max_running: 9,
        ..TaskLimits::default()
    };
    let (http, controls, mut conn) = serve_peers(limits);
    let mut started = Vec::new();
    let mut refusal = Value::Null;
    for n in 0..9 {
        let answer = call_from(&mut conn, "192.0.2.1", n, "ask_twice");
        if let Some(id) = answer["result"]["taskId"].as_str() {
            recv(&controls.reached, "the task's handler");
            started.push(("192.0.2.1", id.to_string()));
        } else {
            refusal = answer;
            break;
        }
    }
    assert_eq!(
        refusal["error"]["code"],
        -32603,
        "{} started",
        started.len()
    );
    assert_eq!(started.len(), 8, "the per-owner default is 8");
    let message = refusal["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("max_running_per_owner"), "{}", refusal);
    let other = call_from(&mut conn, "192.0.2.2", 20, "ask_twice");
    let id = other["result"]["taskId"].as_str();
    let id = id.unwrap_or_else(|| panic!("another peer's task: {}", other));
    started.push(("192.0.2.2", id.to_string()));
    // Stateless tasks outlive their requests: cancel them, as a client
    // would, rather than leave them to the shutdown's handler timeout.
    for (peer, id) in started {
        let cancel = post_2026(30, "tasks/cancel", json!({ "taskId": id }), &id);
        let answer = conn.request(&cancel.header("x-test-peer", peer), "tasks/cancel");
        assert!(answer.rpc()["result"].is_object(), "{}", answer.rpc());
    }
    http.shutdown();
}

/// Issue 27 item 3(b): a 2026-07-28 caller without a principal (no
/// session) is counted against its peer address: one peer's stateless
/// tasks fill its own `max_tasks_per_owner`, not the anonymous total
/// (`max_anonymous_tasks`), and another peer's task still starts. The
/// visibility rule stays (SEP-2663, TASK-10): an anonymous task is seen
/// by whoever holds its id, whichever peer asks. Before the fix the first
/// peer filled the whole anonymous allowance and the second was refused.
#[test]
fn stateless_peers_each_have_their_own_share() {
    let limits = TaskLimits {
        max_tasks_per_owner: 3,
        max_anonymous_tasks: 6,
        ..TaskLimits::default()
    };
    let (http, _controls, mut conn) = serve_peers(limits);
    let mut kept = Vec::new();
    let mut refusal = None;
    for n in 0..7 {
        let answer = call_from(&mut conn, "192.0.2.1", n, "required");
        match answer["result"]["taskId"].as_str() {
            Some(id) => kept.push(id.to_string()),
            None => {
                refusal = Some(answer);
                break;
            }
        }
    }
    let refusal = refusal.unwrap_or_else(|| panic!("7 tasks kept for one peer"));
    assert_eq!(refusal["error"]["code"], -32603, "{}", refusal);
    assert_eq!(kept.len(), 3, "one peer holds max_tasks_per_owner");
    let other = call_from(&mut conn, "192.0.2.2", 10, "required");
    assert!(other["result"]["taskId"].is_string(), "{}", other);
    // Counted per peer, seen by whoever holds the id.
    let get = post_2026(11, "tasks/get", json!({"taskId": kept[0]}), &kept[0])
        .header("x-test-peer", "192.0.2.2");
    let task = conn.request(&get, "tasks/get").rpc();
    assert!(task["result"]["status"].is_string(), "{}", task);
    // The anonymous total still bounds the peers together: 3 + 3 of 6.
    for n in 0..2 {
        call_from(&mut conn, "192.0.2.2", 20 + n, "required");
    }
    let third = call_from(&mut conn, "192.0.2.3", 30, "required");
    assert_eq!(third["error"]["code"], -32603, "{}", third);
    http.shutdown();
}

/// A 2025-11-25 session opened from peer `peer` (no principal).
fn session_from(conn: &mut Conn, peer: &str) -> String {
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let response = conn.request(&init.header("x-test-peer", peer), "initialize");
    response.expect_status(200, "initialize");
    let id = response.header("mcp-session-id").expect("a session");
    let id = id.to_string();
    let done = Req::post(notification("notifications/initialized", json!({})));
    let done = done.header("x-test-peer", peer).session(&id);
    conn.request(&done, "initialized")
        .expect_status(202, "initialized");
    id
}

/// A 2025-11-25 `gated` task of session `id` from `peer`; its answer.
fn gated_from(conn: &mut Conn, peer: &str, id: &str, n: u64) -> Value {
    let call = json!({"name": "gated", "arguments": {}, "task": {"ttl": 60_000}});
    let req = Req::post(rpc(json!(n), "tools/call", call));
    conn.request(&req.header("x-test-peer", peer).session(id), "tools/call")
        .rpc()
}

/// Issue 27 item 3(a), the per-peer level (DESIGN.md §26): the sessions
/// of one address, without a principal, hold at most
/// `max_running_per_peer` running tasks together, however many sessions
/// they open; another address keeps its own. Before the peer level each
/// session had its own share, and one host's sessions could take every
/// running slot.
#[test]
fn the_sessions_of_one_address_share_its_running_slots() {
    let limits = TaskLimits {
        max_running_per_owner: 2,
        max_running_per_peer: 3,
        ..TaskLimits::default()
    };
    let (http, controls, mut conn) = serve_peers(limits);
    let first = session_from(&mut conn, "192.0.2.1");
    let second = session_from(&mut conn, "192.0.2.1");
    let mut running = 0;
    for (n, id) in [&first, &first, &second].iter().enumerate() {
        let answer = gated_from(&mut conn, "192.0.2.1", id, n as u64);
        assert!(answer["result"]["task"]["taskId"].is_string(), "{}", answer);
        recv(&controls.reached, "the task's handler");
        running += 1;
    }
    let refused = gated_from(&mut conn, "192.0.2.1", &second, 9);
    assert_eq!(refused["error"]["code"], -32603, "{}", refused);
    let message = refused["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("max_running_per_peer"), "{}", refused);
    let other = session_from(&mut conn, "192.0.2.2");
    let answer = gated_from(&mut conn, "192.0.2.2", &other, 10);
    assert!(answer["result"]["task"]["taskId"].is_string(), "{}", answer);
    recv(&controls.reached, "another address's task");
    running += 1;
    for _ in 0..running {
        controls.release.send(()).ok();
    }
    http.shutdown();
}

/// Issue 27 item 3(b), the per-peer level: the sessions of one address,
/// without a principal, keep at most `max_tasks_per_peer` tasks together
/// (each session's own `max_tasks_per_owner` has room); another address
/// still keeps its own. Before, 1,000 sessions of one host could keep
/// 100 tasks each and fill the store.
#[test]
fn the_sessions_of_one_address_share_its_kept_tasks() {
    let limits = TaskLimits {
        max_tasks_per_owner: 2,
        max_tasks_per_peer: 5,
        ..TaskLimits::default()
    };
    let (http, _controls, mut conn) = serve_peers(limits);
    let keep = |conn: &mut Conn, peer: &str, session: &str, n: u64| {
        let call = json!({"name": "required", "arguments": {}, "task": {"ttl": 60_000}});
        let req = Req::post(rpc(json!(n), "tools/call", call));
        conn.request(
            &req.header("x-test-peer", peer).session(session),
            "tools/call",
        )
        .rpc()
    };
    let mut kept = 0;
    let mut refusal = Value::Null;
    'sessions: for s in 0..4 {
        let session = session_from(&mut conn, "192.0.2.1");
        for n in 0..2 {
            let answer = keep(&mut conn, "192.0.2.1", &session, s * 10 + n);
            if answer["result"]["task"]["taskId"].is_string() {
                kept += 1;
            } else {
                refusal = answer;
                break 'sessions;
            }
        }
    }
    assert_eq!(kept, 5, "the address keeps max_tasks_per_peer: {}", refusal);
    let message = refusal["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("max_tasks_per_peer"), "{}", refusal);
    let other = session_from(&mut conn, "192.0.2.2");
    let answer = keep(&mut conn, "192.0.2.2", &other, 50);
    assert!(answer["result"]["task"]["taskId"].is_string(), "{}", answer);
    http.shutdown();
}

/// Issue 27 item 3(c): a caller without a principal gets at most
/// `max_ttl_anonymous` (default 10 minutes) however long a TTL it asks
/// for (basic/utilities/tasks: the server may shorten the requested
/// `ttl`, and says so in the `CreateTaskResult`). Before the fix it got
/// `max_ttl`, an hour.
#[test]
fn unauthenticated_tasks_live_at_most_ten_minutes() {
    let (server, controls) = task_server(None);
    let mut client = connect(&server, json!({}));
    let params = json!({"name": "gated", "arguments": {}, "task": {"ttl": 3_600_000}});
    let created = ok(client.request("tools/call", Some(params)), "tools/call");
    assert_eq!(created["task"]["ttl"], 600_000, "{}", created);
    recv(&controls.reached, "the handler's start");
    controls.release.send(()).ok();
}

// ---------------------------------------------------------------------------
// Item 6: a task belongs to the OAuth client, not only to the user
// ---------------------------------------------------------------------------

/// `c1` and `c2`: alice through two OAuth clients; `iss2`: alice through
/// `c1` at another issuer.
fn verify(token: &str, _: &HttpRequestHead) -> Result<Principal, TokenError> {
    let alice = Principal::new("alice").with_issuer("https://auth.example.com");
    match token {
        "c1" => Ok(alice.with_client_id("c1")),
        "c2" => Ok(alice.with_client_id("c2")),
        "iss2" => Ok(alice
            .with_client_id("c1")
            .with_issuer("https://other.example.com")),
        _ => Err(TokenError::invalid("unknown token")),
    }
}

/// The task server on a protected endpoint of 127.0.0.1.
fn serve_protected() -> (HttpServer, Controls) {
    // The resource names the port: bind once to learn a free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let resource = format!("http://127.0.0.1:{}/mcp", port);
    let protected = ProtectedResource::new(resource.as_str(), verify)
        .authorization_server("https://auth.example.com");
    let (server, controls) = task_server(None);
    let http = server
        .http()
        .protect(protected)
        .serve(("127.0.0.1", port))
        .expect("serve");
    (http, controls)
}

fn bearer(req: Req, token: &str) -> Req {
    req.header("Authorization", &format!("Bearer {}", token))
}

/// A 2025-11-25 session opened with `token`.
fn session(conn: &mut Conn, token: &str) -> String {
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let response = conn.request(&bearer(init, token), "initialize");
    response.expect_status(200, "initialize");
    let id = response.header("mcp-session-id").expect("a session");
    let id = id.to_string();
    let done = Req::post(notification("notifications/initialized", json!({})));
    let done = bearer(done, token).session(&id);
    conn.request(&done, "initialized")
        .expect_status(202, "initialized");
    id
}

/// A 2025-11-25 request of session `id` with `token`; its JSON-RPC answer.
fn ask_2025(conn: &mut Conn, token: &str, id: &str, method: &str, params: Value) -> Value {
    let req = bearer(Req::post(rpc(json!(7), method, params)), token).session(id);
    conn.request(&req, method).rpc()
}

/// A 2026-07-28 request with `token`; its JSON-RPC answer.
fn ask_2026(conn: &mut Conn, token: &str, method: &str, params: Value, name: &str) -> Value {
    let req = bearer(post_2026(8, method, params, name), token);
    conn.request(&req, method).rpc()
}

/// Issue 27 item 6, 2026-07-28 (SEP-2663; TASK-10): the task of alice's
/// client `c1` is unknown (`-32602`) to alice's client `c2` and to `c1`
/// at another issuer, for `tasks/get`, `tasks/update` and `tasks/cancel`;
/// `c1` still sees it. Before the fix tasks were bound to the subject
/// alone and `c2` read and cancelled it.
#[test]
fn a_2026_task_belongs_to_its_oauth_client() {
    let (http, controls) = serve_protected();
    let mut conn = Conn::open(http.local_addr());
    let created = ask_2026(
        &mut conn,
        "c1",
        "tools/call",
        json!({"name": "gated"}),
        "gated",
    );
    let id = created["result"]["taskId"].as_str().expect("a taskId");
    let id = id.to_string();
    recv(&controls.reached, "the handler's start");
    let update = json!({"taskId": id, "inputResponses": {}});
    for token in ["c2", "iss2"] {
        for (method, params) in [
            ("tasks/get", json!({ "taskId": id })),
            ("tasks/update", update.clone()),
            ("tasks/cancel", json!({ "taskId": id })),
        ] {
            let answer = ask_2026(&mut conn, token, method, params, &id);
            assert_eq!(
                answer["error"]["code"], -32602,
                "{} {}: {}",
                token, method, answer
            );
        }
    }
    let task = ask_2026(&mut conn, "c1", "tasks/get", json!({ "taskId": id }), &id);
    assert_eq!(task["result"]["status"], "working", "{}", task);
    controls.release.send(()).ok();
    http.shutdown();
}

/// Issue 27 item 6, 2025-11-25 (basic/utilities/tasks, TASK-10): the task
/// of alice's client `c1` is not listed for, and unknown to, alice's
/// client `c2` (`tasks/list`, `tasks/get`, `tasks/result`,
/// `tasks/cancel`); `c1`, authenticated, keeps the hour it asked for
/// (item 3(c) applies to callers without a principal only).
#[test]
fn a_2025_task_belongs_to_its_oauth_client() {
    let (http, controls) = serve_protected();
    let mut conn = Conn::open(http.local_addr());
    let first = session(&mut conn, "c1");
    let second = session(&mut conn, "c2");
    let call = json!({"name": "gated", "arguments": {}, "task": {"ttl": 3_600_000}});
    let created = ask_2025(&mut conn, "c1", &first, "tools/call", call);
    let task = &created["result"]["task"];
    assert_eq!(task["ttl"], 3_600_000, "{}", created);
    let id = task["taskId"].as_str().expect("a taskId").to_string();
    recv(&controls.reached, "the handler's start");
    let listed = ask_2025(&mut conn, "c2", &second, "tasks/list", json!({}));
    assert_eq!(listed["result"]["tasks"], json!([]), "{}", listed);
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = ask_2025(&mut conn, "c2", &second, method, json!({ "taskId": id }));
        assert_eq!(answer["error"]["code"], -32602, "{}: {}", method, answer);
    }
    let listed = ask_2025(&mut conn, "c1", &first, "tasks/list", json!({}));
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        id.as_str(),
        "{}",
        listed
    );
    controls.release.send(()).ok();
    http.shutdown();
}
