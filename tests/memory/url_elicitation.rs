//! A handler's `UrlElicitationRequired` error in the 2025-11-25 era: the
//! `-32042` error for a client that declared `elicitation.url`, an
//! ordinary failure carrying the URL for any other (ELIC-1).

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitRequestUrlParams, Error, ErrorCode, GetPromptResult, JsonObject, Prompt,
    RequestContext, Server, Tool,
};

use crate::support::{call_tool, connect, expect_error, first_text};

const URL: &str = "https://example.com/oauth";
const MESSAGE: &str = "Authorize access";

fn needs_auth() -> Error {
    Error::url_elicitation_required(vec![ElicitRequestUrlParams::new(MESSAGE, URL, "el-7")])
}

/// A tool and a prompt that need a URL elicitation, and a tool that says
/// whether the client can take one.
fn server() -> Server {
    Server::builder("asker", "1")
        .tool(
            Tool::without_arguments("needs_auth"),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Err(needs_auth())
            },
        )
        .tool(
            Tool::without_arguments("can_ask"),
            |ctx: &RequestContext, _: JsonObject| {
                Ok(CallToolResult::text(
                    ctx.supports_url_elicitation().to_string(),
                ))
            },
        )
        .prompt(
            Prompt::new("secret"),
            |_: &RequestContext,
             _: std::collections::BTreeMap<String, String>|
             -> Result<GetPromptResult, Error> { Err(needs_auth()) },
        )
        .build()
}

// ELIC-6, client/elicitation "URL Elicitation Required Error": a tool that
// returns Error::url_elicitation_required gets -32042 with
// data.elicitations when the client declared `elicitation.url`.
#[test]
fn url_elicitation_required_is_error_32042() {
    let mut client = connect(&server(), json!({"elicitation": {"url": {}}}));
    let outcome = client.request("tools/call", Some(json!({"name": "needs_auth"})));
    let error = expect_error(
        outcome,
        ErrorCode::URL_ELICITATION_REQUIRED,
        "a tool that needs a URL elicitation",
    );
    assert_eq!(error.code.0, -32042);
    let data = error.data.expect("-32042 carries data");
    assert_eq!(
        data["elicitations"],
        json!([{
            "mode": "url",
            "message": MESSAGE,
            "url": URL,
            "elicitationId": "el-7"
        }])
    );
}

// ELIC-1, TOOL-6 (client/elicitation, server/tools "Error Handling"): a
// client that did not declare `elicitation.url` (none, or form only) is
// sent no URL elicitation, so no -32042: the call is a tool error whose
// text carries the message and the URL.
#[test]
fn url_elicitation_required_is_a_tool_error_without_url_mode() {
    for capabilities in [
        json!({}),
        json!({"elicitation": {}}),
        json!({"elicitation": {"form": {}}}),
    ] {
        let mut client = connect(&server(), capabilities.clone());
        let answer = call_tool(&mut client, "needs_auth", Value::Null);
        assert_eq!(answer["isError"], true, "{}: {}", capabilities, answer);
        let text = first_text(&answer);
        assert!(
            text.contains(URL) && text.contains(MESSAGE),
            "{}: {}",
            capabilities,
            text
        );
    }
}

// ELIC-1: a handler can ask whether the client takes URL elicitations
// (the session's capabilities in 2025-11-25).
#[test]
fn handlers_see_whether_the_client_takes_url_elicitations() {
    for (capabilities, expected) in [
        (json!({"elicitation": {"url": {}}}), "true"),
        (json!({"elicitation": {"form": {}}}), "false"),
        (json!({}), "false"),
    ] {
        let mut client = connect(&server(), capabilities.clone());
        let answer = call_tool(&mut client, "can_ask", Value::Null);
        assert_eq!(first_text(&answer), expected, "{}", capabilities);
    }
}

// ELIC-1, ELIC-6: a method without a tool's error result (here
// prompts/get) keeps -32042 for a client that declared `elicitation.url`,
// and answers any other client -32603 with the message and the URL.
#[test]
fn other_methods_keep_32042_only_for_url_mode_clients() {
    let params = Some(json!({"name": "secret"}));
    let mut client = connect(&server(), json!({"elicitation": {"url": {}}}));
    let outcome = client.request("prompts/get", params.clone());
    expect_error(outcome, ErrorCode::URL_ELICITATION_REQUIRED, "prompts/get");
    let mut client = connect(&server(), json!({"elicitation": {}}));
    let outcome = client.request("prompts/get", params);
    let error = expect_error(outcome, ErrorCode::INTERNAL_ERROR, "prompts/get");
    assert!(
        error.message.contains(URL) && error.message.contains(MESSAGE),
        "{:?}",
        error
    );
    assert_eq!(error.data, None);
}
