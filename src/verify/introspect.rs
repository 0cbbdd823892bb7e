//! [`IntrospectionVerifier`]: asks the authorization server whether a
//! token is active (RFC 7662), and keeps its answers for a while.

use std::fmt;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::Value;

use super::cache::{Answer, AnswerCache};
use super::claims::Rules;
use crate::client::oauth::fetch::{shown, Fetcher};
use crate::client::oauth::url;
use crate::error::Error;
use crate::server::Principal;
use crate::transport::http::{HttpRequestHead, TokenError, TokenVerifier};

/// A generic description: the detail goes to the log only.
const UNAVAILABLE: &str = "the authorization server is unavailable";

/// Verifies tokens by asking the authorization server's introspection
/// endpoint (RFC 7662). Needs no cryptography, so it is in every build.
///
/// Each token not in the cache is `POST`ed (`token`, `token_type_hint=
/// access_token`) with the client's credentials, `client_secret_basic`
/// (RFC 6749 §2.3.1) or `client_secret_post`, within **one deadline for
/// the whole exchange** ([`timeout`](IntrospectionVerifierBuilder::timeout),
/// 5 s: an endpoint that drips its answer is cut there), the answer at
/// most [`max_answer_bytes`](IntrospectionVerifierBuilder::max_answer_bytes).
///
/// The answer, in order (every refusal `401 invalid_token`):
/// - not a `200` JSON object, or no answer in time: `503` with "the
///   authorization server is unavailable" (the detail is logged, `warn`);
/// - `active` not `true`: "the token is not active";
/// - the claim rules of `JwtVerifier` (feature
///   `jwt`): `iss` (when [`issuer`](IntrospectionVerifierBuilder::issuer)
///   is set), `exp` (optional here), `nbf`, `iat`, `aud` (required;
///   against the configured audiences, or else carried for the endpoint's
///   resource check), `sub` required (an answer without one is refused,
///   never mapped to a shared principal); scopes from `scope`.
///
/// Answers are kept, keyed by the token's SHA-256 (never the token), at
/// most [`cache_entries`](IntrospectionVerifierBuilder::cache_entries)
/// (1000) for [`cache_for`](IntrospectionVerifierBuilder::cache_for)
/// (60 s); an accepted token never past its `exp`. Refusals are kept too;
/// `503`s are not.
///
/// # Example
///
/// ```no_run
/// use tiny_mcp::{IntrospectionVerifier, ProtectedResource};
///
/// let verifier = IntrospectionVerifier::builder("https://auth.example.com/introspect")
///     .client_secret_basic("mcp-server", "s3cret")
///     .build()?;
/// let protected = ProtectedResource::new("https://mcp.example.com/mcp", verifier)
///     .authorization_server("https://auth.example.com");
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
///
/// Spec: RFC 7662 §2; RFC 6749 §2.3.1; RFC 8707 §2.
pub struct IntrospectionVerifier {
    url: String,
    client: ClientAuth,
    fetcher: Fetcher,
    rules: Rules,
    cache: AnswerCache,
    max_token_bytes: usize,
}

impl fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("url", &shown(&self.url))
            .finish_non_exhaustive()
    }
}

/// How the verifier authenticates at the endpoint.
#[derive(Clone)]
enum ClientAuth {
    None,
    Basic(String, String),
    Post(String, String),
}

/// Settings of an [`IntrospectionVerifier`]; from
/// [`IntrospectionVerifier::builder`].
#[derive(Clone)]
pub struct IntrospectionVerifierBuilder {
    url: String,
    client: ClientAuth,
    issuer: Option<String>,
    audiences: Vec<String>,
    leeway: Duration,
    timeout: Duration,
    max_answer_bytes: usize,
    cache_entries: usize,
    cache_for: Duration,
    max_token_bytes: usize,
}

impl fmt::Debug for IntrospectionVerifierBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntrospectionVerifierBuilder")
            .field("url", &shown(&self.url))
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Settings for the introspection endpoint at `url`.
    pub fn builder(url: impl Into<String>) -> IntrospectionVerifierBuilder {
        IntrospectionVerifierBuilder {
            url: url.into(),
            client: ClientAuth::None,
            issuer: None,
            audiences: Vec::new(),
            leeway: Duration::from_secs(60),
            timeout: Duration::from_secs(5),
            max_answer_bytes: 64 * 1024,
            cache_entries: 1000,
            cache_for: Duration::from_secs(60),
            max_token_bytes: 8 * 1024,
        }
    }

    fn check(&self, token: &str) -> Answer {
        if token.len() > self.max_token_bytes {
            return Err(TokenError::invalid("the token is too long"));
        }
        let key = crate::sha256::digest(token.as_bytes());
        if let Some(answer) = self.cache.get(&key) {
            return answer;
        }
        let claims = self.ask(token).map_err(|why| {
            log::warn!("introspection at {}: {}", shown(&self.url), why);
            TokenError::unavailable(UNAVAILABLE)
        })?;
        let expires = claims
            .get("exp")
            .and_then(Value::as_f64)
            .filter(|e| e.is_finite())
            .map(|exp| UNIX_EPOCH + Duration::from_secs_f64(exp.clamp(0.0, 1e11)));
        let answer = self.judge(claims);
        self.cache.keep(key, expires, answer.clone());
        answer
    }

    /// The principal of an answer, or why the token is refused.
    fn judge(&self, mut claims: crate::JsonObject) -> Answer {
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenError::invalid("the token is not active"));
        }
        // `iss` is optional in an answer (RFC 7662 §2.2): the configured
        // issuer stands for it.
        if let (Some(issuer), false) = (&self.rules.issuer, claims.contains_key("iss")) {
            claims.insert("iss".into(), Value::String(issuer.clone()));
        }
        self.rules.principal(claims)
    }

    /// The endpoint's answer, or why there is none (for the log).
    fn ask(&self, token: &str) -> Result<crate::JsonObject, String> {
        let mut params = vec![("token", token), ("token_type_hint", "access_token")];
        let mut headers = Vec::new();
        match &self.client {
            ClientAuth::None => {}
            ClientAuth::Basic(id, secret) => {
                let pair = format!("{}:{}", url::encode(id), url::encode(secret));
                let basic = crate::base64::encode_padded(pair.as_bytes());
                headers.push(("Authorization", format!("Basic {}", basic)));
            }
            ClientAuth::Post(id, secret) => {
                params.push(("client_id", id));
                params.push(("client_secret", secret));
            }
        }
        let body = url::form(&params);
        let reply = self
            .fetcher
            .post(
                "introspection",
                &self.url,
                &headers,
                "application/x-www-form-urlencoded",
                body.as_bytes(),
            )
            .map_err(|e| e.to_string())?;
        if reply.status != 200 {
            return Err(format!("answered {}", reply.status));
        }
        match serde_json::from_slice(&reply.body) {
            Ok(Value::Object(claims)) => Ok(claims),
            Ok(_) => Err("the answer is not a JSON object".into()),
            Err(e) => Err(format!("the answer is not JSON: {}", e)),
        }
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify(&self, token: &str, _: &HttpRequestHead<'_>) -> Result<Principal, TokenError> {
        self.check(token)
    }
}

impl IntrospectionVerifierBuilder {
    /// Authenticate with HTTP Basic (`client_secret_basic`, RFC 6749
    /// §2.3.1). Default: no client authentication.
    pub fn client_secret_basic(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client = ClientAuth::Basic(id.into(), secret.into());
        self
    }

    /// Authenticate with `client_id` and `client_secret` in the form
    /// (`client_secret_post`).
    pub fn client_secret_post(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client = ClientAuth::Post(id.into(), secret.into());
        self
    }

    /// The issuer an answer's `iss`, when present, must equal; it is the
    /// principal's issuer. Default: not checked.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Adds an audience `aud` may name. Default: none, and the endpoint
    /// checks `aud` against its resource identifier.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Clock leeway for `exp`, `nbf` and `iat`. Default 60 s.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// One deadline for a whole exchange, connecting to the last byte of
    /// the answer. Default 5 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest answer read, in bytes. Default 64 KiB.
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// The most answers kept. Default 1000; zero keeps none.
    pub fn cache_entries(mut self, entries: usize) -> Self {
        self.cache_entries = entries;
        self
    }

    /// How long an answer is kept (an accepted token's never past its
    /// `exp`). Default 60 s.
    pub fn cache_for(mut self, time: Duration) -> Self {
        self.cache_for = time;
        self
    }

    /// The longest token sent, in bytes; a longer one is refused. Default
    /// 8 KiB.
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// The verifier.
    ///
    /// # Errors
    /// A URL that is not `http://` or `https://`, or `https://` without
    /// the `tls` feature.
    pub fn build(self) -> Result<IntrospectionVerifier, Error> {
        let fetcher = super::fetcher(&self.url, self.timeout, self.max_answer_bytes)?;
        Ok(IntrospectionVerifier {
            url: self.url,
            client: self.client,
            fetcher,
            rules: Rules {
                issuer: self.issuer,
                audiences: self.audiences,
                leeway: self.leeway,
                expiry_required: false,
            },
            cache: AnswerCache::new(self.cache_entries, self.cache_for),
            max_token_bytes: self.max_token_bytes,
        })
    }
}
