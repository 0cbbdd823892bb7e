//! `JwtVerifier` behind a protected endpoint: signed tokens from keys made
//! in the test, a JWKS on a loopback stub that counts its fetches.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{JwtVerifier, JwtVerifierBuilder};

use super::keys::{b64, claims, jwks, now, Signer, ISSUER};
use super::stub::{Reply, Stub};
use super::{protect, refusal, Protected};
use crate::support::Example;

/// A JWKS stub whose key set the test may change, or take down (500).
struct Jwks {
    stub: Stub,
    body: Arc<Mutex<String>>,
    down: Arc<AtomicBool>,
}

impl Jwks {
    fn serve(signers: &[&Signer]) -> Jwks {
        let body = Arc::new(Mutex::new(jwks(signers)));
        let down = Arc::new(AtomicBool::new(false));
        let (keys, off) = (Arc::clone(&body), Arc::clone(&down));
        let stub = Stub::serve(move |_| match off.load(Ordering::SeqCst) {
            true => Reply::Json(500, "{}".into()),
            false => Reply::Json(200, keys.lock().unwrap().clone()),
        });
        Jwks { stub, body, down }
    }

    fn verifier(&self) -> JwtVerifierBuilder {
        JwtVerifier::builder(ISSUER).jwks_url(self.stub.url("/jwks"))
    }
}

fn serve(builder: JwtVerifierBuilder) -> Protected {
    protect(builder.build().expect("a verifier"))
}

/// Every supported algorithm verifies, the key chosen by `kid`; the
/// principal carries sub, client_id, scope and iss (RFC 9068 §2.2); the
/// JWKS is fetched once and cached.
#[test]
fn valid_tokens_of_every_algorithm() {
    let signers = [
        Signer::rsa("rsa-rs256", "RS256"),
        Signer::rsa("rsa-ps256", "PS256"),
        Signer::ec("p256", "ES256"),
        Signer::ec("p384", "ES384"),
        Signer::ed25519("ed"),
    ];
    let jwks = Jwks::serve(&signers.iter().collect::<Vec<_>>());
    let server = serve(jwks.verifier());
    for signer in &signers {
        let token = signer.token(&claims(&server.resource));
        let who = server.whoami(&token);
        assert_eq!(who["subject"], "alice", "{}: {}", signer.alg, who);
        assert_eq!(who["clientId"], "c1", "{}", signer.alg);
        assert_eq!(who["scopes"], json!(["mcp:tools"]), "{}", signer.alg);
        assert_eq!(who["issuer"], ISSUER, "{}", signer.alg);
    }
    assert_eq!(
        jwks.stub.hits(),
        1,
        "the key set is fetched once and cached"
    );
}

/// Each broken token gets 401 invalid_token naming the failed check
/// (RFC 6750 §3.1; RFC 8725 §3.1 for alg none and HMAC with a public key;
/// RFC 7519 §4.1.4/5/6 for the times, with the 60 s leeway; RFC 8707 for
/// the audience).
#[test]
fn refusals_name_the_failed_check() {
    let rsa = Signer::rsa("rsa", "RS256");
    let ec = Signer::ec("ec", "ES256");
    let unknown = Signer::ed25519("not-in-the-set");
    let jwks = Jwks::serve(&[&rsa, &ec]);
    let server = serve(jwks.verifier());
    let good = claims(&server.resource);
    let with = |name: &str, value: Value| {
        let mut c = good.clone();
        c[name] = value;
        c
    };
    let without = |name: &str| {
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove(name);
        c
    };
    let valid = rsa.token(&good);
    let (head, _) = valid.split_at(valid.find('.').unwrap());
    let tampered = {
        let parts: Vec<&str> = valid.split('.').collect();
        let forged = b64(with("sub", json!("root")).to_string().as_bytes());
        format!("{}.{}.{}", parts[0], forged, parts[2])
    };
    let hmac = {
        let header = json!({"alg": "HS256", "kid": "rsa", "typ": "JWT"});
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(good.to_string().as_bytes())
        );
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &rsa.public_bytes());
        let tag = ring::hmac::sign(&key, input.as_bytes());
        format!("{}.{}", input, b64(tag.as_ref()))
    };
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","kid":"rsa"}"#),
        b64(good.to_string().as_bytes())
    );
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "expired",
            rsa.token(&with("exp", json!(now() - 120))),
            "token expired",
        ),
        (
            "not yet valid",
            rsa.token(&with("nbf", json!(now() + 600))),
            "token not yet valid (nbf)",
        ),
        (
            "iat in the future",
            rsa.token(&with("iat", json!(now() + 600))),
            "token issued in the future (iat)",
        ),
        (
            "no exp",
            rsa.token(&without("exp")),
            "the token has no expiry (exp)",
        ),
        (
            "no sub",
            rsa.token(&without("sub")),
            "the token has no subject (sub)",
        ),
        (
            "no aud",
            rsa.token(&without("aud")),
            "the token names no audience (aud)",
        ),
        (
            "other audience",
            rsa.token(&with("aud", json!("https://other.example.com/mcp"))),
            "the token was not issued for this resource",
        ),
        (
            "other issuer",
            rsa.token(&with("iss", json!("https://evil.example.com"))),
            "issuer does not match",
        ),
        ("unknown kid", unknown.token(&good), "unknown signing key"),
        ("alg none", none, "alg none is not accepted"),
        (
            "HS256 with the public key",
            hmac,
            "HMAC algorithms are not accepted",
        ),
        (
            "alg not the key's",
            rsa.sign(&json!({"alg": "RS256", "kid": "ec"}), &good),
            "the token's alg does not match its key",
        ),
        (
            "tampered payload",
            tampered,
            "the signature does not verify",
        ),
        (
            "another typ",
            rsa.sign(
                &json!({"alg": "RS256", "kid": "rsa", "typ": "dpop+jwt"}),
                &good,
            ),
            "the token type is not accepted",
        ),
        (
            "oversized",
            format!("{}.{}.x", head, "A".repeat(9000)),
            "the token is too long",
        ),
        ("malformed", "abc.def".to_string(), "the token is malformed"),
        (
            "bad base64 header",
            format!("!!!{}", valid),
            "the token is malformed",
        ),
    ];
    for (what, token, expected) in cases {
        let (status, description) = server.refusal(&token);
        assert_eq!((status, description.as_str()), (401, expected), "{}", what);
    }
}

/// Audiences configured on the verifier (an Entra `api://` identifier)
/// replace the endpoint's resource check: such a token is accepted, and
/// one for another audience refused by the verifier itself.
#[test]
fn a_configured_audience_replaces_the_resource() {
    let key = Signer::ec("ec", "ES256");
    let jwks = Jwks::serve(&[&key]);
    let server = serve(jwks.verifier().audience("api://mcp-tests"));
    let token = key.token(&claims("api://mcp-tests"));
    assert_eq!(server.whoami(&token)["subject"], "alice");
    let many = json!(["https://x.example.com", "api://mcp-tests"]);
    let mut c = claims("");
    c["aud"] = many;
    assert_eq!(server.refusal(&key.token(&c)).0, 200, "an array naming it");
    let other = key.token(&claims(&server.resource));
    assert_eq!(
        server.refusal(&other),
        (401, "audience does not match".into())
    );
}

/// `require_at_jwt`: a `typ: JWT` token is refused (RFC 9068 §4).
#[test]
fn require_at_jwt_refuses_plain_jwt() {
    let key = Signer::ed25519("ed");
    let jwks = Jwks::serve(&[&key]);
    let server = serve(jwks.verifier().require_at_jwt(true));
    let good = claims(&server.resource);
    assert_eq!(server.refusal(&key.token(&good)).0, 200);
    let plain = key.sign(&json!({"alg": "EdDSA", "kid": "ed", "typ": "JWT"}), &good);
    assert_eq!(
        server.refusal(&plain),
        (401, "the token type is not accepted".into())
    );
}

/// Key rotation: a token signed with a key added to the JWKS later is
/// accepted after one refetch, and the new set is cached.
#[test]
fn a_rotated_key_is_fetched_once() {
    let old = Signer::ec("old", "ES256");
    let new = Signer::ed25519("new");
    let jwks = Jwks::serve(&[&old]);
    let server = serve(jwks.verifier().refresh_interval(Duration::ZERO));
    let good = claims(&server.resource);
    assert_eq!(server.refusal(&old.token(&good)).0, 200);
    assert_eq!(jwks.stub.hits(), 1);
    *jwks.body.lock().unwrap() = super::keys::jwks(&[&old, &new]);
    assert_eq!(server.refusal(&new.token(&good)).0, 200, "the new kid");
    assert_eq!(server.refusal(&new.token(&good)).0, 200, "again");
    assert_eq!(server.refusal(&old.token(&good)).0, 200, "the old kid");
    assert_eq!(jwks.stub.hits(), 2, "one refetch for the new kid");
}

/// A flood of 100 unknown kids costs at most one JWKS fetch per refresh
/// interval (10 s by default), and valid tokens still pass.
#[test]
fn unknown_kids_do_not_flood_the_jwks() {
    let key = Signer::ec("ec", "ES256");
    let jwks = Jwks::serve(&[&key]);
    let server = serve(jwks.verifier());
    let good = claims(&server.resource);
    for i in 0..100 {
        let stranger = key.sign(&json!({"alg": "ES256", "kid": format!("kid-{}", i)}), &good);
        assert_eq!(
            server.refusal(&stranger),
            (401, "unknown signing key".into()),
            "kid-{}",
            i
        );
    }
    assert_eq!(server.refusal(&key.token(&good)).0, 200);
    assert_eq!(jwks.stub.hits(), 1, "one fetch for the whole flood");
}

/// The JWKS down: cached keys keep serving within the stale window; with
/// no window left, or no keys ever fetched, the answer is 503 with a
/// generic description.
#[test]
fn a_jwks_outage_uses_the_stale_window_then_fails_closed() {
    let key = Signer::ec("ec", "ES256");
    let jwks = Jwks::serve(&[&key]);
    let every_time = |b: JwtVerifierBuilder| {
        b.keys_max_age(Duration::ZERO)
            .refresh_interval(Duration::ZERO)
    };
    let stale = serve(every_time(jwks.verifier()));
    let strict = serve(every_time(jwks.verifier()).stale_keys_for(Duration::ZERO));
    let token = key.token(&claims(&stale.resource));
    assert_eq!(stale.refusal(&token).0, 200);
    let strict_token = key.token(&claims(&strict.resource));
    assert_eq!(strict.refusal(&strict_token).0, 200);
    jwks.down.store(true, Ordering::SeqCst);
    let hits = jwks.stub.hits();
    assert_eq!(stale.refusal(&token).0, 200, "the stale keys serve");
    let unavailable = "the authorization server's signing keys are unavailable".to_string();
    assert_eq!(strict.refusal(&strict_token), (503, unavailable.clone()));
    assert_eq!(jwks.stub.hits(), hits + 2, "each tried to refetch");

    let never = protect(
        JwtVerifier::builder(ISSUER)
            .jwks_url(nothing_listens())
            .build()
            .expect("a verifier"),
    );
    let token = key.token(&claims(&never.resource));
    assert_eq!(never.refusal(&token), (503, unavailable));
}

/// The builder refuses what cannot work.
#[test]
fn the_builder_refuses_bad_settings() {
    assert!(JwtVerifier::builder(ISSUER).build().is_err(), "no JWKS URL");
    let ftp = JwtVerifier::builder(ISSUER)
        .jwks_url("ftp://x/jwks")
        .build();
    assert!(ftp.is_err(), "not http(s)");
    assert!(
        JwtVerifier::builder("")
            .jwks_url("http://x/")
            .build()
            .is_err(),
        "no issuer"
    );
}

/// The `everything` example with `--jwks-url`, `--auth-issuer` and
/// `--auth-audience` (issue 29 item 3) accepts a token for that audience
/// and refuses one for its resource identifier.
#[test]
fn the_everything_example_verifies_jwts() {
    let key = Signer::ec("ec", "ES256");
    let jwks = Jwks::serve(&[&key]);
    let url = jwks.stub.url("/jwks");
    let args = [
        "--jwks-url",
        &url,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        "api://everything",
    ];
    let example = Example::start(&args);
    let good = key.token(&claims("api://everything"));
    assert_eq!(refusal(example.addr, &good).0, 200);
    let resource = format!("http://{}/mcp", example.addr);
    let other = key.token(&claims(&resource));
    assert_eq!(
        refusal(example.addr, &other),
        (401, "audience does not match".into())
    );
}

/// A URL where nothing listens.
pub fn nothing_listens() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    format!("http://{}/jwks", addr)
}
