//! Authorization as an OAuth 2.1 resource server: the bearer token check,
//! the `WWW-Authenticate` challenges, and the protected resource metadata
//! document (DESIGN.md §15).
//!
//! The program brings a [`TokenVerifier`]; the crate owns the protocol
//! around it. The decision table of [`authorize`], in order:
//!
//! | request | answer |
//! | --- | --- |
//! | `access_token` in the query string | 400, `error="invalid_request"` |
//! | two or more `Authorization` headers | 400, `error="invalid_request"` |
//! | no `Authorization`, or another scheme (`Basic …`) | 401, challenge without `error` |
//! | `Bearer` with no token | 400, `error="invalid_request"` |
//! | a token that is not RFC 6750 `b64token` syntax | 401, `error="invalid_token"` |
//! | the verifier refuses it | 401, `error="invalid_token"` |
//! | the verifier cannot decide now | 503 |
//! | expired (`expires_at` passed) | 401, `error="invalid_token"` |
//! | an audience that is not this resource (RFC 8707) | 401, `error="invalid_token"` |
//! | a server-wide scope missing | 403, `error="insufficient_scope"` |
//! | otherwise | the principal rides on with the request |
//!
//! Every challenge names `resource_metadata`, and `scope` when the server
//! requires scopes; every refusal has the reason phrase and a small JSON
//! body (`error`, `error_description`).
//!
//! Spec: basic/authorization (2025-11-25) "Authorization Server
//! Discovery", "Access Token Usage", "Token Audience Binding and
//! Validation", "Scope Challenge Handling" (AUTH-1 to AUTH-7); RFC 9728
//! §3 and §5.1; RFC 6750 §2.1, §3 and §3.1; RFC 8707 §2.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::{json, Value};

use super::head::HttpRequestHead;
use super::wire::{HttpRequest, HttpResponse};
use crate::challenge::format_bearer;
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::server::Principal;

/// The well-known path of the protected resource metadata (RFC 9728 §3).
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Checks an access token and says who it stands for.
///
/// Called for every request to the endpoint that carries
/// `Authorization: Bearer <token>`, on the connection's thread, with the
/// token and the request's head (before the body is read). Return the
/// [`Principal`] the token stands for, or a [`TokenError`]. The crate then
/// checks the principal's expiry and audience itself and answers every
/// refusal with the status and challenge the spec names (see
/// [`ProtectedResource`]).
///
/// Closures `Fn(&str, &HttpRequestHead<'_>) -> Result<Principal, TokenError>`
/// are verifiers; pass one to [`ProtectedResource::from_fn`], which infers
/// its parameter types (stored in a `let` first, or passed to
/// [`ProtectedResource::new`], a closure needs them written out, and a
/// named `fn verify(token: &str, head: &HttpRequestHead<'_>)` works
/// everywhere). A verifier that calls out (introspection, RFC 7662)
/// should cache its answers and bound its own timeouts: the connection
/// waits for it.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the credentials after `Bearer `).
    fn verify(&self, token: &str, head: &HttpRequestHead<'_>) -> Result<Principal, TokenError>;
}

impl<F> TokenVerifier for F
where
    F: Fn(&str, &HttpRequestHead<'_>) -> Result<Principal, TokenError> + Send + Sync + 'static,
{
    fn verify(&self, token: &str, head: &HttpRequestHead<'_>) -> Result<Principal, TokenError> {
        self(token, head)
    }
}

/// Why a [`TokenVerifier`] did not accept a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenError {
    unavailable: bool,
    description: String,
}

impl TokenError {
    /// The token is not valid (unknown, revoked, forged, malformed): 401
    /// with `error="invalid_token"` and `description` as
    /// `error_description`.
    pub fn invalid(description: impl Into<String>) -> TokenError {
        TokenError {
            unavailable: false,
            description: description.into(),
        }
    }

    /// The verifier cannot decide now (its introspection endpoint is
    /// down): 503, and the client may retry.
    pub fn unavailable(description: impl Into<String>) -> TokenError {
        TokenError {
            unavailable: true,
            description: description.into(),
        }
    }
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)
    }
}

impl std::error::Error for TokenError {}

/// Makes the HTTP endpoint an OAuth 2.1 protected resource: every request
/// needs a bearer token that `verifier` accepts, issued for `resource`.
/// Set it with [`HttpServerBuilder::protect`](crate::HttpServerBuilder::protect).
/// The resource names the server's port, so serve on a fixed one.
///
/// The server then also serves its protected resource metadata (RFC 9728)
/// at `/.well-known/oauth-protected-resource`, at that path followed by
/// the endpoint's path (`/.well-known/oauth-protected-resource/mcp`), and
/// followed by the path of `resource` when that differs: `resource`,
/// `authorization_servers`, `scopes_supported` (as set, else every scope
/// the server requires) and `bearer_methods_supported: ["header"]`, plus
/// any [`metadata_field`](Self::metadata_field). The document is public;
/// the endpoint's Host and Origin checks apply to it.
///
/// The refusals, in the order they are checked, are in the decision table
/// of DESIGN.md §15.
///
/// # Example
///
/// ```no_run
/// use tiny_mcp::{Principal, ProtectedResource, Server, TokenError};
///
/// let protected = ProtectedResource::from_fn("https://mcp.example.com/mcp", |token, _head| {
///     match token {
///         "let-me-in" => Ok(Principal::new("alice").with_scopes(["mcp:tools"])),
///         _ => Err(TokenError::invalid("unknown token")),
///     }
/// })
/// .authorization_server("https://auth.example.com");
/// let server = Server::builder("demo", "1.0.0").require_scopes(["mcp:tools"]).build();
/// let http = server.http().protect(protected).serve("127.0.0.1:3000")?;
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
///
/// Spec: basic/authorization (2025-11-25); RFC 9728; RFC 6750 §3;
/// RFC 8707.
#[derive(Clone)]
pub struct ProtectedResource {
    resource: String,
    verifier: Arc<dyn TokenVerifier>,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    fields: JsonObject,
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .finish()
    }
}

impl ProtectedResource {
    /// `resource` is the server's canonical URI (RFC 8707 §2, e.g.
    /// `https://mcp.example.com/mcp`): tokens must have been issued for
    /// it. `verifier` checks each token.
    pub fn new(resource: impl Into<String>, verifier: impl TokenVerifier) -> ProtectedResource {
        ProtectedResource {
            resource: resource.into(),
            verifier: Arc::new(verifier),
            authorization_servers: Vec::new(),
            scopes_supported: None,
            fields: JsonObject::new(),
        }
    }

    /// [`new`](Self::new) for a closure, whose parameter types are then
    /// inferred (passed to `new`, a closure must spell them out:
    /// `|token: &str, head: &HttpRequestHead<'_>|`).
    pub fn from_fn(
        resource: impl Into<String>,
        verify: impl Fn(&str, &HttpRequestHead<'_>) -> Result<Principal, TokenError>
            + Send
            + Sync
            + 'static,
    ) -> ProtectedResource {
        ProtectedResource::new(resource, verify)
    }

    /// Adds an authorization server (its issuer URL) to the metadata's
    /// `authorization_servers`. At least one is required (AUTH-1).
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> ProtectedResource {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Sets `scopes_supported`. Defaults to every scope the server
    /// requires ([`ServerBuilder::require_scopes`](crate::ServerBuilder::require_scopes)
    /// and the per-item ones), omitted when there are none.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> ProtectedResource {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a field to the metadata document (RFC 9728 §2, e.g.
    /// `resource_name`, `resource_documentation`); it replaces a field the
    /// crate sets.
    pub fn metadata_field(mut self, name: impl Into<String>, value: Value) -> ProtectedResource {
        self.fields.insert(name.into(), value);
        self
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the metadata document: the well-known path inserted
    /// between the resource's authority and its path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_url(&self.resource);
        format!("{}{}{}", origin, METADATA_PATH, path.trim_end_matches('/'))
    }

    /// Refuses a setting that cannot work: `resource` must be an absolute
    /// `http`/`https` URL without a fragment, and there must be an
    /// authorization server.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let r = &self.resource;
        let scheme = if r.starts_with("https://") {
            "https://".len()
        } else if r.starts_with("http://") {
            "http://".len()
        } else {
            usize::MAX
        };
        let absolute = !r.contains('#') && split_url(r).0.len() > scheme;
        if !absolute {
            return Err(config(format!(
                "the protected resource must be an absolute http(s) URL without a fragment, \
                 not {:?}",
                r
            )));
        }
        if self.authorization_servers.is_empty() {
            return Err(config(
                "the protected resource metadata needs at least one authorization server \
                 (ProtectedResource::authorization_server)",
            ));
        }
        Ok(())
    }

    /// The paths the metadata document is served at, for `endpoint`.
    pub(crate) fn serves_metadata_at(&self, path: &str, endpoint: &str) -> bool {
        let suffix = match path.strip_prefix(METADATA_PATH) {
            Some(suffix) => suffix,
            None => return false,
        };
        suffix.is_empty()
            || suffix == endpoint
            || suffix == split_url(&self.resource).1.trim_end_matches('/')
    }

    /// The metadata document (RFC 9728 §2); `named` are the scopes the
    /// server requires, the default `scopes_supported`.
    pub(crate) fn document(&self, named: Vec<String>) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        let scopes = self.scopes_supported.clone().unwrap_or(named);
        if !scopes.is_empty() {
            doc["scopes_supported"] = json!(scopes);
        }
        if let Value::Object(doc) = &mut doc {
            for (name, value) in &self.fields {
                doc.insert(name.clone(), value.clone());
            }
        }
        doc
    }

    /// `true` if `audience` names this resource (a trailing slash aside).
    fn is_for_me(&self, audience: &[String]) -> bool {
        let me = self.resource.trim_end_matches('/');
        audience.iter().any(|a| a.trim_end_matches('/') == me)
    }
}

fn config(message: impl fmt::Display) -> Error {
    Error::msg(message)
}

/// `https://host:port/path` as (`https://host:port`, `/path`).
fn split_url(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find(['/', '?'])
        .map_or(url.len(), |i| after_scheme + i);
    let path = url[end..].split('?').next().unwrap_or("");
    (&url[..end], path)
}

/// The principal of a request to the protected endpoint, or the refusal
/// (the decision table in this module's doc). `required` are the scopes
/// every request needs.
pub(crate) fn authorize(
    protected: &ProtectedResource,
    required: &[String],
    request: &HttpRequest,
) -> Result<Principal, HttpResponse> {
    let refuse = |why: Refusal| Err(refusal(protected, required, why));
    if request.query.as_deref().map_or(false, has_access_token) {
        return refuse(Refusal::Malformed(
            "access tokens are not accepted in the query string; send Authorization: Bearer",
        ));
    }
    let mut values = request.headers.get_all("authorization");
    let (value, more) = (values.next(), values.next());
    let token = match (value, more) {
        (_, Some(_)) => return refuse(Refusal::Malformed("more than one Authorization header")),
        (None, None) => return refuse(Refusal::NoToken),
        (Some(value), None) => match bearer_token(value) {
            Some(token) => token,
            None => return refuse(Refusal::NoToken),
        },
    };
    if token.is_empty() {
        return refuse(Refusal::Malformed("the Bearer credentials are empty"));
    }
    if !is_b64token(token) {
        return refuse(Refusal::Invalid("the token is malformed".into()));
    }
    let principal = match protected
        .verifier
        .verify(token, &HttpRequestHead::new(request))
    {
        Ok(principal) => principal,
        Err(e) if e.unavailable => return refuse(Refusal::Unavailable(e.description)),
        Err(e) => return refuse(Refusal::Invalid(e.description)),
    };
    if principal
        .expires_at
        .map_or(false, |at| at <= SystemTime::now())
    {
        return refuse(Refusal::Invalid("the token has expired".into()));
    }
    if !principal.audience.is_empty() && !protected.is_for_me(&principal.audience) {
        return refuse(Refusal::Invalid(
            "the token was not issued for this resource".into(),
        ));
    }
    let lacking = principal.lacks(required);
    if !lacking.is_empty() {
        return Err(insufficient_scope(protected, required, &lacking));
    }
    Ok(principal)
}

/// The token of `Bearer <token>` (scheme in any case); `None` for another
/// scheme.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, rest) = match value.split_once(' ') {
        Some((scheme, rest)) => (scheme, rest),
        None => (value, ""),
    };
    if scheme.eq_ignore_ascii_case("bearer") {
        Some(rest.trim())
    } else {
        None
    }
}

/// RFC 6750 §2.1: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// `true` if the query has an `access_token` parameter (RFC 6750 §2.3,
/// which MCP forbids: AUTH-7).
fn has_access_token(query: &str) -> bool {
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("");
        name == "access_token" || percent_decoded(name).as_deref() == Some("access_token")
    })
}

/// `name` with its `%XX` escapes decoded, if it has any and they are valid
/// UTF-8.
fn percent_decoded(name: &str) -> Option<String> {
    if !name.contains('%') {
        return None;
    }
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes.get(i + 1..i + 3).and_then(|hex| {
            let hex = std::str::from_utf8(hex).ok()?;
            u8::from_str_radix(hex, 16).ok()
        });
        match (bytes[i], escaped) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Why a request was refused.
enum Refusal {
    /// No bearer credentials: a challenge without an error code (RFC 6750
    /// §3.1).
    NoToken,
    Malformed(&'static str),
    Invalid(String),
    Unavailable(String),
}

/// The answer to a refused request.
fn refusal(protected: &ProtectedResource, required: &[String], why: Refusal) -> HttpResponse {
    let (status, error, description) = match why {
        Refusal::NoToken => (
            401,
            None,
            "this endpoint needs an access token: Authorization: Bearer <token>".to_string(),
        ),
        Refusal::Malformed(why) => (400, Some("invalid_request"), why.to_string()),
        Refusal::Invalid(why) => (401, Some("invalid_token"), why),
        Refusal::Unavailable(why) => {
            log::warn!("the token verifier cannot decide: {}", why);
            let body = error_body("temporarily_unavailable", &why);
            return body.into_response(503);
        }
    };
    let mut params = Vec::new();
    if let Some(error) = error {
        params.push(("error", error.to_string()));
        params.push(("error_description", description.clone()));
    }
    params.push(("resource_metadata", protected.metadata_url()));
    if !required.is_empty() {
        params.push(("scope", required.join(" ")));
    }
    let body = error_body(error.unwrap_or("unauthorized"), &description);
    body.into_response(status)
        .header("WWW-Authenticate", format_bearer(&params))
}

/// 403 with the scopes the operation needs (AUTH-5), so that the client
/// can ask for them (step-up authorization).
pub(crate) fn insufficient_scope(
    protected: &ProtectedResource,
    needed: &[String],
    lacking: &[&str],
) -> HttpResponse {
    let description = format!("the token lacks the scope {}", lacking.join(" "));
    let params = [
        ("error", "insufficient_scope".to_string()),
        ("scope", needed.join(" ")),
        ("resource_metadata", protected.metadata_url()),
        ("error_description", description.clone()),
    ];
    let body = error_body("insufficient_scope", &description);
    body.into_response(403)
        .header("WWW-Authenticate", format_bearer(&params))
}

/// A small JSON error body: `{"error": …, "error_description": …}`.
struct ErrorBody(Value);

fn error_body(error: &str, description: &str) -> ErrorBody {
    ErrorBody(json!({"error": error, "error_description": description}))
}

impl ErrorBody {
    fn into_response(self, status: u16) -> HttpResponse {
        HttpResponse::json(status, self.0.to_string().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        let verifier = |_: &str, _: &HttpRequestHead<'_>| Err(TokenError::invalid("no"));
        let p = ProtectedResource::new("https://mcp.example.com/mcp", verifier);
        assert_eq!(
            p.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = ProtectedResource::new("http://127.0.0.1:8080/", verifier);
        assert_eq!(
            root.metadata_url(),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert!(p.serves_metadata_at(METADATA_PATH, "/mcp"));
        assert!(p.serves_metadata_at("/.well-known/oauth-protected-resource/mcp", "/mcp"));
        assert!(!p.serves_metadata_at("/.well-known/oauth-protected-resource/x", "/mcp"));
        assert!(p.check().is_err(), "no authorization server");
        let p = p.authorization_server("https://auth.example.com");
        assert!(p.check().is_ok());
        let relative = ProtectedResource::new("/mcp", verifier).authorization_server("x");
        assert!(relative.check().is_err());
        let hostless = ProtectedResource::new("https:///mcp", verifier).authorization_server("x");
        assert!(hostless.check().is_err());
        let short = ProtectedResource::new("http://x", verifier).authorization_server("x");
        assert!(short.check().is_ok());
    }

    #[test]
    fn token_syntax() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Bearer"), Some(""));
        assert_eq!(bearer_token("Basic dXNlcjpwYXNz"), None);
        assert!(is_b64token("abc-._~+/=="));
        assert!(!is_b64token("a b"));
        assert!(!is_b64token("=="));
        assert!(has_access_token("a=1&access_token=x"));
        assert!(has_access_token("access%5Ftoken=x"));
        assert!(has_access_token("%61ccess_token=x"));
        assert!(!has_access_token("my_access_token=x"));
    }
}
