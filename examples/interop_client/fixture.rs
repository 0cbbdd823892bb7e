//! The profile `fixture`: tests/interop/python/server.py and
//! tests/interop/ts/server.mjs, which offer the tools `echo {text}`, `add
//! {a, b}`, `progress {steps}`, `elicit {question}` (a form with a `name`
//! field), `sample {prompt}`, `fail` (isError), `route {region}` and
//! `route_zone {zone}` (the argument marked `x-mcp-header` `Region` and
//! `Geo.Zone` where the SDK knows it), the resource `interop://greeting`
//! and the prompt `greet {name}`.

use parking_lot::Mutex;
use serde_json::json;
use tiny_mcp::Client;

use crate::checks::{self, expect_text};
use crate::{Asked, Tally, NAME};

const TOOLS: [&str; 8] = [
    "echo",
    "add",
    "progress",
    "elicit",
    "sample",
    "fail",
    "route",
    "route_zone",
];

pub(crate) fn run(client: &Client, asked: &Mutex<Asked>, tally: &mut Tally) {
    tally.check("server_info", checks::server_info(client));
    tally.check("list_tools", list_tools(client));
    basics(client, tally);
    tally.check("call_tool x-mcp-header", check_route(client));
    tally.check(
        "call_tool x-mcp-header token name",
        expect_text(client, "route_zone", json!({"zone": "z1"}), "routed to z1"),
    );
    tally.check(
        "progress",
        checks::progress(client, "progress", json!({"steps": 3}), 3, "did 3 steps"),
    );
    rounds(client, asked, tally);
    resources_and_prompts(client, tally);
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

/// `echo`, `add` and `fail`, which the stateless profile runs too.
pub(crate) fn basics(client: &Client, tally: &mut Tally) {
    tally.check(
        "call_tool echo",
        expect_text(
            client,
            "echo",
            json!({"text": "hé, interop ✓"}),
            "hé, interop ✓",
        ),
    );
    tally.check("call_tool add", check_add(client));
    tally.check(
        "call_tool isError",
        checks::expect_error(
            client,
            "fail",
            json!({"reason": "on purpose"}),
            "on purpose",
        ),
    );
}

/// Elicitation and sampling: the tools `elicit` and `sample`.
pub(crate) fn rounds(client: &Client, asked: &Mutex<Asked>, tally: &mut Tally) {
    tally.check("elicitation", check_elicitation(client, asked));
    tally.check("sampling", check_sampling(client, asked));
}

/// The resource `interop://greeting` and the prompt `greet`.
pub(crate) fn resources_and_prompts(client: &Client, tally: &mut Tally) {
    tally.check(
        "list_resources",
        checks::list_resources(client, "interop://greeting", "text/plain"),
    );
    tally.check(
        "read_resource",
        checks::read_resource(client, "interop://greeting", "hello from "),
    );
    tally.check(
        "list_prompts",
        checks::list_prompts(client, "greet", "name"),
    );
    tally.check(
        "get_prompt",
        checks::get_prompt(
            client,
            "greet",
            &[("name", NAME)],
            &format!("Please greet {}.", NAME),
        ),
    );
}

fn list_tools(client: &Client) -> Result<(), String> {
    checks::list_tools(client, &TOOLS)?;
    let tools = client.list_tools().map_err(|e| e.to_string())?;
    let has_text = tools
        .iter()
        .find(|t| t.name == "echo")
        .and_then(|t| t.input_schema.get("properties"))
        .and_then(|p| p.get("text"))
        .is_some();
    if !has_text {
        return Err("echo's inputSchema has no `text` property".into());
    }
    Ok(())
}

pub(crate) fn check_add(client: &Client) -> Result<(), String> {
    expect_text(client, "add", json!({"a": 2, "b": 3.5}), "5.5")?;
    expect_text(client, "add", json!({"a": -7, "b": 4}), "-3")
}

/// `route`'s argument is marked `x-mcp-header: Region`: over 2026-07-28
/// HTTP the client must mirror it in `Mcp-Param-Region` (a non-ASCII value
/// in the `=?base64?…?=` form), which the Python SDK checks.
pub(crate) fn check_route(client: &Client) -> Result<(), String> {
    expect_text(
        client,
        "route",
        json!({"region": "eu-west-1"}),
        "routed to eu-west-1",
    )?;
    expect_text(
        client,
        "route",
        json!({"region": "Zürich"}),
        "routed to Zürich",
    )
}

fn check_elicitation(client: &Client, asked: &Mutex<Asked>) -> Result<(), String> {
    asked.lock().elicitations.clear();
    let want = format!("hello {}", NAME);
    expect_text(client, "elicit", json!({"question": "who are you?"}), &want)?;
    let elicitations = asked.lock().elicitations.clone();
    if elicitations != ["who are you?"] {
        return Err(format!("the closure was asked {:?}", elicitations));
    }
    Ok(())
}

fn check_sampling(client: &Client, asked: &Mutex<Asked>) -> Result<(), String> {
    asked.lock().samplings.clear();
    let result = expect_text(
        client,
        "sample",
        json!({"prompt": "say hi"}),
        "model said: echo of say hi",
    );
    let samplings = asked.lock().samplings.clone();
    result?;
    if samplings != ["say hi"] {
        return Err(format!("the closure was asked {:?}", samplings));
    }
    Ok(())
}
