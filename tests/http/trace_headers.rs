//! The trace context of a request on HTTP (DESIGN.md §29): from `_meta`
//! (SEP-414), else from the W3C `traceparent`, `tracestate` and `baggage`
//! headers (W3C Trace Context §3).

use serde_json::json;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

use crate::support::http::{open_session, rpc, send, Req, LATEST};

const HEADER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01";
const META: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// W3C Trace Context §3 and SEP-414: a request without a trace context in
// `_meta` takes the HTTP headers'; one with it keeps its own.
#[test]
fn trace_context_falls_back_to_the_http_headers() {
    let server = Server::builder("traced", "1.0.0")
        .tool(
            Tool::new("trace", json!({"type": "object"})),
            |ctx: &RequestContext, _: JsonObject| {
                let trace = ctx.trace().cloned().unwrap_or_default();
                Ok(CallToolResult::text(format!(
                    "{:?} {:?}",
                    trace.traceparent, trace.tracestate
                )))
            },
        )
        .build();
    let http = server.http().serve("127.0.0.1:0").expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let call = |id: u64, meta: serde_json::Value| {
        let params = json!({"name": "trace", "arguments": {}, "_meta": meta});
        let req = Req::post(rpc(json!(id), "tools/call", params))
            .session(&session)
            .header("traceparent", HEADER)
            .header("tracestate", "congo=t61rcWkgMzE");
        let response = send(addr, &req, "tools/call");
        response.expect_status(200, "tools/call");
        let message = response.rpc();
        message["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        call(1, json!({})),
        format!("Some({:?}) Some(\"congo=t61rcWkgMzE\")", HEADER)
    );
    assert_eq!(
        call(2, json!({"traceparent": META})),
        format!("Some({:?}) None", META)
    );
    http.shutdown();
}
