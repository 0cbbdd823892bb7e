//! The Prometheus text exposition format 0.0.4 of [`Metrics`]: `# HELP`
//! and `# TYPE` per family, histograms as cumulative `_bucket` series
//! ending with `le="+Inf"`, then `_sum` and `_count`.

use std::fmt::Write;

use super::{ErrorType, Gauge, Histogram, Metrics, BUCKET_LABELS};

/// The `error.type` label of `error` (empty when the request succeeded).
pub(super) fn error_label(error: ErrorType) -> String {
    match error {
        ErrorType::None => String::new(),
        ErrorType::Code(code) => code.to_string(),
        ErrorType::ToolError => "tool_error".to_string(),
        ErrorType::Cancelled => "cancelled".to_string(),
        ErrorType::Other => "_OTHER".to_string(),
    }
}

/// The gauges, in the order rendered: name, help, which.
const GAUGES: [(&str, &str, Gauge); 6] = [
    (
        "tiny_mcp_sessions_open",
        "Lasting MCP sessions open (stdio, 2025-11-25 HTTP sessions).",
        Gauge::Sessions,
    ),
    (
        "tiny_mcp_http_connections_open",
        "HTTP connections open.",
        Gauge::HttpConnections,
    ),
    (
        "tiny_mcp_http_sse_streams_open",
        "SSE streams open (POST response, GET and listen streams).",
        Gauge::SseStreams,
    ),
    (
        "tiny_mcp_tasks_running",
        "Tasks running on this instance.",
        Gauge::RunningTasks,
    ),
    (
        "tiny_mcp_workers_busy",
        "Worker threads running a handler.",
        Gauge::BusyWorkers,
    ),
    (
        "tiny_mcp_workers_total",
        "Worker threads started and not ended.",
        Gauge::Workers,
    ),
];

pub(super) fn render(metrics: &Metrics) -> String {
    let mut out = String::with_capacity(4096);
    operations(metrics, &mut out);
    sessions(metrics, &mut out);
    let help = "HTTP answers with a status of 400 or more, by status.";
    family(
        &mut out,
        "tiny_mcp_http_error_responses_total",
        help,
        "counter",
    );
    for (status, count) in metrics.refusals() {
        let _ = writeln!(
            out,
            "tiny_mcp_http_error_responses_total{{http_response_status_code=\"{}\"}} {}",
            status, count
        );
    }
    let name = "tiny_mcp_change_bus_dropped_total";
    family(
        &mut out,
        name,
        "Change events the bus dropped, unsent.",
        "counter",
    );
    let _ = writeln!(out, "{} {}", name, metrics.change_bus_dropped());
    for (name, help, gauge) in GAUGES {
        family(&mut out, name, help, "gauge");
        let _ = writeln!(out, "{} {}", name, metrics.gauge(gauge));
    }
    out
}

/// `mcp.server.operation.duration`, one series per label set seen.
fn operations(metrics: &Metrics, out: &mut String) {
    const NAME: &str = "mcp_server_operation_duration_seconds";
    let help = "Duration of MCP requests from receipt to the response, in seconds.";
    family(out, NAME, help, "histogram");
    let mut series: Vec<(String, _)> = metrics
        .series()
        .into_iter()
        .map(|s| {
            let mut labels = String::new();
            label(&mut labels, "mcp_method_name", s.method);
            if let Some(tool) = &s.tool {
                label(&mut labels, "gen_ai_tool_name", tool);
            }
            let error = error_label(s.error);
            if !error.is_empty() {
                label(&mut labels, "error_type", &error);
            }
            label(&mut labels, "mcp_protocol_version", s.version);
            label(&mut labels, "network_transport", s.transport);
            (labels, s.histogram)
        })
        .collect();
    series.sort_by(|a, b| a.0.cmp(&b.0));
    for (labels, histogram) in series {
        histogram_lines(out, NAME, &labels, &histogram);
    }
}

/// `mcp.server.session.duration`, by transport.
fn sessions(metrics: &Metrics, out: &mut String) {
    const NAME: &str = "mcp_server_session_duration_seconds";
    let help = "Duration of lasting MCP sessions, in seconds.";
    family(out, NAME, help, "histogram");
    for (transport, histogram) in metrics.sessions() {
        let mut labels = String::new();
        label(&mut labels, "network_transport", transport);
        histogram_lines(out, NAME, &labels, histogram);
    }
}

/// A family's `# HELP` and `# TYPE` lines.
fn family(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {} {}", name, help);
    let _ = writeln!(out, "# TYPE {} {}", name, kind);
}

/// A histogram's `_bucket` (cumulative), `_sum` and `_count` lines;
/// `labels` is a `name="value",…` list without braces.
fn histogram_lines(out: &mut String, name: &str, labels: &str, histogram: &Histogram) {
    let (counts, count, sum) = histogram.read();
    let mut cumulative = 0;
    for (at, n) in counts.iter().enumerate() {
        cumulative += n;
        let bound = BUCKET_LABELS.get(at).copied().unwrap_or("+Inf");
        let _ = writeln!(
            out,
            "{}_bucket{{{},le=\"{}\"}} {}",
            name, labels, bound, cumulative
        );
    }
    // Seconds from nanoseconds with integers only.
    let _ = writeln!(
        out,
        "{}_sum{{{}}} {}.{:09}",
        name,
        labels,
        sum / 1_000_000_000,
        sum % 1_000_000_000
    );
    let _ = writeln!(out, "{}_count{{{}}} {}", name, labels, count);
}

/// Appends `name="value"` with the value escaped (backslash, quote,
/// newline), after a comma unless first.
fn label(out: &mut String, name: &str, value: &str) {
    if !out.is_empty() {
        out.push(',');
    }
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::label;

    // Prometheus exposition format 0.0.4: label values escape `\`, `"`
    // and a line feed.
    #[test]
    fn label_values_are_escaped() {
        let mut out = String::new();
        label(&mut out, "a", "x");
        label(&mut out, "b", "q\"\\\n");
        assert_eq!(out, "a=\"x\",b=\"q\\\"\\\\\\n\"");
    }
}
