//! With the feature `opentelemetry`, a request's span is exported as the
//! child of the client's span: its trace id and parent span id are those
//! of the `traceparent` the client sent, in `_meta` (SEP-414) or, when
//! `_meta` has none, in the HTTP headers (W3C Trace Context §3).

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};
    use std::time::Duration;

    use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use serde_json::json;
    use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
    use tracing_subscriber::layer::SubscriberExt;

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const META_PARENT: &str = "00f067aa0ba902b7";
    const HEADER_PARENT: &str = "b7ad6b7169203331";

    fn server() -> Server {
        Server::builder("otel", "1.0.0")
            .tool(
                Tool::new("traced", json!({"type": "object"})),
                |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("ok")),
            )
            .build()
    }

    /// POSTs `body` to `/mcp` with `headers` and reads the whole answer
    /// (the connection closes after it).
    fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n",
            addr,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{}: {}\r\n", name, value));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read the answer");
        answer
    }

    fn call(id: u64, meta: serde_json::Value) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "traced", "arguments": {}, "_meta": meta}})
        .to_string()
    }

    // W3C Trace Context §3.2 and SEP-414: the span of each request has the
    // client's trace id, and the client's span as its (remote) parent;
    // `_meta` wins over the headers.
    #[test]
    fn the_span_continues_the_clients_trace() {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("otel-check"));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::set_global_default(subscriber).expect("the global subscriber");

        let server = server();
        let http = server.http().serve("127.0.0.1:0").expect("serve");
        let addr = http.local_addr();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "otel-check", "version": "1"}}})
        .to_string();
        let answer = post(addr, &[], &init);
        let session = answer
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_string())
            })
            .expect("a session id");
        let header_parent = format!("00-{}-{}-01", TRACE, HEADER_PARENT);
        let meta_parent = format!("00-{}-{}-01", TRACE, META_PARENT);
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("traceparent", header_parent.as_str()),
        ];
        // From `_meta` (it wins over the header), then from the header.
        post(
            addr,
            &headers,
            &call(1, json!({"traceparent": meta_parent})),
        );
        post(addr, &headers, &call(2, json!({})));
        http.shutdown();
        let _ = provider.force_flush();

        let spans = exporter.get_finished_spans().expect("the exported spans");
        let calls: Vec<_> = spans
            .iter()
            .filter(|s| s.name == "tools/call traced")
            .collect();
        assert_eq!(calls.len(), 2, "one span per call: {:#?}", spans);
        let trace = TraceId::from_hex(TRACE).expect("hex");
        let mut parents: Vec<SpanId> = calls.iter().map(|s| s.parent_span_id).collect();
        parents.sort_by_key(|id| id.to_string());
        let mut want = vec![
            SpanId::from_hex(META_PARENT).expect("hex"),
            SpanId::from_hex(HEADER_PARENT).expect("hex"),
        ];
        want.sort_by_key(|id| id.to_string());
        assert_eq!(parents, want);
        for span in &calls {
            assert_eq!(span.span_context.trace_id(), trace);
            assert_eq!(span.span_kind, opentelemetry::trace::SpanKind::Server);
        }
    }
}
