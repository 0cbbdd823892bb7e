//! Which era a connection speaks, on memory and stdio: the first request
//! decides, and the other era is refused.

use super::*;

// ERA-1, ERA-2, ERA-5 (2026-07-28): the first request carries the envelope,
// so the connection speaks 2026-07-28; `initialize` then gets -32022 naming the
// 2026-07-28 versions and the version it asked for.
#[test]
fn first_2026_request_locks_2026_and_initialize_gets_unsupported_version() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    let error = expect_error(
        client.request(
            "initialize",
            Some(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "late", "version": "1"}
            })),
        ),
        ErrorCode(UNSUPPORTED_VERSION),
        "initialize on a 2026-07-28 connection",
    );
    assert_eq!(
        error.data,
        Some(json!({"supported": [V2026], "requested": "2025-11-25"}))
    );
    // Still on 2026-07-28 afterwards.
    let result = ok(
        mreq(
            &mut client,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        ),
        "tools/call after the refused initialize",
    );
    assert_eq!(text_of(&result), "still here");
}

// ERA-6 (2026-07-28): a 2026-07-28 request on a connection locked to the
// handshake era is -32600.
#[test]
fn request_2026_on_2025_connection_is_invalid_request() {
    let server = full_server();
    let mut client = connect(&server, json!({}));
    let error = expect_error(
        mreq(&mut client, "tools/list", json!({})),
        ErrorCode::INVALID_REQUEST,
        "a 2026-07-28 tools/list after initialize",
    );
    assert!(
        error.message.contains("handshake") || error.message.contains("initialize"),
        "the message names the era: {}",
        error.message
    );
}

// ERA-1, ERA-2 (2026-07-28): a `_meta` with only a progress token is no
// 2026-07-28 claim, so such a first request (a `ping`, which the handshake era
// answers before `initialize`) locks the connection to the handshake era.
#[test]
fn progress_token_alone_is_not_a_2026_claim() {
    let server = full_server();
    let mut client = memory(&server);
    let pong = ok(
        client.request("ping", Some(json!({"_meta": {"progressToken": 1}}))),
        "ping with only a progress token",
    );
    assert_2025_shape(&pong, "ping");
    expect_error(
        mreq(&mut client, "server/discover", json!({})),
        ErrorCode::INVALID_REQUEST,
        "a 2026-07-28 request after a 2025-11-25 first request",
    );
}

// ERA-1, ERA-7 (2026-07-28): `initialize` is 2025-11-25 even with an envelope,
// and asking for 2026-07-28 is counter-offered 2025-11-25.
#[test]
fn initialize_with_envelope_is_2025_and_counter_offered() {
    let server = full_server();
    let mut client = memory(&server);
    let result = ok(
        client.request(
            "initialize",
            Some(enveloped(
                json!({
                    "protocolVersion": V2026,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"}
                }),
                json!({}),
            )),
        ),
        "initialize with an envelope",
    );
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_2025_shape(&result, "initialize");
}

// RES-2, ERA-8 (2026-07-28): 2025-11-25 results carry no resultType, ttlMs,
// cacheScope or serverInfo stamp.
#[test]
fn results_2025_carry_no_2026_fields() {
    let server = full_server();
    let mut client = connect(&server, json!({}));
    for (method, params) in [
        ("ping", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        ("prompts/get", json!({"name": "greet"})),
        ("logging/setLevel", json!({"level": "info"})),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
    ] {
        let result = ok(client.request(method, Some(params)), method);
        assert_2025_shape(&result, method);
    }
}

// ERR-2 (2026-07-28): the handshake era keeps -32002 for a missing
// resource.
#[test]
fn missing_2025_resource_keeps_resource_not_found() {
    let server = full_server();
    let mut client = connect(&server, json!({}));
    expect_error(
        client.request("resources/read", Some(json!({"uri": "test://nope"}))),
        ErrorCode::RESOURCE_NOT_FOUND,
        "2025-11-25 resources/read of a missing resource",
    );
}

// ERA-2, ERA-5, VER-4 (2026-07-28): on stdio the first request locks the
// process to 2026-07-28; no discover is needed first; `initialize` then gets
// -32022 with the supported and requested versions.
#[test]
fn stdio_first_2026_request_locks_2026() {
    let mut child = ChildServer::spawn_example("everything");
    child.request(
        json!(1),
        "tools/call",
        bare(json!({"name": "echo", "arguments": {"text": "first"}})),
    );
    let (response, before) = child.wait_response(&json!(1), "the first tools/call");
    assert!(before.is_empty(), "nothing before the result: {:?}", before);
    assert_eq!(response["result"]["resultType"], "complete", "{}", response);
    assert_eq!(text_of(&response["result"]), "first");
    child.request(
        json!("init"),
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "late", "version": "1"}}),
    );
    let (response, _) = child.wait_response(&json!("init"), "the answer to initialize");
    let (code, data) = error_of(&response, "initialize on a 2026-07-28 process");
    assert_eq!(code, UNSUPPORTED_VERSION);
    assert_eq!(
        data,
        json!({"supported": [V2026], "requested": "2025-06-18"})
    );
    child.request(json!(2), "server/discover", bare(json!({})));
    let (response, _) = child.wait_response(&json!(2), "server/discover");
    assert_eq!(response["result"]["supportedVersions"], json!([V2026]));
}

// ERA-6, RES-2 (2026-07-28): a stdio process locked to the handshake era
// refuses a 2026-07-28 request with -32600 and keeps 2025-11-25 result shapes.
#[test]
fn stdio_2025_process_refuses_2026_request() {
    let (mut child, init) = ChildServer::initialized("everything", json!({}));
    assert_2025_shape(&init, "initialize");
    child.request(json!(1), "tools/list", bare(json!({})));
    let (response, _) = child.wait_response(&json!(1), "a 2026-07-28 tools/list");
    let (code, _) = error_of(&response, "a 2026-07-28 request on a 2025-11-25 process");
    assert_eq!(code, -32600);
    child.request(json!(2), "tools/list", json!({}));
    let (response, _) = child.wait_response(&json!(2), "a 2025-11-25 tools/list");
    assert_2025_shape(&response["result"], "2025-11-25 tools/list");
}
