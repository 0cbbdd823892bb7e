//! Several instances behind a load balancer (issue 10): the routing key
//! in session ids, sealed `requestState`, change events across instances.

use serde_json::json;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::http::{initialize_body, is_uuid_v4, rpc, send, Req, LATEST};

fn server() -> Server {
    Server::builder("deploy-tests", "1")
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("hi")),
        )
        .build()
}

// Item 3, HTTP-16, HTTP-18: an instance mints session ids with its
// routing key; another instance does not know them (404), so a client
// that lands there starts a new session.
#[test]
fn session_ids_carry_the_instance_s_routing_key() {
    let a1 = server()
        .http()
        .session_id_prefix("a1.")
        .expect("a valid prefix")
        .serve("127.0.0.1:0")
        .expect("serve a1");
    let b2 = server()
        .http()
        .session_id_prefix("b2.")
        .expect("a valid prefix")
        .serve("127.0.0.1:0")
        .expect("serve b2");
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let response = send(a1.local_addr(), &init, "initialize on a1");
    response.expect_status(200, "initialize on a1");
    let id = response
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let uuid = id
        .strip_prefix("a1.")
        .unwrap_or_else(|| panic!("no routing key: {}", id));
    assert!(is_uuid_v4(uuid), "{}", id);
    let list = Req::post(rpc(json!(1), "tools/list", json!({}))).session(&id);
    send(a1.local_addr(), &list, "on its owner").expect_status(200, "on its owner");
    send(b2.local_addr(), &list, "on another instance").expect_status(404, "elsewhere");
    for bad in ["a b", "é", &"x".repeat(65)].iter() {
        assert!(
            server().http().session_id_prefix(*bad).is_err(),
            "{:?}",
            bad
        );
    }
}

/// `ask`: one round of input (an elicitation), then the answer's action.
#[cfg(feature = "sealed-state")]
fn asking_server(codec: tiny_mcp::SealedStateCodec) -> Server {
    use tiny_mcp::{ElicitRequestFormParams, InputRequest};
    Server::builder("deploy-tests", "1")
        .tool(
            Tool::new("ask", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| {
                let form = ElicitRequestFormParams::new("name?", json!({"type": "object"}));
                let asked = vec![("who".to_string(), InputRequest::elicit(form))];
                let answer = ctx.request_inputs(asked)?.elicit_result("who")?;
                Ok(CallToolResult::text(format!("{:?}", answer.action)))
            },
        )
        .request_state_codec(codec)
        .build()
}

/// A 2026-07-28 call of `ask`, with `extra` params (the retry's).
#[cfg(feature = "sealed-state")]
fn ask(extra: serde_json::Value) -> Req {
    call_tool("ask", extra)
}

/// A 2026-07-28 call of `tool` from a client that can elicit, with `extra`
/// params.
#[cfg(feature = "sealed-state")]
fn call_tool(tool: &str, extra: serde_json::Value) -> Req {
    let mut params = json!({"name": tool, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        params[k] = v.clone();
    }
    Req::post(rpc(json!(1), "tools/call", params))
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
}

// Item 1, MRTR-5: a retry may land on another instance that shares the
// key ring; one with other keys refuses the state (-32602).
#[cfg(feature = "sealed-state")]
#[test]
fn a_sealed_state_is_verified_by_any_instance_with_the_keys() {
    use tiny_mcp::SealedStateCodec;
    let ring = || vec![("k1".to_string(), vec![42u8; 32])];
    let codec = || SealedStateCodec::new(ring()).expect("a ring");
    let a = asking_server(codec())
        .http()
        .serve("127.0.0.1:0")
        .expect("a");
    let b = asking_server(codec())
        .http()
        .serve("127.0.0.1:0")
        .expect("b");
    let other = SealedStateCodec::new(vec![("k1".to_string(), vec![7u8; 32])]).expect("ring");
    let c = asking_server(other).http().serve("127.0.0.1:0").expect("c");
    let first = send(a.local_addr(), &ask(json!({})), "ask on a").rpc();
    let state = first["result"]["requestState"].clone();
    assert!(
        state.as_str().map_or(false, |s| s.starts_with("v1.k1.")),
        "{}",
        first
    );
    let retry = ask(json!({"requestState": state,
        "inputResponses": {"who": {"action": "decline"}}}));
    let done = send(b.local_addr(), &retry, "the retry on b").rpc();
    assert_eq!(done["result"]["content"][0]["text"], "Decline", "{}", done);
    let refused = send(c.local_addr(), &retry, "the retry on c").rpc();
    assert_eq!(refused["error"]["code"], -32602, "{}", refused);
}

// Item 5: a header on every response names the instance that answered,
// on whole answers and event streams alike.
#[test]
fn every_response_can_name_its_instance() {
    let http = server()
        .http()
        .response_header("Mcp-Instance", "a1")
        .expect("a valid header")
        .serve("127.0.0.1:0")
        .expect("serve");
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let json = send(http.local_addr(), &init, "initialize as JSON");
    assert_eq!(json.header("mcp-instance"), Some("a1"));
    let sse = init.header("Accept", "text/event-stream");
    let stream = send(http.local_addr(), &sse, "initialize as one event");
    assert!(stream.head.is_sse(), "{:?}", stream.head);
    assert_eq!(stream.header("mcp-instance"), Some("a1"));
    let missing = send(http.local_addr(), &Req::to("GET", "/other"), "a 404");
    assert_eq!(missing.header("mcp-instance"), Some("a1"));
    for (name, value) in [("Bad Name", "v"), ("X-A", "a\r\nb"), ("Content-Type", "x")].iter() {
        assert!(
            server().http().response_header(*name, *value).is_err(),
            "{}",
            name
        );
    }
}

// Item 5: two instances of the example started with one key file, their
// names and routing keys: a multi-round call begun on one completes on
// the other, and each says who answered.
#[cfg(feature = "sealed-state")]
#[test]
fn example_instances_share_sealed_state() {
    use crate::support::Example;
    let dir = std::env::temp_dir().join(format!("tiny-mcp-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let keys = dir.join("keys");
    let key: String = (0..32).map(|i| format!("{:02x}", i * 7 % 256)).collect();
    std::fs::write(&keys, format!("# newest first\n{}\n", key)).expect("the key file");
    let keys = keys.to_string_lossy().to_string();
    let a = Example::start(&[
        "--instance",
        "a",
        "--session-prefix",
        "a.",
        "--state-key-file",
        &keys,
    ]);
    let b = Example::start(&[
        "--instance",
        "b",
        "--session-prefix",
        "b.",
        "--state-key-file",
        &keys,
    ]);
    let tool = "test_input_required_result_elicitation";
    let call = |extra| call_tool(tool, extra);
    let first = send(a.addr, &call(json!({})), "the first round on a");
    assert_eq!(first.header("mcp-instance"), Some("a"));
    let result = first.rpc()["result"].clone();
    let keys_asked: Vec<String> = result["inputRequests"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(keys_asked.len(), 1, "{}", result);
    let mut answers = serde_json::Map::new();
    answers.insert(
        keys_asked[0].clone(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
    let retry = call(json!({"requestState": result["requestState"], "inputResponses": answers}));
    let done = send(b.addr, &retry, "the retry on b");
    assert_eq!(done.header("mcp-instance"), Some("b"));
    assert_eq!(
        done.rpc()["result"]["content"][0]["text"],
        "Hello, Ada!",
        "{}",
        done.rpc()
    );
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let id = send(b.addr, &init, "a session on b")
        .header("mcp-session-id")
        .map(str::to_string);
    assert!(
        id.as_deref().map_or(false, |id| id.starts_with("b.")),
        "{:?}",
        id
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server whose changes go, as JSON, into `bus` (as a pub/sub bus
/// would carry them to every instance, this one included).
fn on_bus(bus: crossbeam_channel::Sender<String>) -> Server {
    Server::builder("deploy-tests", "1")
        .offer_tools()
        .change_bus(move |event: &tiny_mcp::ChangeEvent| {
            let _ = bus.send(event.to_json());
        })
        .build()
}

// Item 2: a change made on one instance reaches the clients of another
// through the bus; an instance drops its own events when they come back
// (no loops, no duplicates).
#[test]
fn changes_travel_between_instances_without_loops() {
    use tiny_mcp::ChangeEvent;
    let (bus, published) = crossbeam_channel::unbounded();
    let a = on_bus(bus.clone());
    let b = on_bus(bus);
    let mut on_b = crate::support::connect(&b, json!({}));
    a.handle().notify_tools_list_changed();
    let wire = published
        .recv_timeout(crate::support::WAIT)
        .expect("a's change was published");
    let event = ChangeEvent::from_json(&wire).expect("an event");
    assert_eq!(event.origin, a.handle().instance_id());
    assert!(!a.handle().apply_change(&event), "a drops its own event");
    assert!(b.handle().apply_change(&event), "b delivers it");
    let heard = on_b
        .recv_timeout(crate::support::WAIT)
        .expect("b's client heard of the change");
    assert!(
        format!("{:?}", heard).contains("notifications/tools/list_changed"),
        "{:?}",
        heard
    );
    assert!(published.try_recv().is_err(), "applying publishes nothing");
}
