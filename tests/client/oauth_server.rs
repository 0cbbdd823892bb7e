//! The two servers of the OAuth tests, on 127.0.0.1: a scripted fake
//! authorization server (metadata, `/register`, `/authorize` answering
//! `302` to the redirect URI, `/token` with refresh tokens) that keeps a
//! ledger of what it issued and saw, and a real tiny-mcp HTTP server as
//! the protected resource, whose verifier accepts what the ledger holds.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, HttpRequestHead, HttpServer, JsonObject, Principal, ProtectedResource,
    RequestContext, Server, TokenError, Tool,
};

use super::fake::{answer, Fake, Reply, Request};

/// What the authorization server issued and saw, and how it behaves.
#[derive(Default)]
pub(super) struct Ledger {
    /// `GET /authorize` requests answered with a code.
    pub(super) authorizations: usize,
    /// `POST /register` requests.
    pub(super) registrations: usize,
    /// Token requests by `grant_type`.
    pub(super) grants: Vec<String>,
    /// The query of each authorization request, decoded.
    pub(super) authorize_queries: Vec<Vec<(String, String)>>,
    /// Access tokens the resource accepts, with their scopes.
    valid: HashMap<String, Vec<String>>,
    /// Access tokens revoked: refused with `401`.
    revoked: HashSet<String>,
    refresh: HashMap<String, Vec<String>>,
    codes: HashMap<String, Vec<String>>,
    issued: usize,
    /// Every token the resource's verifier was given.
    pub(super) presented: Vec<String>,
    /// `expires_in` of issued tokens; `None`: not sent.
    pub(super) expires_in: Option<u64>,
    /// Whether refresh tokens are issued.
    pub(super) refresh_tokens: bool,
    /// Whether a refresh is answered with `invalid_grant`.
    pub(super) refuse_refresh: bool,
    /// Scopes never granted.
    pub(super) withheld: Vec<String>,
    /// A `client_secret` given at registration.
    pub(super) client_secret: Option<String>,
    /// Answers the authorization request with this `state` instead.
    pub(super) forged_state: Option<String>,
    /// Requests with a revoked token wait until this many have arrived.
    pub(super) hold_revoked: usize,
    arrived_revoked: usize,
}

impl Ledger {
    /// Revokes every access token (refresh tokens stay good).
    pub(super) fn revoke_all(&mut self) {
        let tokens: Vec<String> = self.valid.drain().map(|(t, _)| t).collect();
        self.revoked.extend(tokens);
    }

    /// The scopes the last authorization request asked for.
    pub(super) fn last_scope(&self) -> Vec<String> {
        let query = self.authorize_queries.last().cloned().unwrap_or_default();
        let scope = value_of(&query, "scope").unwrap_or_default();
        scope.split_whitespace().map(str::to_string).collect()
    }

    fn count(&self, grant: &str) -> usize {
        self.grants.iter().filter(|g| *g == grant).count()
    }

    /// `refresh_token` requests so far.
    pub(super) fn refreshes(&self) -> usize {
        self.count("refresh_token")
    }
}

/// Overrides the script for some requests (a hostile server).
pub(super) type Hostile = dyn Fn(&Request) -> Option<Reply> + Send + Sync;

/// The fake authorization server; its issuer is its origin.
pub(super) struct AuthServer {
    pub(super) fake: Fake,
    pub(super) issuer: String,
    pub(super) ledger: Arc<(Mutex<Ledger>, Condvar)>,
}

impl AuthServer {
    /// An authorization server issuing tokens for an hour, with refresh
    /// tokens.
    pub(super) fn start() -> AuthServer {
        AuthServer::with(|_| None)
    }

    /// [`start`](Self::start), `hostile` answering first.
    pub(super) fn with(
        hostile: impl Fn(&Request) -> Option<Reply> + Send + Sync + 'static,
    ) -> AuthServer {
        let ledger = Arc::new((Mutex::new(Ledger::default()), Condvar::new()));
        {
            let mut l = ledger.0.lock();
            l.expires_in = Some(3600);
            l.refresh_tokens = true;
        }
        let shared = Arc::clone(&ledger);
        let hostile: Box<Hostile> = Box::new(hostile);
        let fake = Fake::start(move |request| {
            hostile(request).unwrap_or_else(|| script(request, &shared.0))
        });
        let issuer = format!("http://{}", fake.addr);
        AuthServer {
            fake,
            issuer,
            ledger,
        }
    }

    /// The ledger, locked.
    pub(super) fn ledger(&self) -> parking_lot::MutexGuard<'_, Ledger> {
        self.ledger.0.lock()
    }
}

/// The authorization server's metadata (RFC 8414 §2) for `issuer`.
pub(super) fn metadata(issuer: &str) -> Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{}/authorize", issuer),
        "token_endpoint": format!("{}/token", issuer),
        "registration_endpoint": format!("{}/register", issuer),
        "scopes_supported": ["mcp:tools", "mcp:admin", "offline_access"],
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        "authorization_response_iss_parameter_supported": true,
    })
}

fn script(request: &Request, ledger: &Mutex<Ledger>) -> Reply {
    let host = request.header("host").unwrap_or("").to_string();
    let issuer = format!("http://{}", host);
    let (path, query) = request
        .path
        .split_once('?')
        .unwrap_or((request.path.as_str(), ""));
    let reply = match (request.method.as_str(), path) {
        ("GET", "/.well-known/oauth-authorization-server") => json_answer(200, &metadata(&issuer)),
        ("POST", "/register") => register(request, &mut ledger.lock()),
        ("GET", "/authorize") => authorize(&issuer, &parse(query), &mut ledger.lock()),
        ("POST", "/token") => token(&parse(&request.body), &mut ledger.lock()),
        _ => answer(404, "text/plain", "no such thing", ""),
    };
    Reply::Close(reply)
}

fn json_answer(status: u16, value: &Value) -> Vec<u8> {
    answer(status, "application/json", &value.to_string(), "")
}

/// RFC 7591 §3.2.1: `201` with the client's id (and secret, if set).
fn register(request: &Request, ledger: &mut Ledger) -> Vec<u8> {
    ledger.registrations += 1;
    let asked = request.json();
    let mut client = json!({
        "client_id": format!("client-{}", ledger.registrations),
        "redirect_uris": asked["redirect_uris"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(secret) = &ledger.client_secret {
        client["client_secret"] = json!(secret);
        client["token_endpoint_auth_method"] = json!("client_secret_post");
    }
    json_answer(201, &client)
}

/// OAuth 2.1 §4.1.2: `302` to the redirect URI with `code`, `state` and
/// `iss` (RFC 9207), approving at once.
fn authorize(issuer: &str, query: &[(String, String)], ledger: &mut Ledger) -> Vec<u8> {
    ledger.authorizations += 1;
    ledger.authorize_queries.push(query.to_vec());
    let asked = value_of(query, "scope").unwrap_or_default();
    let scopes = asked
        .split_whitespace()
        .filter(|s| !ledger.withheld.iter().any(|w| w == s))
        .map(str::to_string)
        .collect();
    ledger.issued += 1;
    let code = format!("code-{}", ledger.issued);
    ledger.codes.insert(code.clone(), scopes);
    let state = ledger
        .forged_state
        .clone()
        .or_else(|| value_of(query, "state"))
        .unwrap_or_default();
    let redirect = value_of(query, "redirect_uri").unwrap_or_default();
    let location = format!(
        "{}?code={}&state={}&iss={}",
        redirect,
        code,
        encode(&state),
        encode(issuer)
    );
    let extra = format!("Location: {}\r\n", location);
    answer(302, "text/plain", "", &extra)
}

/// RFC 6749 §4.1.3 and §6: a code or a refresh token for tokens.
fn token(form: &[(String, String)], ledger: &mut Ledger) -> Vec<u8> {
    let grant = value_of(form, "grant_type").unwrap_or_default();
    ledger.grants.push(grant.clone());
    let scopes = match grant.as_str() {
        "authorization_code" => {
            let verifier = value_of(form, "code_verifier").unwrap_or_default();
            let code = value_of(form, "code").unwrap_or_default();
            match ledger.codes.remove(&code) {
                Some(scopes) if (43..=128).contains(&verifier.len()) => scopes,
                _ => return invalid_grant(),
            }
        }
        "refresh_token" if !ledger.refuse_refresh => {
            let presented = value_of(form, "refresh_token").unwrap_or_default();
            match ledger.refresh.remove(&presented) {
                Some(scopes) => scopes,
                None => return invalid_grant(),
            }
        }
        _ => return invalid_grant(),
    };
    ledger.issued += 1;
    let access = format!("at-{}", ledger.issued);
    ledger.valid.insert(access.clone(), scopes.clone());
    let mut answer = json!({
        "access_token": access,
        "token_type": "Bearer",
        "scope": scopes.join(" "),
    });
    if let Some(secs) = ledger.expires_in {
        answer["expires_in"] = json!(secs);
    }
    if ledger.refresh_tokens {
        let refresh = format!("rt-{}", ledger.issued);
        ledger.refresh.insert(refresh.clone(), scopes);
        answer["refresh_token"] = json!(refresh);
    }
    json_answer(200, &answer)
}

fn invalid_grant() -> Vec<u8> {
    json_answer(
        400,
        &json!({"error": "invalid_grant", "error_description": "not good"}),
    )
}

/// The decoded pairs of a query or form body.
pub(super) fn parse(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (n, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(n), decode(v))
        })
        .collect()
}

pub(super) fn value_of(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

fn decode(text: &str) -> String {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{:02X}", b),
        })
        .collect()
}

/// The protected MCP server: `echo` needs `mcp:tools` (every request
/// does), `admin` also `mcp:admin`, `never` also `mcp:never`.
pub(super) struct Resource {
    pub(super) _http: HttpServer,
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub(super) url: String,
}

fn echo(_: &RequestContext, args: JsonObject) -> Result<CallToolResult, tiny_mcp::Error> {
    let text = args.get("text").and_then(Value::as_str).unwrap_or("");
    Ok(CallToolResult::text(text.to_string()))
}

/// Serves the protected resource of `auth`'s tokens; `tweak` changes its
/// metadata.
pub(super) fn resource(
    auth: &AuthServer,
    tweak: impl FnOnce(ProtectedResource) -> ProtectedResource,
) -> Resource {
    // The resource names the port: bind once to learn a free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let url = format!("http://127.0.0.1:{}/mcp", port);
    let ledger = Arc::clone(&auth.ledger);
    let audience = url.clone();
    let verify = move |token: &str, _: &HttpRequestHead<'_>| verify(&ledger, token, &audience);
    let protected =
        tweak(ProtectedResource::from_fn(url.as_str(), verify).authorization_server(&auth.issuer));
    let any = json!({"type": "object"});
    let server = Server::builder("oauth-resource", "1")
        .tool(Tool::new("echo", any.clone()), echo)
        .tool(Tool::new("admin", any.clone()), echo)
        .tool(Tool::new("never", any), echo)
        .require_scopes(["mcp:tools"])
        .tool_scopes("admin", ["mcp:admin"])
        .tool_scopes("never", ["mcp:never"])
        .build();
    let http = server
        .http()
        .protect(protected)
        .serve(("127.0.0.1", port))
        .expect("serve the protected resource");
    Resource { _http: http, url }
}

/// The verifier: a token the ledger holds, for `audience`. A revoked one
/// waits (10 s at most) until `hold_revoked` of them have arrived.
fn verify(
    ledger: &(Mutex<Ledger>, Condvar),
    token: &str,
    audience: &str,
) -> Result<Principal, TokenError> {
    let (lock, arrived) = ledger;
    let mut l = lock.lock();
    l.presented.push(token.to_string());
    if let Some(scopes) = l.valid.get(token) {
        return Ok(Principal::new("alice")
            .with_scopes(scopes.clone())
            .with_audience([audience]));
    }
    if l.revoked.contains(token) && l.hold_revoked > 0 {
        l.arrived_revoked += 1;
        arrived.notify_all();
        while l.arrived_revoked < l.hold_revoked {
            if arrived
                .wait_for(&mut l, Duration::from_secs(10))
                .timed_out()
            {
                break;
            }
        }
    }
    Err(TokenError::invalid("unknown or revoked token"))
}
