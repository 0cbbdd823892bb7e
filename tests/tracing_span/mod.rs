//! The `tracing` integration (feature `tracing`, DESIGN.md §29): one span
//! per request with the attributes of OpenTelemetry's MCP semantic
//! conventions, the handler's own events inside it, `error.type` recorded
//! when the request ends. A small `tracing::Subscriber` of our own records
//! what the crate emits; it is the process's global one (handlers run on
//! worker threads), so each test finds its spans by a tool name of its own.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, Once};
use std::time::Duration;

use serde_json::json;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::support::http::{open_session, rpc, send, Req, LATEST};

/// A span as the subscriber saw it.
#[derive(Debug, Clone, Default)]
struct SpanSeen {
    name: String,
    fields: HashMap<String, String>,
    /// Events emitted while it was the current span.
    events: Vec<String>,
    closed: bool,
}

/// Everything seen, shared by the tests of this binary.
#[derive(Default)]
struct Seen {
    spans: HashMap<u64, SpanSeen>,
}

static SEEN: Mutex<Option<Seen>> = Mutex::new(None);
static CHANGED: Condvar = Condvar::new();
static NEXT: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The spans entered on this thread, innermost last.
    static STACK: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Field values as strings.
struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{:?}", value));
    }
}

struct Recorder;

fn with_seen<R>(f: impl FnOnce(&mut Seen) -> R) -> R {
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let result = f(seen.get_or_insert_with(Seen::default));
    CHANGED.notify_all();
    result
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut span = SpanSeen {
            name: attrs.metadata().name().to_string(),
            ..SpanSeen::default()
        };
        attrs.record(&mut Fields(&mut span.fields));
        with_seen(|seen| seen.spans.insert(id, span));
        Id::from_u64(id)
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        with_seen(|seen| {
            if let Some(span) = seen.spans.get_mut(&id.into_u64()) {
                values.record(&mut Fields(&mut span.fields));
            }
        });
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let current = STACK.with(|stack| stack.borrow().last().copied());
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        if let Some(current) = current {
            with_seen(|seen| {
                if let Some(span) = seen.spans.get_mut(&current) {
                    span.events
                        .push(fields.get("message").cloned().unwrap_or_default());
                }
            });
        }
    }

    fn enter(&self, id: &Id) {
        STACK.with(|stack| stack.borrow_mut().push(id.into_u64()));
    }

    fn exit(&self, id: &Id) {
        STACK.with(|stack| {
            let mut stack = stack.borrow_mut();
            if stack.last() == Some(&id.into_u64()) {
                stack.pop();
            }
        });
    }

    fn try_close(&self, id: Id) -> bool {
        with_seen(|seen| {
            if let Some(span) = seen.spans.get_mut(&id.into_u64()) {
                span.closed = true;
            }
        });
        true
    }
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        tracing::subscriber::set_global_default(Recorder).expect("the only global subscriber");
    });
}

/// The closed request spans whose `gen_ai.tool.name` is `tool`, waiting
/// (bounded) until `n` have closed.
fn closed_spans(tool: &str, n: usize) -> Vec<SpanSeen> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let spans: Vec<SpanSeen> = seen
            .as_ref()
            .map(|s| {
                s.spans
                    .values()
                    .filter(|s| s.fields.get("gen_ai.tool.name").map(String::as_str) == Some(tool))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let now = std::time::Instant::now();
        if spans.iter().filter(|s| s.closed).count() >= n || now >= deadline {
            return spans;
        }
        seen = CHANGED
            .wait_timeout(seen, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// OpenTelemetry MCP semantic conventions (server spans): one span per
// request named `{mcp.method.name} {target}`, with mcp.method.name,
// gen_ai.tool.name, mcp.session.id, jsonrpc.request.id,
// mcp.protocol.version and error.type (`tool_error` for an isError
// result); the handler's own events nest under it.
#[test]
fn one_span_per_request_with_the_conventions_attributes() {
    install();
    let server = Server::builder("traced", "1.0.0")
        .tool(
            Tool::new("span_probe", json!({"type": "object"})),
            |_: &RequestContext, args: JsonObject| {
                tracing::info!("inside the handler");
                if args.contains_key("fail") {
                    return Ok(CallToolResult::error("failed on purpose"));
                }
                Ok(CallToolResult::text("ok"))
            },
        )
        .build();
    let http = server.http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let call = |id: u64, arguments: serde_json::Value| {
        let params = json!({"name": "span_probe", "arguments": arguments,
                            "_meta": {"traceparent": PARENT}});
        let body = rpc(json!(id), "tools/call", params);
        send(addr, &Req::post(body).session(&session), "tools/call")
            .expect_status(200, "tools/call");
    };
    call(7, json!({}));
    call(8, json!({"fail": true}));
    let spans = closed_spans("span_probe", 2);
    assert_eq!(spans.len(), 2, "one span per request: {:?}", spans);
    let by_id = |id: &str| {
        spans
            .iter()
            .find(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some(id))
            .unwrap_or_else(|| panic!("no span of request {}: {:?}", id, spans))
    };
    let ok = by_id("7");
    assert!(ok.closed, "the span closes with its request");
    assert_eq!(ok.name, "mcp.server.request");
    for (key, value) in [
        ("otel.name", "tools/call span_probe"),
        ("otel.kind", "server"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.session.id", session.as_str()),
        ("mcp.protocol.version", LATEST),
        ("network.transport", "tcp"),
    ] {
        assert_eq!(
            ok.fields.get(key).map(String::as_str),
            Some(value),
            "{}",
            key
        );
    }
    assert_eq!(ok.fields.get("error.type"), None, "a result is no error");
    assert_eq!(ok.events, vec!["inside the handler".to_string()]);
    let failed = by_id("8");
    assert_eq!(
        failed.fields.get("error.type").map(String::as_str),
        Some("tool_error")
    );
    http.shutdown();
}
