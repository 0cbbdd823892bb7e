//! Streamable HTTP in the 2026-07-28 era: routing headers, status codes,
//! SSE responses, cancellation.

use super::*;
use crate::support::http::LATEST;
use crate::support::http::{initialize_body, rpc, Conn, Req, Response};
use crate::support::recv;
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, JsonObject, ReadResourceResult, RequestContext, ResourceContents,
    ResourceTemplate, Server, Tool,
};

// HTTP-1, HTTP-2, HTTP-8 (2026-07-28): a POST with the three routing
// headers is answered with JSON, and no session is minted.
#[test]
fn http_2026_post_is_answered_without_session() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let response = send(
        addr,
        &call_req(json!(1), "echo", json!({"text": "over http"})),
        "a 2026-07-28 tools/call",
    );
    response.expect_status(200, "tools/call");
    assert!(
        response
            .header("content-type")
            .map_or(false, |v| v.starts_with("application/json")),
        "{:?}",
        response.head
    );
    assert!(
        response.header("mcp-session-id").is_none(),
        "no session is minted: {:?}",
        response.head
    );
    let message = response.json();
    assert_eq!(message["id"], 1);
    assert_complete(&message["result"], "tools/call");
    assert_eq!(text_of(&message["result"]), "over http");
    let discover = send(
        addr,
        &post_2026(json!("d"), "server/discover", bare(json!({}))),
        "server/discover",
    );
    discover.expect_status(200, "server/discover");
    assert!(discover.header("mcp-session-id").is_none());
    assert_eq!(
        discover.json()["result"]["supportedVersions"],
        json!([V2026])
    );
}

// HTTP-2, HTTP-6 step 9, ERA-4, ERR-4 (2026-07-28): each routing header
// missing or different from the body is 400 -32020.
#[test]
fn http_missing_or_mismatched_headers_are_header_mismatch() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let good = || call_req(json!(5), "echo", json!({"text": "x"}));
    let wrong_version_body = Req::post(rpc(
        json!(5),
        "tools/call",
        json!({"name": "echo", "_meta": envelope_with(PROTOCOL_VERSION, json!("2099-01-01"))}),
    ))
    .header("MCP-Protocol-Version", V2026)
    .header("Mcp-Method", "tools/call")
    .header("Mcp-Name", "echo");
    let cases = vec![
        (
            "no MCP-Protocol-Version",
            good().without("MCP-Protocol-Version"),
        ),
        (
            "MCP-Protocol-Version differs from the body",
            wrong_version_body,
        ),
        ("no Mcp-Method", good().without("Mcp-Method")),
        (
            "Mcp-Method differs",
            good().header("Mcp-Method", "tools/list"),
        ),
        ("no Mcp-Name", good().without("Mcp-Name")),
        ("Mcp-Name differs", good().header("Mcp-Name", "fail")),
        (
            "Mcp-Name with bad base64",
            good().header("Mcp-Name", "=?base64?ZWNo*==?="),
        ),
    ];
    for (what, req) in cases {
        let response = send(addr, &req, what);
        let message = expect_http_error(&response, 400, HEADER_MISMATCH, what);
        assert_eq!(message["id"], 5, "{}: the id is echoed: {}", what, message);
    }
    // resources/read and prompts/get name their target too.
    let read = post_2026(json!(6), "resources/read", bare(json!({"uri": "test://a"})))
        .header("Mcp-Name", "test://b");
    expect_http_error(&send(addr, &read, "read"), 400, HEADER_MISMATCH, "read");
    let get =
        post_2026(json!(7), "prompts/get", bare(json!({"name": "greet"}))).without("Mcp-Name");
    expect_http_error(&send(addr, &get, "get"), 400, HEADER_MISMATCH, "get");
}

// HTTP-5 (2026-07-28): a routing header sent twice is -32020.
#[test]
fn http_duplicate_routing_header_is_header_mismatch() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let body = rpc(json!(1), "tools/list", bare(json!({})));
    for twice in ["MCP-Protocol-Version", "Mcp-Method"] {
        let value = if twice == "Mcp-Method" {
            "tools/list"
        } else {
            V2026
        };
        let raw = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: {}\r\nMcp-Method: tools/list\r\n{}: {}\r\n\
             Content-Length: {}\r\n\r\n{}",
            addr,
            V2026,
            twice,
            value,
            body.len(),
            body
        );
        let mut conn = Conn::open(addr);
        conn.send_raw(raw.as_bytes());
        let head = conn.read_head("the answer to a duplicated header");
        let body = conn.read_body("its body");
        let response = Response { head, body };
        expect_http_error(&response, 400, HEADER_MISMATCH, twice);
    }
}

// HTTP-6 steps 9 and 10 (2026-07-28): headers are checked before the
// version, so a bad header with an unsupported version is still -32020;
// with good headers the unsupported version is 400 -32022 with data.
#[test]
fn http_header_check_comes_before_version_check() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let future = |method_header: &str| {
        Req::post(rpc(
            json!(3),
            "tools/list",
            json!({"_meta": envelope_with(PROTOCOL_VERSION, json!("2099-01-01"))}),
        ))
        .header("MCP-Protocol-Version", "2099-01-01")
        .header("Mcp-Method", method_header)
    };
    let response = send(addr, &future("tools/call"), "bad header, unknown version");
    expect_http_error(&response, 400, HEADER_MISMATCH, "bad header first");
    let response = send(addr, &future("tools/list"), "good headers, unknown version");
    let message = expect_http_error(&response, 400, UNSUPPORTED_VERSION, "unknown version");
    assert_eq!(
        message["error"]["data"],
        json!({"supported": [V2026], "requested": "2099-01-01"})
    );
}

// HTTP-3 (2026-07-28): a `=?base64?…?=` Mcp-Name is decoded before it is
// compared.
#[test]
fn http_base64_name_header_is_decoded() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let uri = "test://caf\u{e9}";
    let sentinel = format!("=?base64?{}?=", base64(uri.as_bytes()));
    let req = post_2026(json!(1), "resources/read", bare(json!({ "uri": uri })))
        .header("Mcp-Name", &sentinel);
    let response = send(addr, &req, "resources/read with a base64 Mcp-Name");
    response.expect_status(200, "base64 Mcp-Name");
    let message = response.json();
    assert_eq!(message["result"]["contents"][0]["uri"], uri, "{}", message);
    // A plain ASCII name may be sent in the sentinel form too.
    let req = call_req(json!(2), "echo", json!({"text": "b64"}))
        .header("Mcp-Name", &format!("=?base64?{}?=", base64(b"echo")));
    let response = send(addr, &req, "tools/call with a base64 Mcp-Name");
    response.expect_status(200, "base64 tool name");
    assert_eq!(text_of(&response.json()["result"]), "b64");
}

// HTTP-6 step 12, REM-1 (2026-07-28): unknown and removed methods are 404
// with a JSON -32601 body.
#[test]
fn http_unknown_and_removed_methods_are_404() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    for method in [
        "no/such/method",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "tasks/list",
    ] {
        let req = post_2026(json!(1), method, bare(json!({"uri": "test://a"})));
        let response = send(addr, &req, method);
        expect_http_error(&response, 404, -32601, method);
    }
}

// META-2, HTTP-6 step 8 (2026-07-28): envelope errors are 400 -32602, and
// come before the header checks.
#[test]
fn http_envelope_errors_are_400() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let with = |meta: Value| {
        Req::post(rpc(json!(1), "tools/list", json!({ "_meta": meta })))
            .header("MCP-Protocol-Version", V2026)
            .header("Mcp-Method", "tools/list")
    };
    let cases = vec![
        (
            "no clientCapabilities",
            with(envelope_with(CLIENT_CAPABILITIES, Value::Null)),
        ),
        (
            "a numeric protocolVersion",
            with(envelope_with(PROTOCOL_VERSION, json!(2026))),
        ),
        (
            "an unknown logLevel",
            with(envelope_with(LOG_LEVEL, json!("loud"))),
        ),
        (
            "no _meta and a wrong Mcp-Method",
            Req::post(rpc(json!(1), "tools/list", json!({})))
                .header("MCP-Protocol-Version", V2026)
                .header("Mcp-Method", "tools/call"),
        ),
    ];
    for (what, req) in cases {
        let response = send(addr, &req, what);
        expect_http_error(&response, 400, -32602, what);
    }
}

// MOD-5, HTTP-7 (2026-07-28): a tool failure is a 200 result with
// isError; a handler's -32603 is 200 too.
#[test]
fn http_handler_failures_are_200() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let response = send(addr, &call_req(json!(1), "fail", json!({})), "fail");
    response.expect_status(200, "a tool with isError");
    let message = response.json();
    assert_eq!(message["result"]["isError"], true, "{}", message);
    assert_complete(&message["result"], "isError result");
    let get = post_2026(json!(2), "prompts/get", bare(json!({"name": "broken"})));
    let response = send(addr, &get, "a failing prompt");
    expect_http_error(&response, 200, -32603, "a failing prompt");
}

// HTTP-6 step 5 (2026-07-28): a notification is 202 with an empty body;
// under an unsupported version header it is 400 -32022.
#[test]
fn http_notification_is_202() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 1}})
    .to_string();
    let req = Req::post(body.clone())
        .header("MCP-Protocol-Version", V2026)
        .header("Mcp-Method", "notifications/cancelled");
    let response = send(addr, &req, "a notification");
    response.expect_status(202, "a notification");
    assert!(response.body.is_empty(), "{:?}", response.text());
    assert!(response.header("mcp-session-id").is_none());
    let req = Req::post(body)
        .header("MCP-Protocol-Version", "2099-01-01")
        .header("Mcp-Method", "notifications/cancelled");
    let response = send(addr, &req, "a notification under an unknown version");
    expect_http_error(&response, 400, UNSUPPORTED_VERSION, "unknown version");
}

// ERA-3, ERA-7 (2026-07-28): an `initialize` body under a 2026-07-28
// header goes to the 2025-11-25 path: a session and 2025-11-25.
#[test]
fn http_initialize_under_2026_header_goes_2025() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let req = Req::post(rpc(
        json!(0),
        "initialize",
        json!({"protocolVersion": V2026, "capabilities": {},
               "clientInfo": {"name": "c", "version": "1"}}),
    ))
    .header("MCP-Protocol-Version", V2026)
    .header("Mcp-Method", "initialize");
    let response = send(addr, &req, "initialize under a 2026-07-28 header");
    response.expect_status(200, "initialize");
    assert!(
        response.header("mcp-session-id").is_some(),
        "the 2025-11-25 path mints a session: {:?}",
        response.head
    );
    let result = response.rpc()["result"].clone();
    assert_eq!(result["protocolVersion"], "2025-11-25", "{}", result);
    assert_2025_shape(&result, "initialize");
}

// HTTP-8, HTTP-9, NOTIF-1, LISTEN-8 (2026-07-28): a request whose handler
// sends progress is answered as SSE: its progress, then its result, with
// no event ids and no change notification.
#[test]
fn http_request_with_progress_is_sse_progress_then_result() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let mut params = bare(json!({"name": "chatty"}));
    params["_meta"]["progressToken"] = json!("tok");
    let req = post_2026(json!(9), "tools/call", params);
    let response = send(addr, &req, "chatty over SSE");
    response.expect_status(200, "chatty");
    assert!(response.head.is_sse(), "{:?}", response.head);
    assert_eq!(response.header("x-accel-buffering"), Some("no"));
    let events = response.events();
    assert!(
        events.iter().all(|e| e.id.is_none()),
        "no event ids (HTTP-1): {:?}",
        events
    );
    let messages = response.messages();
    let methods: Vec<&str> = messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("<response>"))
        .collect();
    assert_eq!(
        methods,
        vec![
            "notifications/progress",
            "notifications/progress",
            "<response>"
        ],
        "{:?}",
        messages
    );
    assert_eq!(messages[0]["params"]["progressToken"], "tok");
    assert_eq!(messages[2]["id"], 9);
    assert_eq!(text_of(&messages[2]["result"]), "chatty done");
}

// CANCEL-2, HTTP-8 (2026-07-28): closing a request's SSE response cancels
// the request; the handler sees its flag set.
#[test]
fn http_closing_the_stream_cancels_the_request() {
    let (seen_tx, seen_rx) = unbounded();
    let (_release_tx, release_rx) = unbounded::<()>();
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("wait", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, None, Some("started"));
                let cancelled = wait_release_or_cancel(ctx, &release_rx);
                let _ = seen_tx.send(cancelled);
                Ok(CallToolResult::text("finished"))
            },
        )
        .build();
    let http = serve(server.http());
    let mut params = bare(json!({"name": "wait"}));
    params["_meta"]["progressToken"] = json!(1);
    let mut conn = Conn::open(http.local_addr());
    let head = conn.start(&post_2026(json!(1), "tools/call", params), "wait");
    assert!(head.is_sse(), "{:?}", head);
    let progress = conn.next_message("the progress notification");
    assert_eq!(progress["method"], "notifications/progress");
    drop(conn);
    assert!(
        recv(&seen_rx, "the handler's report"),
        "the handler was released instead of cancelled"
    );
}

// CANCEL-2 (2026-07-28): over HTTP a `notifications/cancelled` POST is
// 202 and cancels nothing.
#[test]
fn http_cancel_notification_is_ignored() {
    let (release_tx, release_rx) = unbounded::<()>();
    let (started_tx, started_rx) = unbounded::<()>();
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("wait", any_object()),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                ctx.notify_progress(1.0, None, None);
                let cancelled = wait_release_or_cancel(ctx, &release_rx);
                Ok(CallToolResult::text(if cancelled {
                    "cancelled"
                } else {
                    "released"
                }))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let mut params = bare(json!({"name": "wait"}));
    params["_meta"]["progressToken"] = json!(1);
    let mut conn = Conn::open(addr);
    let head = conn.start(&post_2026(json!(1), "tools/call", params), "wait");
    assert!(head.is_sse(), "{:?}", head);
    recv(&started_rx, "the handler's start");
    let cancel = Req::post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1}})
        .to_string(),
    )
    .header("MCP-Protocol-Version", V2026)
    .header("Mcp-Method", "notifications/cancelled");
    send(addr, &cancel, "the cancel notification").expect_status(202, "cancel");
    let _ = release_tx.send(());
    let rest = conn.rest("the rest of the wait stream");
    let result = rest.iter().find(|m| is_response(m)).cloned();
    match result {
        Some(result) => assert_eq!(text_of(&result["result"]), "released"),
        None => panic!("no result on the stream: {:?}", rest),
    }
}

// HTTP-6 step 3 (2026-07-28): `Accept` must list both JSON and SSE, and
// this is checked before a notification is accepted.
#[test]
fn http_accept_must_list_both_types() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    for accept in ["application/json", "text/event-stream"] {
        let req = post_2026(json!(1), "tools/list", bare(json!({}))).header("Accept", accept);
        send(addr, &req, accept).expect_status(406, accept);
    }
    let note = Req::post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1}})
        .to_string(),
    )
    .header("MCP-Protocol-Version", V2026)
    .header("Mcp-Method", "notifications/cancelled")
    .header("Accept", "application/json");
    send(addr, &note, "a notification accepting JSON only")
        .expect_status(406, "a notification accepting JSON only");
}

// HTTP-6 step 4 (2026-07-28): a body that is not JSON is -32700, a batch
// or a posted response -32600; both 400 with a null id.
#[test]
fn http_malformed_bodies_are_400() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                         "params": bare(json!({}))});
    for (what, body, code) in [
        ("not JSON", "{not json".to_string(), -32700),
        ("a batch", json!([request]).to_string(), -32600),
        (
            "a response",
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}).to_string(),
            -32600,
        ),
    ] {
        let req = Req::post(body)
            .header("MCP-Protocol-Version", V2026)
            .header("Mcp-Method", "tools/list");
        let response = send(addr, &req, what);
        let message = expect_http_error(&response, 400, code, what);
        assert_eq!(message["id"], Value::Null, "{}: {}", what, message);
    }
}

// HTTP-4, HTTP-6 step 11 (2026-07-28): `Mcp-Param-*` headers of
// `x-mcp-header` properties must agree with the arguments.
#[test]
fn http_param_headers_must_match_arguments() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new(
                "region",
                json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "count": {"type": "integer", "x-mcp-header": "Count"}
                }}),
            ),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("ok")),
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let call = |arguments: Value, headers: &[(&str, &str)]| {
        let mut req = call_req(json!(1), "region", arguments);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        req
    };
    let both = json!({"region": "eu", "count": 42});
    let good: Vec<(&str, Req)> = vec![
        (
            "both headers",
            call(
                both.clone(),
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "42")],
            ),
        ),
        (
            "42.0 for 42",
            call(
                both.clone(),
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "42.0")],
            ),
        ),
        (
            "base64 region",
            call(
                both.clone(),
                &[
                    ("Mcp-Param-Region", "=?base64?ZXU=?="),
                    ("Mcp-Param-Count", "42"),
                ],
            ),
        ),
        (
            "absent argument, absent header",
            call(json!({"region": "eu"}), &[("Mcp-Param-Region", "eu")]),
        ),
    ];
    for (what, req) in good {
        send(addr, &req, what).expect_status(200, what);
    }
    let bad: Vec<(&str, Req)> = vec![
        (
            "a different region",
            call(
                both.clone(),
                &[("Mcp-Param-Region", "us"), ("Mcp-Param-Count", "42")],
            ),
        ),
        (
            "a header without its argument",
            call(
                json!({"region": "eu"}),
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "1")],
            ),
        ),
        (
            "an argument without its header",
            call(both, &[("Mcp-Param-Region", "eu")]),
        ),
    ];
    for (what, req) in bad {
        expect_http_error(&send(addr, &req, what), 400, HEADER_MISMATCH, what);
    }
}

// ERA-6 (2026-07-28): a 2026-07-28 claim on a 2025-11-25 HTTP session is -32600.
#[test]
fn http_2026_claim_on_2025_session_is_invalid_request() {
    let http = serve(full_server().http());
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    let req = Req::post(rpc(json!(4), "tools/list", bare(json!({}))))
        .session(&session)
        .header("MCP-Protocol-Version", "2025-11-25");
    let response = send(addr, &req, "a 2026-07-28 claim on a 2025-11-25 session");
    assert_eq!(response.error_code(), -32600, "{}", response.text());
}

// 1. HTTP-11 (2026-07-28): GET and DELETE have no meaning without a
// session in 2026-07-28: 405 with `Allow: POST`; with a live 2025-11-25
// session they keep theirs.
#[test]
fn get_and_delete_under_a_2026_header_are_405() {
    let http = serve(
        Server::builder("fixes", "1")
            .tool(echo_tool(), echo)
            .build()
            .http(),
    );
    let addr = http.local_addr();
    for method in ["GET", "DELETE"] {
        let mut conn = Conn::open(addr);
        let raw = format!(
            "{} /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: {}\r\n\r\n",
            method, addr, V2026
        );
        conn.send_raw(raw.as_bytes());
        let head = conn.read_head("the answer to a 2026-07-28 GET or DELETE");
        head.expect_status(405, method);
        assert_eq!(head.header("allow"), Some("POST"), "{}: {:?}", method, head);
    }
    let mut conn = Conn::open(addr);
    let init = Req::post(initialize_body(json!(1), LATEST, json!({})));
    let response = conn.request(&init, "initialize");
    let id = response
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let delete = Req::delete(&id).header("MCP-Protocol-Version", LATEST);
    conn.request(&delete, "DELETE of a live session")
        .expect_status(200, "DELETE naming a live session");
    http.shutdown();
}

// 2. HTTP-3 (2026-07-28): non-ASCII header values travel base64-wrapped;
// a raw one, or bytes that are not UTF-8, are a malformed header: 400 with
// -32020 and the request's id.
#[test]
fn raw_non_ascii_routing_headers_are_refused() {
    let server = Server::builder("fixes", "1")
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "t"),
            |_: &RequestContext, uri: &str, _: &tiny_mcp::TemplateVariables| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "x",
                )]))
            },
        )
        .build();
    let http = serve(server.http());
    let addr = http.local_addr();
    let uri = "test://template/caf\u{e9}/data";
    let body = rpc(
        json!(9),
        "resources/read",
        enveloped(json!({ "uri": uri }), json!({})),
    );
    let mut utf8 = b"Mcp-Name: ".to_vec();
    utf8.extend_from_slice(uri.as_bytes());
    let mut latin1 = b"Mcp-Name: test://template/caf".to_vec();
    latin1.extend_from_slice(b"\xe9/data");
    for raw in [utf8, latin1] {
        let response = post_with_raw_header(addr, &body, &raw);
        response.expect_status(400, "a raw non-ASCII Mcp-Name");
        let message = response.json();
        assert_eq!(code(&message), -32020, "{}", message);
        assert_eq!(message["id"], 9, "the error names the request: {}", message);
    }
    http.shutdown();
}

/// POSTs `body` under 2026-07-28 routing headers plus one raw header line.
fn post_with_raw_header(addr: std::net::SocketAddr, body: &str, raw_header: &[u8]) -> Response {
    let mut bytes = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {}\r\n\
         Mcp-Method: resources/read\r\nContent-Length: {}\r\n",
        addr,
        V2026,
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(raw_header);
    bytes.extend_from_slice(b"\r\n\r\n");
    bytes.extend_from_slice(body.as_bytes());
    let mut conn = Conn::open(addr);
    conn.send_raw(&bytes);
    let head = conn.read_head("the answer to a raw header");
    let body = conn.read_body("the answer's body");
    Response { head, body }
}
