//! Tasks from the client: `call_tool` as a task (basic/utilities/tasks in
//! 2025-11-25; the tasks extension, SEP-2663, in 2026-07-28), against the
//! crate's own server in this process, over a socket speaking
//! newline-delimited JSON-RPC (`serve_io`) and over Streamable HTTP, in
//! both eras.

use std::io::BufReader;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CallToolResult, CancelToken, Client, ClientBuilder, ElicitRequestFormParams,
    ElicitRequestParams, ElicitResult, Era, Error, ErrorKind, HttpServer, JsonObject,
    RequestContext, Server, Task, TaskLimits, TaskStatus, TaskSupport, Tool,
};

use crate::support::{wait_release_or_cancel, WAIT};

/// The server's tools: `quick` (optional), `required` (required), `ask`
/// (optional; elicits a name), `plain` (no tasks) and `gated` (optional;
/// waits until the test releases it or it is cancelled, then reports
/// which on `cancelled`).
struct Fixture {
    server: Server,
    release: Sender<()>,
    cancelled: Receiver<bool>,
}

fn fixture() -> Fixture {
    let (release, released) = unbounded::<()>();
    let (saw, cancelled) = unbounded();
    let optional = TaskSupport::Optional;
    let limits = TaskLimits {
        poll_interval: Duration::from_millis(10),
        ..TaskLimits::default()
    };
    let server = Server::builder("client-tasks", "1")
        .task_limits(limits)
        .tool(
            Tool::without_arguments("quick").with_task_support(optional),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("quick ran"))
            },
        )
        .tool(
            Tool::without_arguments("required").with_task_support(TaskSupport::Required),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("required ran"))
            },
        )
        .tool(
            Tool::without_arguments("ask").with_task_support(optional),
            |ctx: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let answer = ctx.elicit(ElicitRequestFormParams::new("name?", schema))?;
                let name = answer.content.as_ref().and_then(|c| c.get("name"));
                Ok(CallToolResult::text(format!("hello {}", json!(name))))
            },
        )
        .tool(
            Tool::without_arguments("plain"),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("plain ran"))
            },
        )
        .tool(
            Tool::without_arguments("gated").with_task_support(optional),
            move |ctx: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                let _ = saw.send(wait_release_or_cancel(ctx, &released));
                ctx.check_cancelled()?;
                Ok(CallToolResult::text("released"))
            },
        )
        .build();
    Fixture {
        server,
        release,
        cancelled,
    }
}

fn builder(era: Era) -> ClientBuilder {
    Client::builder("client-tasks-test", "1")
        .era(era)
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(|request| match request {
            ElicitRequestParams::Form(_) => {
                let mut values = JsonObject::new();
                values.insert("name".into(), json!("Ada"));
                Ok(ElicitResult::accept(Some(values)))
            }
            _ => Ok(ElicitResult::decline()),
        })
}

/// A client connected to the fixture's server one way; ends the server's
/// side on drop.
struct Connected {
    client: Option<Client>,
    socket: Option<TcpStream>,
    serving: Option<JoinHandle<()>>,
    http: Option<HttpServer>,
}

impl Connected {
    fn client(&self) -> &Client {
        self.client.as_ref().expect("connected")
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        drop(self.client.take());
        if let Some(socket) = self.socket.take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
        if let Some(serving) = self.serving.take() {
            let _ = serving.join();
        }
        if let Some(http) = self.http.take() {
            http.shutdown();
        }
    }
}

/// Over a loopback socket, the server on `serve_io`.
fn over_socket(server: &Server, era: Era) -> Connected {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let socket = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (accepted, _) = listener.accept().unwrap();
    socket.set_nodelay(true).unwrap();
    accepted.set_nodelay(true).unwrap();
    let server = server.clone();
    let serving = std::thread::spawn(move || {
        let reader = BufReader::new(accepted.try_clone().unwrap());
        let _ = server.serve_io(reader, accepted);
    });
    let client = builder(era)
        .connect_io(
            BufReader::new(socket.try_clone().unwrap()),
            socket.try_clone().unwrap(),
        )
        .expect("connect over a socket");
    Connected {
        client: Some(client),
        socket: Some(socket),
        serving: Some(serving),
        http: None,
    }
}

/// Over Streamable HTTP on 127.0.0.1.
fn over_http(server: &Server, era: Era) -> Connected {
    let http = server.serve_http("127.0.0.1:0").expect("serve HTTP");
    let url = format!("http://{}/mcp", http.local_addr());
    let client = builder(era).connect_http(&url).expect("connect over HTTP");
    Connected {
        client: Some(client),
        socket: None,
        serving: None,
        http: Some(http),
    }
}

/// Runs `check` on each transport in each era.
fn each(check: impl Fn(&Fixture, &Client)) {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        for via in [over_socket, over_http] {
            let fixture = fixture();
            let connected = via(&fixture.server, era);
            assert_eq!(connected.client().era(), era);
            check(&fixture, connected.client());
        }
    }
}

fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(&result.content).unwrap();
    value[0]["text"].as_str().unwrap_or("").to_string()
}

/// Options that record every task the status callback is given.
fn recording(options: CallOptions) -> (CallOptions, Arc<Mutex<Vec<Task>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let options = options.on_task_status(move |task| record.lock().push(task.clone()));
    (options, seen)
}

fn statuses(seen: &Mutex<Vec<Task>>) -> Vec<TaskStatus> {
    seen.lock().iter().map(|t| t.status).collect()
}

// basic/utilities/tasks (2025-11-25) "Creating Tasks", SEP-2663: an
// optional tool called with task(true) runs as a task; the client polls it
// and returns its result, and the status callback sees `working` first and
// `completed` last. Without task(true) the same tool answers plainly.
#[test]
fn an_optional_tool_runs_as_a_task_when_asked() {
    each(|_, client| {
        let (options, seen) = recording(CallOptions::new().task(true));
        let result = client
            .call_tool_with("quick", Value::Null, &options)
            .unwrap();
        assert_eq!(text(&result), "quick ran");
        let statuses = statuses(&seen);
        assert_eq!(statuses.first(), Some(&TaskStatus::Working), "{:?}", seen);
        assert_eq!(statuses.last(), Some(&TaskStatus::Completed), "{:?}", seen);
        let task_id = seen.lock()[0].task_id.clone();
        assert_eq!(
            client.get_task(&task_id).unwrap().status,
            TaskStatus::Completed
        );
        let (plain, none) = recording(CallOptions::new());
        let result = client.call_tool_with("quick", Value::Null, &plain).unwrap();
        assert_eq!(text(&result), "quick ran");
        assert!(none.lock().is_empty(), "a task without task(true)");
    });
}

// server/tools (2025-11-25) `ToolExecution`: "required" means the client
// MUST call the tool as a task (TASK-2; SEP-2663: -32021 otherwise). A
// plain call_tool does so by itself, whether or not the tools were listed.
#[test]
fn a_required_tool_runs_as_a_task_by_itself() {
    each(|_, client| {
        let result = client.call_tool("required", Value::Null).unwrap();
        assert_eq!(text(&result), "required ran");
        assert!(client.list_tools().unwrap().len() >= 5);
        let result = client.call_tool("required", Value::Null).unwrap();
        assert_eq!(text(&result), "required ran");
        assert_eq!(
            text(&client.call_tool("plain", Value::Null).unwrap()),
            "plain ran"
        );
    });
}

// basic/utilities/tasks (2025-11-25) "Input Required" (the request comes
// tagged with the task and is answered as any server request); SEP-2663
// (the input requests shown by tasks/get, answered with tasks/update):
// the client's on_elicitation closure answers either way.
#[test]
fn a_tasks_input_is_answered_by_the_closures() {
    each(|_, client| {
        let (options, seen) = recording(CallOptions::new().task(true));
        let result = client.call_tool_with("ask", Value::Null, &options).unwrap();
        assert_eq!(text(&result), "hello \"Ada\"");
        let statuses = statuses(&seen);
        assert_eq!(statuses.first(), Some(&TaskStatus::Working), "{:?}", seen);
        assert_eq!(statuses.last(), Some(&TaskStatus::Completed), "{:?}", seen);
        if client.era() == Era::V2026_07_28 {
            // The client read the request from tasks/get.
            assert!(statuses.contains(&TaskStatus::InputRequired), "{:?}", seen);
        }
    });
}

// basic/utilities/tasks (2025-11-25) "Cancelling Tasks" (TASK-9), SEP-2663
// tasks/cancel: a call whose token fires while its task works sends
// tasks/cancel; the task is then `cancelled` and its handler saw it.
#[test]
fn a_cancelled_call_cancels_its_task() {
    each(|fixture, client| {
        let token = CancelToken::new();
        let fire = token.clone();
        let ids = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&ids);
        let options = CallOptions::new()
            .task(true)
            .cancel_token(token)
            .on_task_status(move |task| {
                record.lock().push(task.task_id.clone());
                fire.cancel();
            });
        let err = client
            .call_tool_with("gated", Value::Null, &options)
            .unwrap_err();
        assert!(err.is_cancelled(), "{:?}", err);
        let task_id = ids.lock().first().cloned().expect("a task was made");
        assert_eq!(
            client.get_task(&task_id).unwrap().status,
            TaskStatus::Cancelled
        );
        let saw = fixture
            .cancelled
            .recv_timeout(WAIT)
            .expect("the handler returned");
        assert!(saw, "the handler was released, not cancelled");
    });
}

// The call's timeout bounds the whole task; on expiry the task is
// cancelled as by a token (tasks/cancel) and the call says what timed out.
#[test]
fn a_timed_out_call_cancels_its_task() {
    each(|fixture, client| {
        let (options, seen) = recording(
            CallOptions::new()
                .task(true)
                .timeout(Duration::from_millis(300)),
        );
        let err = client
            .call_tool_with("gated", Value::Null, &options)
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Timeout { method, .. } if method == "tools/call"),
            "{:?}",
            err
        );
        let task_id = seen
            .lock()
            .first()
            .map(|t| t.task_id.clone())
            .expect("a task");
        assert_eq!(
            client.get_task(&task_id).unwrap().status,
            TaskStatus::Cancelled
        );
        assert!(fixture
            .cancelled
            .recv_timeout(WAIT)
            .expect("the handler returned"));
    });
}

/// Calls `gated` as a task on another thread, runs `act` with the task's
/// id once it exists, and returns what the call returned.
fn with_gated_call(client: &Client, act: impl FnOnce(&str)) -> Result<CallToolResult, Error> {
    let (tell, told) = crossbeam_channel::bounded(1);
    let options = CallOptions::new().task(true).on_task_status(move |task| {
        let _ = tell.try_send(task.task_id.clone());
    });
    std::thread::scope(|scope| {
        let call = scope.spawn(|| client.call_tool_with("gated", Value::Null, &options));
        let task_id = told.recv_timeout(WAIT).expect("the task's first status");
        act(&task_id);
        call.join().expect("the calling thread")
    })
}

// The lower-level calls: task_result waits for a task the program holds
// the id of (TASK-6); cancel_task cancels one (TASK-9), and a call
// following it ends cancelled; get_task of an unknown id is -32602
// (TASK-8); list_tasks (2025-11-25 only) lists them, and is refused in
// 2026-07-28, which removed it (EXT-3).
#[test]
fn tasks_by_id() {
    each(|fixture, client| {
        let mut released = String::new();
        let result = with_gated_call(client, |task_id| {
            released = task_id.to_string();
            fixture.release.send(()).unwrap();
            let awaited = client.task_result(task_id, &CallOptions::new()).unwrap();
            assert_eq!(text(&awaited), "released");
        });
        assert_eq!(text(&result.unwrap()), "released");
        assert!(!fixture
            .cancelled
            .recv_timeout(WAIT)
            .expect("the handler returned"));
        match client.era() {
            Era::V2025_11_25 => {
                let tasks = client.list_tasks().unwrap();
                assert!(tasks.iter().any(|t| t.task_id == released), "{:?}", tasks);
            }
            _ => assert!(client.list_tasks().is_err()),
        }
        let missing = client.get_task("no-such-task").unwrap_err();
        assert!(
            matches!(missing.kind(), ErrorKind::Peer(e) if e.code.0 == -32602),
            "{:?}",
            missing
        );
        let mut cancelled = String::new();
        let err = with_gated_call(client, |task_id| {
            cancelled = task_id.to_string();
            client.cancel_task(task_id).unwrap();
        })
        .unwrap_err();
        assert!(err.is_cancelled(), "{:?}", err);
        let task = client.get_task(&cancelled).unwrap();
        assert_eq!(task.status, TaskStatus::Cancelled);
        assert!(fixture
            .cancelled
            .recv_timeout(WAIT)
            .expect("the handler returned"));
    });
}

// basic/utilities/tasks (2025-11-25) "Tool-Level Negotiation": a tool
// whose taskSupport is "required" is called as a task even when the
// program never listed the tools, against a server that refuses a plain
// call of it with an isError result (as the TypeScript SDK's does), which
// the client could not retry on: the client lists the tools first.
#[test]
fn a_required_tool_is_found_out_before_a_plain_call() {
    use super::fake::{self, Fake, Reply};
    let server = Fake::start(|request| {
        let task = r#"{"taskId":"t-1","status":"STATUS","createdAt":"2026-12-05T00:00:00Z","lastUpdatedAt":"2026-12-05T00:00:00Z","pollInterval":10}"#;
        let body = match request.rpc().as_str() {
            "initialize" => {
                let body = fake::result(
                    request,
                    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"fake","version":"1"}}"#,
                );
                return Reply::Keep(fake::json(&body, "Mcp-Session-Id: s-1\r\n"));
            }
            m if m.starts_with("notifications/") => return Reply::Keep(fake::accepted()),
            "tools/list" => fake::result(
                request,
                r#"{"tools":[{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}"#,
            ),
            "tools/call" if request.json()["params"].get("task").is_some() => fake::result(
                request,
                &format!(r#"{{"task":{}}}"#, task.replace("STATUS", "working")),
            ),
            "tools/call" => fake::result(
                request,
                r#"{"content":[{"type":"text","text":"requires task augmentation"}],"isError":true}"#,
            ),
            "tasks/get" => fake::result(request, &task.replace("STATUS", "completed")),
            "tasks/result" => fake::text_result(request, "found"),
            _ => return Reply::Keep(fake::answer(405, "text/plain", "", "")),
        };
        Reply::Keep(fake::json(&body, ""))
    });
    let client = Client::builder("tasks-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .expect("connect");
    let result = client
        .call_tool("research", json!({}))
        .expect("the task's result");
    assert_eq!(result.is_error, None, "{:?}", result);
    let result = serde_json::to_value(result).unwrap();
    assert_eq!(result["content"][0]["text"], "found");
}
