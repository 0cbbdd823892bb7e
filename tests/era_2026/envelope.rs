//! The request envelope (`_meta`): version, client info, capabilities and
//! log level, read from each request.

use super::*;

// META-2 (2026-07-28): a 2026-07-28 request without `_meta` is -32602.
#[test]
fn missing_meta_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    for params in [
        None,
        Some(json!({})),
        Some(json!({"_meta": "not an object"})),
    ] {
        expect_error(
            client.request("tools/list", params.clone()),
            ErrorCode::INVALID_PARAMS,
            &format!("tools/list with params {:?}", params),
        );
    }
}

// META-2, ERA-1 (2026-07-28): an envelope without a protocol version, or
// without client capabilities, is -32602 naming the missing key.
#[test]
fn incomplete_envelope_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    // Half an envelope is still a 2026-07-28 claim, even first.
    let error = expect_error(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(CLIENT_CAPABILITIES, Value::Null)})),
        ),
        ErrorCode::INVALID_PARAMS,
        "an envelope without clientCapabilities",
    );
    assert!(
        error.message.contains("clientCapabilities"),
        "the message names the key: {}",
        error.message
    );
    // Without the version key it is no claim: ask a connection already
    // locked to 2026-07-28 (the state after a failed first request is not pinned
    // down, ERA-2).
    let mut client = memory(&server);
    lock_2026(&mut client);
    let error = expect_error(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(PROTOCOL_VERSION, Value::Null)})),
        ),
        ErrorCode::INVALID_PARAMS,
        "an envelope without protocolVersion",
    );
    assert!(
        error.message.contains("protocolVersion"),
        "the message names the key: {}",
        error.message
    );
}

// META-2 (2026-07-28): `clientInfo` is optional.
#[test]
fn missing_client_info_is_accepted() {
    let server = full_server();
    let mut client = memory(&server);
    let result = ok(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(CLIENT_INFO, Value::Null)})),
        ),
        "tools/list without clientInfo",
    );
    assert_complete(&result, "tools/list");
}

// META-3 (2026-07-28): a version that is not a string is -32602, not
// -32022.
#[test]
fn non_string_version_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    for version in [json!(20260728), json!(["2026-07-28"]), json!(null)] {
        let mut meta = envelope(json!({}));
        meta[PROTOCOL_VERSION] = version.clone();
        expect_error(
            client.request("tools/list", Some(json!({ "_meta": meta }))),
            ErrorCode::INVALID_PARAMS,
            &format!("protocolVersion {}", version),
        );
    }
}

// VER-2, GEN-2 (2026-07-28): an unknown version, or a handshake version
// in an envelope, is -32022 with `{supported, requested}`.
#[test]
fn unsupported_version_is_unsupported_with_data() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    for version in ["2099-01-01", "2025-11-25", "2026-07-28 ", ""] {
        let error = expect_error(
            client.request(
                "tools/list",
                Some(json!({"_meta": envelope_with(PROTOCOL_VERSION, json!(version))})),
            ),
            ErrorCode(UNSUPPORTED_VERSION),
            &format!("version {:?}", version),
        );
        assert_eq!(
            error.data,
            Some(json!({"supported": [V2026], "requested": version})),
            "version {:?}",
            version
        );
    }
}

// LOG-2 (2026-07-28): an unknown logLevel is -32602.
#[test]
fn unknown_log_level_is_invalid_params() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    for level in [json!("loud"), json!("INFO"), json!(3)] {
        expect_error(
            client.request(
                "tools/list",
                Some(json!({"_meta": envelope_with(LOG_LEVEL, level.clone())})),
            ),
            ErrorCode::INVALID_PARAMS,
            &format!("logLevel {}", level),
        );
    }
    let result = ok(
        client.request(
            "tools/list",
            Some(json!({"_meta": envelope_with(LOG_LEVEL, json!("debug"))})),
        ),
        "a known logLevel",
    );
    assert_complete(&result, "tools/list with logLevel");
}

// META-4, GEN-4 (2026-07-28): capabilities are read from each request; a
// request without `sampling` cannot sample although an earlier one
// declared it.
#[test]
fn capabilities_are_per_request() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let first = ok(
        mreq_caps(
            &mut client,
            "tools/call",
            json!({"name": "sample"}),
            json!({"sampling": {}}),
        ),
        "sample declaring sampling",
    );
    assert_eq!(first["resultType"], "input_required", "{}", first);
    let error = expect_error(
        mreq(&mut client, "tools/call", json!({"name": "sample"})),
        ErrorCode(MISSING_CAPABILITY),
        "sample without sampling in this request",
    );
    assert_eq!(
        error.data.as_ref().map(|d| &d["requiredCapabilities"]),
        Some(&json!({"sampling": {}}))
    );
}

// META-5, GEN-4 (2026-07-28): client identity is this request's, never an
// earlier one's.
#[test]
fn client_info_is_per_request() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("who", any_object()),
            |ctx: &RequestContext, _: JsonObject| {
                let name = ctx.client_info().map(|i| i.name).unwrap_or_default();
                Ok(CallToolResult::text(format!("[{}]", name)))
            },
        )
        .build();
    let mut client = memory(&server);
    let named = ok(
        mreq(&mut client, "tools/call", json!({"name": "who"})),
        "who with clientInfo",
    );
    assert_eq!(text_of(&named), "[modern-tests-client]");
    let anonymous = ok(
        client.request(
            "tools/call",
            Some(json!({"name": "who", "_meta": envelope_with(CLIENT_INFO, Value::Null)})),
        ),
        "who without clientInfo",
    );
    assert_eq!(text_of(&anonymous), "[]");
}
