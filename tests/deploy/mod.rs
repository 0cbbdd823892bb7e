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
    let mut params = json!({"name": "ask", "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        params[k] = v.clone();
    }
    Req::post(rpc(json!(1), "tools/call", params))
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "ask")
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
