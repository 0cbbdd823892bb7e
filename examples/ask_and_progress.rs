//! A tool that reports progress while it works and asks the user a
//! question halfway (elicitation in form mode), over stdio.
//!
//! ```text
//! cargo run --example ask_and_progress
//! ```
//!
//! `book_table` searches for free times (progress 1 to 3 of 5), asks the
//! user to pick one and the number of guests, then books (progress 4 and
//! 5). Progress reaches clients that sent a `progressToken`
//! (basic/utilities/progress); the question reaches clients that declared
//! `elicitation` (client/elicitation); for others the call fails, naming
//! the missing capability.

use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitAction, ElicitRequestFormParams, Error, JsonObject, RequestContext,
    Server, Tool,
};

const STEPS: f64 = 5.0;

/// The slow part: three places to ask, one progress step each.
fn find_free_times(ctx: &RequestContext) -> Result<Vec<String>, Error> {
    let mut free = Vec::new();
    for (step, time) in ["18:00", "19:30", "21:00"].iter().enumerate() {
        // Asking a place takes a while; the client's cancel ends the wait
        // at once, with the cancellation error.
        ctx.sleep(Duration::from_millis(50))?;
        free.push(time.to_string());
        ctx.notify_progress(
            step as f64 + 1.0,
            Some(STEPS),
            Some("looking for free times"),
        );
    }
    Ok(free)
}

fn book_table(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    // In the 2025-11-25 era `elicit` below sends the question and waits.
    // In the 2026-07-28 era the server cannot wait: `elicit` ends this run
    // with `input_required`, the client asks the user and calls again with
    // the answer, and this handler runs again from the top (round 1). So
    // round 0 searches, with its progress, and keeps what it found in the
    // request state; later rounds take it from there instead.
    let free: Vec<String> = match ctx.round() {
        0 => {
            let free = find_free_times(ctx)?;
            ctx.set_request_state(json!(free));
            free
        }
        _ => serde_json::from_value(ctx.request_state().unwrap_or_default())?,
    };
    let form = ElicitRequestFormParams::new(
        "Which time should I book?",
        json!({
            "type": "object",
            "properties": {
                "time": {"type": "string", "title": "Time", "enum": free},
                "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 8, "default": 2}
            },
            "required": ["time"]
        }),
    );
    let answer = ctx.elicit(form)?;
    // The user may decline or dismiss the form, and the client may send
    // anything: check the answer before acting on it (ELIC-8).
    let content = match (answer.action, answer.content) {
        (ElicitAction::Accept, Some(content)) => content,
        _ => return Ok(CallToolResult::text("Nothing booked.")),
    };
    let time = content
        .get("time")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let guests = content.get("guests").and_then(Value::as_u64).unwrap_or(2);
    if !free.iter().any(|t| t == time) || !(1..=8).contains(&guests) {
        return Ok(CallToolResult::error(format!(
            "cannot book {} guests at {:?}",
            guests, time
        )));
    }
    // Once more right before booking: nothing is booked for a request
    // the client cancelled meanwhile.
    ctx.check_cancelled()?;
    ctx.notify_progress(4.0, Some(STEPS), Some("booking"));
    ctx.notify_progress(STEPS, Some(STEPS), Some("booked"));
    Ok(CallToolResult::text(format!(
        "Booked a table for {} at {}.",
        guests, time
    )))
}

fn main() -> Result<(), Error> {
    let tool = Tool::new("book_table", json!({"type": "object"}))
        .with_description("Books a table, asking the user for the time");
    Server::builder("ask-and-progress", "1.0.0")
        .tool(tool, book_table)
        .build()
        .serve_stdio()
}
