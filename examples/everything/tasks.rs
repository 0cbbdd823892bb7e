//! The task fixtures of the pre-release conformance suite's `tasks-*`
//! scenarios (CONFORMANCE-NEXT.md §4): tools whose calls run as tasks
//! (basic/utilities/tasks in 2025-11-25, the tasks extension SEP-2663 in
//! 2026-07-28). Each handler is the same code it would be for a plain
//! call; the server decides whether the call is a task.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitRequestFormParams, Error, ErrorObject, InputRequest, JsonObject,
    RequestContext, ServerBuilder, TaskSupport, Tool,
};

/// Adds the task fixtures.
pub fn add(builder: ServerBuilder) -> ServerBuilder {
    let optional = TaskSupport::Optional;
    builder
        .tool(
            Tool::new(
                "greet",
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            )
            .with_description("Says hello (never a task)"),
            greet,
        )
        .tool(
            Tool::new(
                "slow_compute",
                json!({"type": "object", "properties": {
                    "seconds": {"type": "number", "minimum": 0},
                    "label": {"type": "string"}}}),
            )
            .with_description("Sleeps `seconds` (cancellable), then answers; runs as a task")
            .with_task_support(optional),
            slow_compute,
        )
        .tool(
            Tool::without_arguments("failing_job")
                .with_description("Fails with a tool error after about a second; only as a task")
                .with_task_support(TaskSupport::Required),
            failing_job,
        )
        .tool(
            Tool::without_arguments("protocol_error_job")
                .with_description("Ends with a JSON-RPC error; runs as a task")
                .with_task_support(optional),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Err(Error::rpc(ErrorObject::internal(
                    "protocol_error_job failed on purpose",
                )))
            },
        )
        .tool(
            Tool::new(
                "confirm_delete",
                json!({"type": "object", "properties": {"filename": {"type": "string"}}}),
            )
            .with_description("Asks the user to confirm, then 'deletes' the file; runs as a task")
            .with_task_support(optional),
            confirm_delete,
        )
        .tool(
            Tool::without_arguments("multi_input")
                .with_description("Asks two questions at once; runs as a task")
                .with_task_support(optional),
            multi_input,
        )
        .tool(
            Tool::without_arguments("test_tool_with_task")
                .with_description("Asks for user_name in the request, then runs on as a task")
                .with_task_support(TaskSupport::Required),
            tool_with_task,
        )
        .tasks_start_in_handler("test_tool_with_task")
}

fn greet(_: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let name = args.get("name").and_then(Value::as_str).unwrap_or("World");
    Ok(CallToolResult::text(format!("Hello, {}!", name)))
}

/// Sleeps in short steps, so that a cancel ends it at once.
fn slow_compute(ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
    let seconds = seconds.clamp(0.0, 3600.0);
    sleep(ctx, Duration::from_secs_f64(seconds))?;
    let label = args.get("label").and_then(Value::as_str).unwrap_or("job");
    Ok(CallToolResult::text(format!(
        "{}: computed after {} s",
        label, seconds
    )))
}

fn failing_job(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    sleep(ctx, Duration::from_secs(1))?;
    Ok(CallToolResult::error(
        "failing_job failed, as it always does",
    ))
}

fn confirm_delete(ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let file = args
        .get("filename")
        .and_then(Value::as_str)
        .unwrap_or("file");
    let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"]});
    let message = format!("Delete {}?", file);
    let answer = ctx.elicit(ElicitRequestFormParams::new(message, schema))?;
    let confirmed = answer.content.as_ref().and_then(|c| c.get("confirm")) == Some(&json!(true));
    Ok(CallToolResult::text(if confirmed {
        format!("Deleted {}", file)
    } else {
        format!("Kept {}", file)
    }))
}

fn multi_input(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    let ask = |message: &str, property: &str| {
        InputRequest::elicit(ElicitRequestFormParams::new(
            message,
            json!({"type": "object", "properties": {property: {"type": "string"}}}),
        ))
    };
    let answers = ctx.request_inputs(vec![
        ("name".to_string(), ask("Your name?", "name")),
        ("color".to_string(), ask("Your favourite colour?", "color")),
    ])?;
    let name = answers.elicit_result("name")?;
    let color = answers.elicit_result("color")?;
    Ok(CallToolResult::text(format!(
        "Answers: {} and {}",
        json!(name.content),
        json!(color.content)
    )))
}

/// MRTR first (the name is asked in the request), then a task.
fn tool_with_task(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "required": ["name"]});
    let answer = ctx.elicit(ElicitRequestFormParams::new("Your name?", schema))?;
    let name = answer
        .content
        .as_ref()
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("stranger")
        .to_string();
    ctx.start_task()?;
    sleep(ctx, Duration::from_millis(200))?;
    Ok(CallToolResult::text(format!(
        "Hello, {}! (from a task)",
        name
    )))
}

/// Waits `length`, waking every 20 ms to see whether it was cancelled.
fn sleep(ctx: &RequestContext, length: Duration) -> Result<(), Error> {
    let end = Instant::now() + length;
    loop {
        ctx.check_cancelled()?;
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}
