//! A server whose tools ask the user for a form and say what their
//! handler got: the answer, or the error `ctx.elicit` and
//! `ctx.request_inputs` returned (ELIC-8: an accepted answer is checked
//! against the form's schema first). Shared by the tests of both eras.

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitAction, ElicitRequestFormParams, ElicitResult, Error, ErrorKind,
    InputRequest, JsonObject, RequestContext, Server, Tool,
};

/// The form: a name (two characters or more), an email address, an age
/// from 0 to 150, a plan (titled single-select) and topics (multi-select).
pub fn profile_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "plan": {"type": "string", "oneOf": [
                {"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}]},
            "topics": {"type": "array", "items": {"type": "string", "enum": ["rust", "mcp"]}}
        },
        "required": ["name", "email"]
    })
}

/// An answer that fits [`profile_schema`].
pub fn good_profile() -> Value {
    json!({"action": "accept", "content": {
        "name": "Ada", "email": "ada@example.com", "age": 36, "plan": "pro",
        "topics": ["rust"]}})
}

/// Answers that break [`profile_schema`], each with the words its
/// message must hold (the field and the rule).
pub fn bad_profiles() -> Vec<(Value, [&'static str; 2])> {
    let with = |field: &str, value: Value| {
        let mut answer = good_profile();
        answer["content"][field] = value;
        answer
    };
    let mut missing = good_profile();
    missing["content"]
        .as_object_mut()
        .map(|content| content.remove("email"));
    vec![
        (missing, ["\"email\"", "is required"]),
        (
            with("age", json!("36")),
            ["\"age\"", "must be of type \"integer\""],
        ),
        (with("age", json!(151)), ["\"age\"", "must be at most 150"]),
        (
            with("name", json!("A")),
            ["\"name\"", "at least 2 characters"],
        ),
        (
            with("email", json!("ada")),
            ["\"email\"", "of format \"email\""],
        ),
        (
            with("plan", json!("gold")),
            ["\"plan\"", "one of its oneOf choices"],
        ),
        (
            with("topics", json!(["go"])),
            ["\"topics[0]\"", "one of [\"rust\",\"mcp\"]"],
        ),
    ]
}

/// Tools `profile` ([`ask_profile`]) and `profile_named`
/// ([`ask_profile_named`]). The server calls itself `name` `version`.
pub fn form_server(name: &str, version: &str) -> Server {
    Server::builder(name, version)
        .tool(
            Tool::new("profile", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| ask_profile(ctx),
        )
        .tool(
            Tool::new("profile_named", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| ask_profile_named(ctx),
        )
        .build()
}

/// Asks for the profile with `ctx.elicit`; answers with [`outcome`].
pub fn ask_profile(ctx: &RequestContext) -> Result<CallToolResult, Error> {
    let form = ElicitRequestFormParams::new("Your profile?", profile_schema());
    outcome(ctx.elicit(form))
}

/// Asks for the profile with `ctx.request_inputs` under the key
/// `profile`; answers with [`outcome`].
pub fn ask_profile_named(ctx: &RequestContext) -> Result<CallToolResult, Error> {
    let form = ElicitRequestFormParams::new("Your profile?", profile_schema());
    let asked = vec![("profile".to_string(), InputRequest::elicit(form))];
    let answers = ctx.request_inputs(asked);
    outcome(answers.and_then(|answers| answers.elicit_result("profile")))
}

/// What the handler got: `accept <content>`, `decline`, `cancel`, or
/// `refused: <message>` for an invalid-params error; any other error (the
/// 2026-07-28 era's `InputRequired`) is passed on.
fn outcome(answer: Result<ElicitResult, Error>) -> Result<CallToolResult, Error> {
    let text = match answer {
        Ok(answer) => match (answer.action, answer.content) {
            (ElicitAction::Accept, content) => {
                format!("accept {}", Value::Object(content.unwrap_or_default()))
            }
            (action, _) => format!("{:?}", action).to_lowercase(),
        },
        Err(e) if matches!(e.kind(), ErrorKind::InvalidParams(_)) => format!("refused: {}", e),
        Err(e) => return Err(e),
    };
    Ok(CallToolResult::text(text))
}
