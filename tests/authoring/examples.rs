//! The examples a user copies from (issue 13, item 9), each run as a
//! child process and driven over stdio by the crate's own [`Client`], in
//! both eras: the default 2026-07-28 and the 2025-11-25 handshake.
//!
//! The binaries come from `cargo build --examples` (which `cargo test`
//! also runs); [`example_path`] finds them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CallToolResult, Client, ElicitRequestParams, ElicitResult, Era, Error, ErrorKind,
    JsonObject, Reference, ResourceContents, StderrMode, ToolVisibility, UI_MIME_TYPE,
};

use crate::support::{example_path, WAIT};

/// The eras a test runs in: the client's default (2026-07-28 first) and
/// 2025-11-25.
const ERAS: [Option<Era>; 2] = [None, Some(Era::V2025_11_25)];

fn client(era: Option<Era>) -> tiny_mcp::ClientBuilder {
    let builder = Client::builder("examples-test", "1.0.0")
        .request_timeout(WAIT)
        .stderr(StderrMode::Capture);
    match era {
        Some(era) => builder.era(era),
        None => builder,
    }
}

fn start(builder: tiny_mcp::ClientBuilder, name: &str, args: &[&str]) -> Client {
    let mut command = Command::new(example_path(name));
    command.args(args);
    match builder.connect_stdio(command) {
        Ok(client) => client,
        Err(e) => panic!(
            "cannot start example {} (cargo build --examples): {}",
            name, e
        ),
    }
}

fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    match client.call_tool(tool, arguments) {
        Ok(result) => result,
        Err(e) => panic!("tools/call {} failed: {}", tool, e),
    }
}

fn text(result: &CallToolResult) -> &str {
    match result.content.first().and_then(|block| block.as_text()) {
        Some(text) => text,
        None => panic!("no text block in {:?}", result),
    }
}

/// Runs example `name` with `args` to its end, within [`WAIT`].
fn run(name: &str, args: &[&str]) -> Output {
    let mut command = Command::new(example_path(name));
    command.args(args);
    let (done, output) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let _ = done.send(command.output());
    });
    match output.recv_timeout(WAIT) {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => panic!("cannot run example {}: {}", name, e),
        Err(_) => panic!("example {} {:?} did not exit within {:?}", name, args, WAIT),
    }
}

/// A directory of its own under the system's temporary directory,
/// removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> TempDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("tiny-mcp-{}-{}-{}", what, std::process::id(), nanos);
        let path = std::env::temp_dir().join(name);
        fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    fn write(&self, relative: &str, text: &str) -> String {
        let path = self.0.join(relative);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        fs::write(&path, text).expect("write a temporary file");
        path.to_str()
            .expect("temporary paths are UTF-8")
            .to_string()
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

// server/tools "Calling Tools": the smallest server lists its one tool and
// answers a call with the text it was given; a call that breaks the
// inputSchema is an isError result naming the argument (TOOL-6).
#[test]
fn minimal_echoes_its_text() {
    for era in ERAS {
        let client = start(client(era), "minimal", &[]);
        let tools = client.list_tools().expect("tools/list");
        assert_eq!(tools.len(), 1, "{:?}", tools);
        assert_eq!(tools[0].name, "echo");
        assert_eq!(tools[0].input_schema["required"], json!(["text"]));
        let answer = call(&client, "echo", json!({"text": "hello, world"}));
        assert_eq!(text(&answer), "hello, world");
        assert_eq!(answer.is_error, None, "{:?}", era);
        let wrong = call(&client, "echo", json!({"text": 7}));
        assert_eq!(wrong.is_error, Some(true), "{:?}", wrong);
        assert!(text(&wrong).contains("\"text\""), "{}", text(&wrong));
    }
}

// server/tools "Structured Content" and "Output Schema" (TOOL-5): typed
// results arrive as structuredContent with the same JSON as text; each
// tool declares an outputSchema with an object root; a bad argument is an
// isError result that names the field (TOOL-6).
#[test]
fn typed_tools_return_structured_content_and_name_bad_fields() {
    for era in ERAS {
        let client = start(client(era), "typed_tools", &[]);
        let tools = client.list_tools().expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["convert", "word_stats"]);
        for tool in &tools {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            let output = tool.output_schema.as_ref().expect("an outputSchema");
            assert_eq!(output["type"], "object", "{}", tool.name);
        }

        let converted = call(
            &client,
            "convert",
            json!({"value": 5, "from": "km", "to": "mi"}),
        );
        let expected = json!({"value": 3.106856, "unit": "mi"});
        assert_eq!(converted.structured_content, Some(expected.clone()));
        let as_text: Value = serde_json::from_str(text(&converted)).expect("JSON text");
        assert_eq!(as_text, expected, "the text block is the same JSON");

        let text_arg = "The cat and the hat and the bat";
        let stats = call(&client, "word_stats", json!({"text": text_arg, "top": 2}));
        assert_eq!(
            stats.structured_content,
            Some(json!({"words": 8, "unique": 5, "top": [
                {"word": "the", "count": 3}, {"word": "and", "count": 2}]}))
        );

        let bad_top = call(&client, "word_stats", json!({"text": "a", "top": 0}));
        assert_eq!(bad_top.is_error, Some(true));
        assert_eq!(
            text(&bad_top),
            "invalid arguments for tool word_stats: argument \"top\" must be at least 1, not 0"
        );
        let bad_unit = call(
            &client,
            "convert",
            json!({"value": 1, "from": "parsec", "to": "m"}),
        );
        assert_eq!(bad_unit.is_error, Some(true));
        assert!(
            text(&bad_unit).contains("argument \"from\" must be one of"),
            "{}",
            text(&bad_unit)
        );
    }
}

/// The code of the JSON-RPC error in `outcome`.
fn error_code<T: std::fmt::Debug>(outcome: Result<T, Error>) -> i32 {
    match outcome.map_err(Error::into_kind) {
        Err(ErrorKind::Peer(error)) => error.code.0,
        other => panic!("expected a JSON-RPC error, got {:?}", other),
    }
}

// server/resources "Listing Resources" with server/utilities/pagination
// (PAG-1), "Reading Resources" through a template, "Security
// Considerations" (RES-6: a path out of the directory is not found, RES-4
// `-32002` in 2025-11-25, RES-5 `-32602` in 2026-07-28), and
// server/utilities/completion of the template's variable.
#[test]
fn directory_lists_pages_reads_and_completes() {
    let base = TempDir::new("directory");
    base.write("secret.txt", "not for clients\n");
    for n in 0..25 {
        base.write(&format!("root/f{:02}.txt", n), &format!("file {}\n", n));
    }
    base.write("root/read me.txt", "spaces too\n");
    base.write("root/notes/today.md", "# Today\n");
    let root = base.path().join("root");
    let root = root.to_str().expect("UTF-8 path");

    for era in ERAS {
        let client = start(client(era), "directory", &[root]);
        let first = client.list_resources_page(None).expect("first page");
        assert_eq!(first.resources.len(), 20);
        assert_eq!(first.resources[0].uri, "file:///f00.txt");
        assert_eq!(first.resources[0].size, Some(7));
        let cursor = first.next_cursor.as_deref().expect("a second page");
        let second = client
            .list_resources_page(Some(cursor))
            .expect("second page");
        let uris: Vec<&str> = second.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "file:///f20.txt",
                "file:///f21.txt",
                "file:///f22.txt",
                "file:///f23.txt",
                "file:///f24.txt",
                "file:///read%20me.txt"
            ]
        );
        assert_eq!(second.next_cursor, None);

        let templates = client.list_resource_templates().expect("templates/list");
        assert_eq!(templates[0].uri_template, "file:///{+path}");
        for (uri, expected) in [
            ("file:///f07.txt", "file 7\n"),
            ("file:///read%20me.txt", "spaces too\n"),
            ("file:///notes/today.md", "# Today\n"),
        ] {
            let read = client.read_resource(uri).expect("resources/read");
            let contents = serde_json::to_value(&read.contents).expect("serializes");
            assert_eq!(
                contents,
                json!([{"uri": uri, "mimeType": "text/plain", "text": expected}])
            );
        }
        let not_found = if era.is_some() { -32002 } else { -32602 };
        for escape in [
            "file:///../secret.txt",
            "file:///notes/../../secret.txt",
            "file:///nope",
        ] {
            assert_eq!(
                error_code(client.read_resource(escape)),
                not_found,
                "{}",
                escape
            );
        }

        let complete = |typed: &str| {
            let reference = Reference::Resource {
                uri: "file:///{+path}".into(),
            };
            match client.complete(reference, "path", typed, &[]) {
                Ok(result) => result.completion.values,
                Err(e) => panic!("completion/complete of {:?} failed: {}", typed, e),
            }
        };
        assert_eq!(complete("no"), ["notes/"]);
        assert_eq!(complete("notes/t"), ["notes/today.md"]);
        assert_eq!(complete("f1").len(), 10);
        assert_eq!(complete("r"), ["read me.txt"]);
        assert!(complete("../").is_empty(), "nothing outside the directory");
    }
}

// server/tools "Structured Content": the command line and the tool share
// one function, so the tool's text is exactly what the command prints and
// structuredContent holds the same numbers; an unreadable file is exit
// status 1 on the command line and an isError result (TOOL-6) naming it.
#[test]
fn cli_tool_prints_what_its_tool_returns() {
    let dir = TempDir::new("cli-tool");
    let one = dir.write("one.txt", "one line\n");
    let two = dir.write("two.txt", "two\nshort lines\n");
    let printed = run("cli_tool", &["count", &one, &two]);
    assert!(printed.status.success(), "{:?}", printed);
    let printed = String::from_utf8(printed.stdout).expect("UTF-8 output");
    assert_eq!(
        printed,
        format!(
            "      1       2       9 {}\n      2       3      16 {}\n",
            one, two
        )
    );
    let missing = dir.path().join("missing.txt");
    let missing = missing.to_str().expect("UTF-8 path");
    let failed = run("cli_tool", &["count", missing]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains(missing));
    assert_eq!(run("cli_tool", &[]).status.code(), Some(2), "usage");

    for era in ERAS {
        let client = start(client(era), "cli_tool", &["mcp"]);
        let answer = call(&client, "count", json!({"files": [one, two]}));
        assert_eq!(
            text(&answer),
            printed,
            "the tool prints as the command does"
        );
        assert_eq!(
            answer.structured_content,
            Some(json!({"files": [
                {"file": one, "lines": 1, "words": 2, "bytes": 9},
                {"file": two, "lines": 2, "words": 3, "bytes": 16}]}))
        );
        let failed = call(&client, "count", json!({"files": [missing]}));
        assert_eq!(failed.is_error, Some(true));
        assert!(text(&failed).contains(missing), "{}", text(&failed));
    }
}

/// What one call of `book_table` gave: the result, the requestedSchemas
/// the client was asked to fill in, and the (progress, total) it received.
struct Booking {
    answer: CallToolResult,
    asked: Vec<Value>,
    progress: Vec<(f64, Option<f64>)>,
}

/// Calls `book_table` with a client that answers every form with `reply`.
fn book(era: Option<Era>, reply: fn() -> ElicitResult) -> Booking {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let builder = client(era).on_elicitation(move |request| match request {
        ElicitRequestParams::Form(form) => {
            seen.lock().unwrap().push(form.requested_schema);
            Ok(reply())
        }
        other => panic!("expected a form, got {:?}", other),
    });
    let client = start(builder, "ask_and_progress", &[]);
    let progress = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&progress);
    let options = CallOptions::new()
        .timeout(WAIT)
        .on_progress(move |p| record.lock().unwrap().push((p.progress, p.total)));
    let answer = match client.call_tool_with("book_table", Value::Null, &options) {
        Ok(answer) => answer,
        Err(e) => panic!("tools/call book_table failed ({:?}): {}", era, e),
    };
    client.close();
    let asked = asked.lock().unwrap().clone();
    let progress = progress.lock().unwrap().clone();
    Booking {
        answer,
        asked,
        progress,
    }
}

fn progress_up_to(last: i32) -> Vec<(f64, Option<f64>)> {
    (1..=last).map(|n| (f64::from(n), Some(5.0))).collect()
}

// client/elicitation "Form Mode" (the requestedSchema the user fills in;
// ELIC-8: a declined form books nothing) and basic/utilities/progress
// (PROG-2: progress increases, over the 2026-07-28 rounds too, where the
// handler runs again after the answer and round() skips the search).
#[test]
fn ask_and_progress_asks_once_and_progress_grows() {
    for era in ERAS {
        let accepted = book(era, || {
            let mut form = JsonObject::new();
            form.insert("time".into(), json!("19:30"));
            form.insert("guests".into(), json!(4));
            ElicitResult::accept(Some(form))
        });
        assert_eq!(
            text(&accepted.answer),
            "Booked a table for 4 at 19:30.",
            "{:?}",
            era
        );
        assert_eq!(accepted.asked.len(), 1, "asked once: {:?}", accepted.asked);
        let schema = &accepted.asked[0];
        assert_eq!(
            schema["properties"]["time"]["enum"],
            json!(["18:00", "19:30", "21:00"])
        );
        assert_eq!(schema["required"], json!(["time"]));
        assert_eq!(accepted.progress, progress_up_to(5), "{:?}", era);

        let declined = book(era, ElicitResult::decline);
        assert_eq!(text(&declined.answer), "Nothing booked.");
        assert_eq!(declined.answer.is_error, None);
        assert_eq!(declined.progress, progress_up_to(3), "{:?}", era);
    }
}

// The glossary that also runs as wasm32-wasip1 (examples/wasi_glossary.rs;
// scripts/interop/interop-wasi.sh runs it under a WASI runtime), natively:
// server/tools "Structured Content" (TOOL-5) and an unknown term as an
// isError result (TOOL-6); server/resources "Resource Templates" (a read
// through `glossary://{term}`, RES-4 `-32002` in 2025-11-25, RES-5
// `-32602` in 2026-07-28 for an unknown one); server/prompts "Getting a
// Prompt" with an optional argument; client/elicitation "Form Mode" (the
// answer is kept: the next read sees the new term).
#[test]
fn wasi_glossary_defines_reads_explains_and_asks() {
    for era in ERAS {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&asked);
        let builder = client(era).on_elicitation(move |request| match request {
            ElicitRequestParams::Form(form) => {
                seen.lock().unwrap().push(form.message);
                let mut answer = JsonObject::new();
                answer.insert(
                    "definition".into(),
                    json!("The binary format of WebAssembly."),
                );
                Ok(ElicitResult::accept(Some(answer)))
            }
            other => panic!("expected a form, got {:?}", other),
        });
        let client = start(builder, "wasi_glossary", &[]);
        let tools = client.list_tools().expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["define", "add_term"]);

        let defined = call(&client, "define", json!({"term": "WASI"}));
        let structured = defined.structured_content.expect("structuredContent");
        assert_eq!(structured["term"], "wasi");
        assert!(structured["definition"]
            .as_str()
            .map_or(false, |d| d.starts_with("WebAssembly System Interface")));
        let unknown = call(&client, "define", json!({"term": "wasm"}));
        assert_eq!(unknown.is_error, Some(true), "{:?}", unknown);

        let read = client
            .read_resource("glossary://mcp")
            .expect("resources/read");
        let contents = serde_json::to_value(&read.contents).expect("serializes");
        assert_eq!(contents[0]["mimeType"], "text/markdown");
        assert!(contents[0]["text"]
            .as_str()
            .map_or(false, |t| t.starts_with("# mcp\n")));
        let not_found = if era.is_some() { -32002 } else { -32602 };
        assert_eq!(
            error_code(client.read_resource("glossary://wasm")),
            not_found
        );

        let prompt = client
            .get_prompt("explain", &[("term", "stdio"), ("audience", "a child")])
            .expect("prompts/get");
        let prompt = serde_json::to_value(&prompt).expect("serializes");
        let text = prompt["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("Explain \"stdio\" to a child"), "{}", text);

        let added = call(&client, "add_term", json!({"term": "Wasm"}));
        assert_eq!(
            added.structured_content,
            Some(json!({"term": "wasm", "added": true}))
        );
        assert_eq!(*asked.lock().unwrap(), ["What does \"wasm\" mean?"]);
        let read = client
            .read_resource("glossary://wasm")
            .expect("the new term");
        let contents = serde_json::to_value(&read.contents).expect("serializes");
        let expected = "# wasm\n\nThe binary format of WebAssembly.\n";
        assert_eq!(contents[0]["text"], expected, "{:?}", era);
        client.close();
    }
}

// MCP Apps (`io.modelcontextprotocol/ui`, 2026-01-26), examples/apps.rs:
// "Resource Discovery" (the tool names its view in `_meta.ui.resourceUri`
// and the deprecated flat key), "Visibility" (counter_add is for views
// alone: a host leaves it out of its model's list), "UI Resource Format"
// (the view read as `text/html;profile=mcp-app` with its `_meta.ui`), and
// the text that speaks of the view only to a client that renders views.
// The view itself runs in Chromium: scripts/interop/apps-browser.sh.
#[test]
fn apps_shows_its_view_and_counts_for_it() {
    for era in ERAS {
        let client = start(client(era).ui_extension([UI_MIME_TYPE]), "apps", &[]);
        let tools = client.list_tools().expect("tools/list");
        let tool = |name: &str| match tools.iter().find(|t| t.name == name) {
            Some(tool) => tool.clone(),
            None => panic!("{} is not listed: {:?}", name, tools),
        };
        let (show, add) = (tool("counter_show"), tool("counter_add"));
        let view = show.ui().and_then(|ui| ui.resource_uri);
        assert_eq!(view.as_deref(), Some("ui://counter/view"));
        assert_eq!(
            show.meta.as_ref().unwrap()["ui/resourceUri"],
            "ui://counter/view"
        );
        assert!(show.is_visible_to_model());
        let add_ui = add.ui().expect("counter_add has _meta.ui");
        assert!(!add.is_visible_to_model());
        assert!(add_ui.is_visible_to(ToolVisibility::App));
        assert_eq!(add_ui.resource_uri, view);
        let listed = client.list_resources().expect("resources/list");
        assert_eq!(listed[0].uri, "ui://counter/view");
        assert_eq!(listed[0].mime_type.as_deref(), Some(UI_MIME_TYPE));
        let read = client.read_resource("ui://counter/view").expect("read");
        let contents = &read.contents[0];
        assert_eq!(contents.mime_type(), Some(UI_MIME_TYPE));
        assert_eq!(contents.ui().and_then(|ui| ui.prefers_border), Some(true));
        match contents {
            ResourceContents::Text { text, .. } => assert!(text.contains("ui/initialize")),
            other => panic!("the view is not text: {:?}", other),
        }
        let shown = call(&client, "counter_show", json!({}));
        assert_eq!(text(&shown), "The counter is at 0; the view shows it.");
        assert_eq!(
            shown.structured_content,
            Some(json!({"name": "clicks", "count": 0}))
        );
        let added = call(&client, "counter_add", json!({"by": 2}));
        assert_eq!(
            added.structured_content,
            Some(json!({"name": "clicks", "count": 2}))
        );
        let refused = call(&client, "counter_add", json!({"by": 0}));
        assert_eq!(refused.is_error, Some(true), "{:?}", refused);
        client.close();
    }
    let text_only = start(client(None), "apps", &[]);
    let shown = call(&text_only, "counter_show", json!({}));
    assert_eq!(text(&shown), "The counter is at 0.");
}
