//! The two programs of issue 13 ("Done when"), driven from outside as
//! their users' clients would drive them: `examples/notes.rs` over stdio
//! with the crate's own [`Client`], and `examples/embedded_http.rs` over
//! Streamable HTTP while the test types commands on its stdin.
//!
//! Both need the built examples (`cargo build --examples`; CI builds them
//! first). Every wait is bounded by [`WAIT`]: the client's request timeout,
//! or a channel's `recv_timeout`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CallToolResult, Client, ElicitRequestParams, ElicitResult, Era, ErrorKind,
    JsonObject, Notification, Reference, StderrMode,
};

use crate::support::{example_path, recv, WAIT};

// ---------------------------------------------------------------------------
// The notes tool over stdio
// ---------------------------------------------------------------------------

/// The user behind the client: answers each elicitation with the next
/// answer queued, and reports the question asked.
struct User {
    answers: Sender<ElicitResult>,
    questions: Receiver<String>,
}

/// Starts the notes example as the client's child and connects in `era`;
/// notifications other than progress go to the returned receiver.
fn notes(era: Era) -> (Client, User, Receiver<Notification>) {
    let path = example_path("notes");
    assert!(
        path.exists(),
        "{} not found: build it with `cargo build --examples`",
        path.display()
    );
    let (answers, answer) = crossbeam_channel::unbounded::<ElicitResult>();
    let (asked, questions) = crossbeam_channel::unbounded();
    let (notified, notifications) = crossbeam_channel::unbounded();
    let client = Client::builder("notes-tests", "1")
        .era(era)
        .request_timeout(WAIT)
        .stderr(StderrMode::Capture)
        .on_elicitation(move |request| {
            let message = match request {
                ElicitRequestParams::Form(form) => form.message,
                other => panic!("a form was expected, not {:?}", other),
            };
            let _ = asked.send(message);
            answer
                .recv_timeout(WAIT)
                .map_err(|_| tiny_mcp::Error::msg("the test queued no answer"))
        })
        .on_notification(move |n| {
            let _ = notified.send(n.clone());
        })
        .connect_stdio(Command::new(&path))
        .unwrap_or_else(|e| panic!("cannot connect to {}: {}", path.display(), e));
    (client, User { answers, questions }, notifications)
}

fn structured(result: &CallToolResult) -> &Value {
    match &result.structured_content {
        Some(value) => value,
        None => panic!("no structuredContent in {:?}", result),
    }
}

fn text(result: &CallToolResult) -> &str {
    match result.content.first().and_then(|block| block.as_text()) {
        Some(text) => text,
        None => panic!("no text in {:?}", result),
    }
}

fn add(client: &Client, title: &str, body: &str) -> u64 {
    let result = client
        .call_tool("add_note", json!({"title": title, "body": body}))
        .expect("add_note");
    match structured(&result)["id"].as_u64() {
        Some(id) => id,
        None => panic!("add_note gave no id: {:?}", result),
    }
}

fn read_text(client: &Client, uri: &str) -> String {
    let result = client.read_resource(uri).expect("resources/read");
    match serde_json::to_value(&result.contents[0]) {
        Ok(Value::Object(contents)) => contents["text"].as_str().unwrap_or("").to_string(),
        other => panic!("unexpected contents of {}: {:?}", uri, other),
    }
}

// server/tools "Structured Content" (TOOL-5) and "Error Handling"
// (TOOL-6): typed tools answer with structuredContent that matches their
// outputSchema, and an argument outside the schema's bounds is an isError
// result that names it.
#[test]
fn notes_tools_answer_with_structured_content() {
    let (client, _, _) = notes(Era::V2026_07_28);
    let tools = client.list_tools().expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["add_note", "search_notes", "delete_note", "summarize"]
    );
    assert!(tools[0].output_schema.is_some(), "{:?}", tools[0]);
    let added = client
        .call_tool(
            "add_note",
            json!({"title": "Milk", "body": "Buy oat milk", "tags": ["shopping"]}),
        )
        .expect("add_note");
    assert_eq!(structured(&added), &json!({"id": 1, "title": "Milk"}));
    assert_eq!(add(&client, "Call Ada", "About the engine"), 2);
    let found = client
        .call_tool("search_notes", json!({"query": "SHOPPING", "limit": 10}))
        .expect("search_notes");
    assert_eq!(
        structured(&found),
        &json!({"notes": [{"id": 1, "title": "Milk"}]})
    );
    let too_many = client
        .call_tool("search_notes", json!({"query": "a", "limit": 51}))
        .expect("search_notes");
    assert_eq!(too_many.is_error, Some(true));
    assert!(text(&too_many).contains("\"limit\""), "{:?}", too_many);
}

// server/resources "Listing Resources", "Resource Templates" (RES-1),
// server/utilities/pagination: every note is listed as `note://ID`, in
// pages; the template reads one; an unknown note is an error (RES-4/5).
#[test]
fn notes_are_listed_in_pages_and_read_through_the_template() {
    let (client, _, _) = notes(Era::V2026_07_28);
    for n in 1..=25 {
        add(&client, &format!("Note {}", n), &format!("Body {}", n));
    }
    let first = client.list_resources_page(None).expect("resources/list");
    assert_eq!(first.resources.len(), 20);
    assert!(first.next_cursor.is_some(), "{:?}", first);
    let all = client.list_resources().expect("every page");
    assert_eq!(all.len(), 25);
    assert_eq!(all[24].uri, "note://25");
    let templates = client.list_resource_templates().expect("templates/list");
    assert_eq!(templates[0].uri_template, "note://{id}");
    assert_eq!(read_text(&client, "note://3"), "# Note 3\n\nBody 3\n");
    let missing = client.read_resource("note://99");
    assert!(
        matches!(
            missing.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::Peer(_))
        ),
        "{:?}",
        missing
    );
}

// server/utilities/completion (CMP-1, CMP-2) and server/prompts (PRM-3):
// note ids complete on the template's `id` and on the prompt's `id`; the
// prompt embeds the note, and an unknown id is an error.
#[test]
fn note_ids_complete_and_the_review_prompt_shows_the_note() {
    let (client, _, _) = notes(Era::V2026_07_28);
    for n in 1..=12 {
        add(&client, &format!("Note {}", n), "text");
    }
    let template = Reference::Resource {
        uri: "note://{id}".into(),
    };
    let ids = client.complete(template, "id", "1", &[]).expect("complete");
    assert_eq!(ids.completion.values, ["1", "10", "11", "12"]);
    assert_eq!(ids.completion.total, Some(4));
    let prompt = Reference::Prompt {
        name: "review_note".into(),
    };
    let ids = client.complete(prompt, "id", "7", &[]).expect("complete");
    assert_eq!(ids.completion.values, ["7"]);
    let review = client
        .get_prompt("review_note", &[("id", "7")])
        .expect("prompts/get");
    let message = serde_json::to_value(&review.messages[0]).unwrap();
    assert_eq!(message["role"], "user");
    let said = message["content"]["text"].as_str().unwrap_or("");
    assert!(said.contains("# Note 7"), "{}", said);
    assert!(client.get_prompt("review_note", &[("id", "99")]).is_err());
}

// client/elicitation (ELIC-8): delete_note asks the user first (form
// mode, a boolean `confirm`) and deletes only on accept with confirm
// true; a decline keeps the note. In both eras: an elicitation/create
// request (2025-11-25), or input_required and a retry (2026-07-28).
#[test]
fn deleting_a_note_asks_the_user_first() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let (client, user, _) = notes(era);
        let keep = add(&client, "Keep me", "still needed");
        let drop = add(&client, "Drop me", "obsolete");
        let _ = user.answers.send(ElicitResult::decline());
        let kept = client
            .call_tool("delete_note", json!({"id": keep}))
            .expect("delete_note");
        assert_eq!(structured(&kept), &json!({"id": keep, "deleted": false}));
        assert_eq!(
            recv(&user.questions, "the question"),
            "Delete note 1 \"Keep me\"?"
        );
        assert!(read_text(&client, "note://1").contains("still needed"));
        let mut confirm = JsonObject::new();
        confirm.insert("confirm".into(), json!(true));
        let _ = user.answers.send(ElicitResult::accept(Some(confirm)));
        let dropped = client
            .call_tool("delete_note", json!({"id": drop}))
            .expect("delete_note");
        assert_eq!(
            structured(&dropped),
            &json!({"id": drop, "deleted": true}),
            "{:?}",
            era
        );
        assert!(client.read_resource("note://2").is_err(), "{:?}", era);
        let names: Vec<String> = client
            .list_resources()
            .expect("resources/list")
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(names, ["note://1"]);
    }
}

// basic/utilities/progress (PROG-2): summarize sends one progress
// notification per note, growing up to the total, before its result.
#[test]
fn summarize_reports_progress_per_note() {
    let (client, _, _) = notes(Era::V2026_07_28);
    for title in ["One", "Two", "Three"] {
        add(&client, title, "first line\nsecond line");
    }
    let (sender, progress) = crossbeam_channel::unbounded();
    let options = CallOptions::new().on_progress(move |p| {
        let _ = sender.send((p.progress, p.total, p.message.clone()));
    });
    let summary = client
        .call_tool_with("summarize", Value::Null, &options)
        .expect("summarize");
    assert_eq!(
        text(&summary),
        "#1 One: first line\n#2 Two: first line\n#3 Three: first line"
    );
    let got: Vec<_> = progress.try_iter().collect();
    assert_eq!(
        got,
        [
            (1.0, Some(3.0), Some("One".to_string())),
            (2.0, Some(3.0), Some("Two".to_string())),
            (3.0, Some(3.0), Some("Three".to_string())),
        ]
    );
}

// server/resources "List Changed Notification" (RES-2): adding a note
// tells a 2025-11-25 client that the resource list changed.
#[test]
fn adding_a_note_announces_that_the_resource_list_changed() {
    let (client, _, notifications) = notes(Era::V2025_11_25);
    let resources = client.server_capabilities().resources.as_ref();
    assert_eq!(resources.and_then(|r| r.list_changed), Some(true));
    add(&client, "New", "note");
    next_notification(&notifications, "notifications/resources/list_changed");
}

// ---------------------------------------------------------------------------
// The job runner with an embedded HTTP endpoint
// ---------------------------------------------------------------------------

/// The job runner, started on 127.0.0.1:0 with its stdin and stderr piped;
/// killed on drop.
struct Runner {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its stderr, line by line; disconnected once it closes.
    said: Receiver<String>,
    url: String,
}

impl Runner {
    fn start() -> Runner {
        let path = example_path("embedded_http");
        assert!(
            path.exists(),
            "{} not found: build it with `cargo build --examples`",
            path.display()
        );
        let mut child = Command::new(&path)
            .arg("127.0.0.1:0")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {}", path.display(), e));
        let stderr = child.stderr.take().expect("stderr was piped");
        let (sender, said) = crossbeam_channel::unbounded();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut runner = Runner {
            child,
            stdin,
            said,
            url: String::new(),
        };
        let serving = runner.expect_line(|line| line.starts_with("serving "), "serving URL");
        runner.url = serving["serving ".len()..].to_string();
        runner
    }

    /// Types `command` on the program's stdin.
    fn type_line(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{}", command)
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("cannot type {:?}: {}", command, e));
    }

    /// The next stderr line that `wanted` accepts, skipping others.
    fn expect_line(&self, wanted: impl Fn(&str) -> bool, what: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.said.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(_) => {}
                Err(_) => panic!("the program never said {} on stderr", what),
            }
        }
    }

    /// Waits until the program closes stderr (it is exiting), then for its
    /// exit status; returns it with what it said meanwhile.
    fn exit(mut self) -> (ExitStatus, Vec<String>) {
        let deadline = Instant::now() + WAIT;
        let mut said = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.said.recv_timeout(left) {
                Ok(line) => said.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the program never exited: {:?}", said),
            }
        }
        let status = self.child.wait().expect("the exit status");
        (status, said)
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The next notification with `method`, skipping others.
fn next_notification(notifications: &Receiver<Notification>, method: &str) -> Notification {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match notifications.recv_timeout(left) {
            Ok(n) if n.method == method => return n,
            Ok(_) => {}
            Err(_) => panic!("{} never arrived (waited {:?})", method, WAIT),
        }
    }
}

fn tool_names(client: &Client) -> Vec<String> {
    let tools = client.list_tools().expect("tools/list");
    tools.into_iter().map(|tool| tool.name).collect()
}

// server/tools "List Changed Notification" (TOOL-2) and
// server/utilities/logging: `enable` and `disable` on the program's stdin
// change its tools while it serves, each change announced to the client
// (list_changed and a log message, on the session's GET stream); a job
// tool runs on the program's thread and its end is logged; `quit` stops
// the endpoint and the program exits 0.
#[test]
fn the_job_runner_changes_its_tools_while_it_serves() {
    let mut runner = Runner::start();
    let (notified, notifications) = crossbeam_channel::unbounded();
    let client = Client::builder("runner-tests", "1")
        .era(Era::V2025_11_25)
        .request_timeout(WAIT)
        .on_notification(move |n| {
            let _ = notified.send(n.clone());
        })
        .connect_http(&runner.url)
        .expect("connect to the printed URL");
    assert_eq!(tool_names(&client), ["status"]);

    runner.type_line("enable backup report");
    next_notification(&notifications, "notifications/tools/list_changed");
    let log = next_notification(&notifications, "notifications/message");
    assert_eq!(
        log.params,
        Some(json!({"level": "notice", "logger": "runner", "data": "enabled backup report"}))
    );
    runner.expect_line(|l| l == "enabled backup report", "the enable");
    assert_eq!(tool_names(&client), ["status", "backup", "report"]);
    let ran = client.call_tool("backup", Value::Null).expect("backup");
    assert_eq!(text(&ran), "backup finished (run 1)");
    let log = next_notification(&notifications, "notifications/message");
    assert_eq!(
        log.params,
        Some(json!({"level": "info", "logger": "jobs", "data": "backup finished (run 1)"}))
    );
    let status = client.call_tool("status", Value::Null).expect("status");
    assert_eq!(text(&status), "enabled: [backup, report]");

    runner.type_line("disable report");
    next_notification(&notifications, "notifications/tools/list_changed");
    assert_eq!(tool_names(&client), ["status", "backup"]);
    let gone = client.call_tool("report", Value::Null);
    assert!(
        matches!(gone.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Peer(_))),
        "{:?}",
        gone
    );

    runner.type_line("quit");
    let (status, said) = runner.exit();
    assert!(status.success(), "{:?}: {:?}", status, said);
    assert_eq!(
        said.last().map(String::as_str),
        Some("stopped"),
        "{:?}",
        said
    );
    drop(client);
}

// server/tools "Listing Tools": a 2026-07-28 client (no session, no
// stream) sees an enabled job on its next list once the program has
// acknowledged it; end of input stops the program as `quit` does.
#[test]
fn the_job_runner_serves_2026_clients_and_stops_at_end_of_input() {
    let mut runner = Runner::start();
    let client = Client::builder("runner-tests", "1")
        .request_timeout(WAIT)
        .connect_http(&runner.url)
        .expect("connect to the printed URL");
    assert_eq!(client.era(), Era::V2026_07_28);
    runner.type_line("enable nightly");
    runner.expect_line(|l| l == "enabled nightly", "the enable");
    assert_eq!(tool_names(&client), ["status", "nightly"]);
    let ran = client.call_tool("nightly", Value::Null).expect("nightly");
    assert_eq!(text(&ran), "nightly finished (run 1)");
    let again = client.call_tool("nightly", Value::Null).expect("nightly");
    assert_eq!(text(&again), "nightly finished (run 2)");
    runner.stdin = None;
    let (status, said) = runner.exit();
    assert!(status.success(), "{:?}: {:?}", status, said);
    assert_eq!(
        said.last().map(String::as_str),
        Some("stopped"),
        "{:?}",
        said
    );
}
