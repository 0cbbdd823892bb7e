//! Discovery, result shapes and cache hints, removed methods, logging.

use super::*;
use serde_json::{json, Value};
use std::time::Duration;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

// DISC-2, DISC-3, DISC-4, CACHE-1, RES-3 (2026-07-28): the shape of
// server/discover.
#[test]
fn discover_result_shape() {
    let server = full_server();
    let mut client = memory(&server);
    let result = ok(
        mreq(&mut client, "server/discover", json!({})),
        "server/discover",
    );
    assert_complete(&result, "server/discover");
    assert_eq!(result["supportedVersions"], json!([V2026]));
    let capabilities = serde_json::to_value(server.capabilities()).unwrap_or(Value::Null);
    assert_eq!(result["capabilities"], capabilities);
    assert!(
        result["capabilities"].get("tasks").is_none(),
        "no core tasks capability (MOD-6)"
    );
    assert_eq!(result["instructions"], INSTRUCTIONS);
    assert_cache(&result, 0, "private", "server/discover");
    assert!(
        result.get("serverInfo").is_none(),
        "identity only in _meta: {}",
        result
    );
    assert!(result.get("protocolVersion").is_none(), "{}", result);
}

// DISC-6, VER-4 (2026-07-28): discover opens nothing and may be repeated
// at any time; other methods need no discover first.
#[test]
fn discover_is_optional_and_repeatable() {
    let server = full_server();
    let mut client = memory(&server);
    let tools = ok(mreq(&mut client, "tools/list", json!({})), "tools/list");
    assert_eq!(tools["tools"].as_array().map(Vec::len), Some(3));
    let first = ok(mreq(&mut client, "server/discover", json!({})), "discover");
    let second = ok(mreq(&mut client, "server/discover", json!({})), "again");
    assert_eq!(first, second);
}

// CACHE-1, RES-1 (2026-07-28): list methods and resources/read carry
// `ttlMs: 0` and `cacheScope: "private"` by default.
#[test]
fn cacheable_results_carry_default_cache_hints() {
    let server = full_server();
    let mut client = memory(&server);
    for (method, params) in [
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        ("resources/read", json!({"uri": "test://t/7"})),
    ] {
        let result = ok(mreq(&mut client, method, params), method);
        assert_complete(&result, method);
        assert_cache(&result, 0, "private", method);
    }
}

// CACHE-1, CACHE-3 (2026-07-28): `cache_hints` sets ttlMs and cacheScope
// on every cacheable result, every page alike.
#[test]
fn cache_hints_setting_changes_hints() {
    let server = full_builder()
        .cache_hints(Duration::from_secs(90), CacheScope::Public)
        .page_size(1)
        .build();
    let mut client = memory(&server);
    for (method, params) in [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
    ] {
        let result = ok(mreq(&mut client, method, params), method);
        assert_cache(&result, 90_000, "public", method);
    }
    let first = ok(mreq(&mut client, "tools/list", json!({})), "page 1");
    let cursor = first["nextCursor"].clone();
    assert!(cursor.is_string(), "a second page exists: {}", first);
    let second = ok(
        mreq(&mut client, "tools/list", json!({ "cursor": cursor })),
        "page 2",
    );
    assert_cache(&second, 90_000, "public", "page 2");
}

// RES-1, RES-3 (2026-07-28): every 2026-07-28 result, cacheable or not, has
// `resultType` and the serverInfo stamp.
#[test]
fn every_2026_result_has_result_type() {
    let server = full_server();
    let mut client = memory(&server);
    for (method, params) in [
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
        ("tools/call", json!({"name": "fail"})),
        ("prompts/get", json!({"name": "greet"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "a", "value": ""}}),
        ),
    ] {
        let result = ok(mreq(&mut client, method, params), method);
        assert_complete(&result, method);
    }
}

// RES-3 (2026-07-28): a serverInfo stamp the handler set is kept.
#[test]
fn handler_server_info_stamp_is_kept() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::new("stamped", any_object()),
            |_: &RequestContext, _: JsonObject| {
                let mut meta = JsonObject::new();
                meta.insert(SERVER_INFO.into(), json!({"name": "mine", "version": "9"}));
                let mut result = CallToolResult::text("x");
                result.meta = Some(meta);
                Ok(result)
            },
        )
        .build();
    let mut client = memory(&server);
    let result = ok(
        mreq(&mut client, "tools/call", json!({"name": "stamped"})),
        "stamped",
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"][SERVER_INFO],
        json!({"name": "mine", "version": "9"})
    );
}

// ERR-2 (2026-07-28): a missing resource is -32602 with `data.uri`, never
// -32002, whether no resource matches or the handler says so.
#[test]
fn missing_resource_is_invalid_params_with_uri() {
    let server = full_server();
    let mut client = memory(&server);
    for uri in ["test://nope", "test://t/missing"] {
        let error = expect_error(
            mreq(&mut client, "resources/read", json!({ "uri": uri })),
            ErrorCode::INVALID_PARAMS,
            uri,
        );
        assert_eq!(
            error.data.as_ref().map(|d| &d["uri"]),
            Some(&json!(uri)),
            "{:?}",
            error
        );
    }
}

// ERR-2, ELIC-9 (2026-07-28): there is no -32042 in this era, so a tool's
// `UrlElicitationRequired` is a tool error whose text carries the message
// and the URL, whether or not the request declared `elicitation.url`;
// `supports_url_elicitation` reads the request's own `_meta`.
#[test]
fn url_elicitation_required_is_a_tool_error_carrying_the_url() {
    let url = "https://example.com/oauth";
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(
            Tool::without_arguments("needs_auth"),
            move |ctx: &RequestContext, _: JsonObject| -> Result<CallToolResult, tiny_mcp::Error> {
                let declared = ctx.supports_url_elicitation();
                Err(tiny_mcp::Error::url_elicitation_required(vec![
                    tiny_mcp::ElicitRequestUrlParams::new(
                        format!("Authorize access (url mode: {})", declared),
                        url,
                        "el-7",
                    ),
                ]))
            },
        )
        .build();
    let mut client = memory(&server);
    for (capabilities, declared) in [
        (json!({"elicitation": {"url": {}}}), true),
        (json!({"elicitation": {"form": {}}}), false),
        (json!({}), false),
    ] {
        let params = json!({"name": "needs_auth"});
        let result = ok(
            mreq_caps(&mut client, "tools/call", params, capabilities.clone()),
            "tools/call needs_auth",
        );
        assert_eq!(result["isError"], true, "{}: {}", capabilities, result);
        let text = text_of(&result);
        let message = format!("Authorize access (url mode: {})", declared);
        assert!(
            text.contains(url) && text.contains(&message),
            "{}: {}",
            capabilities,
            text
        );
    }
}

// REM-1 (2026-07-28): removed methods are -32601 on the 2026-07-28 path.
#[test]
fn removed_methods_are_method_not_found() {
    let server = full_server();
    let mut client = memory(&server);
    for (method, params) in [
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "test://a"})),
        ("resources/unsubscribe", json!({"uri": "test://a"})),
        ("tasks/get", json!({"taskId": "t"})),
        ("tasks/result", json!({"taskId": "t"})),
        ("tasks/list", json!({})),
        ("tasks/cancel", json!({"taskId": "t"})),
        ("no/such/method", json!({})),
    ] {
        expect_error(
            mreq(&mut client, method, params),
            ErrorCode::METHOD_NOT_FOUND,
            method,
        );
    }
}

// MOD-3 (2026-07-28): a method behind a capability the server does not
// advertise is -32601.
#[test]
fn method_behind_unadvertised_capability_is_method_not_found() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("echo", any_object()), echo)
        .build();
    let mut client = memory(&server);
    for (method, params) in [
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "greet"})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "a", "value": ""}}),
        ),
    ] {
        expect_error(
            mreq(&mut client, method, params),
            ErrorCode::METHOD_NOT_FOUND,
            method,
        );
    }
}

// LOG-1 (2026-07-28): no `notifications/message` without the request's
// logLevel; with it, only that level and above.
#[test]
fn logs_only_with_log_level_opt_in() {
    let server = full_server();
    let mut client = memory(&server);
    ok(
        mreq(&mut client, "tools/call", json!({"name": "chatty"})),
        "chatty without logLevel",
    );
    let logs: Vec<Value> = client
        .take_notifications()
        .iter()
        .map(message_to_json)
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(logs.is_empty(), "logs without opt-in: {:?}", logs);
    ok(
        client.request(
            "tools/call",
            Some(json!({"name": "chatty", "_meta": envelope_with(LOG_LEVEL, json!("warning"))})),
        ),
        "chatty with logLevel warning",
    );
    let logs: Vec<Value> = client
        .take_notifications()
        .iter()
        .map(message_to_json)
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "only the warning: {:?}", logs);
    assert_eq!(logs[0]["params"]["level"], "warning");
}

// MOD-1, REM-2 (2026-07-28): client notifications other than cancelled
// are ignored without a reply.
#[test]
fn client_notifications_are_ignored() {
    let server = full_server();
    let mut client = memory(&server);
    lock_2026(&mut client);
    client.notify("notifications/initialized", None);
    client.notify("notifications/roots/list_changed", None);
    client.notify(
        "notifications/progress",
        Some(json!({"progressToken": 1, "progress": 1})),
    );
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": "nothing"})),
    );
    let before = before_barrier(&mut client);
    assert!(before.is_empty(), "replies to notifications: {:?}", before);
}

// GEN-3 (2026-07-28): the response echoes the id with its JSON type.
#[test]
fn ids_2026_keep_their_json_type() {
    let server = full_server();
    let mut client = memory(&server);
    for id in [json!("7"), json!(7)] {
        send_json(
            &client,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": bare(json!({"name": "echo", "arguments": {"text": "x"}}))}),
        );
        let response = next_json(&mut client, "the tools/call response");
        assert_eq!(response["id"], id, "{}", response);
    }
}

// 9. MOD-3 (2026-07-28): capabilities follow what can be served: the first
// tool added while serving declares `tools`; `offer_prompts` declares
// prompts up front.
#[test]
fn capabilities_follow_what_is_added_while_serving() {
    let server = Server::builder("fixes", "1").offer_prompts().build();
    assert!(server.capabilities().tools.is_none());
    assert!(
        server.capabilities().prompts.is_some(),
        "offer_prompts declares prompts"
    );
    server
        .handle()
        .edit(|edit| edit.add_tool(echo_tool(), echo));
    assert!(
        server.capabilities().tools.is_some(),
        "add_tool declares tools"
    );
    let mut client = memory(&server);
    let listed = client
        .request("tools/list", Some(enveloped(json!({}), json!({}))))
        .unwrap();
    assert_eq!(listed["tools"][0]["name"], "echo", "{}", listed);
    let prompts = client
        .request("prompts/list", Some(enveloped(json!({}), json!({}))))
        .unwrap();
    assert_eq!(prompts["prompts"], json!([]));
    let discovered = client
        .request("server/discover", Some(enveloped(json!({}), json!({}))))
        .unwrap();
    assert!(
        discovered["capabilities"]["tools"].is_object(),
        "{}",
        discovered
    );
}
