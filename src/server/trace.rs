//! One `tracing` span per request (feature `tracing`, DESIGN.md §29),
//! with the attributes of OpenTelemetry's MCP semantic conventions.
//!
//! The span opens when the request arrives (on the reading thread), is
//! entered around the handler's run on the thread that runs it (a worker,
//! or the reading thread for a quick tool), and closes when the request
//! ends, with `error.type` recorded. Its name is the static
//! `mcp.server.request`; `otel.name` carries the conventions' name,
//! `{mcp.method.name} {target}` (e.g. `tools/call add`), which
//! `tracing-opentelemetry` uses as the span's name. With the feature
//! `opentelemetry` its parent is the client's W3C trace context
//! (`traceparent`, `tracestate`) from `_meta` or the HTTP headers.

use serde_json::Value;
use tracing::field::Empty;

use super::caller::TraceContext;
use super::outcome::RequestStatus;
use super::session::Session;
use crate::jsonrpc::Request;
use crate::protocol::methods;

/// The span of one request; closed when dropped.
pub(crate) struct RequestSpan(tracing::Span);

impl RequestSpan {
    /// Opens the span of `request` to `session`, its parent the client's
    /// `trace` context (feature `opentelemetry`).
    pub(crate) fn open(
        session: &Session,
        request: &Request,
        trace: Option<&TraceContext>,
    ) -> RequestSpan {
        let method = request.method.as_str();
        let span = tracing::info_span!(
            target: "tiny_mcp",
            "mcp.server.request",
            otel.name = Empty,
            otel.kind = "server",
            mcp.method.name = %method,
            gen_ai.tool.name = Empty,
            gen_ai.operation.name = Empty,
            mcp.session.id = Empty,
            jsonrpc.request.id = %request.id,
            mcp.protocol.version = session.version_label(),
            network.transport = session.transport().name(),
            error.type = Empty,
        );
        if span.is_disabled() {
            // No subscriber wants it: nothing more is read or formatted.
            return RequestSpan(span);
        }
        let target = target_of(method, request.params.as_ref());
        match target {
            Some(target) => span.record("otel.name", format!("{} {}", method, target).as_str()),
            None => span.record("otel.name", method),
        };
        if method == methods::TOOLS_CALL {
            if let Some(tool) = target {
                span.record("gen_ai.tool.name", tool);
                span.record("gen_ai.operation.name", "execute_tool");
            }
        }
        if let Some(id) = &session.id {
            span.record("mcp.session.id", id.as_str());
        }
        #[cfg(feature = "opentelemetry")]
        super::trace_parent::set_parent(&span, trace);
        #[cfg(not(feature = "opentelemetry"))]
        let _ = trace;
        RequestSpan(span)
    }

    /// Runs `run` (the handler) inside the span, on the calling thread.
    pub(crate) fn in_scope<R>(&self, run: impl FnOnce() -> R) -> R {
        self.0.in_scope(run)
    }

    /// Records how the request ended (`error.type`: the JSON-RPC code as a
    /// string, `tool_error`, `cancelled`) and closes the span.
    pub(crate) fn end(self, status: &RequestStatus, tool_error: bool) {
        match status {
            RequestStatus::Ok if tool_error => {
                self.0.record("error.type", "tool_error");
            }
            RequestStatus::Ok => {}
            RequestStatus::Error(code) => {
                self.0.record("error.type", code.0.to_string().as_str());
            }
            RequestStatus::Cancelled { .. } => {
                self.0.record("error.type", "cancelled");
            }
        }
    }
}

/// What a request acts on, for the span's name: the tool or prompt name,
/// the resource URI.
fn target_of<'a>(method: &str, params: Option<&'a Value>) -> Option<&'a str> {
    let key = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => "name",
        methods::RESOURCES_READ => "uri",
        _ => return None,
    };
    params?.get(key)?.as_str()
}
