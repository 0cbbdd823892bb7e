//! Tasks: 2025-11-25 experimental tasks (basic/utilities/tasks; TASK-* ids
//! of `../shared/spec/DIGEST.md` §15) and the 2026-07-28 tasks extension
//! (SEP-2663, `io.modelcontextprotocol/tasks`), on the in-memory
//! dispatcher, stdio (the `everything` example) and Streamable HTTP.
//!
//! Handlers wait on channels the test controls, never on sleeps; a test
//! that waits for a task to move polls `tasks/get` until it does (at most
//! [`WAIT`]), as a client would.

use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitRequestFormParams, Error, ErrorCode, ErrorObject, HttpServer, JsonObject,
    MemoryClient, Message, RequestContext, Response, Server, ServerBuilder, TaskLimits,
    TaskSupport, Tool,
};

use crate::support::forms;
use crate::support::http::{open_session, rpc, Conn, Req};
use crate::support::wait_release_or_cancel;
use crate::support::{connect, expect_error, recv, ChildServer, WAIT};

mod fair;
mod relay;

const EXT: &str = "io.modelcontextprotocol/tasks";
const RELATED: &str = "io.modelcontextprotocol/related-task";

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

/// What the test controls: `release` lets `gated` return; `reached` says
/// a handler got to its waiting point; `cancelled` reports what `gated`
/// saw of its flag when it returned.
pub(crate) struct Controls {
    pub(crate) release: Sender<()>,
    pub(crate) reached: Receiver<&'static str>,
    pub(crate) cancelled: Receiver<bool>,
}

/// A server with task tools: `gated` (optional; waits for the test),
/// `tool_error` (`isError` result), `rpc_error` (JSON-RPC error),
/// `ask_twice` (two elicitations one after the other), `required`
/// (task support required), `sync` (no task support) and `late`
/// (asks in the request, then starts its task).
fn task_server(limits: Option<TaskLimits>) -> (Server, Controls) {
    let (mut builder, controls) = task_builder();
    if let Some(limits) = limits {
        builder = builder.task_limits(limits);
    }
    (builder.build(), controls)
}

/// The builder of [`task_server`], for a test that adds to it.
pub(crate) fn task_builder() -> (ServerBuilder, Controls) {
    let (release, released) = unbounded::<()>();
    let (reach, reached) = unbounded();
    let (saw, cancelled) = unbounded();
    let optional = TaskSupport::Optional;
    let reach2 = reach.clone();
    let builder: ServerBuilder = Server::builder("tasks-tests", "1")
        .tool(
            Tool::without_arguments("gated").with_task_support(optional),
            move |ctx: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                let _ = reach.send("gated");
                let was_cancelled = wait_release_or_cancel(ctx, &released);
                let _ = saw.send(was_cancelled);
                ctx.check_cancelled()?;
                Ok(CallToolResult::text("released"))
            },
        )
        .tool(
            Tool::without_arguments("tool_error").with_task_support(optional),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::error("the tool failed"))
            },
        )
        .tool(
            Tool::without_arguments("rpc_error").with_task_support(optional),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Err(Error::rpc(ErrorObject::new(ErrorCode(-32099), "no way")))
            },
        )
        .tool(
            Tool::without_arguments("ask_twice").with_task_support(optional),
            move |ctx: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                let _ = reach2.send("ask_twice");
                let first = ctx.elicit(form("first?"))?;
                let second = ctx.elicit(form("second?"))?;
                Ok(CallToolResult::text(format!(
                    "{} then {}",
                    json!(first.content),
                    json!(second.content)
                )))
            },
        )
        .tool(
            Tool::without_arguments("required").with_task_support(TaskSupport::Required),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("required ran"))
            },
        )
        .tool(
            Tool::without_arguments("sync"),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("sync ran"))
            },
        )
        .tool(
            Tool::without_arguments("late").with_task_support(optional),
            |ctx: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                let answer = ctx.elicit(form("name?"))?;
                assert!(ctx.start_task()?, "late could not start its task");
                Ok(CallToolResult::text(format!(
                    "late: {}",
                    json!(answer.content)
                )))
            },
        )
        .tasks_start_in_handler("late");
    let controls = Controls {
        release,
        reached,
        cancelled,
    };
    (builder, controls)
}

fn form(message: &str) -> ElicitRequestFormParams {
    ElicitRequestFormParams::new(message, json!({"type": "object"}))
}

// ---------------------------------------------------------------------------
// 2026-07-28 requests on the in-memory dispatcher
// ---------------------------------------------------------------------------

/// `params` with an envelope declaring elicitation and, when `tasks`, the
/// tasks extension.
fn env(mut params: Value, tasks: bool) -> Value {
    let mut caps = json!({"elicitation": {"form": {}}});
    if tasks {
        caps["extensions"] = json!({ EXT: {} });
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-tests", "version": "0"},
    });
    params
}

pub(crate) fn client_2026(server: &Server) -> MemoryClient {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client
}

pub(crate) fn mcall(
    client: &mut MemoryClient,
    method: &str,
    params: Value,
) -> Result<Value, ErrorObject> {
    client.request(method, Some(env(params, true)))
}

pub(crate) fn ok(outcome: Result<Value, ErrorObject>, what: &str) -> Value {
    outcome.unwrap_or_else(|e| panic!("{} failed: {:?}", what, e))
}

/// Starts a 2026-07-28 task of `tool`; checks the flat CreateTaskResult.
pub(crate) fn start_2026(client: &mut MemoryClient, tool: &str) -> String {
    let created = ok(
        mcall(client, "tools/call", json!({"name": tool, "arguments": {}})),
        "tools/call",
    );
    assert_eq!(created["resultType"], "task", "{}", created);
    assert_eq!(created["status"], "working");
    assert!(
        created["ttlMs"].as_u64().map_or(false, |t| t > 0),
        "{}",
        created
    );
    assert!(created["pollIntervalMs"].is_u64(), "{}", created);
    for absent in ["task", "ttl", "pollInterval", "result", "requestState"] {
        assert!(created.get(absent).is_none(), "{} in {}", absent, created);
    }
    created["taskId"].as_str().expect("a taskId").to_string()
}

/// Polls `tasks/get` until `done` holds for the task, at most [`WAIT`].
pub(crate) fn poll_until(
    client: &mut MemoryClient,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let task = ok(
            mcall(client, "tasks/get", json!({"taskId": id})),
            "tasks/get",
        );
        assert_eq!(task["resultType"], "complete", "tasks/get: {}", task);
        if done(&task) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {} stayed {}", id, task);
        std::thread::yield_now();
    }
}

/// The first key of an `inputRequests` map.
pub(crate) fn first_key(requests: &Value) -> String {
    match requests.as_object().and_then(|r| r.keys().next()) {
        Some(key) => key.clone(),
        None => panic!("no input requests in {}", requests),
    }
}

pub(crate) fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |task: &Value| task["status"] == status
}

pub(crate) fn update(client: &mut MemoryClient, id: &str, responses: Value) -> Value {
    let params = json!({"taskId": id, "inputResponses": responses});
    let ack = ok(mcall(client, "tasks/update", params), "tasks/update");
    assert_eq!(ack["resultType"], "complete");
    assert!(
        ack.get("taskId").is_none() && ack.get("status").is_none(),
        "{}",
        ack
    );
    ack
}

// SEP-2663 "Task Creation", "Task Polling": working, then completed with
// the tool's result inlined; the server alone decides (no task param).
#[test]
fn task_2026_runs_from_working_to_completed() {
    let (server, controls) = task_server(None);
    let mut client = client_2026(&server);
    let id = start_2026(&mut client, "gated");
    assert_eq!(recv(&controls.reached, "the handler's start"), "gated");
    let working = poll_until(&mut client, &id, status_is("working"));
    assert!(working.get("result").is_none(), "{}", working);
    controls.release.send(()).unwrap();
    let done = poll_until(&mut client, &id, status_is("completed"));
    assert_eq!(done["result"]["content"][0]["text"], "released");
    assert!(done["result"]["_meta"].get(RELATED).is_none(), "{}", done);
    assert!(done.get("requestState").is_none());
}

// ELIC-8, SEP-2663 "Task Update Requests": a task's form answered through
// tasks/update is checked against the form's schema too; ctx.elicit and
// ctx.request_inputs get the error naming the field and the rule.
#[test]
fn task_2026_answer_breaking_the_form_is_an_error() {
    let optional = TaskSupport::Optional;
    let server = Server::builder("tasks-tests", "1")
        .tool(
            Tool::without_arguments("profile").with_task_support(optional),
            |ctx: &RequestContext, _: JsonObject| forms::ask_profile(ctx),
        )
        .tool(
            Tool::without_arguments("profile_named").with_task_support(optional),
            |ctx: &RequestContext, _: JsonObject| forms::ask_profile_named(ctx),
        )
        .build();
    let mut client = client_2026(&server);
    for (tool, named) in [("profile", ""), ("profile_named", " \"profile\"")] {
        let (answer, words) = forms::bad_profiles().remove(2);
        let id = start_2026(&mut client, tool);
        let asked = poll_until(&mut client, &id, status_is("input_required"));
        let key = first_key(&asked["inputRequests"]);
        update(&mut client, &id, json!({ key: answer }));
        let done = poll_until(&mut client, &id, status_is("completed"));
        let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
        let start = format!("refused: elicitation answer{}: field ", named);
        assert!(text.starts_with(&start), "{}: {}", tool, done);
        assert!(
            text.contains(words[0]) && text.contains(words[1]),
            "{}",
            text
        );
    }
}

// SEP-2663 "Task Execution Errors": a tool error is `completed` with
// `isError`; a JSON-RPC error is `failed` with `error` and no `result`.
#[test]
fn tool_2026_errors_complete_and_protocol_errors_fail() {
    let (server, _controls) = task_server(None);
    let mut client = client_2026(&server);
    let id = start_2026(&mut client, "tool_error");
    let done = poll_until(&mut client, &id, |t| t["status"] != "working");
    assert_eq!(
        (&done["status"], &done["result"]["isError"]),
        (&json!("completed"), &json!(true))
    );
    let id = start_2026(&mut client, "rpc_error");
    let failed = poll_until(&mut client, &id, |t| t["status"] != "working");
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], -32099);
    assert!(failed.get("result").is_none(), "{}", failed);
}

// SEP-2663 "Task Update Requests": a task that asks twice is
// input_required twice, with a fresh key each time; stray keys are
// ignored; answers resume it; the result has both answers.
#[test]
fn task_2026_asks_for_input_twice() {
    let (server, controls) = task_server(None);
    let mut client = client_2026(&server);
    let id = start_2026(&mut client, "ask_twice");
    recv(&controls.reached, "the handler's start");
    let first = poll_until(&mut client, &id, status_is("input_required"));
    let requests = first["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .clone();
    assert_eq!(requests.len(), 1, "{}", first);
    let (key1, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    update(
        &mut client,
        &id,
        json!({"nobody-asked": {"action": "accept"}}),
    );
    assert_eq!(
        poll_until(&mut client, &id, |_| true)["status"],
        "input_required"
    );
    update(
        &mut client,
        &id,
        json!({ key1.clone(): {"action": "accept", "content": {"n": 1}} }),
    );
    let second = poll_until(&mut client, &id, |t| {
        t["status"] == "input_required" && t["inputRequests"].get(key1.as_str()).is_none()
    });
    let key2 = first_key(&second["inputRequests"]);
    assert_ne!(&key2, key1, "keys are unique over the task's life");
    update(
        &mut client,
        &id,
        json!({ key2: {"action": "accept", "content": {"n": 2}} }),
    );
    let done = poll_until(&mut client, &id, status_is("completed"));
    assert_eq!(
        done["result"]["content"][0]["text"],
        r#"{"n":1} then {"n":2}"#
    );
}

// SEP-2663 "Task Cancellation": cancel while working and while
// input_required settles `cancelled` (and stays so when the handler
// returns); a terminal task acknowledges and keeps its status.
#[test]
fn cancel_2026_in_each_state() {
    let (server, controls) = task_server(None);
    let mut client = client_2026(&server);
    let id = start_2026(&mut client, "gated");
    recv(&controls.reached, "the handler's start");
    let ack = ok(
        mcall(&mut client, "tasks/cancel", json!({"taskId": id})),
        "cancel",
    );
    assert_eq!(ack["resultType"], "complete");
    assert!(
        recv(&controls.cancelled, "the handler's end"),
        "the flag was not set"
    );
    assert_eq!(
        poll_until(&mut client, &id, |_| true)["status"],
        "cancelled"
    );
    let asking = start_2026(&mut client, "ask_twice");
    poll_until(&mut client, &asking, status_is("input_required"));
    ok(
        mcall(&mut client, "tasks/cancel", json!({"taskId": asking})),
        "cancel",
    );
    let cancelled = poll_until(&mut client, &asking, |_| true);
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("inputRequests").is_none());
    let done = start_2026(&mut client, "tool_error");
    poll_until(&mut client, &done, status_is("completed"));
    ok(
        mcall(&mut client, "tasks/cancel", json!({"taskId": done})),
        "cancel",
    );
    assert_eq!(
        poll_until(&mut client, &done, |_| true)["status"],
        "completed"
    );
}

// SEP-2663 "Capability Negotiation", "Error Handling": without the
// extension in the request, tasks/* is -32021 and a task-optional tool
// answers at once; a task-required tool is -32021 naming the extension;
// tasks/result and tasks/list do not exist; an unknown id is -32602.
#[test]
fn gating_2026_and_errors() {
    let (server, _controls) = task_server(None);
    let mut client = client_2026(&server);
    let discover = ok(mcall(&mut client, "server/discover", json!({})), "discover");
    assert!(
        discover["capabilities"]["extensions"].get(EXT).is_some(),
        "{}",
        discover
    );
    assert!(
        discover["capabilities"].get("tasks").is_none(),
        "{}",
        discover
    );
    // A 2026-07-28 Tool has no `execution` (a 2025-11-25 field).
    let tools = ok(mcall(&mut client, "tools/list", json!({})), "tools/list");
    assert!(tools["tools"][0].get("execution").is_none(), "{}", tools);
    let mut v2025 = connect(&server, json!({}));
    let tools = ok(v2025.request("tools/list", None), "2025-11-25 tools/list");
    assert_eq!(tools["tools"][0]["execution"]["taskSupport"], "optional");
    let plain = |client: &mut MemoryClient, method: &str, params: Value| {
        client.request(method, Some(env(params, false)))
    };
    let e = plain(&mut client, "tasks/get", json!({"taskId": "x"}));
    expect_error(e, ErrorCode(-32021), "tasks/get without the extension");
    let sync = ok(
        plain(&mut client, "tools/call", json!({"name": "tool_error"})),
        "call",
    );
    assert_eq!(
        sync["resultType"], "complete",
        "an optional tool, no extension: {}",
        sync
    );
    assert_eq!(sync["isError"], true);
    let e = plain(&mut client, "tools/call", json!({"name": "required"}));
    let e = expect_error(e, ErrorCode(-32021), "a task-required tool");
    assert!(e.data.unwrap()["requiredCapabilities"]["extensions"]
        .get(EXT)
        .is_some());
    for removed in ["tasks/result", "tasks/list"] {
        let e = mcall(&mut client, removed, json!({"taskId": "x"}));
        expect_error(e, ErrorCode::METHOD_NOT_FOUND, removed);
    }
    let e = mcall(&mut client, "tasks/get", json!({"taskId": "no-such-task"}));
    expect_error(e, ErrorCode::INVALID_PARAMS, "an unknown task");
    let sync = ok(
        mcall(
            &mut client,
            "tools/call",
            json!({"name": "sync", "task": {"ttl": 5}}),
        ),
        "sync",
    );
    assert!(
        sync.get("taskId").is_none() && sync["resultType"] == "complete",
        "{}",
        sync
    );
    let bare = Server::builder("no-tasks", "1").build();
    let mut other = client_2026(&bare);
    let e = mcall(&mut other, "tasks/get", json!({"taskId": "x"}));
    expect_error(
        e,
        ErrorCode::METHOD_NOT_FOUND,
        "tasks/get on a server without tasks",
    );
}

// SEP-2663 "Task Creation" (MRTR first): the request asks for input
// itself, and the retry becomes a task whose result has the answer.
#[test]
fn input_2026_in_the_request_then_a_task() {
    let (server, _controls) = task_server(None);
    let mut client = client_2026(&server);
    let first = ok(
        mcall(&mut client, "tools/call", json!({"name": "late"})),
        "round 1",
    );
    assert_eq!(first["resultType"], "input_required", "{}", first);
    assert!(first.get("taskId").is_none());
    let key = first_key(&first["inputRequests"]);
    let mut retry = json!({"name": "late", "inputResponses": {
        key: {"action": "accept", "content": {"name": "Ada"}}}});
    if let Some(state) = first.get("requestState") {
        retry["requestState"] = state.clone();
    }
    let created = ok(mcall(&mut client, "tools/call", retry), "round 2");
    assert_eq!(created["resultType"], "task", "{}", created);
    assert!(created.get("requestState").is_none());
    let id = created["taskId"].as_str().unwrap().to_string();
    let done = poll_until(&mut client, &id, status_is("completed"));
    assert_eq!(
        done["result"]["content"][0]["text"],
        r#"late: {"name":"Ada"}"#
    );
}

// TaskLimits: per owner (a stdio connection owns its tasks), running at
// once, result size, and the TTL (0: gone at once, -32602).
#[test]
fn limits_bound_tasks() {
    let limits = TaskLimits {
        max_tasks_per_owner: 1,
        max_result_bytes: 16,
        ..TaskLimits::default()
    };
    let (server, controls) = task_server(Some(limits));
    let mut client = client_2026(&server);
    let id = start_2026(&mut client, "tool_error");
    let failed = poll_until(&mut client, &id, |t| t["status"] != "working");
    assert_eq!(
        failed["status"], "failed",
        "a result over 16 bytes: {}",
        failed
    );
    let e = mcall(&mut client, "tools/call", json!({"name": "gated"}));
    expect_error(e, ErrorCode::INTERNAL_ERROR, "a second task of one owner");
    drop(controls);
    let limits = TaskLimits {
        max_running: 1,
        max_ttl: Duration::from_millis(1),
        ..TaskLimits::default()
    };
    let (server, controls) = task_server(Some(limits));
    let mut client = client_2026(&server);
    let id = start_2026(&mut client, "gated");
    recv(&controls.reached, "the handler's start");
    let e = mcall(&mut client, "tools/call", json!({"name": "gated"}));
    expect_error(e, ErrorCode::INTERNAL_ERROR, "a second running task");
    // What passes here is the task's 1 ms TTL, not another thread's work.
    std::thread::sleep(Duration::from_millis(2));
    // Running, it outlives its TTL and can still be cancelled...
    let task = ok(
        mcall(&mut client, "tasks/get", json!({"taskId": id})),
        "get",
    );
    assert_eq!(task["status"], "working", "{}", task);
    ok(
        mcall(&mut client, "tasks/cancel", json!({"taskId": id})),
        "cancel",
    );
    // ...and once it ended, it is forgotten (-32602).
    let deadline = Instant::now() + WAIT;
    while mcall(&mut client, "tasks/get", json!({"taskId": id})).is_ok() {
        assert!(Instant::now() < deadline, "the expired task stayed");
        std::thread::yield_now();
    }
    let e = mcall(&mut client, "tasks/get", json!({"taskId": id}));
    expect_error(e, ErrorCode::INVALID_PARAMS, "an expired task");
}

// ---------------------------------------------------------------------------
// 2025-11-25 on the in-memory dispatcher
// ---------------------------------------------------------------------------

fn start_2025(client: &mut MemoryClient, tool: &str, ttl: u64) -> Value {
    let params = json!({"name": tool, "arguments": {}, "task": {"ttl": ttl}});
    let created = ok(
        client.request("tools/call", Some(params)),
        "tools/call as a task",
    );
    let task = created["task"].clone();
    assert_eq!(task["status"], "working", "{}", created);
    assert_eq!(task["ttl"], ttl);
    assert!(task.get("ttlMs").is_none() && created.get("resultType").is_none());
    task
}

// basic/utilities/tasks (2025-11-25): the capability; TASK-1..9 for a task
// that completes: get, list, result (blocks, tagged), status
// notifications, and cancel of a terminal task (-32602).
#[test]
fn task_2025_lifecycle() {
    let (server, controls) = task_server(None);
    let mut client = connect(&server, json!({"elicitation": {}}));
    let caps = server.capabilities();
    assert!(caps.tasks.is_some() && caps.extensions.is_some());
    let task = start_2025(&mut client, "gated", 5_000);
    let id = task["taskId"].as_str().unwrap().to_string();
    recv(&controls.reached, "the handler's start");
    let got = ok(
        client.request("tasks/get", Some(json!({"taskId": id}))),
        "tasks/get",
    );
    assert_eq!(
        (&got["status"], &got["ttl"]),
        (&json!("working"), &json!(5000))
    );
    let listed = ok(client.request("tasks/list", None), "tasks/list");
    assert_eq!(listed["tasks"][0]["taskId"], id.as_str());
    let waiting = client.send_request("tasks/result", Some(json!({"taskId": id})));
    controls.release.send(()).unwrap();
    let result = ok(client.wait_response(&waiting), "tasks/result");
    assert_eq!(result["content"][0]["text"], "released");
    assert_eq!(result["_meta"][RELATED]["taskId"], id.as_str());
    let e = client.request("tasks/cancel", Some(json!({"taskId": id})));
    expect_error(e, ErrorCode::INVALID_PARAMS, "cancel of a terminal task");
    let statuses: Vec<Value> = client
        .take_notifications()
        .into_iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "notifications/tasks/status" => n.params,
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses.last().map(|s| s["status"].clone()),
        Some(json!("completed"))
    );
}

// TASK-2: a task for a tool without task support is -32601, and a
// task-required tool called without one likewise; TASK-9: cancel moves to
// `cancelled` before it answers.
#[test]
fn task_2025_support_and_cancel() {
    let (server, controls) = task_server(None);
    let mut client = connect(&server, json!({}));
    let e = client.request("tools/call", Some(json!({"name": "sync", "task": {}})));
    expect_error(e, ErrorCode::METHOD_NOT_FOUND, "a task of a sync tool");
    let e = client.request("tools/call", Some(json!({"name": "required"})));
    expect_error(
        e,
        ErrorCode::METHOD_NOT_FOUND,
        "a required tool without a task",
    );
    let task = start_2025(&mut client, "gated", 60_000);
    recv(&controls.reached, "the handler's start");
    let cancelled = ok(
        client.request("tasks/cancel", Some(json!({"taskId": task["taskId"]}))),
        "tasks/cancel",
    );
    assert_eq!(cancelled["status"], "cancelled");
    assert!(recv(&controls.cancelled, "the handler's end"));
    let e = client.request("tasks/result", Some(json!({"taskId": task["taskId"]})));
    expect_error(
        e,
        ErrorCode::INVALID_PARAMS,
        "the result of a cancelled task",
    );
}

// TASK-4, TASK-7 (2025-11-25): a task's elicitation is sent to the client
// tagged with the task, and the task is input_required until it answers;
// a task of a session that closes is cancelled.
#[test]
fn task_2025_asks_the_client() {
    let (server, controls) = task_server(None);
    let mut client = connect(&server, json!({"elicitation": {}}));
    let task = start_2025(&mut client, "ask_twice", 60_000);
    let id = task["taskId"].clone();
    recv(&controls.reached, "the handler's start");
    for n in 1..=2 {
        let asked = loop {
            match crate::support::next_message(&mut client, "the elicitation") {
                Message::Request(r) => break r,
                Message::Notification(n) if n.method == "notifications/tasks/status" => {}
                other => panic!("expected a request, got {:?}", other),
            }
        };
        assert_eq!(asked.method, "elicitation/create");
        let params = asked.params.clone().unwrap_or_default();
        assert_eq!(params["_meta"][RELATED]["taskId"], id);
        let got = ok(
            client.request("tasks/get", Some(json!({"taskId": id}))),
            "get",
        );
        assert_eq!(got["status"], "input_required");
        client.send(Message::Response(Response {
            id: Some(asked.id),
            outcome: Ok(json!({"action": "accept", "content": {"n": n}})),
        }));
    }
    let result = ok(
        client.request("tasks/result", Some(json!({"taskId": id}))),
        "result",
    );
    assert_eq!(result["content"][0]["text"], r#"{"n":1} then {"n":2}"#);
    start_2025(&mut client, "gated", 60_000);
    recv(&controls.reached, "the second handler's start");
    drop(client);
    assert!(
        recv(&controls.cancelled, "the handler's end"),
        "the session closed"
    );
}

// ---------------------------------------------------------------------------
// stdio and HTTP
// ---------------------------------------------------------------------------

// stdio, both eras: the `everything` example's slow_compute runs as a task.
#[test]
fn stdio_tasks_in_both_eras() {
    let (mut child, _) = ChildServer::initialized("everything", json!({}));
    child.request(
        json!(1),
        "tools/call",
        json!({"name": "slow_compute",
        "arguments": {"seconds": 0}, "task": {"ttl": 60000}}),
    );
    let (created, _) = child.wait_response(&json!(1), "the CreateTaskResult");
    let id = created["result"]["task"]["taskId"].clone();
    child.request(json!(2), "tasks/result", json!({"taskId": id}));
    let (result, _) = child.wait_response(&json!(2), "tasks/result");
    assert!(result["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("computed"));
    let mut v2026 = ChildServer::spawn_example("everything");
    v2026.request(
        json!(1),
        "tools/call",
        env(
            json!({"name": "slow_compute",
        "arguments": {"seconds": 0}}),
            true,
        ),
    );
    let (created, _) = v2026.wait_response(&json!(1), "the CreateTaskResult");
    assert_eq!(created["result"]["resultType"], "task", "{}", created);
    let id = created["result"]["taskId"].clone();
    let deadline = Instant::now() + WAIT;
    for n in 2.. {
        v2026.request(json!(n), "tasks/get", env(json!({"taskId": id}), true));
        let (got, _) = v2026.wait_response(&json!(n), "tasks/get");
        if got["result"]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "never completed: {}", got);
    }
}

fn serve(server: Server) -> HttpServer {
    server
        .http()
        .serve("127.0.0.1:0")
        .expect("serve on 127.0.0.1:0")
}

fn post_2026(id: u64, method: &str, params: Value, name: &str) -> Req {
    Req::post(rpc(json!(id), method, env(params, true)))
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
}

// SEP-2663 "Streamable HTTP: Routing Headers": a task started on one
// connection is polled from another (the client reconnected); Mcp-Name
// must name the task.
#[test]
fn http_2026_task_polled_after_reconnecting() {
    let (server, controls) = task_server(None);
    let http = serve(server);
    let addr = http.local_addr();
    let mut first = Conn::open(addr);
    let created = first.request(
        &post_2026(1, "tools/call", json!({"name": "gated"}), "gated"),
        "create",
    );
    let id = created.rpc()["result"]["taskId"]
        .as_str()
        .expect("a taskId")
        .to_string();
    drop(first);
    recv(&controls.reached, "the handler's start");
    controls.release.send(()).unwrap();
    let mut second = Conn::open(addr);
    let wrong = second.request(
        &post_2026(2, "tasks/get", json!({"taskId": id}), "other"),
        "mismatch",
    );
    wrong.expect_status(400, "Mcp-Name naming another task");
    let deadline = Instant::now() + WAIT;
    for n in 3.. {
        let got = second.request(
            &post_2026(n, "tasks/get", json!({"taskId": id}), &id),
            "get",
        );
        let task = got.rpc()["result"].clone();
        if task["status"] == "completed" {
            assert_eq!(task["result"]["content"][0]["text"], "released");
            break;
        }
        assert!(Instant::now() < deadline, "never completed: {}", task);
    }
    http.shutdown();
}

// 2025-11-25 HTTP: a session's task is fetched with tasks/result on a new
// connection of the same session.
#[test]
fn http_2025_task_result_on_a_new_connection() {
    let (server, controls) = task_server(None);
    let http = serve(server);
    let addr = http.local_addr();
    let session = open_session(addr, "2025-11-25", json!({}));
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": "gated", "task": {"ttl": 60000}}),
    );
    let created = Conn::open(addr).request(&Req::post(body).session(&session), "create");
    let id = created.rpc()["result"]["task"]["taskId"].clone();
    assert!(id.is_string(), "{}", created.rpc());
    recv(&controls.reached, "the handler's start");
    controls.release.send(()).unwrap();
    let body = rpc(json!(2), "tasks/result", json!({"taskId": id}));
    let result = Conn::open(addr).request(&Req::post(body).session(&session), "tasks/result");
    assert_eq!(result.rpc()["result"]["content"][0]["text"], "released");
    http.shutdown();
}

/// Polls `tasks/get` over HTTP until `done` holds, at most [`WAIT`].
fn http_poll(conn: &mut Conn, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    for n in 100.. {
        let get = post_2026(n, "tasks/get", json!({ "taskId": id }), id);
        let task = conn.request(&get, "tasks/get").rpc()["result"].clone();
        if done(&task) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {} stayed {}", id, task);
    }
    unreachable!()
}

// SEP-2663 over Streamable HTTP: working, input_required twice (answered
// with tasks/update), completed; and a second task cancelled while it
// waits for input.
#[test]
fn http_2026_input_and_cancel() {
    let (server, _controls) = task_server(None);
    let http = serve(server);
    let mut conn = Conn::open(http.local_addr());
    let call = post_2026(1, "tools/call", json!({"name": "ask_twice"}), "ask_twice");
    let id = conn.request(&call, "create").rpc()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut used = Vec::new();
    for n in 1..=2 {
        let asking = http_poll(&mut conn, &id, |t| {
            t["status"] == "input_required"
                && !used
                    .iter()
                    .any(|k: &String| t["inputRequests"].get(k).is_some())
        });
        let key = first_key(&asking["inputRequests"]);
        let answer = json!({"taskId": id, "inputResponses": { key.clone(): {"action": "accept", "content": {"n": n}} }});
        let ack = conn.request(&post_2026(10 + n, "tasks/update", answer, &id), "update");
        assert_eq!(ack.rpc()["result"]["resultType"], "complete");
        used.push(key);
    }
    let done = http_poll(&mut conn, &id, |t| t["status"] == "completed");
    assert_eq!(
        done["result"]["content"][0]["text"],
        r#"{"n":1} then {"n":2}"#
    );
    let call = post_2026(2, "tools/call", json!({"name": "ask_twice"}), "ask_twice");
    let id = conn.request(&call, "create").rpc()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    http_poll(&mut conn, &id, |t| t["status"] == "input_required");
    let cancel = conn.request(
        &post_2026(3, "tasks/cancel", json!({"taskId": id}), &id),
        "cancel",
    );
    assert_eq!(cancel.rpc()["result"]["resultType"], "complete");
    assert_eq!(http_poll(&mut conn, &id, |_| true)["status"], "cancelled");
    http.shutdown();
}

// 2025-11-25 over stdio (the `everything` example): a task asks the client
// (tagged with the task, TASK-7) and is input_required until it answers;
// a running task is cancelled (TASK-9: the answer is the cancelled task).
#[test]
fn stdio_2025_input_and_cancel() {
    let (mut child, _) = ChildServer::initialized("everything", json!({"elicitation": {}}));
    child.request(
        json!(1),
        "tools/call",
        json!({"name": "confirm_delete",
        "arguments": {"filename": "f"}, "task": {"ttl": 60000}}),
    );
    let (created, _) = child.wait_response(&json!(1), "the CreateTaskResult");
    let id = created["result"]["task"]["taskId"].clone();
    let asked = loop {
        let message = child.next_message("the elicitation");
        if message["method"] == "elicitation/create" {
            break message;
        }
    };
    assert_eq!(asked["params"]["_meta"][RELATED]["taskId"], id);
    child.request(json!(2), "tasks/get", json!({"taskId": id}));
    let (got, _) = child.wait_response(&json!(2), "tasks/get");
    assert_eq!(got["result"]["status"], "input_required");
    child.send(&json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"confirm": true}}}));
    child.request(json!(3), "tasks/result", json!({"taskId": id}));
    let (result, _) = child.wait_response(&json!(3), "tasks/result");
    assert_eq!(result["result"]["content"][0]["text"], "Deleted f");
    child.request(
        json!(4),
        "tools/call",
        json!({"name": "slow_compute",
        "arguments": {"seconds": 60}, "task": {}}),
    );
    let (created, _) = child.wait_response(&json!(4), "the second CreateTaskResult");
    let id = created["result"]["task"]["taskId"].clone();
    child.request(json!(5), "tasks/cancel", json!({"taskId": id}));
    let (cancelled, _) = child.wait_response(&json!(5), "tasks/cancel");
    assert_eq!(cancelled["result"]["status"], "cancelled");
}
