//! Resuming a 2025-11-25 stream follows progress (basic/transports
//! "Resumability and Redelivery", HTTP-6): a server that closes the
//! stream after every event makes the client poll with `Last-Event-ID`
//! for as long as each reconnection brings a new event; reconnections in
//! a row that bring nothing are limited (`max_idle_resumes`, default 5),
//! and the call's timeout bounds it all.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{CallOptions, Client, Era, ErrorKind};

use super::fake::{self, Fake, Reply, Request};

/// What the server does on a resuming GET.
#[derive(Clone, Copy)]
enum Step {
    /// Sends the next progress notification, with the next event id, and
    /// closes.
    Progress,
    /// Sends only a comment, and closes.
    Nothing,
    /// Sends the call's result.
    Answer,
}

/// A stream event: `id` and one JSON-RPC message.
fn event(id: usize, message: &Value) -> String {
    format!("id: p-{}\r\nretry: 10\r\ndata: {}\r\n\r\n", id, message)
}

fn progress(token: &Value, n: usize) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": token, "progress": n}})
}

/// A 2025-11-25 server whose `tools/call` stream sends progress 1 with
/// event id `p-1` and closes; its `n`-th resuming GET does `plan(n)`.
fn polling(plan: impl Fn(usize) -> Step + Send + Sync + 'static) -> Fake {
    let call: Arc<Mutex<Option<Request>>> = Arc::default();
    let gets = Arc::new(Mutex::new(0));
    Fake::start(move |request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        if request.rpc() == "tools/call" {
            *call.lock() = Some(request.clone());
            let token = &request.json()["params"]["_meta"]["progressToken"];
            let events = event(1, &progress(token, 1));
            return Reply::Close(format!("{}{}", fake::SSE_HEAD, events).into_bytes());
        }
        let call = match call.lock().clone() {
            Some(call) if request.method == "GET" => call,
            _ => return Reply::Keep(fake::answer(405, "text/plain", "", "")),
        };
        let last: usize = request
            .header("last-event-id")
            .and_then(|id| id.trim_start_matches("p-").parse().ok())
            .unwrap_or(0);
        let n = {
            let mut gets = gets.lock();
            *gets += 1;
            *gets
        };
        let token = &call.json()["params"]["_meta"]["progressToken"];
        let body = match plan(n) {
            Step::Progress => event(last + 1, &progress(token, last + 1)),
            Step::Nothing => ": nothing yet\r\n\r\n".to_string(),
            Step::Answer => {
                let result: Value =
                    serde_json::from_str(&fake::text_result(&call, "done")).unwrap();
                event(last + 1, &result)
            }
        };
        Reply::Close(format!("{}{}", fake::SSE_HEAD, body).into_bytes())
    })
}

/// A call of `t` with a progress callback (`max_idle_resumes` as given,
/// else the default); its outcome and the progress seen.
fn call(
    server: &Fake,
    timeout: Duration,
    max_idle: Option<usize>,
) -> (Result<String, tiny_mcp::Error>, Vec<f64>) {
    let mut builder = Client::builder("polling-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20));
    if let Some(max_idle) = max_idle {
        builder = builder.max_idle_resumes(max_idle);
    }
    let client = builder.connect_http(&server.url("/mcp")).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let options = CallOptions::new()
        .timeout(timeout)
        .on_progress(move |p| s.lock().push(p.progress));
    let outcome = client.call_tool_with("t", Value::Null, &options).map(|r| {
        let content = serde_json::to_value(&r.content).unwrap();
        content[0]["text"].as_str().unwrap_or("").to_string()
    });
    let seen = seen.lock().clone();
    (outcome, seen)
}

fn resuming_gets(server: &Fake) -> Vec<Request> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .collect()
}

// HTTP-6, "Resumability and Redelivery": the stream is closed after each
// of 20 progress events, the answer comes on the 21st connection; every
// resuming GET carries the session and the last event id.
#[test]
fn a_stream_closed_after_every_event_is_followed_to_its_answer() {
    let server = polling(|n| if n < 20 { Step::Progress } else { Step::Answer });
    let (outcome, seen) = call(&server, Duration::from_secs(20), None);
    assert_eq!(outcome.unwrap(), "done");
    let want: Vec<f64> = (1..=20).map(|n| n as f64).collect();
    assert_eq!(seen, want);
    let gets = resuming_gets(&server);
    assert_eq!(gets.len(), 20);
    for (i, get) in gets.iter().enumerate() {
        let last = format!("p-{}", i + 1);
        assert_eq!(get.header("last-event-id"), Some(last.as_str()));
        assert_eq!(get.header("mcp-session-id"), Some("s-1"));
    }
}

// Reconnections that bring nothing: five in a row are waited out, a
// sixth ends the call with an error that says so; max_idle_resumes(1)
// allows one.
#[test]
fn reconnections_that_bring_nothing_are_limited() {
    let patient = polling(|n| if n <= 5 { Step::Nothing } else { Step::Answer });
    let (outcome, _) = call(&patient, Duration::from_secs(20), None);
    assert_eq!(outcome.unwrap(), "done");
    let silent = polling(|_| Step::Nothing);
    let (outcome, _) = call(&silent, Duration::from_secs(20), None);
    let err = outcome.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Protocol(m) if m.contains("6 reconnections in a row")),
        "{:?}",
        err
    );
    assert_eq!(resuming_gets(&silent).len(), 6);
    let strict = polling(|_| Step::Nothing);
    let (outcome, _) = call(&strict, Duration::from_secs(20), Some(1));
    assert!(outcome.is_err());
    assert_eq!(resuming_gets(&strict).len(), 2, "max_idle_resumes(1)");
}

// A stream that keeps making progress but never answers is bounded by the
// call's timeout.
#[test]
fn endless_progress_meets_the_timeout() {
    let server = polling(|_| Step::Progress);
    let (outcome, seen) = call(&server, Duration::from_millis(800), None);
    let err = outcome.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{:?}", err);
    assert!(seen.len() > 5, "{:?}", seen);
}
