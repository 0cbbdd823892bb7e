//! [`JwtVerifier`]: signed JWT access tokens (RFC 7519, RFC 7515 compact
//! serialization, the RFC 9068 profile) against the keys of a JWKS URL.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use super::cache::AnswerCache;
use super::claims::Rules;
use super::jwk::Alg;
use super::jwks::{KeyPolicy, KeySet};
use crate::base64::{decode_unpadded, Alphabet};
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::server::Principal;
use crate::transport::http::{HttpRequestHead, TokenError, TokenVerifier};

/// Verifies JWT access tokens signed by an authorization server whose
/// public keys are published at a JWKS URL (feature `jwt`).
///
/// For each token, in order (the description of each refusal in quotes;
/// every refusal is `401 invalid_token`, and never shows the token):
///
/// 1. at most [`max_token_bytes`](JwtVerifierBuilder::max_token_bytes)
///    (8 KiB): "the token is too long";
/// 2. three base64url parts whose header is a JSON object: "the token is
///    malformed";
/// 3. `alg`: "alg none is not accepted", "HMAC algorithms are not
///    accepted" (HS256 signed with a public key is the classic forgery),
///    another than RS256, RS384, RS512, PS256, ES256, ES384 or EdDSA:
///    "unsupported alg"; a `crit` header: "unsupported critical header";
/// 4. `typ` absent, `JWT`, `at+jwt` or `application/at+jwt` (RFC 9068
///    §2.1 asks for `at+jwt`; many providers send `JWT`, so both are
///    accepted unless [`require_at_jwt`](JwtVerifierBuilder::require_at_jwt)):
///    "the token type is not accepted";
/// 5. the key: the JWKS key named by `kid` (without `kid`, every key of
///    the token's `alg`), refetched once per refresh interval when
///    unknown: "unknown signing key"; the key's own algorithm (from its
///    `kty`, `crv` and `alg`; an RSA key without `alg` is RS256) must be
///    the token's: "the token's alg does not match its key";
/// 6. the signature (ring): "the signature does not verify";
/// 7. the claims: `iss` equal to the issuer ("issuer does not match");
///    `exp` required and not passed ("token expired"), `nbf` ("token not
///    yet valid (nbf)") and `iat` ("token issued in the future (iat)"),
///    each with the leeway; `aud` required and, when audiences are
///    configured, naming one of them ("audience does not match"); `sub`
///    required ("the token has no subject (sub)").
///
/// The [`Principal`] has `sub` as subject, `client_id` (or else `azp`) as
/// client id, `iss`, the scopes of `scope` (space-separated) or `scp` (an
/// array or a string), the expiry (`exp` plus the leeway), and in `claims`
/// the others (`iat`, `jti`, `azp`, a provider's own).
///
/// **Audience.** With no [`audience`](JwtVerifierBuilder::audience)
/// configured, the principal carries the token's `aud` and the endpoint
/// refuses it unless one names the [`ProtectedResource`](crate::ProtectedResource)'s
/// resource identifier (RFC 8707). With audiences configured (Entra ID's
/// `api://…`, an Auth0 API identifier), the verifier checks them and the
/// principal carries none, so the endpoint does not compare again.
///
/// **Keys.** Nothing is fetched before the first token, which waits for
/// the fetch (at most [`fetch_timeout`](JwtVerifierBuilder::fetch_timeout),
/// as do the tokens that arrive meanwhile; the connection's thread waits).
/// When the JWKS cannot be fetched and no usable key set is
/// cached, the answer is `503` with a generic description; the detail is
/// logged (`warn`). Keys older than [`keys_max_age`](JwtVerifierBuilder::keys_max_age)
/// are refetched; if that fails they serve for
/// [`stale_keys_for`](JwtVerifierBuilder::stale_keys_for) more.
///
/// **Accepted tokens are remembered**: the principal of a token that
/// passed every check is kept, under the token's SHA-256 (never the token),
/// for [`cache_for`](JwtVerifierBuilder::cache_for) (60 s) and never past
/// `exp`, in at most [`cache_entries`](JwtVerifierBuilder::cache_entries)
/// (1,000) entries; a client that sends the same token again skips the
/// signature check (an RSA verification costs more than the rest of a
/// `tools/call`). Refusals are not kept. A key withdrawn from the JWKS
/// still stands behind the tokens it signed for at most `cache_for`.
///
/// # Example
///
/// ```no_run
/// use tiny_mcp::{JwtVerifier, ProtectedResource, Server};
///
/// let verifier = JwtVerifier::builder("https://login.example.com/")
///     .jwks_url("https://login.example.com/.well-known/jwks.json")
///     .audience("https://mcp.example.com/mcp")
///     .build()?;
/// let protected = ProtectedResource::new("https://mcp.example.com/mcp", verifier)
///     .authorization_server("https://login.example.com/");
/// let server = Server::builder("demo", "1.0.0").require_scopes(["mcp:tools"]).build();
/// let http = server.http().protect(protected).serve("127.0.0.1:3000")?;
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
///
/// Spec: RFC 7515, RFC 7517, RFC 7518 §3, RFC 7519 §4.1, RFC 8725,
/// RFC 9068; basic/authorization (2025-11-25) "Token Audience Binding and
/// Validation".
pub struct JwtVerifier {
    rules: Rules,
    keys: KeySet,
    require_at_jwt: bool,
    max_token_bytes: usize,
    accepted: AnswerCache,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.rules.issuer)
            .field("audiences", &self.rules.audiences)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`JwtVerifier`]; from [`JwtVerifier::builder`].
#[derive(Debug, Clone)]
pub struct JwtVerifierBuilder {
    issuer: String,
    jwks_url: Option<String>,
    audiences: Vec<String>,
    leeway: Duration,
    policy: KeyPolicy,
    require_at_jwt: bool,
    max_token_bytes: usize,
    fetch_timeout: Duration,
    max_jwks_bytes: usize,
    cache_entries: usize,
    cache_for: Duration,
}

impl JwtVerifier {
    /// Settings for tokens issued by `issuer` (compared with `iss`
    /// exactly, as the provider's metadata spells it, trailing slash
    /// included).
    pub fn builder(issuer: impl Into<String>) -> JwtVerifierBuilder {
        JwtVerifierBuilder {
            issuer: issuer.into(),
            jwks_url: None,
            audiences: Vec::new(),
            leeway: Duration::from_secs(60),
            policy: KeyPolicy {
                refresh_interval: Duration::from_secs(10),
                max_age: Duration::from_secs(15 * 60),
                stale_for: Duration::from_secs(60 * 60),
                max_keys: 32,
            },
            require_at_jwt: false,
            max_token_bytes: 8 * 1024,
            fetch_timeout: Duration::from_secs(10),
            max_jwks_bytes: 256 * 1024,
            cache_entries: 1000,
            cache_for: Duration::from_secs(60),
        }
    }

    /// The principal of `token`: remembered if it was accepted lately,
    /// else checked and, when accepted, remembered.
    fn principal(&self, token: &str) -> Result<Principal, TokenError> {
        if token.len() > self.max_token_bytes {
            return Err(TokenError::invalid("the token is too long"));
        }
        let key = super::jwk::sha256(token.as_bytes());
        if let Some(answer) = self.accepted.get(&key) {
            return answer;
        }
        let principal = self.check(token)?;
        self.accepted
            .keep(key, principal.expires_at, Ok(principal.clone()));
        Ok(principal)
    }

    fn check(&self, token: &str) -> Result<Principal, TokenError> {
        if token.len() > self.max_token_bytes {
            return Err(TokenError::invalid("the token is too long"));
        }
        let malformed = || TokenError::invalid("the token is malformed");
        let mut parts = token.split('.');
        let (header, payload, signature) =
            match (parts.next(), parts.next(), parts.next(), parts.next()) {
                (Some(h), Some(p), Some(s), None) => (h, p, s),
                _ => return Err(malformed()),
            };
        let head = object(header).ok_or_else(malformed)?;
        let alg = self.algorithm(&head)?;
        let signature = decode_unpadded(signature, Alphabet::Url).ok_or_else(malformed)?;
        let kid = match head.get("kid") {
            None => None,
            Some(Value::String(kid)) => Some(kid.as_str()),
            Some(_) => return Err(malformed()),
        };
        let signed = &token[..header.len() + 1 + payload.len()];
        let keys = self.keys.candidates(kid, alg)?;
        if !keys
            .iter()
            .any(|key| key.verifies(signed.as_bytes(), &signature))
        {
            return Err(TokenError::invalid("the signature does not verify"));
        }
        let claims = object(payload).ok_or_else(malformed)?;
        self.rules.principal(claims)
    }

    /// The header's algorithm, after the `alg`, `crit` and `typ` checks.
    fn algorithm(&self, head: &JsonObject) -> Result<Alg, TokenError> {
        let name = head
            .get("alg")
            .and_then(Value::as_str)
            .ok_or_else(|| TokenError::invalid("the token is malformed"))?;
        if name.eq_ignore_ascii_case("none") {
            return Err(TokenError::invalid("alg none is not accepted"));
        }
        if name.starts_with("HS") {
            return Err(TokenError::invalid("HMAC algorithms are not accepted"));
        }
        let alg = Alg::from_name(name).ok_or_else(|| TokenError::invalid("unsupported alg"))?;
        if head.contains_key("crit") {
            return Err(TokenError::invalid("unsupported critical header"));
        }
        let typ = head
            .get("typ")
            .map(|t| t.as_str().unwrap_or("?").to_ascii_lowercase());
        let accepted = match typ.as_deref() {
            Some("at+jwt") | Some("application/at+jwt") => true,
            None | Some("jwt") => !self.require_at_jwt,
            Some(_) => false,
        };
        if !accepted {
            return Err(TokenError::invalid("the token type is not accepted"));
        }
        Ok(alg)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str, _: &HttpRequestHead<'_>) -> Result<Principal, TokenError> {
        self.principal(token)
    }
}

/// A base64url part that holds a JSON object.
fn object(part: &str) -> Option<JsonObject> {
    let bytes = decode_unpadded(part, Alphabet::Url)?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

impl JwtVerifierBuilder {
    /// The JWKS URL (`jwks_uri` of the provider's metadata). Required;
    /// `https://` needs the crate's `tls` feature.
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.jwks_url = Some(url.into());
        self
    }

    /// Adds an audience `aud` may name (a trailing slash aside). Default:
    /// none, and the endpoint checks `aud` against its resource identifier.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// How far the issuer's clock may differ from ours, for `exp`, `nbf`
    /// and `iat`. Default 60 s.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The least time between two JWKS fetches, however many tokens name
    /// unknown keys. Default 10 s.
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.policy.refresh_interval = interval;
        self
    }

    /// How long a fetched key set is used before it is fetched again.
    /// Default 15 minutes.
    pub fn keys_max_age(mut self, age: Duration) -> Self {
        self.policy.max_age = age;
        self
    }

    /// How long past its maximum age the last good key set still serves
    /// while the JWKS URL fails. Default 1 hour; zero: never.
    pub fn stale_keys_for(mut self, window: Duration) -> Self {
        self.policy.stale_for = window;
        self
    }

    /// The most keys a JWKS may list; a larger set is refused (and the
    /// old one kept). Default 32.
    pub fn max_keys(mut self, count: usize) -> Self {
        self.policy.max_keys = count;
        self
    }

    /// Refuse tokens whose `typ` is not `at+jwt` (RFC 9068 §4). Default
    /// `false`: absent and `JWT` are accepted too.
    pub fn require_at_jwt(mut self, require: bool) -> Self {
        self.require_at_jwt = require;
        self
    }

    /// The longest token read, in bytes; a longer one is refused. Default
    /// 8 KiB.
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// One deadline for a whole JWKS fetch, connecting to the last byte.
    /// Default 10 s.
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }

    /// The largest JWKS body read, in bytes. Default 256 KiB.
    pub fn max_jwks_bytes(mut self, bytes: usize) -> Self {
        self.max_jwks_bytes = bytes;
        self
    }

    /// How many accepted tokens are remembered (see [`JwtVerifier`]).
    /// Default 1,000; zero: none, every token is checked every time.
    pub fn cache_entries(mut self, entries: usize) -> Self {
        self.cache_entries = entries;
        self
    }

    /// How long an accepted token is remembered, at most (never past its
    /// `exp`). Default 60 s.
    pub fn cache_for(mut self, time: Duration) -> Self {
        self.cache_for = time;
        self
    }

    /// The verifier. Nothing is fetched until the first token.
    ///
    /// # Errors
    /// No JWKS URL, one that is not `http://` or `https://` (or
    /// `https://` without the `tls` feature), or an empty issuer.
    pub fn build(self) -> Result<JwtVerifier, Error> {
        let url = self
            .jwks_url
            .ok_or_else(|| Error::msg("JwtVerifier needs a JWKS URL (jwks_url)"))?;
        if self.issuer.is_empty() {
            return Err(Error::msg("JwtVerifier needs an issuer"));
        }
        let fetcher = super::fetcher(&url, self.fetch_timeout, self.max_jwks_bytes)?;
        Ok(JwtVerifier {
            rules: Rules {
                issuer: Some(self.issuer),
                audiences: self.audiences,
                leeway: self.leeway,
                expiry_required: true,
            },
            keys: KeySet::new(url, fetcher, self.policy),
            require_at_jwt: self.require_at_jwt,
            max_token_bytes: self.max_token_bytes,
            accepted: AnswerCache::new(self.cache_entries, self.cache_for),
        })
    }
}
