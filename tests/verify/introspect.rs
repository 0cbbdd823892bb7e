//! `IntrospectionVerifier` behind a protected endpoint, against a stub
//! introspection endpoint (RFC 7662 §2).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tiny_mcp::{IntrospectionVerifier, IntrospectionVerifierBuilder};

use super::stub::{Reply, Seen, Stub};
use super::{protect, Protected};

const AUDIENCE: &str = "api://mcp-tests";

/// The stub's answer for each token (the `token` form field).
fn answer(seen: &Seen) -> Reply {
    let token = seen
        .body
        .split('&')
        .find_map(|p| p.strip_prefix("token="))
        .unwrap_or("");
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        + 300;
    let active = json!({"active": true, "sub": "alice", "client_id": "c1",
                        "scope": "mcp:tools", "aud": AUDIENCE, "exp": exp});
    let body = match token {
        "good" | "good2" => active,
        "nosub" => json!({"active": true, "scope": "mcp:tools", "aud": AUDIENCE, "exp": exp}),
        "broken" => return Reply::Json(500, "{\"detail\": \"database on fire\"}".into()),
        _ => json!({"active": false}),
    };
    Reply::Json(200, body.to_string())
}

fn serve(
    stub: &Stub,
    tune: impl FnOnce(IntrospectionVerifierBuilder) -> IntrospectionVerifierBuilder,
) -> Protected {
    let builder = IntrospectionVerifier::builder(stub.url("/introspect")).audience(AUDIENCE);
    protect(tune(builder).build().expect("a verifier"))
}

/// An active answer gives the principal (sub, client_id, scope); inactive
/// and sub-less answers are refused (RFC 7662 §2.2; never a shared
/// principal).
#[test]
fn active_inactive_and_subjectless_answers() {
    let stub = Stub::serve(answer);
    let server = serve(&stub, |b| b);
    let who = server.whoami("good");
    assert_eq!(
        (who["subject"].as_str(), who["clientId"].as_str()),
        (Some("alice"), Some("c1"))
    );
    assert_eq!(
        server.refusal("revoked"),
        (401, "the token is not active".into())
    );
    assert_eq!(
        server.refusal("nosub"),
        (401, "the token has no subject (sub)".into())
    );
}

/// Positive and negative answers are cached by the token's hash: the
/// second request of each token does not reach the endpoint.
#[test]
fn answers_are_cached() {
    let stub = Stub::serve(answer);
    let server = serve(&stub, |b| b);
    assert_eq!(server.refusal("good2").0, 200);
    assert_eq!(server.refusal("good2").0, 200);
    assert_eq!(stub.hits(), 1, "a positive answer cached");
    assert_eq!(server.refusal("gone").0, 401);
    assert_eq!(server.refusal("gone").0, 401);
    assert_eq!(stub.hits(), 2, "a negative answer cached");
    let uncached = serve(&stub, |b| b.cache_entries(0));
    uncached.refusal("good2");
    uncached.refusal("good2");
    assert_eq!(stub.hits(), 4, "no cache: each request asks");
}

/// A failing endpoint gives 503 with a generic description: the detail
/// stays in the log.
#[test]
fn a_failing_endpoint_is_a_generic_503() {
    let stub = Stub::serve(answer);
    let server = serve(&stub, |b| b);
    let expected = (503, "the authorization server is unavailable".to_string());
    assert_eq!(server.refusal("broken"), expected);
    assert_eq!(server.refusal("broken"), expected);
    assert_eq!(stub.hits(), 2, "503s are not cached");
}

/// One deadline for the whole exchange: an endpoint that drips its answer
/// one byte per 100 ms is cut at the 1 s timeout, not per read (issue 29:
/// a trial held a request 107 s this way).
#[test]
fn a_dripping_endpoint_is_cut_at_the_deadline() {
    let stub = Stub::serve(|_| Reply::Drip(600));
    let server = serve(&stub, |b| b.timeout(Duration::from_secs(1)));
    let started = Instant::now();
    let (status, _) = server.refusal("good");
    let took = started.elapsed();
    assert_eq!(status, 503);
    assert!(
        took >= Duration::from_millis(900),
        "waited the deadline: {:?}",
        took
    );
    assert!(
        took < Duration::from_secs(4),
        "cut at the deadline: {:?}",
        took
    );
}

/// `client_secret_basic` sends an Authorization header; `client_secret_post`
/// sends the credentials in the form (RFC 6749 §2.3.1).
#[test]
fn client_authentication_basic_and_post() {
    let stub = Stub::serve(answer);
    let basic = serve(&stub, |b| b.client_secret_basic("mcp-server", "s3cret"));
    let post = serve(&stub, |b| b.client_secret_post("mcp-server", "s3cret"));
    assert_eq!(basic.refusal("good").0, 200);
    assert_eq!(post.refusal("good2").0, 200);
    let seen = Arc::new(Mutex::new(stub.seen()));
    let seen = seen.lock().unwrap();
    let (first, second) = (&seen[0], &seen[1]);
    // base64("mcp-server:s3cret")
    assert_eq!(
        first.header("authorization").as_deref(),
        Some("Basic bWNwLXNlcnZlcjpzM2NyZXQ=")
    );
    assert!(!first.body.contains("s3cret"), "basic: {}", first.body);
    assert_eq!(second.header("authorization"), None);
    assert!(
        second.body.contains("client_id=mcp-server"),
        "{}",
        second.body
    );
    assert!(
        second.body.contains("client_secret=s3cret"),
        "{}",
        second.body
    );
    assert!(
        first.body.contains("token_type_hint=access_token"),
        "{}",
        first.body
    );
}
