//! Writing servers (issue 13): what the crate checks for a tool's author.

#[cfg(unix)]
mod close;
mod examples;
mod lists;
mod programs;
#[cfg(feature = "tiny_http")]
mod tiny_http;

use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::{call_tool, connect, first_text};

#[cfg(feature = "schemars")]
mod schemars;

fn server_with(result: fn() -> CallToolResult) -> Server {
    let schema = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "minimum": 1, "maximum": 50}}});
    let output = json!({"type": "object", "required": ["total"],
        "properties": {"total": {"type": "integer", "minimum": 0}}});
    Server::builder("authoring", "1")
        .tool(
            Tool::new("count", schema).with_output_schema(output),
            move |_: &RequestContext, _: JsonObject| Ok(result()),
        )
        .build()
}

fn call(server: &Server, arguments: Value) -> Value {
    let mut client = connect(server, json!({}));
    call_tool(&mut client, "count", arguments)
}

// server/tools "Output Schema": a tool that declares one must return
// conforming structuredContent; the crate turns a broken promise into an
// isError result that says why, instead of passing it to the client.
#[test]
fn output_schemas_are_kept() {
    let good = server_with(|| CallToolResult::structured(json!({"total": 3})));
    let answer = call(&good, json!({"limit": 5}));
    assert_eq!(answer["structuredContent"], json!({"total": 3}));
    assert!(answer.get("isError").is_none(), "{}", answer);
    let missing = server_with(|| CallToolResult::text("3"));
    let answer = call(&missing, json!({}));
    assert_eq!(answer["isError"], true);
    assert!(
        first_text(&answer).contains("no structuredContent"),
        "{}",
        answer
    );
    let wrong = server_with(|| CallToolResult::structured(json!({"total": -1})));
    let answer = call(&wrong, json!({}));
    assert_eq!(answer["isError"], true);
    assert!(
        first_text(&answer).contains("\"total\" must be at least 0"),
        "{}",
        answer
    );
    let failed = server_with(|| CallToolResult::error("no database"));
    assert_eq!(first_text(&call(&failed, json!({}))), "no database");
}

// TOOL-6, the checked keywords: a bound is reported with the field's name.
#[test]
fn argument_bounds_name_the_field() {
    let server = server_with(|| CallToolResult::structured(json!({"total": 0})));
    let answer = call(&server, json!({"limit": -3}));
    assert_eq!(answer["isError"], true);
    assert_eq!(
        first_text(&answer),
        "invalid arguments for tool count: argument \"limit\" must be at least 1, not -3"
    );
}

// server/utilities/logging: a log message from any thread, outside any
// request, reaches each 2025-11-25 client whose level it passes.
#[test]
fn server_wide_log_messages_follow_each_clients_level() {
    let server = server_with(|| CallToolResult::structured(json!({"total": 0})));
    let mut chatty = connect(&server, json!({}));
    let mut quiet = connect(&server, json!({}));
    quiet
        .request("logging/setLevel", Some(json!({"level": "error"})))
        .expect("setLevel");
    let handle = server.handle();
    let sent = std::thread::spawn(move || {
        handle.log(
            tiny_mcp::LoggingLevel::Info,
            Some("jobs"),
            json!("job 7 done"),
        )
    })
    .join()
    .unwrap();
    assert_eq!(sent, 1);
    let got = crate::support::messages_before_ping(&mut chatty);
    let log = got
        .iter()
        .find_map(|m| match m {
            tiny_mcp::Message::Notification(n) if n.method == "notifications/message" => {
                n.params.clone()
            }
            _ => None,
        })
        .expect("notifications/message");
    assert_eq!(
        log,
        json!({"level": "info", "logger": "jobs", "data": "job 7 done"})
    );
    let none = crate::support::messages_before_ping(&mut quiet);
    assert!(none.is_empty(), "{:?}", none);
}

// HttpServer::url: what a client connects to, the real port included.
#[test]
fn an_http_server_says_its_url() {
    let server = server_with(|| CallToolResult::structured(json!({"total": 1})));
    let http = server
        .http()
        .endpoint("/api/mcp")
        .serve("127.0.0.1:0")
        .expect("serve");
    let url = http.url();
    assert_eq!(url, format!("http://{}/api/mcp", http.local_addr()));
    let client = tiny_mcp::Client::builder("t", "1")
        .connect_http(&url)
        .expect("connect to url()");
    let answer = client.call_tool("count", json!({})).unwrap();
    assert_eq!(answer.structured_content, Some(json!({"total": 1})));
    drop(client);
    http.shutdown();
}

// A 2026-07-28 handler that asks for input runs again on the retry:
// round() tells the runs apart, and progress that does not increase over
// the rounds (PROG-2) is not sent again.
#[test]
fn multi_round_handlers_know_their_round_and_progress_only_grows() {
    use std::sync::{Arc, Mutex};
    let seen_rounds = Arc::new(Mutex::new(Vec::new()));
    let rounds = Arc::clone(&seen_rounds);
    let server = Server::builder("rounds", "1")
        .tool(
            Tool::new("ask", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                rounds.lock().unwrap().push(ctx.round());
                ctx.notify_progress(1.0, Some(2.0), None);
                let form = tiny_mcp::ElicitRequestFormParams::new(
                    "Name?",
                    json!({"type": "object",
                    "properties": {"name": {"type": "string"}}}),
                );
                let answer = ctx.elicit(tiny_mcp::ElicitRequestParams::Form(form))?;
                ctx.notify_progress(2.0, Some(2.0), None);
                Ok(CallToolResult::text(format!("{:?}", answer.action)))
            },
        )
        .build();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (theirs, _) = listener.accept().unwrap();
    let reader = std::io::BufReader::new(theirs.try_clone().unwrap());
    std::thread::spawn(move || server.serve_io(reader, theirs));
    let client = tiny_mcp::Client::builder("t", "1")
        .on_elicitation(|_| Ok(tiny_mcp::ElicitResult::accept(Some(JsonObject::new()))))
        .connect_io(std::io::BufReader::new(ours.try_clone().unwrap()), ours)
        .unwrap();
    assert_eq!(client.era(), tiny_mcp::Era::V2026_07_28);
    let progress = Arc::new(Mutex::new(Vec::new()));
    let p = Arc::clone(&progress);
    let options =
        tiny_mcp::CallOptions::new().on_progress(move |n| p.lock().unwrap().push(n.progress));
    let answer = client.call_tool_with("ask", Value::Null, &options).unwrap();
    assert_eq!(
        first_text(&serde_json::to_value(&answer).unwrap()),
        "Accept"
    );
    assert_eq!(*seen_rounds.lock().unwrap(), vec![0, 1]);
    assert_eq!(*progress.lock().unwrap(), vec![1.0, 2.0]);
}

// Typed tools: arguments deserialized into the program's type, the result
// serialized into structuredContent (and the same JSON as text, TOOL-5);
// a type mismatch is an isError result with serde's message.
#[test]
fn typed_tools_take_and_give_types() {
    #[derive(serde::Deserialize)]
    struct Add {
        a: i64,
        b: i64,
    }
    #[derive(serde::Serialize)]
    struct Sum {
        sum: i64,
    }
    let output =
        json!({"type": "object", "required": ["sum"], "properties": {"sum": {"type": "integer"}}});
    let server = Server::builder("typed", "1")
        .typed_tool(
            Tool::new("add", json!({"type": "object"})).with_output_schema(output),
            |_, args: Add| {
                Ok(Sum {
                    sum: args.a + args.b,
                })
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let answer = call_tool(&mut client, "add", json!({"a": 2, "b": 3}));
    assert_eq!(answer["structuredContent"], json!({"sum": 5}));
    assert_eq!(first_text(&answer), r#"{"sum":5}"#);
    let wrong = call_tool(&mut client, "add", json!({"a": "two", "b": 3}));
    assert_eq!(wrong["isError"], true);
    assert!(
        first_text(&wrong).starts_with("invalid arguments: invalid type: string \"two\""),
        "{}",
        wrong
    );
    let missing = call_tool(&mut client, "add", json!({"a": 2}));
    assert!(
        first_text(&missing).contains("missing field `b`"),
        "{}",
        missing
    );
}

// TOOL-5, server/tools "Output Schema": an `Option` field that is `None`
// serializes as `null`; where the outputSchema declares that property
// without `null` in its type and does not require it, the member is left
// out of structuredContent (and its text) instead of breaking the schema.
// A null the schema allows stays; one it requires still breaks it.
#[test]
fn typed_tools_leave_out_none_fields_the_schema_does_not_allow() {
    #[derive(serde::Serialize)]
    struct Found {
        title: String,
        note: Option<String>,
        maybe: Option<u32>,
    }
    let output = json!({"type": "object", "required": ["title"], "properties": {
        "title": {"type": "string"},
        "note": {"type": "string"},
        "maybe": {"type": ["integer", "null"]}}});
    let strict = json!({"type": "object", "required": ["title", "note"], "properties": {
        "title": {"type": "string"}, "note": {"type": "string"}}});
    let found = |_: &RequestContext, (): ()| {
        Ok(Found {
            title: "t".to_string(),
            note: None,
            maybe: None,
        })
    };
    let server = Server::builder("typed", "1")
        .typed_tool(
            Tool::without_arguments("find").with_output_schema(output),
            found,
        )
        .typed_tool(
            Tool::without_arguments("strict").with_output_schema(strict),
            found,
        )
        .build();
    let mut client = connect(&server, json!({}));
    let answer = call_tool(&mut client, "find", Value::Null);
    assert!(answer.get("isError").is_none(), "{}", answer);
    assert_eq!(
        answer["structuredContent"],
        json!({"title": "t", "maybe": null})
    );
    let text: Value = serde_json::from_str(first_text(&answer)).expect("the text is JSON");
    assert_eq!(text, answer["structuredContent"]);
    let strict = call_tool(&mut client, "strict", Value::Null);
    assert_eq!(strict["isError"], true, "{}", strict);
    assert!(
        first_text(&strict).contains("\"note\" must be of type"),
        "{}",
        strict
    );
}

// server/tools "Structured Content": a typed tool's String is text, its
// CallToolResult goes out as built, and `()` takes a call without
// arguments.
#[test]
fn typed_tools_return_text_and_whole_results() {
    let empty = json!({"type": "object"});
    let server = Server::builder("typed", "1")
        .typed_tool(
            Tool::new("hello", empty.clone()),
            |_: &RequestContext, (): ()| Ok("hello".to_string()),
        )
        .typed_tool(Tool::new("whole", empty), |_: &RequestContext, (): ()| {
            Ok(CallToolResult::error("built by hand"))
        })
        .build();
    let mut client = connect(&server, json!({}));
    let hello = call_tool(&mut client, "hello", json!({}));
    assert_eq!(first_text(&hello), "hello");
    assert!(hello.get("structuredContent").is_none(), "{}", hello);
    let whole = call_tool(&mut client, "whole", Value::Null);
    assert_eq!(whole["isError"], true);
    assert_eq!(first_text(&whole), "built by hand");
}

// The short forms: a tool without arguments, a one-message prompt, a
// completer from a fixed list (server/utilities/completion: matches of
// what was typed, ignoring case), and the names of the tools offered.
#[test]
fn short_forms_say_the_common_things() {
    use std::collections::BTreeMap;
    use tiny_mcp::{complete_from, GetPromptResult, Prompt, PromptArgument};

    let prompt = Prompt::new("greet").with_argument(PromptArgument::new("lang", "", false));
    let server = Server::builder("short", "1")
        .typed_tool(
            Tool::without_arguments("now"),
            |_: &RequestContext, (): ()| Ok("12:00"),
        )
        .prompt(prompt, |_: &RequestContext, _: BTreeMap<String, String>| {
            Ok(GetPromptResult::user_text("Say hello"))
        })
        .complete_prompt_argument("greet", "lang", complete_from(["Rust", "Ruby", "Go"]))
        .build();
    assert_eq!(server.handle().tool_names(), ["now"]);
    let mut client = connect(&server, json!({}));
    let listed = client.request("tools/list", None).unwrap();
    assert_eq!(listed["tools"][0]["inputSchema"], json!({"type": "object"}));
    assert_eq!(
        first_text(&call_tool(&mut client, "now", Value::Null)),
        "12:00"
    );
    let got = client.request("prompts/get", Some(json!({"name": "greet"})));
    let message = got.unwrap()["messages"][0].clone();
    assert_eq!(message["role"], "user");
    assert_eq!(message["content"]["text"], "Say hello");
    let params = json!({"ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "lang", "value": "ru"}});
    let completion = client.request("completion/complete", Some(params)).unwrap();
    assert_eq!(completion["completion"]["values"], json!(["Rust", "Ruby"]));
}

// DESIGN.md §4: a quick tool runs on the thread that read its call (here
// the in-memory client's, which dispatches on the sending thread), and
// cannot wait for the client: in 2025-11-25 asking fails at once, as an
// isError result, instead of waiting on the thread that would read the
// answer (client/elicitation).
#[test]
fn quick_tools_run_where_they_are_read_and_do_not_wait() {
    use tiny_mcp::ElicitRequestFormParams;

    let server = Server::builder("quick", "1")
        .quick_tool(
            Tool::without_arguments("where"),
            |_: &RequestContext, _: JsonObject| {
                let name = std::thread::current().name().unwrap_or("").to_string();
                Ok(CallToolResult::text(name))
            },
        )
        .quick_tool(
            Tool::without_arguments("ask"),
            |ctx: &RequestContext, _: JsonObject| {
                let question = ElicitRequestFormParams::new("Sure?", json!({"type": "object"}));
                ctx.elicit(question)?;
                Ok(CallToolResult::text("asked"))
            },
        )
        .build();
    let mut client = connect(&server, json!({"elicitation": {"form": {}}}));
    let here = std::thread::current().name().unwrap_or("").to_string();
    assert_eq!(
        first_text(&call_tool(&mut client, "where", Value::Null)),
        here
    );
    let asked = call_tool(&mut client, "ask", Value::Null);
    assert_eq!(asked["isError"], true);
    assert!(first_text(&asked).contains("quick tool"), "{}", asked);
}
