//! `JwtVerifier` against a broken or hostile identity provider: key sets
//! that reuse a `kid`, that lose every usable key, that answer garbage,
//! and first requests that arrive together.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use tiny_mcp::JwtVerifier;

use super::keys::{claims, jwks, Signer, ISSUER};
use super::protect;
use super::stub::{Reply, Stub};

/// A JWKS stub that answers `bodies[mode]` (status 200 unless the body
/// starts with a digit triple and a space: `"500 {}"`).
struct Scripted {
    stub: Stub,
    mode: Arc<AtomicUsize>,
}

impl Scripted {
    fn serve(bodies: Vec<String>) -> Scripted {
        let mode = Arc::new(AtomicUsize::new(0));
        let now = Arc::clone(&mode);
        let stub = Stub::serve(move |_| {
            let body = bodies[now.load(Ordering::SeqCst)].clone();
            match body.split_once(' ') {
                Some((status, rest)) if status.len() == 3 => {
                    Reply::Json(status.parse().unwrap_or(500), rest.to_string())
                }
                _ => Reply::Json(200, body),
            }
        });
        Scripted { stub, mode }
    }
}

/// RFC 7517 §4.5: keys of different `kty` may share a `kid` ("equivalent
/// alternatives"). A token names the kid and its alg; the key of that alg
/// verifies it, whichever of the two the set lists first.
#[test]
fn a_kid_shared_by_two_key_types_picks_the_one_of_the_alg() {
    let rsa = Signer::rsa("shared", "RS256");
    let ec = Signer::ec("shared", "ES256");
    let set = Scripted::serve(vec![jwks(&[&rsa, &ec])]);
    let server = protect(
        JwtVerifier::builder(ISSUER)
            .jwks_url(set.stub.url("/jwks"))
            .build()
            .expect("a verifier"),
    );
    let good = claims(&server.resource);
    assert_eq!(server.refusal(&rsa.token(&good)).0, 200, "the RSA key");
    assert_eq!(server.refusal(&ec.token(&good)).0, 200, "the EC key");
    // A token whose alg neither key has is still refused as a misfit.
    let ps = Signer::rsa("shared", "PS256");
    assert_eq!(
        server.refusal(&ps.token(&good)),
        (401, "the token's alg does not match its key".into())
    );
}

/// RFC 7517 §5 / DESIGN.md §28: "a refetch that fails keeps the last good
/// set". An identity provider that briefly serves a set with no usable
/// key (empty, or only `oct` and `enc` keys) must not wipe the good keys:
/// valid tokens keep passing in the stale window.
#[test]
fn a_key_set_without_usable_keys_does_not_replace_the_good_one() {
    let key = Signer::ec("ec", "ES256");
    let broken = [
        json!({"keys": []}).to_string(),
        json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"},
                         {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"}]})
        .to_string(),
    ];
    for body in broken.iter() {
        let set = Scripted::serve(vec![jwks(&[&key]), body.clone()]);
        let server = protect(
            JwtVerifier::builder(ISSUER)
                .jwks_url(set.stub.url("/jwks"))
                .keys_max_age(Duration::ZERO)
                .refresh_interval(Duration::ZERO)
                // Every request reaches the key set, none the accepted-token cache.
                .cache_entries(0)
                .build()
                .expect("a verifier"),
        );
        let token = key.token(&claims(&server.resource));
        assert_eq!(server.refusal(&token).0, 200, "the first set");
        set.mode.store(1, Ordering::SeqCst);
        let hits = set.stub.hits();
        assert_eq!(server.refusal(&token).0, 200, "after {}", body);
        assert_eq!(set.stub.hits(), hits + 1, "it did refetch");
    }
}

/// A set with no usable key and nothing cached: the provider is broken,
/// so 503 with the generic description, as for any failed fetch; and
/// garbage answers (not JSON, too many keys, too large, a redirect) are
/// the same 503, the description never naming the cause.
#[test]
fn garbage_key_sets_fail_closed_with_503() {
    let key = Signer::ec("ec", "ES256");
    let many: Vec<_> = (0..10_000)
        .map(|i| json!({"kty": "oct", "kid": i}))
        .collect();
    let bodies = vec![
        json!({"keys": []}).to_string(),
        "<html>not json</html>".to_string(),
        json!({"keys": many}).to_string(),
        format!("{{\"keys\": [], \"pad\": \"{}\"}}", "x".repeat(300 * 1024)),
        "302 {}".to_string(),
        json!({"keys": {"kty": "EC"}}).to_string(),
        "[".repeat(100_000),
    ];
    let unavailable = "the authorization server's signing keys are unavailable";
    for (i, _) in bodies.iter().enumerate() {
        let set = Scripted::serve(bodies.clone());
        set.mode.store(i, Ordering::SeqCst);
        let server = protect(
            JwtVerifier::builder(ISSUER)
                .jwks_url(set.stub.url("/jwks"))
                .build()
                .expect("a verifier"),
        );
        let token = key.token(&claims(&server.resource));
        assert_eq!(
            server.refusal(&token),
            (503, unavailable.to_string()),
            "body {}",
            i
        );
    }
}

/// The first requests arrive together: one fetches, the others wait for
/// it; none gets a 503 while the JWKS answers at once (DESIGN.md §28 "a
/// request with no usable keys waits for the fetch under way").
#[test]
fn concurrent_first_requests_all_pass() {
    let key = Signer::ec("ec", "ES256");
    for _ in 0..5 {
        let set = Scripted::serve(vec![jwks(&[&key])]);
        let server = Arc::new(protect(
            JwtVerifier::builder(ISSUER)
                .jwks_url(set.stub.url("/jwks"))
                .build()
                .expect("a verifier"),
        ));
        let token = key.token(&claims(&server.resource));
        let start = Arc::new(Barrier::new(24));
        let threads: Vec<_> = (0..24)
            .map(|_| {
                let (server, token, start) =
                    (Arc::clone(&server), token.clone(), Arc::clone(&start));
                thread::spawn(move || {
                    start.wait();
                    server.refusal(&token)
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().expect("a client").0, 200);
        }
    }
}

/// A JWKS that hangs (drips its answer) while a made-up `kid` has it
/// refetched: tokens of cached keys pass at once meanwhile (fresh keys,
/// and stale keys within the stale window), and the request that
/// triggered the fetch is answered by the fetch deadline (DESIGN.md §28:
/// "no lock held during the fetch").
#[test]
fn a_hanging_jwks_does_not_stall_tokens_of_cached_keys() {
    let key = Signer::ec("ec", "ES256");
    let body = jwks(&[&key]);
    let (tell, asked) = mpsc::channel();
    let tell = Mutex::new(tell);
    let hang = Arc::new(AtomicBool::new(false));
    let hanging = Arc::clone(&hang);
    let stub = Stub::serve(move |_| {
        if hanging.load(Ordering::SeqCst) {
            let _ = tell.lock().map(|t| t.send(()));
            return Reply::Drip(1000);
        }
        Reply::Json(200, body.clone())
    });
    for max_age in [Duration::from_secs(600), Duration::ZERO] {
        let server = Arc::new(protect(
            JwtVerifier::builder(ISSUER)
                .jwks_url(stub.url("/jwks"))
                .keys_max_age(max_age)
                .refresh_interval(Duration::ZERO)
                .fetch_timeout(Duration::from_secs(2))
                .build()
                .expect("a verifier"),
        ));
        let good = claims(&server.resource);
        let token = key.token(&good);
        hang.store(false, Ordering::SeqCst);
        assert_eq!(server.refusal(&token).0, 200, "the keys are fetched");
        hang.store(true, Ordering::SeqCst);
        let stranger = key.sign(&json!({"alg": "ES256", "kid": "nobody"}), &good);
        let (trigger, started) = (Arc::clone(&server), Instant::now());
        let stuck = thread::spawn(move || (trigger.refusal(&stranger), started.elapsed()));
        asked
            .recv_timeout(Duration::from_secs(10))
            .expect("the refetch started");
        let started = Instant::now();
        assert_eq!(server.refusal(&token).0, 200, "max age {:?}", max_age);
        let waited = started.elapsed();
        assert!(waited < Duration::from_millis(500), "waited {:?}", waited);
        let (answer, took) = stuck.join().expect("the trigger");
        assert_eq!(
            answer,
            (
                503,
                "the authorization server's signing keys are unavailable".into()
            )
        );
        assert!(took < Duration::from_secs(4), "the trigger took {:?}", took);
    }
}

/// Hostile tokens signed with the right key: odd numbers in the times
/// (RFC 7519 §2 NumericDate), deep or huge JSON, padded or standard
/// base64 (RFC 7515 §2 asks for base64url without padding), a header
/// lying about the alg. Each is a 401 naming the check, never a 200 or a
/// 5xx.
#[test]
fn hostile_tokens_are_refused_with_401() {
    let key = Signer::ec("ec", "ES256");
    let rsa = Signer::rsa("rsa", "RS256");
    let set = Scripted::serve(vec![jwks(&[&key, &rsa])]);
    let server = protect(
        JwtVerifier::builder(ISSUER)
            .jwks_url(set.stub.url("/jwks"))
            .max_token_bytes(64 * 1024)
            .build()
            .expect("a verifier"),
    );
    let good = claims(&server.resource);
    let with = |name: &str, value: serde_json::Value| {
        let mut c = good.clone();
        c[name] = value;
        key.token(&c)
    };
    let header = json!({"alg": "ES256", "kid": "ec"});
    let nested = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let raw = |head: &str, body: &str| {
        let input = format!(
            "{}.{}",
            super::keys::b64(head.as_bytes()),
            super::keys::b64(body.as_bytes())
        );
        input
    };
    let cases: Vec<(String, &str)> = vec![
        (with("exp", json!(-1)), "the exp claim is malformed"),
        (
            with("exp", json!("9999999999")),
            "the exp claim is malformed",
        ),
        (with("exp", json!(1e300)), "the exp claim is malformed"),
        (with("nbf", json!(1e10)), "token not yet valid (nbf)"),
        (with("iat", json!(-5.5)), "the iat claim is malformed"),
        (
            with("aud", json!(vec!["x"; 5000])),
            "the token was not issued for this resource",
        ),
        (with("aud", json!([1])), "the audience claim is malformed"),
        (with("sub", json!(7)), "the token has no subject (sub)"),
        (
            with("scope", json!(["mcp:tools"])),
            "the scope claim is malformed",
        ),
        (
            key.sign(&json!({"alg": "ES256", "kid": "rsa"}), &good),
            "the token's alg does not match its key",
        ),
        (
            rsa.sign(&json!({"alg": "PS256", "kid": "rsa"}), &good),
            "the token's alg does not match its key",
        ),
        (
            key.sign(&json!({"alg": "ES256", "kid": "k".repeat(30_000)}), &good),
            "unknown signing key",
        ),
        (
            key.sign(
                &json!({"alg": "ES256", "kid": "../../etc/passwd\u{202e}"}),
                &good,
            ),
            "unknown signing key",
        ),
        (
            key.sign(
                &json!({"alg": "ES256", "kid": "ec", "crit": ["exp"]}),
                &good,
            ),
            "unsupported critical header",
        ),
        (
            key.sign(&json!({"alg": "ES256", "kid": "ec", "typ": "JWE"}), &good),
            "the token type is not accepted",
        ),
        (
            format!("{}.AAAA", raw(&nested, "{}")),
            "the token is malformed",
        ),
        (
            format!("{}.AAAA", raw(&header.to_string(), &nested)),
            "the signature does not verify",
        ),
        (format!("{}=", key.token(&good)), "the token is malformed"),
        (
            key.token(&good).replace('.', ".."),
            "the token is malformed",
        ),
    ];
    for (token, want) in cases.iter() {
        let got = server.refusal(token);
        assert_eq!((got.0, got.1.as_str()), (401, *want), "{:.80}", token);
    }
    assert_eq!(server.refusal(&key.token(&good)).0, 200, "still serving");
}

/// An introspection endpoint that lies (RFC 7662 §2.2): `active` as a
/// string, an expired `exp`, `sub` as a number, another audience, a
/// nested bomb. Each is a 401 naming the check; an answer that is not
/// JSON is a generic 503. A negative answer for one token never touches
/// another's (the cache is keyed by the token's SHA-256).
#[test]
fn introspection_lies_are_refused() {
    let exp = super::keys::now() + 300;
    let stub = Stub::serve(move |seen| {
        let token = seen.body.split('&').find_map(|p| p.strip_prefix("token="));
        let base = json!({"active": true, "sub": "alice", "scope": "mcp:tools",
                          "aud": "api://mine", "exp": exp});
        let mut answer = base.clone();
        match token.unwrap_or("") {
            "string-active" => answer["active"] = json!("true"),
            "expired" => answer["exp"] = json!(1000),
            "number-sub" => answer["sub"] = json!(42),
            "other-aud" => answer["aud"] = json!(["api://theirs"]),
            "huge-exp" => answer["exp"] = json!(1e300),
            "nan" => return Reply::Json(200, "{\"active\": true, \"exp\": NaN}".into()),
            "bomb" => return Reply::Json(200, "[".repeat(60_000)),
            _ => {}
        }
        Reply::Json(200, answer.to_string())
    });
    let server = protect(
        tiny_mcp::IntrospectionVerifier::builder(stub.url("/introspect"))
            .audience("api://mine")
            .build()
            .expect("a verifier"),
    );
    let unavailable = "the authorization server is unavailable";
    let cases = [
        ("string-active", 401, "the token is not active"),
        ("expired", 401, "token expired"),
        ("number-sub", 401, "the token has no subject (sub)"),
        ("other-aud", 401, "audience does not match"),
        ("huge-exp", 401, "the exp claim is malformed"),
        ("nan", 503, unavailable),
        ("bomb", 503, unavailable),
        ("good", 200, ""),
        ("expired", 401, "token expired"),
        ("good", 200, ""),
    ];
    for (token, status, want) in cases.iter() {
        let got = server.refusal(token);
        assert_eq!((got.0, got.1.as_str()), (*status, *want), "{}", token);
    }
}
