//! `subscriptions/listen`: acknowledgements, change types, caps, closing,
//! on memory, stdio and HTTP.

use super::*;
use crate::support::http::Conn;
use serde_json::{json, Value};
use std::time::Duration;
use tiny_mcp::{MemoryClient, Message, Server, Tool};

// LISTEN-3, LISTEN-4, LISTEN-5 (2026-07-28): the acknowledgement comes
// first and lists only the honoured types.
#[test]
fn listen_ack_lists_only_honoured_types() {
    // Tools only: prompts and resources cannot be honoured.
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("echo", any_object()), echo)
        .build();
    let mut client = memory(&server);
    let ack = memory_listen(
        &mut client,
        json!("L"),
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourcesListChanged": true, "resourceSubscriptions": ["test://a"]}),
    );
    assert_eq!(sub_id(&ack), "L");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    // False flags and empty lists are left out.
    let ack = memory_listen(
        &mut client,
        json!("M"),
        json!({"toolsListChanged": false, "resourceSubscriptions": []}),
    );
    assert_eq!(ack["params"]["notifications"], json!({}));
}

// LISTEN-5, LISTEN-6, LISTEN-9, GEN-3 (2026-07-28): listens with ids 7
// and "7" are two subscriptions, each stamped with its own id and type.
#[test]
fn listen_ids_keep_their_json_type() {
    let server = full_server();
    let mut client = memory(&server);
    let filter = json!({"toolsListChanged": true});
    let ack_number = memory_listen(&mut client, json!(7), filter.clone());
    assert_eq!(sub_id(&ack_number), &json!(7));
    let ack_string = memory_listen(&mut client, json!("7"), filter);
    assert_eq!(sub_id(&ack_string), &json!("7"));
    server.handle().notify_tools_list_changed();
    let before = before_barrier(&mut client);
    let mut stamps: Vec<String> = before
        .iter()
        .map(|m| {
            assert_eq!(m["method"], "notifications/tools/list_changed", "{}", m);
            sub_id(m).to_string()
        })
        .collect();
    stamps.sort();
    assert_eq!(stamps, vec!["\"7\"".to_string(), "7".to_string()]);
}

// LISTEN-7 (2026-07-28): only the requested change types, and updates
// only for the subscribed URIs.
#[test]
fn listen_sends_only_requested_change_types() {
    let server = full_server();
    let handle = server.handle();
    let mut client = memory(&server);
    memory_listen(
        &mut client,
        json!("L"),
        json!({"promptsListChanged": true, "resourceSubscriptions": ["test://a"]}),
    );
    handle.notify_tools_list_changed();
    handle.notify_resources_list_changed();
    handle.notify_resource_updated("test://b");
    handle.notify_prompts_list_changed();
    handle.notify_resource_updated("test://a");
    let before = before_barrier(&mut client);
    let got: Vec<(Value, Value, Value)> = before
        .iter()
        .map(|m| {
            (
                m["method"].clone(),
                m["params"]["uri"].clone(),
                sub_id(m).clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                json!("notifications/prompts/list_changed"),
                Value::Null,
                json!("L")
            ),
            (
                json!("notifications/resources/updated"),
                json!("test://a"),
                json!("L")
            ),
        ]
    );
}

// LISTEN-8 (2026-07-28): a 2026-07-28 connection gets no bare change
// notifications, and progress and logs never carry a subscription id.
#[test]
fn connection_2026_gets_changes_only_on_listen_streams() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    server.handle().notify_tools_list_changed();
    server.handle().notify_prompts_list_changed();
    server.handle().notify_resource_updated("test://a");
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "bare change notifications: {:?}", before);
    memory_listen(&mut client, json!("L"), json!({"toolsListChanged": true}));
    let mut params = json!({"name": "chatty", "_meta": envelope_with(LOG_LEVEL, json!("debug"))});
    params["_meta"]["progressToken"] = json!("p");
    ok(client.request("tools/call", Some(params)), "chatty");
    let notifications: Vec<Value> = client
        .take_notifications()
        .iter()
        .map(message_to_json)
        .collect();
    let methods: Vec<&str> = notifications
        .iter()
        .map(|m| m["method"].as_str().unwrap_or(""))
        .collect();
    assert!(
        methods.contains(&"notifications/progress") && methods.contains(&"notifications/message"),
        "chatty's own notifications arrived: {:?}",
        methods
    );
    for m in &notifications {
        let stamped = !sub_id(m).is_null();
        let change = m["method"] == "notifications/tools/list_changed";
        assert_eq!(stamped, change, "only changes are stamped: {}", m);
    }
}

// LISTEN-11 (2026-07-28): `close_listen_streams` ends each stream with
// its result `{resultType: "complete", _meta: {subscriptionId}}`; nothing
// follows.
#[test]
fn close_listen_streams_sends_the_final_result() {
    let server = full_server();
    let mut client = memory(&server);
    memory_listen(&mut client, json!("L"), json!({"toolsListChanged": true}));
    server.handle().close_listen_streams();
    let last = next_json(&mut client, "the listen result");
    assert_eq!(last["id"], "L", "{}", last);
    let result = &last["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"][SUBSCRIPTION_ID], "L");
    let keys: Vec<&String> = result
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys.len(), 2, "no other fields: {}", result);
    server.handle().notify_tools_list_changed();
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "sent after the close: {:?}", before);
}

// LISTEN-1, LISTEN-2 (2026-07-28): a listen request without
// `notifications`, or with a bad envelope, gets an error and no stream.
#[test]
fn listen_errors_open_no_stream() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    expect_error(
        mreq(&mut client, "subscriptions/listen", json!({})),
        ErrorCode::INVALID_PARAMS,
        "listen without notifications",
    );
    expect_error(
        client.request(
            "subscriptions/listen",
            Some(json!({"notifications": {"toolsListChanged": true},
                        "_meta": envelope_with(PROTOCOL_VERSION, json!("2099-01-01"))})),
        ),
        ErrorCode(UNSUPPORTED_VERSION),
        "listen with an unknown version",
    );
    expect_error(
        client.request(
            "subscriptions/listen",
            Some(json!({"notifications": {"toolsListChanged": true}})),
        ),
        ErrorCode::INVALID_PARAMS,
        "listen without an envelope",
    );
    server.handle().notify_tools_list_changed();
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "a refused listen opened: {:?}", before);
}

// LISTEN-14 (2026-07-28): past `max_listen_streams` a listen request gets
// a clear error before any acknowledgement.
#[test]
fn listen_cap_is_a_clear_error() {
    let server = full_builder().max_listen_streams(1).build();
    let mut client = memory(&server);
    memory_listen(&mut client, json!("one"), json!({"toolsListChanged": true}));
    send_json(
        &client,
        json!({"jsonrpc": "2.0", "id": "two", "method": "subscriptions/listen",
               "params": bare(json!({"notifications": {"toolsListChanged": true}}))}),
    );
    let answer = next_json(&mut client, "the answer to the second listen");
    assert_eq!(answer["id"], "two", "no acknowledgement first: {}", answer);
    let (code, _) = error_of(&answer, "the second listen");
    assert_eq!(code, -32603);
    let message = answer["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("listen"), "a clear message: {}", message);
}

// LISTEN-10, CANCEL-1, LISTEN-8 (2026-07-28): on stdio,
// `notifications/cancelled` naming the listen id stops it without a
// response; before that only the requested type arrived, stamped.
#[test]
fn stdio_cancelled_listen_stops_it() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!("L"),
        "subscriptions/listen",
        bare(json!({"notifications": {"toolsListChanged": true}})),
    );
    let ack = child.next_message("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(sub_id(&ack), "L");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let notify = bare(json!({"name": "notify_changed", "arguments": {}}));
    child.request(json!(1), "tools/call", notify.clone());
    let (_, before) = child.wait_response(&json!(1), "notify_changed's result");
    assert_eq!(before.len(), 1, "only tools/list_changed: {:?}", before);
    assert_eq!(before[0]["method"], "notifications/tools/list_changed");
    assert_eq!(sub_id(&before[0]), "L");
    child.notify("notifications/cancelled", json!({"requestId": "L"}));
    child.request(json!(2), "tools/call", notify);
    let (_, before) = child.wait_response(&json!(2), "the second result");
    assert!(before.is_empty(), "sent after the cancel: {:?}", before);
    let (status, rest) = child.finish(WAIT);
    assert!(status.success(), "{:?}", status);
    assert!(rest.is_empty(), "written at the end: {:?}", rest);
}

// CANCEL-1 (2026-07-28): on stdio a cancelled 2026-07-28 request gets no
// response; the process keeps serving.
#[test]
fn stdio_cancelled_request_gets_no_response() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!(1),
        "tools/call",
        bare(json!({"name": "slow", "arguments": {"seconds": 5}})),
    );
    child.notify("notifications/cancelled", json!({"requestId": 1}));
    child.request(
        json!(2),
        "tools/call",
        bare(json!({"name": "echo", "arguments": {"text": "after"}})),
    );
    let (response, before) = child.wait_response(&json!(2), "echo after the cancel");
    assert_eq!(text_of(&response["result"]), "after");
    let (_, rest) = child.finish(WAIT);
    let answered: Vec<&Value> = before
        .iter()
        .chain(rest.iter())
        .filter(|m| is_response(m) && m["id"] == 1)
        .collect();
    assert!(
        answered.is_empty(),
        "the cancelled request was answered: {:?}",
        answered
    );
}

// LISTEN-12 (2026-07-28): at end of input an open listen gets no
// response.
#[test]
fn stdio_end_of_input_sends_nothing_for_open_listen() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!(5),
        "subscriptions/listen",
        bare(json!({"notifications": {"promptsListChanged": true}})),
    );
    let ack = child.next_message("the acknowledgement");
    assert_eq!(sub_id(&ack), &json!(5));
    let (status, rest) = child.finish(WAIT);
    assert!(status.success(), "{:?}", status);
    assert!(rest.is_empty(), "written at the end: {:?}", rest);
}

// HTTP-9, LISTEN-3..LISTEN-7 (2026-07-28): a listen POST is an SSE stream:
// the ack, then only the requested changes, stamped with the id.
#[test]
fn http_listen_is_sse_ack_then_stamped_changes() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("echo", any_object()), echo)
        .build();
    let handle = server.handle();
    let http = serve(server.http());
    let addr = http.local_addr();
    let mut conn = Conn::open(addr);
    let head = conn.start(
        &listen_req(
            json!("listen-1"),
            json!({"toolsListChanged": true, "promptsListChanged": true}),
        ),
        "the listen head",
    );
    head.expect_status(200, "listen");
    assert!(head.is_sse(), "{:?}", head);
    assert_eq!(head.header("x-accel-buffering"), Some("no"));
    assert_eq!(head.header("cache-control"), Some("no-cache"));
    assert!(head.header("mcp-session-id").is_none());
    let ack = conn.next_event("the ack event");
    let ack = match ack {
        Some(event) => {
            assert!(event.id.is_none(), "no event ids: {:?}", event);
            event.message().unwrap_or(Value::Null)
        }
        None => panic!("the listen stream ended before its ack"),
    };
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(sub_id(&ack), "listen-1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    handle.notify_prompts_list_changed();
    handle.notify_tools_list_changed();
    let change = conn.next_message("tools/list_changed");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(sub_id(&change), "listen-1");
    handle.close_listen_streams();
}

// LISTEN-11 (2026-07-28): `close_listen_streams` sends the listen result
// and ends the HTTP response properly.
#[test]
fn http_close_listen_streams_ends_the_stream_with_its_result() {
    let server = full_server();
    let handle = server.handle();
    let http = serve(server.http());
    let (mut conn, _) = http_listen(
        http.local_addr(),
        json!(3),
        json!({"toolsListChanged": true}),
    );
    handle.close_listen_streams();
    let last = conn.next_message("the listen result");
    assert_eq!(last["id"], 3, "{}", last);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(last["result"]["_meta"][SUBSCRIPTION_ID], 3);
    let rest = conn.rest("the end of the listen stream");
    assert!(rest.is_empty(), "after the result: {:?}", rest);
    assert!(!conn.was_cut(), "the response ended with its last chunk");
}

// LISTEN-8 (2026-07-28): progress and logs go on their request's stream,
// never on a listen stream; change notifications go only on listen streams.
#[test]
fn http_listen_stream_never_carries_progress_or_logs() {
    let server = full_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let (mut listen, _) = http_listen(addr, json!("L"), json!({"toolsListChanged": true}));
    let mut params = json!({"name": "chatty", "_meta": envelope_with(LOG_LEVEL, json!("debug"))});
    params["_meta"]["progressToken"] = json!(1);
    let response = send(addr, &post_2026(json!(2), "tools/call", params), "chatty");
    let methods: Vec<Value> = response
        .messages()
        .iter()
        .map(|m| m["method"].clone())
        .collect();
    assert!(
        !methods.contains(&json!("notifications/tools/list_changed")),
        "a change on a request stream: {:?}",
        methods
    );
    assert!(
        methods.contains(&json!("notifications/message")),
        "{:?}",
        methods
    );
    let next = listen.next_message("chatty's change on the listen stream");
    assert_eq!(
        next["method"], "notifications/tools/list_changed",
        "{}",
        next
    );
    assert_eq!(sub_id(&next), "L");
    server.handle().notify_tools_list_changed();
    let next = listen.next_message("the second change");
    assert_eq!(
        next["method"], "notifications/tools/list_changed",
        "{}",
        next
    );
    server.handle().close_listen_streams();
    let rest = listen.rest("the end of the listen stream");
    assert_eq!(rest.len(), 1, "only the final result: {:?}", rest);
}

// LISTEN-5, LISTEN-9, LISTEN-11 (2026-07-28): two HTTP clients whose
// listen requests both have id 1 are both acknowledged, both get each
// change stamped 1, and each gets its own closing result.
#[test]
fn http_two_clients_with_the_same_listen_id_are_both_served() {
    let server = full_server();
    let http = serve(server.http());
    let addr = http.local_addr();
    let filter = json!({"toolsListChanged": true});
    let (mut a, ack_a) = http_listen(addr, json!(1), filter.clone());
    let (mut b, ack_b) = http_listen(addr, json!(1), filter);
    assert_eq!(sub_id(&ack_a), &json!(1));
    assert_eq!(sub_id(&ack_b), &json!(1));
    server.handle().notify_tools_list_changed();
    for (name, conn) in [("A", &mut a), ("B", &mut b)] {
        let change = conn.next_message(&format!("the change on {}", name));
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&change), &json!(1), "{}: {}", name, change);
    }
    server.handle().close_listen_streams();
    for (name, conn) in [("A", &mut a), ("B", &mut b)] {
        let rest = conn.rest(&format!("the end of {}", name));
        let results: Vec<&Value> = rest.iter().filter(|m| is_response(m)).collect();
        assert_eq!(results.len(), 1, "{}: one result: {:?}", name, rest);
        assert_eq!(results[0]["id"], 1);
        assert_eq!(results[0]["result"]["_meta"][SUBSCRIPTION_ID], 1);
    }
}

// LISTEN-10, LISTEN-12, LISTEN-9 (2026-07-28): when one of two clients
// listening with id 1 vanishes, the other stays served; the server frees
// the vanished stream (seen through the stream cap).
#[test]
fn http_vanished_listener_leaves_the_other_served() {
    let server = full_builder().max_listen_streams(2).build();
    let handle = server.handle();
    let http = serve(server.http().sse_keep_alive(Duration::from_millis(20)));
    let addr = http.local_addr();
    let filter = json!({"toolsListChanged": true});
    let (a, _) = http_listen(addr, json!(1), filter.clone());
    let (mut b, _) = http_listen(addr, json!(1), filter.clone());
    drop(a);
    // Until the server notices A is gone, the cap refuses a third stream.
    let deadline = Instant::now() + WAIT;
    let mut c = loop {
        handle.notify_tools_list_changed();
        let change = b.next_message("a change on B");
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&change), &json!(1));
        let mut c = Conn::open(addr);
        let head = c.start(&listen_req(json!(1), filter.clone()), "C's listen head");
        if head.is_sse() {
            let ack = c.next_message("C's acknowledgement");
            assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
            break c;
        }
        let _ = c.read_body("C's refusal");
        assert!(
            Instant::now() < deadline,
            "the server never freed the vanished listener's stream"
        );
        // Pace on B's next keepalive: a read, not a sleep.
        match b.next_block("a keepalive on B") {
            Some(block) => assert!(block.is_comment(), "unexpected on B: {:?}", block),
            None => panic!("B's stream ended"),
        }
    };
    handle.notify_tools_list_changed();
    for (name, conn) in [("B", &mut b), ("C", &mut c)] {
        let change = conn.next_message(&format!("the change on {}", name));
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&change), &json!(1));
    }
    handle.close_listen_streams();
    for (name, conn) in [("B", &mut b), ("C", &mut c)] {
        let rest = conn.rest(&format!("the end of {}", name));
        let results: Vec<&Value> = rest.iter().filter(|m| is_response(m)).collect();
        assert_eq!(results.len(), 1, "{}: its own result: {:?}", name, rest);
        assert_eq!(results[0]["result"]["_meta"][SUBSCRIPTION_ID], 1);
    }
}

// LISTEN-10, issue 28 item 8 (2026-07-28): a listen stream whose client
// closed its connection is forgotten within a second, not at the next
// keepalive (15 s by default, the interval here): at a cap of one stream,
// the client reconnecting is served.
#[test]
fn http_closed_listen_stream_frees_its_place_at_once() {
    closed_listen_stream_frees_its_place(false);
}

// LISTEN-10, issue 28 item 8 (2026-07-28): the same when the client's
// connection was reset (RST).
#[test]
fn http_reset_listen_stream_frees_its_place_at_once() {
    closed_listen_stream_frees_its_place(true);
}

fn closed_listen_stream_frees_its_place(reset: bool) {
    use crate::support::http::{close_with_reset, read_status};
    let server = full_builder().max_listen_streams(1).build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let filter = json!({"toolsListChanged": true});
    if reset {
        let mut conn = Conn::open(addr);
        conn.send(&listen_req(json!(1), filter.clone()));
        let mut socket = conn.into_socket();
        assert_eq!(read_status(&mut socket, "the listen stream"), 200);
        // The rest of the head and the acknowledgement are left unread.
        close_with_reset(socket);
    } else {
        let (conn, _) = http_listen(addr, json!(1), filter.clone());
        drop(conn);
    }
    let closed = Instant::now();
    let mut again = loop {
        let mut again = Conn::open(addr);
        let head = again.start(&listen_req(json!(2), filter.clone()), "the new listen");
        if head.is_sse() {
            break again;
        }
        let refusal = again.read_body("the refusal");
        assert_eq!(
            head.status,
            503,
            "only the cap refuses it: {}",
            String::from_utf8_lossy(&refusal)
        );
        assert!(
            closed.elapsed() < WAIT,
            "the closed listen stream still held its place after {:?}",
            WAIT
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let ack = again.next_message("the new listen's acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(sub_id(&ack), &json!(2));
    server.handle().close_listen_streams();
}

// LISTEN-14 (2026-07-28): over HTTP the cap refuses a listen with a JSON
// error (not a stream) before any ack; `max_listen_streams` documents
// -32603 with HTTP 503.
#[test]
fn http_listen_cap_is_a_clear_error() {
    let server = full_builder().max_listen_streams(1).build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let (_first, _) = http_listen(addr, json!(1), json!({"toolsListChanged": true}));
    let response = send(
        addr,
        &listen_req(json!(2), json!({"toolsListChanged": true})),
        "a listen over the cap",
    );
    assert!(!response.head.is_sse(), "no stream: {:?}", response.head);
    let message = expect_http_error(&response, 503, -32603, "listen over the cap");
    assert_eq!(message["id"], 2);
    let text = message["error"]["message"].as_str().unwrap_or("");
    assert!(text.contains("listen"), "a clear message: {}", text);
    server.handle().close_listen_streams();
}

// 5. BASE-2, LISTEN-5 (2026-07-28): an open listen stream is a request in
// flight: a request reusing its id gets -32600 and the stream lives on.
#[test]
fn a_live_listen_id_cannot_be_reused() {
    let server = Server::builder("fixes", "1")
        .tool(echo_tool(), echo)
        .build();
    let mut client = memory(&server);
    let listen = |id: i64| {
        Message::from_value(
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": enveloped(json!({"notifications": {"toolsListChanged": true}}), json!({}))}),
        )
        .unwrap()
    };
    client.send(listen(5));
    let ack = read_message(&mut client, "the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    client.send(listen(5));
    let second = read_message(&mut client, "the answer to a second listen with id 5");
    assert_eq!(
        (second["id"].clone(), code(&second)),
        (json!(5), -32600),
        "{}",
        second
    );
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": enveloped(json!({"name": "echo", "arguments": {"text": "x"}}), json!({}))});
    client.send(Message::from_value(call).unwrap());
    let refused = read_message(&mut client, "the answer to a call with id 5");
    assert_eq!(code(&refused), -32600, "{}", refused);
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
        "params": enveloped(json!({}), json!({}))});
    client.send(Message::from_value(list).unwrap());
    let refused = read_message(&mut client, "the answer to a list with id 5");
    assert_eq!(code(&refused), -32600, "an inline request too: {}", refused);
    server.handle().close_listen_streams();
    let result = read_message(&mut client, "the listen stream's result");
    assert_eq!(result["result"]["resultType"], "complete", "{}", result);
    assert_eq!(result["id"], 5);
}

fn read_message(client: &mut MemoryClient, what: &str) -> Value {
    match client.recv_timeout(WAIT) {
        Some(message) => serde_json::from_str(&message.to_json_string()).unwrap_or(Value::Null),
        None => panic!("{} never arrived (waited {:?})", what, WAIT),
    }
}
