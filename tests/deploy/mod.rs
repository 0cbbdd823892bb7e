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
