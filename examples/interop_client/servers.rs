//! The profiles of servers other than the two fixtures: what each offers
//! decides which checks run (scripts/interop/interop-client.sh's table says the
//! same per server).

use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{Client, ContentBlock, Era, ErrorKind};

use crate::checks::{self, call, expect_text, first_text};
use crate::{fixture, Asked, Tally, NAME};

/// How long a cancelled call may take to end: the first progress
/// notification comes after at most a second, then the cancellation.
const CANCEL_BOUND: Duration = Duration::from_secs(10);

/// The Python fixture served with `stateless_http=True, json_response=True`:
/// every request is answered with one JSON body, so there is no stream for
/// notifications or server-to-client requests. Over 2025-11-25 progress,
/// elicitation and sampling do not apply; over 2026-07-28 elicitation and
/// sampling go through `input_required` (no stream needed) and run.
pub(crate) fn stateless(client: &Client, asked: &Mutex<Asked>, tally: &mut Tally) {
    tally.check("server_info", checks::server_info(client));
    tally.check(
        "list_tools",
        checks::list_tools(client, &["echo", "add", "fail", "route"]),
    );
    tally.check("no session", no_session(client));
    fixture::basics(client, tally);
    tally.check("call_tool x-mcp-header", fixture::check_route(client));
    if client.era() == Era::V2026_07_28 {
        fixture::rounds(client, asked, tally);
    } else {
        println!(
            "note progress, elicitation, sampling: not applicable (JSON responses, 2025-11-25)"
        );
    }
    fixture::resources_and_prompts(client, tally);
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

fn no_session(client: &Client) -> Result<(), String> {
    match client.session_id() {
        None => Ok(()),
        Some(id) => Err(format!("a stateless server gave the session id {:?}", id)),
    }
}

/// tests/interop/rmcp and tests/interop/fastmcp: the fixture's basics,
/// progress, a cancellation the server sees, the resource and the prompt.
pub(crate) fn core(client: &Client, tally: &mut Tally) {
    tally.check("server_info", checks::server_info(client));
    tally.check(
        "list_tools",
        checks::list_tools(
            client,
            &["echo", "add", "progress", "slow", "cancelled", "fail"],
        ),
    );
    tally.check(
        "call_tool echo",
        expect_text(
            client,
            "echo",
            json!({"text": "hé, interop ✓"}),
            "hé, interop ✓",
        ),
    );
    tally.check("call_tool add", fixture::check_add(client));
    tally.check(
        "call_tool isError",
        checks::expect_error(client, "fail", json!({}), "failed"),
    );
    tally.check(
        "progress",
        checks::progress(client, "progress", json!({"steps": 3}), 3, "did 3 steps"),
    );
    tally.check("cancellation", core_cancel(client));
    fixture::resources_and_prompts(client, tally);
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

/// Cancels `slow` and asks the server (tool `cancelled`) whether its
/// handler saw the cancellation.
fn core_cancel(client: &Client) -> Result<(), String> {
    checks::cancel(client, "slow", json!({"seconds": 60}), CANCEL_BOUND)?;
    // The notification and the next call race at the server: ask a few
    // times, each a round trip, before concluding it was not seen.
    let mut last = String::new();
    for _ in 0..50 {
        let result = call(client, "cancelled", json!({}))?;
        last = first_text(&result)?.to_string();
        if last != "0" {
            return Ok(());
        }
    }
    Err(format!(
        "the server's handler never saw the cancellation (cancelled = {})",
        last
    ))
}

/// @modelcontextprotocol/server-everything: echo, get-sum, a validation
/// error as isError, progress and cancellation on
/// trigger-long-running-operation, sampling and elicitation through its
/// trigger tools, the resources (static documents, dynamic text
/// template), and the prompts.
pub(crate) fn everything(client: &Client, asked: &Mutex<Asked>, tally: &mut Tally) {
    let tools = [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "trigger-elicitation-request",
    ];
    tally.check("server_info", checks::server_info(client));
    tally.check("list_tools", checks::list_tools(client, &tools));
    tally.check(
        "call_tool echo",
        expect_text(client, "echo", json!({"message": "hé ✓"}), "Echo: hé ✓"),
    );
    tally.check(
        "call_tool get-sum",
        expect_text(
            client,
            "get-sum",
            json!({"a": 2, "b": 3.5}),
            "The sum of 2 and 3.5 is 5.5.",
        ),
    );
    tally.check(
        "call_tool isError (invalid arguments)",
        checks::expect_error(client, "get-sum", json!({"a": "two", "b": 1}), "a"),
    );
    let long = "trigger-long-running-operation";
    tally.check(
        "progress",
        checks::progress(
            client,
            long,
            json!({"duration": 0.3, "steps": 3}),
            3,
            "Long running operation completed. Duration: 0.3 seconds, Steps: 3.",
        ),
    );
    tally.check(
        "cancellation",
        checks::cancel(
            client,
            long,
            json!({"duration": 60, "steps": 60}),
            CANCEL_BOUND,
        ),
    );
    tally.check("sampling", everything_sampling(client, asked));
    tally.check("elicitation", everything_elicitation(client, asked));
    everything_resources_and_prompts(client, tally);
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

/// The texts of every text block of a result, joined by newlines.
fn all_text(content: &[ContentBlock]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

fn everything_sampling(client: &Client, asked: &Mutex<Asked>) -> Result<(), String> {
    asked.lock().samplings.clear();
    let args = json!({"prompt": "say hi", "maxTokens": 20});
    let result = call(client, "trigger-sampling-request", args)?;
    let text = all_text(&result.content);
    let want = "echo of Resource trigger-sampling-request context: say hi";
    if !text.contains(want) {
        return Err(format!("the result {:?} lacks {:?}", text, want));
    }
    let samplings = asked.lock().samplings.clone();
    if samplings.len() != 1 {
        return Err(format!("the closure was asked {:?}", samplings));
    }
    Ok(())
}

fn everything_elicitation(client: &Client, asked: &Mutex<Asked>) -> Result<(), String> {
    asked.lock().elicitations.clear();
    let result = call(client, "trigger-elicitation-request", json!({}))?;
    let text = all_text(&result.content);
    let want = format!("- Name: {}", NAME);
    if !text.contains(&want) {
        return Err(format!("the result {:?} lacks {:?}", text, want));
    }
    if asked.lock().elicitations.len() != 1 {
        return Err("the closure was not asked once".into());
    }
    Ok(())
}

fn everything_resources_and_prompts(client: &Client, tally: &mut Tally) {
    tally.check(
        "list_resources",
        checks::list_resources(
            client,
            "demo://resource/static/document/features.md",
            "text/markdown",
        ),
    );
    tally.check(
        "read_resource (template)",
        checks::read_resource(client, "demo://resource/dynamic/text/7", "Resource 7: "),
    );
    tally.check(
        "list_prompts",
        checks::list_prompts(client, "args-prompt", "city"),
    );
    tally.check(
        "get_prompt",
        checks::get_prompt(
            client,
            "args-prompt",
            &[("city", "Zürich")],
            "What's weather in Zürich?",
        ),
    );
}

/// @modelcontextprotocol/server-filesystem, allowed `dir` only: its
/// tools, `list_directory` and `read_text_file` on `dir/hello.txt`, and a
/// path outside `dir` refused with isError. No resources or prompts.
pub(crate) fn filesystem(client: &Client, dir: Option<&str>, tally: &mut Tally) {
    let dir = match dir {
        Some(dir) => dir,
        None => return tally.check("filesystem", Err("--dir is missing".into())),
    };
    tally.check("server_info", checks::server_info(client));
    tally.check(
        "list_tools",
        checks::list_tools(client, &["list_directory", "read_text_file", "write_file"]),
    );
    tally.check(
        "call_tool list_directory",
        call(client, "list_directory", json!({"path": dir})).and_then(|r| {
            let text = all_text(&r.content);
            if text.lines().any(|l| l == "[FILE] hello.txt") {
                Ok(())
            } else {
                Err(format!("no `[FILE] hello.txt` in {:?}", text))
            }
        }),
    );
    let file = format!("{}/hello.txt", dir.trim_end_matches('/'));
    tally.check(
        "call_tool read_text_file",
        call(client, "read_text_file", json!({"path": file})).and_then(|r| {
            let text = all_text(&r.content);
            if text.trim_end() == "hello from the filesystem" {
                Ok(())
            } else {
                Err(format!("read {:?}", text))
            }
        }),
    );
    tally.check(
        "call_tool isError (outside the allowed directory)",
        expect_refused(client, "/etc/hostname"),
    );
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

/// Reading a path outside the allowed directories is an error: isError
/// or a JSON-RPC error, as long as no content comes back.
fn expect_refused(client: &Client, path: &str) -> Result<(), String> {
    match client.call_tool("read_text_file", json!({"path": path})) {
        Ok(r) if r.is_error == Some(true) => Ok(()),
        Ok(r) => Err(format!("read {:?}", all_text(&r.content))),
        Err(e) if matches!(e.kind(), ErrorKind::Server(_)) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// @modelcontextprotocol/server-memory: `create_entities`, then
/// `read_graph` holds the entity with its observation (structured content
/// and text), `search_nodes` finds it. No resources or prompts.
pub(crate) fn memory(client: &Client, tally: &mut Tally) {
    tally.check("server_info", checks::server_info(client));
    tally.check(
        "list_tools",
        checks::list_tools(client, &["create_entities", "read_graph", "search_nodes"]),
    );
    let entity = json!({
        "name": "tiny-mcp",
        "entityType": "library",
        "observations": ["speaks MCP without an async runtime ✓"],
    });
    tally.check(
        "call_tool create_entities",
        call(client, "create_entities", json!({"entities": [entity]})).map(|_| ()),
    );
    tally.check(
        "call_tool read_graph",
        call(client, "read_graph", json!({})).and_then(|r| has_entity(&r.structured_content)),
    );
    tally.check(
        "call_tool search_nodes",
        call(client, "search_nodes", json!({"query": "async runtime"}))
            .and_then(|r| has_entity(&r.structured_content)),
    );
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

fn has_entity(structured: &Option<Value>) -> Result<(), String> {
    let entities = structured
        .as_ref()
        .and_then(|s| s.get("entities"))
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no structuredContent.entities in {:?}", structured))?;
    let found = entities.iter().any(|e| {
        e.get("name") == Some(&json!("tiny-mcp"))
            && e.get("observations") == Some(&json!(["speaks MCP without an async runtime ✓"]))
    });
    if found {
        Ok(())
    } else {
        Err(format!("tiny-mcp not in {:?}", entities))
    }
}
