//! Who sent a request and what came with it: the principal that
//! authorization established, the HTTP headers of the POST that carried
//! it, and the trace context from its `_meta` (DESIGN.md §15).
//!
//! Transports fill a [`Caller`] at their edge and hand it to the session
//! with the request; the core carries it to the handler's
//! [`RequestContext`](crate::RequestContext), to the interceptors and to
//! [`RequestOutcome`](crate::RequestOutcome). Nothing downstream re-reads
//! headers to learn who is calling.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use crate::jsonrpc::JsonObject;

/// Who is calling: what a token verifier established from the request's
/// access token (basic/authorization, "Access Token Usage").
///
/// Built by the program's
/// [`TokenVerifier`](crate::TokenVerifier) with [`Principal::new`] and the
/// `with_*` methods; read by handlers through
/// [`RequestContext::principal`](crate::RequestContext::principal).
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use tiny_mcp::Principal;
///
/// let alice = Principal::new("alice")
///     .with_client_id("cli-1")
///     .with_scopes(["mcp:tools"])
///     .with_audience(["https://mcp.example.com/mcp"])
///     .with_expires_at(SystemTime::now() + Duration::from_secs(3600));
/// assert!(alice.has_scope("mcp:tools"));
/// assert!(!alice.has_scope("mcp:admin"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The subject (`sub`): the user or service the token stands for.
    pub subject: String,
    /// The OAuth client the token was issued to (`client_id`), if known.
    pub client_id: Option<String>,
    /// The authorization server that issued the token (`iss`), if the
    /// verifier reports it. Sessions, tasks and `requestState` belong to
    /// the issuer, subject and client together (DESIGN.md §26).
    pub issuer: Option<String>,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// The resources the token was issued for (`aud`, RFC 8707 resource
    /// indicators). When not empty, the crate refuses the token unless one
    /// of them is this server's resource identifier. Empty: the verifier
    /// checked the audience itself, or the token does not say.
    pub audience: Vec<String>,
    /// When the token expires; the crate refuses it from then on.
    pub expires_at: Option<SystemTime>,
    /// Any other claims, as the verifier chose to keep them.
    pub claims: JsonObject,
}

impl Principal {
    /// A principal for `subject`, with no client id, scopes, audience,
    /// expiry or claims.
    pub fn new(subject: impl Into<String>) -> Principal {
        Principal {
            subject: subject.into(),
            client_id: None,
            issuer: None,
            scopes: Vec::new(),
            audience: Vec::new(),
            expires_at: None,
            claims: JsonObject::new(),
        }
    }

    /// Sets the OAuth client id.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Principal {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the issuer (`iss`).
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Principal {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the granted scopes.
    pub fn with_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Principal {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the resources the token was issued for (RFC 8707).
    pub fn with_audience<S: Into<String>>(
        mut self,
        audience: impl IntoIterator<Item = S>,
    ) -> Principal {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the expiry.
    pub fn with_expires_at(mut self, at: SystemTime) -> Principal {
        self.expires_at = Some(at);
        self
    }

    /// Sets the other claims.
    pub fn with_claims(mut self, claims: JsonObject) -> Principal {
        self.claims = claims;
        self
    }

    /// `true` if the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `needed` this principal lacks, in their order.
    pub(crate) fn lacks<'a>(&self, needed: &'a [String]) -> Vec<&'a str> {
        needed
            .iter()
            .filter(|s| !self.has_scope(s))
            .map(String::as_str)
            .collect()
    }

    /// Whether two principals are the same caller: same issuer, subject
    /// and client (a session belongs to all three, DESIGN.md §15).
    pub(crate) fn same_caller(&self, other: &Principal) -> bool {
        self.subject == other.subject
            && self.client_id == other.client_id
            && self.issuer == other.issuer
    }
}

/// The W3C trace context a client sent in a request's `_meta`
/// (`traceparent`, `tracestate`, `baggage`: reserved unprefixed keys, basic
/// "General fields: `_meta`", SEP-414), or, when `_meta` has none, in the
/// HTTP request's headers of the same names (W3C Trace Context §3).
/// Passed through as sent; only the feature `opentelemetry` parses
/// `traceparent`, to parent the request's span.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TraceContext {
    /// `traceparent`, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    pub traceparent: Option<String>,
    /// `tracestate`, vendor-specific entries.
    pub tracestate: Option<String>,
    /// `baggage`, application key-value pairs.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// The trace context in `params._meta`, if any of its keys is a string.
    pub(crate) fn from_params(params: Option<&Value>) -> Option<TraceContext> {
        let meta = params?.get("_meta")?.as_object()?;
        let read = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_string);
        let trace = TraceContext {
            traceparent: read("traceparent"),
            tracestate: read("tracestate"),
            baggage: read("baggage"),
        };
        if trace == TraceContext::default() {
            None
        } else {
            Some(trace)
        }
    }

    /// The trace context of the `traceparent`, `tracestate` and `baggage`
    /// HTTP headers (W3C Trace Context §3), for a request whose `_meta`
    /// has none; `None` without a `traceparent`.
    pub(crate) fn from_headers(headers: &HttpHeaders) -> Option<TraceContext> {
        let traceparent = headers.get("traceparent")?.to_string();
        Some(TraceContext {
            traceparent: Some(traceparent),
            tracestate: headers.get("tracestate").map(str::to_string),
            baggage: headers.get("baggage").map(str::to_string),
        })
    }
}

/// The headers of the HTTP request that carried a request, read-only:
/// names in lowercase, values as sent, in their order (a repeated header
/// appears once per occurrence).
///
/// Cloning is cheap (the list is shared).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpHeaders(Arc<Vec<(String, String)>>);

impl HttpHeaders {
    /// Headers from (lowercase name, value) pairs.
    pub(crate) fn new(pairs: Vec<(String, String)>) -> HttpHeaders {
        HttpHeaders(Arc::new(pairs))
    }

    /// The first value of header `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name` (any case), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every header as (lowercase name, value), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// How many headers there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `true` if there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// For tests that build a request by hand.
    #[cfg(test)]
    pub(crate) fn push(&mut self, name: &str, value: &str) {
        Arc::make_mut(&mut self.0).push((name.to_string(), value.to_string()));
    }
}

/// What a transport knows about a request's sender, carried from its edge
/// to the handler. The default (stdio, memory, a server without a
/// verifier) knows nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caller {
    pub(crate) principal: Option<Arc<Principal>>,
    pub(crate) headers: Option<HttpHeaders>,
    pub(crate) trace: Option<TraceContext>,
    /// The peer address shares are counted against: the socket's, or the
    /// trusted forwarding header's the operator named; `None` when
    /// per-peer shares are off (behind a proxy that names no client) and
    /// on stdio or in memory (DESIGN.md §26).
    pub(crate) peer: Option<IpAddr>,
}

impl Caller {
    /// Who this request's shares are counted against, for a request to
    /// `session`: the principal, else the session when it outlives the
    /// request (a 2025-11-25 HTTP session, a connection), else the peer
    /// address (DESIGN.md §26).
    pub(crate) fn key(&self, session_key: Option<u64>) -> CallerKey {
        match (&self.principal, session_key, self.peer) {
            (Some(p), _, _) => CallerKey::Principal(Arc::new(PrincipalKey {
                issuer: p.issuer.clone(),
                subject: p.subject.clone(),
                client_id: p.client_id.clone(),
            })),
            (None, Some(key), _) => CallerKey::Session(key),
            (None, None, Some(peer)) => CallerKey::Peer(peer),
            (None, None, None) => CallerKey::Nobody,
        }
    }
}

/// Who a share of a shared resource (workers, sessions, tasks, stored
/// state) is counted against: "the caller" of DESIGN.md §26.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum CallerKey {
    /// A principal: issuer, subject and client id together.
    Principal(Arc<PrincipalKey>),
    /// A session that outlives its requests (the session's key).
    Session(u64),
    /// No principal and no session: the peer address.
    Peer(IpAddr),
    /// Nothing is known (per-peer shares off, no principal, no session):
    /// one caller for everyone, which is what a share cannot tell apart.
    Nobody,
}

/// The part of a [`Principal`] that names a caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PrincipalKey {
    pub(crate) issuer: Option<String>,
    pub(crate) subject: String,
    pub(crate) client_id: Option<String>,
}

impl fmt::Display for CallerKey {
    /// A stable text form, for keys of stores and for logs: the parts are
    /// separated by NUL, which no header or claim value the crate accepts
    /// carries unescaped into it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallerKey::Principal(p) => write!(
                f,
                "principal\u{0}{}\u{0}{}\u{0}{}",
                p.issuer.as_deref().unwrap_or(""),
                p.subject,
                p.client_id.as_deref().unwrap_or("")
            ),
            CallerKey::Session(key) => write!(f, "session\u{0}{}", key),
            CallerKey::Peer(ip) => write!(f, "peer\u{0}{}", ip),
            CallerKey::Nobody => f.write_str("nobody"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // SEP-414: the three W3C keys are read from `_meta`, nothing else.
    #[test]
    fn trace_context_from_meta() {
        let params = json!({"_meta": {"traceparent": "00-ab-cd-01", "baggage": "k=v",
            "tracestate": 3}});
        let trace = TraceContext::from_params(Some(&params)).expect("a trace context");
        assert_eq!(trace.traceparent.as_deref(), Some("00-ab-cd-01"));
        assert_eq!(trace.tracestate, None, "a non-string is not a trace state");
        assert_eq!(trace.baggage.as_deref(), Some("k=v"));
        assert_eq!(TraceContext::from_params(Some(&json!({"_meta": {}}))), None);
        assert_eq!(TraceContext::from_params(None), None);
    }

    #[test]
    fn scopes_and_callers() {
        let alice = Principal::new("alice")
            .with_scopes(["a", "b"])
            .with_client_id("c");
        let needed = vec!["b".to_string(), "x".to_string(), "y".to_string()];
        assert_eq!(alice.lacks(&needed), ["x", "y"]);
        assert!(alice.same_caller(&Principal::new("alice").with_client_id("c")));
        assert!(!alice.same_caller(&Principal::new("alice")));
        assert!(!alice.same_caller(&Principal::new("bob").with_client_id("c")));
        let issued = Principal::new("alice")
            .with_client_id("c")
            .with_issuer("https://a");
        assert!(
            !alice.same_caller(&issued),
            "another issuer is another caller"
        );
    }

    // DESIGN.md §26: principal, else a lasting session, else the peer.
    #[test]
    fn caller_keys() {
        let peer: IpAddr = "192.0.2.7".parse().expect("an address");
        let anonymous = Caller {
            peer: Some(peer),
            ..Caller::default()
        };
        assert_eq!(anonymous.key(None), CallerKey::Peer(peer));
        assert_eq!(anonymous.key(Some(9)), CallerKey::Session(9));
        assert_eq!(Caller::default().key(None), CallerKey::Nobody);
        let signed = Caller {
            principal: Some(Arc::new(Principal::new("alice").with_client_id("c"))),
            ..anonymous
        };
        let key = signed.key(Some(9));
        assert!(matches!(key, CallerKey::Principal(_)));
        assert_eq!(key.to_string(), "principal\u{0}\u{0}alice\u{0}c");
    }

    #[test]
    fn headers_any_case_in_order() {
        let headers = HttpHeaders::new(vec![
            ("x-a".into(), "1".into()),
            ("x-b".into(), "2".into()),
            ("x-a".into(), "3".into()),
        ]);
        assert_eq!(headers.get("X-A"), Some("1"));
        assert_eq!(headers.get_all("x-a").collect::<Vec<_>>(), ["1", "3"]);
        assert_eq!(headers.len(), 3);
        assert_eq!(headers.get("x-c"), None);
    }
}
