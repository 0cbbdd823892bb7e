//! A handler's waits that a cancel ends ([`RequestContext::sleep`],
//! [`RequestContext::wait_for`]), in the 2025-11-25 era, where the client
//! cancels with `notifications/cancelled`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, Error, ErrorKind, JsonObject, RequestContext, Server, Tool};

use crate::support::{call_tool, connect, first_text, recv, WAIT};

/// Far longer than any test waits: a sleep that ends before it was
/// interrupted.
const LONG: Duration = Duration::from_secs(60);

/// What the handler's wait ended with, as the handler saw it.
fn describe<T: std::fmt::Debug>(outcome: &Result<T, Error>) -> String {
    match outcome {
        Ok(value) => format!("ok {:?}", value),
        Err(e) => match e.kind() {
            ErrorKind::Cancelled { reason } => format!("cancelled {:?}", reason),
            _ => format!("other error: {}", e),
        },
    }
}

// CAN-1, basic/utilities/cancellation: a handler in `ctx.sleep` is woken
// by `notifications/cancelled` at once, with the cancellation error (the
// one `check_cancelled` returns, with the client's reason), long before
// its 60 s pass.
#[test]
fn sleep_ends_when_the_request_is_cancelled() {
    let (started_tx, started) = unbounded();
    let (ended_tx, ended) = unbounded();
    let server = Server::builder("sleeper", "1")
        .tool(
            Tool::without_arguments("sleep"),
            move |ctx: &RequestContext, _: JsonObject| {
                let _ = started_tx.send(());
                let outcome = ctx.sleep(LONG);
                let _ = ended_tx.send(describe(&outcome));
                outcome?;
                Ok(CallToolResult::text("slept"))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let id = client.send_request("tools/call", Some(json!({"name": "sleep"})));
    recv(&started, "the start of the sleeping handler");
    let cancelled_at = Instant::now();
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id.to_value(), "reason": "user pressed stop"})),
    );
    let outcome = recv(&ended, "the end of ctx.sleep after the cancel");
    assert_eq!(outcome, "cancelled Some(\"user pressed stop\")");
    assert!(
        cancelled_at.elapsed() < WAIT,
        "the sleep ended only after {:?}",
        cancelled_at.elapsed()
    );
}

// CAN-1: a sleep of a request that is already cancelled returns at once;
// one that is not cancelled sleeps its time and returns `Ok`.
#[test]
fn sleep_sleeps_its_time_unless_cancelled() {
    let (ended_tx, ended) = unbounded();
    let server = Server::builder("sleeper", "1")
        .tool(
            Tool::without_arguments("nap"),
            move |ctx: &RequestContext, _: JsonObject| {
                let start = Instant::now();
                ctx.sleep(Duration::from_millis(30))?;
                let _ = ended_tx.send(start.elapsed());
                Ok(CallToolResult::text("rested"))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));
    let answer = call_tool(&mut client, "nap", Value::Null);
    assert_eq!(first_text(&answer), "rested");
    let slept = recv(&ended, "the nap's length");
    assert!(slept >= Duration::from_millis(30), "slept only {:?}", slept);
}

// CAN-1: `ctx.wait_for` returns `Ok(true)` once its condition holds,
// `Ok(false)` when its time passes first, and the cancellation error as
// soon as the request is cancelled, whatever the condition.
#[test]
fn wait_for_ends_on_its_condition_its_time_or_a_cancel() {
    let (started_tx, started) = unbounded();
    let (ended_tx, ended) = unbounded();
    let ready = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&ready);
    let server = Server::builder("waiter", "1")
        .tool(
            Tool::new("wait", json!({"type": "object"})),
            move |ctx: &RequestContext, args: JsonObject| {
                let limit = match args.get("ms").and_then(Value::as_u64) {
                    Some(ms) => Duration::from_millis(ms),
                    None => LONG,
                };
                let _ = started_tx.send(());
                let outcome = ctx.wait_for(limit, || seen.load(Ordering::Acquire));
                let _ = ended_tx.send(describe(&outcome));
                Ok(CallToolResult::text(describe(&outcome)))
            },
        )
        .build();
    let mut client = connect(&server, json!({}));

    let answer = call_tool(&mut client, "wait", json!({"ms": 20}));
    assert_eq!(first_text(&answer), "ok false", "{}", answer);
    recv(&started, "the start of the first wait");
    recv(&ended, "the end of the first wait");

    let id = client.send_request("tools/call", Some(json!({"name": "wait"})));
    recv(&started, "the start of the wait to cancel");
    client.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id.to_value()})),
    );
    assert_eq!(
        recv(&ended, "the end of ctx.wait_for after the cancel"),
        "cancelled None"
    );

    let id = client.send_request("tools/call", Some(json!({"name": "wait"})));
    recv(&started, "the start of the wait that ends ready");
    ready.store(true, Ordering::Release);
    assert_eq!(
        recv(&ended, "the end of ctx.wait_for once ready"),
        "ok true"
    );
    let answer = client.recv_timeout(WAIT);
    assert!(
        matches!(&answer, Some(tiny_mcp::Message::Response(r)) if r.id.as_ref() == Some(&id)),
        "{:?}",
        answer
    );
}
