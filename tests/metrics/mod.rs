//! Metrics (feature `metrics`, DESIGN.md §29): what a known workload adds
//! to the counters, read from code and from the HTTP metrics path in the
//! Prometheus text exposition format 0.0.4; label sets stay bounded.

use crate::support::http::{initialize_body, open_session, rpc, send, Req, LATEST};
use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, Error, Gauge, JsonObject, RequestContext, Server, Tool};

/// Two tools: `add` answers, `fail` fails (an `isError` result, TOOL-6).
fn server(max_tools: usize) -> Server {
    Server::builder("metered", "1.0.0")
        .max_metric_tools(max_tools)
        .tool(
            Tool::new("add", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("3")),
        )
        .tool(
            Tool::new("fail", json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Err(Error::msg("it failed"))
            },
        )
        .build()
}

fn initialize(client: &mut tiny_mcp::MemoryClient) {
    let params = json!({
        "protocolVersion": LATEST,
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}
    });
    client
        .request("initialize", Some(params))
        .expect("initialize");
    client.notify("notifications/initialized", None);
}

fn call(client: &mut tiny_mcp::MemoryClient, tool: &str) -> Result<Value, tiny_mcp::ErrorObject> {
    client.request("tools/call", Some(json!({"name": tool, "arguments": {}})))
}

// OpenTelemetry MCP conventions, mcp.server.operation.duration: one count
// per request, by method and tool; error.type is the JSON-RPC code as a
// string, or `tool_error` for a result with isError (server/tools "Error
// Handling"); an unknown tool is no label, an unknown method is `_OTHER`.
#[test]
fn requests_are_counted_per_method_tool_and_error() {
    let server = server(256);
    let mut client = server.connect_memory();
    initialize(&mut client);
    for _ in 0..3 {
        call(&mut client, "add").expect("add");
    }
    call(&mut client, "fail").expect("an isError result");
    assert!(call(&mut client, "nosuch").is_err());
    assert!(client.request("made/up", None).is_err());
    client.request("ping", None).expect("ping");
    let metrics = server.metrics();
    assert_eq!(metrics.requests("tools/call", Some("add"), None), 3);
    assert_eq!(
        metrics.requests("tools/call", Some("fail"), Some("tool_error")),
        1
    );
    assert_eq!(metrics.requests("tools/call", None, Some("-32602")), 1);
    assert_eq!(metrics.requests("tools/call", Some("nosuch"), None), 0);
    assert_eq!(metrics.requests("_OTHER", None, Some("-32601")), 1);
    assert_eq!(metrics.requests("ping", None, None), 1);
    assert_eq!(metrics.requests("initialize", None, None), 1);
    assert_eq!(metrics.gauge(Gauge::Sessions), 1);
    drop(client);
}

// Prometheus exposition format 0.0.4: every family has # HELP and # TYPE;
// a histogram's buckets are cumulative, end with le="+Inf" equal to its
// _count, and the labels use the OpenTelemetry names with dots as
// underscores.
#[test]
fn rendering_is_the_prometheus_text_format() {
    let server = server(256);
    let mut client = server.connect_memory();
    initialize(&mut client);
    call(&mut client, "add").expect("add");
    call(&mut client, "add").expect("add");
    let text = server.metrics().render_prometheus();
    let labels = "mcp_method_name=\"tools/call\",gen_ai_tool_name=\"add\",\
                  mcp_protocol_version=\"2025-11-25\",network_transport=\"pipe\"";
    for line in [
        "# TYPE mcp_server_operation_duration_seconds histogram".to_string(),
        format!(
            "mcp_server_operation_duration_seconds_bucket{{{},le=\"+Inf\"}} 2",
            labels
        ),
        format!(
            "mcp_server_operation_duration_seconds_count{{{}}} 2",
            labels
        ),
        "# TYPE tiny_mcp_sessions_open gauge".to_string(),
        "tiny_mcp_sessions_open 1".to_string(),
        "# TYPE tiny_mcp_workers_total gauge".to_string(),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line {:?} in:\n{}",
            line,
            text
        );
    }
    // Cumulative: each bucket of a series counts at least the one before.
    let buckets: Vec<u64> = text
        .lines()
        .filter(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_bucket{") && l.contains(labels)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{:?}", buckets);
    assert_eq!(buckets.last(), Some(&2));
    // A session that ends is observed in the session duration.
    drop(client);
    let text = server.metrics().render_prometheus();
    assert!(
        text.contains("mcp_server_session_duration_seconds_count{network_transport=\"pipe\"} 1"),
        "{}",
        text
    );
}

// DESIGN.md §29, label bounds: past max_metric_tools, further tools share
// the `_OTHER` label.
#[test]
fn tool_labels_are_bounded() {
    let server = server(1);
    let mut client = server.connect_memory();
    initialize(&mut client);
    call(&mut client, "add").expect("add");
    call(&mut client, "fail").expect("an isError result");
    let metrics = server.metrics();
    assert_eq!(metrics.requests("tools/call", Some("add"), None), 1);
    assert_eq!(
        metrics.requests("tools/call", Some("fail"), Some("tool_error")),
        0
    );
    assert_eq!(
        metrics.requests("tools/call", Some("_OTHER"), Some("tool_error")),
        1
    );
}

// DESIGN.md §29: the metrics path answers GET with the text format, is
// subject to the Host check (SEC-1, basic/transports "Security Warning")
// but not to authorization, and HTTP answers with an error status are
// counted by status; the HTTP session is a lasting session on `tcp`.
#[test]
fn the_metrics_path_serves_the_counts_over_http() {
    let server = server(256);
    let http = server
        .http()
        .metrics_path("/metrics")
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let session = open_session(addr, LATEST, json!({}));
    let call = rpc(
        json!(1),
        "tools/call",
        json!({"name": "add", "arguments": {}}),
    );
    send(addr, &Req::post(call).session(&session), "tools/call").expect_status(200, "tools/call");
    send(addr, &Req::to("GET", "/elsewhere"), "404").expect_status(404, "an unknown path");
    let wrong_host = Req::to("GET", "/metrics").header("Host", "evil.example:80");
    send(addr, &wrong_host, "403").expect_status(403, "a foreign Host");
    send(addr, &Req::to("POST", "/metrics"), "405").expect_status(405, "POST to the metrics");
    let unsessioned = Req::post(initialize_body(json!(2), LATEST, json!({}))).session("nope");
    send(addr, &unsessioned, "404 session").expect_status(404, "an unknown session");
    // 2026-07-28 (basic/transports, HTTP-7): an unknown tool's -32602 is
    // answered with 400, once the handler's stream has turned into one
    // JSON response; it is counted too.
    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "nosuch", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let unknown = Req::post(unknown.to_string())
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "nosuch");
    send(addr, &unknown, "an unknown tool").expect_status(400, "an unknown tool (2026)");
    let scrape = send(addr, &Req::to("GET", "/metrics"), "the metrics");
    scrape.expect_status(200, "GET /metrics");
    assert_eq!(
        scrape.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = scrape.text();
    for line in [
        "tiny_mcp_http_error_responses_total{http_response_status_code=\"404\"} 2",
        "tiny_mcp_http_error_responses_total{http_response_status_code=\"403\"} 1",
        "tiny_mcp_http_error_responses_total{http_response_status_code=\"405\"} 1",
        "tiny_mcp_http_error_responses_total{http_response_status_code=\"400\"} 1",
        "tiny_mcp_sessions_open 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no {:?} in:\n{}",
            line,
            text
        );
    }
    let metrics = server.metrics();
    // The scrape's own connection was open while it was rendered; earlier
    // ones may still have been ending on their threads.
    let open: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("tiny_mcp_http_connections_open "))
        .and_then(|n| n.parse().ok())
        .expect("the connections gauge");
    assert!(open >= 1, "{}", text);
    assert_eq!(metrics.requests("tools/call", Some("add"), None), 1);
    assert_eq!(metrics.http_responses(404), 2);
    assert!(text.contains("network_transport=\"tcp\""), "{}", text);
    http.shutdown();
}

// DESIGN.md §29: on a protected endpoint (basic/authorization, RFC 6750
// §3) the metrics path needs no bearer token, while the endpoint refuses a
// request without one with 401, which the metrics count.
#[test]
fn the_metrics_path_needs_no_token_and_counts_401() {
    use tiny_mcp::{HttpRequestHead, Principal, ProtectedResource, TokenError};
    let verify = |token: &str, _: &HttpRequestHead<'_>| {
        if token == "good" {
            Ok(Principal::new("alice").with_scopes(["mcp:tools"]))
        } else {
            Err(TokenError::invalid("unknown token"))
        }
    };
    let protected = ProtectedResource::new("http://127.0.0.1/mcp", verify)
        .authorization_server("http://127.0.0.1:9");
    let server = server(256);
    let http = server
        .http()
        .protect(protected)
        .metrics_path("/metrics")
        .serve("127.0.0.1:0")
        .expect("serve");
    let addr = http.local_addr();
    let body = initialize_body(json!(1), LATEST, json!({}));
    send(addr, &Req::post(body), "no token").expect_status(401, "no token");
    let scrape = send(addr, &Req::to("GET", "/metrics"), "the metrics");
    scrape.expect_status(200, "the metrics without a token");
    let line = "tiny_mcp_http_error_responses_total{http_response_status_code=\"401\"} 1";
    assert!(
        scrape.text().lines().any(|l| l == line),
        "{}",
        scrape.text()
    );
    http.shutdown();
}
