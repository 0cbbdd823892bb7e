//! The client's W3C trace context as the parent of a request's span
//! (feature `opentelemetry`, DESIGN.md §29): `traceparent` and
//! `tracestate` read into an OpenTelemetry remote span context, set with
//! `tracing-opentelemetry`'s `OpenTelemetrySpanExt::set_parent`.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::caller::TraceContext;

/// Makes the client's span the parent of `span`; an absent or malformed
/// `traceparent` leaves `span` a root (W3C Trace Context §4.3: a receiver
/// that cannot parse it starts a new trace).
pub(crate) fn set_parent(span: &tracing::Span, trace: Option<&TraceContext>) {
    if let Some(context) = trace.and_then(remote_context) {
        let _ = span.set_parent(context);
    }
}

/// W3C Trace Context §3.2: `version-traceid-parentid-flags`, lowercase
/// hex; version `ff` and all-zero ids are invalid, and version `00` has
/// exactly four fields.
fn remote_context(trace: &TraceContext) -> Option<Context> {
    let header = trace.traceparent.as_deref()?.trim();
    let mut fields = header.split('-');
    let version = fields.next()?;
    let (trace_id, span_id, flags) = (fields.next()?, fields.next()?, fields.next()?);
    let lower_hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let fits = lower_hex(version, 2)
        && version != "ff"
        && !(version == "00" && fields.next().is_some())
        && lower_hex(trace_id, 32)
        && lower_hex(span_id, 16)
        && lower_hex(flags, 2);
    if !fits {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()? & 1);
    let state = trace
        .tracestate
        .as_deref()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let parent = SpanContext::new(trace_id, span_id, flags, true, state);
    Some(Context::new().with_remote_span_context(parent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(traceparent: &str) -> Option<Context> {
        remote_context(&TraceContext {
            traceparent: Some(traceparent.to_string()),
            tracestate: Some("congo=t61rcWkgMzE".to_string()),
            baggage: None,
        })
    }

    // W3C Trace Context §3.2.2: the example header is read into its ids,
    // flags and state; §3.2.2.1-4: invalid versions and ids are refused.
    #[test]
    fn traceparent_is_read_and_checked() {
        let cx =
            context("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").expect("a parent");
        let span = cx.span();
        let parent = span.span_context();
        assert_eq!(
            parent.trace_id(),
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex")
        );
        assert_eq!(
            parent.span_id(),
            SpanId::from_hex("00f067aa0ba902b7").expect("hex")
        );
        assert!(parent.is_sampled() && parent.is_remote());
        assert_eq!(parent.trace_state().get("congo"), Some("t61rcWkgMzE"));
        for bad in [
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f35-00f067aa0ba902b7-01",
        ] {
            assert!(context(bad).is_none(), "{}", bad);
        }
    }
}
