//! Authorization for the `everything` example, for tests and demos:
//! `--auth-demo` checks four fixed tokens, `--introspect URL` asks an
//! authorization server (RFC 7662 token introspection).
//!
//! Either way the server is an OAuth 2.1 protected resource: every request
//! needs `mcp:tools`, the tool `admin_echo` also `mcp:admin`, and the
//! metadata document names `--auth-issuer` (default
//! `http://127.0.0.1:9000`) as the authorization server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, Error, HttpRequestHead, JsonObject, Principal, ProtectedResource,
    RequestContext, ServerBuilder, TokenError, Tool,
};

/// How tokens are checked.
pub enum Auth {
    /// The four demo tokens.
    Demo,
    /// RFC 7662 introspection at this `http://` URL.
    Introspect(String),
}

/// The scope every request needs.
pub const TOOLS_SCOPE: &str = "mcp:tools";
/// The scope `admin_echo` needs as well.
pub const ADMIN_SCOPE: &str = "mcp:admin";

/// Adds `admin_echo` and the required scopes.
pub fn scoped(builder: ServerBuilder) -> ServerBuilder {
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    });
    builder
        .tool(
            Tool::new("admin_echo", schema).with_description("Echoes `text`; needs mcp:admin"),
            admin_echo,
        )
        .require_scopes([TOOLS_SCOPE])
        .tool_scopes("admin_echo", [ADMIN_SCOPE])
}

fn admin_echo(ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let text = args.get("text").and_then(Value::as_str).unwrap_or("");
    let who = ctx.principal().map_or("nobody", |p| p.subject.as_str());
    Ok(CallToolResult::text(format!("{} (for {})", text, who)))
}

/// The protected resource at `resource`, its tokens checked as `auth`
/// says.
pub fn protected(auth: Auth, resource: &str, issuer: &str) -> ProtectedResource {
    let protected = match auth {
        Auth::Demo => {
            let me = resource.to_string();
            let verify = move |token: &str, _: &HttpRequestHead| demo_token(token, &me);
            ProtectedResource::new(resource, verify)
        }
        Auth::Introspect(url) => {
            let verify = move |token: &str, _: &HttpRequestHead| introspect(&url, token);
            ProtectedResource::new(resource, verify)
        }
    };
    protected
        .authorization_server(issuer)
        .scopes_supported([TOOLS_SCOPE, ADMIN_SCOPE])
        .metadata_field("resource_name", json!("tiny-mcp everything"))
}

/// `user-token`, `admin-token`, `other-audience-token` (valid, but issued
/// for another resource) and `expired-token`.
fn demo_token(token: &str, resource: &str) -> Result<Principal, TokenError> {
    let hour = Duration::from_secs(3600);
    let principal = match token {
        "user-token" => Principal::new("alice").with_scopes([TOOLS_SCOPE]),
        "admin-token" => Principal::new("root").with_scopes([TOOLS_SCOPE, ADMIN_SCOPE]),
        "other-audience-token" => Principal::new("alice")
            .with_scopes([TOOLS_SCOPE])
            .with_audience(["https://other.example.com/mcp"]),
        "expired-token" => Principal::new("alice")
            .with_scopes([TOOLS_SCOPE])
            .with_expires_at(SystemTime::now() - hour),
        _ => return Err(TokenError::invalid("unknown token")),
    };
    let mut principal = principal.with_client_id("demo-client");
    if principal.audience.is_empty() {
        principal = principal.with_audience([resource]);
    }
    if principal.expires_at.is_none() {
        principal = principal.with_expires_at(SystemTime::now() + hour);
    }
    Ok(principal)
}

/// RFC 7662: POSTs the token to `url` and reads `active`, `sub`,
/// `client_id`, `scope`, `aud` and `exp` from the answer. The crate checks
/// expiry and audience itself.
fn introspect(url: &str, token: &str) -> Result<Principal, TokenError> {
    let answer = post_form(url, &format!("token={}", form_encode(token)))
        .map_err(|e| TokenError::unavailable(format!("introspection failed: {}", e)))?;
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(TokenError::invalid("the token is not active"));
    }
    let text = |key: &str| answer.get(key).and_then(Value::as_str);
    let mut principal = Principal::new(text("sub").unwrap_or("unknown"))
        .with_scopes(text("scope").unwrap_or("").split_whitespace());
    if let Some(client) = text("client_id") {
        principal = principal.with_client_id(client);
    }
    principal = match answer.get("aud") {
        Some(Value::String(aud)) => principal.with_audience([aud.as_str()]),
        Some(Value::Array(auds)) => principal.with_audience(auds.iter().filter_map(Value::as_str)),
        // No audience to check: refuse rather than accept a token meant
        // for anyone (AUTH-4).
        _ => return Err(TokenError::invalid("the token names no audience")),
    };
    if let Some(exp) = answer.get("exp").and_then(Value::as_u64) {
        principal = principal.with_expires_at(UNIX_EPOCH + Duration::from_secs(exp));
    }
    Ok(principal)
}

/// `application/x-www-form-urlencoded` for a token (RFC 6750 `b64token`
/// characters need `+` and `/` escaped).
fn form_encode(value: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
    }
    out
}

/// A minimal HTTP/1.1 POST to a plain `http://host:port/path` URL, with a
/// 5 s timeout, returning the JSON body of a 200 (by `Content-Length`,
/// chunked, or to the end of the connection; the whole answer at most
/// 64 KiB). (Written out here rather than taken from a client crate: the
/// example builds with Debian's packaged crates, and they have no small
/// HTTP client.)
fn post_form(url: &str, body: &str) -> Result<Value, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// introspection URLs are supported")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let request = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        if path.is_empty() { "/" } else { path },
        authority,
        body.len(),
        body
    );
    let answer = exchange(authority, request.as_bytes()).map_err(|e| e.to_string())?;
    let split = find(&answer, b"\r\n\r\n").ok_or("the introspection answer has no end of head")?;
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    if head.split_whitespace().nth(1) != Some("200") {
        let status = head.lines().next().unwrap_or("");
        return Err(format!("introspection answered {}", status));
    }
    let mut body = &answer[split + 4..];
    let chunked;
    if head.contains("\r\ntransfer-encoding: chunked") {
        chunked = dechunk(body).ok_or("a malformed chunked introspection answer")?;
        body = &chunked;
    }
    serde_json::from_slice(body).map_err(|e| format!("introspection answer: {}", e))
}

/// Sends `request` to `authority` and reads the answer to its end (the
/// request asks the server to close), at most 64 KiB, within 5 s per read.
fn exchange(authority: &str, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let timeout = Some(Duration::from_secs(5));
    let address = super::socket_addr(authority)
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::InvalidInput, why))?;
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(timeout)?;
    stream.set_write_timeout(timeout)?;
    stream.write_all(request)?;
    let mut answer = Vec::new();
    stream.take(64 * 1024).read_to_end(&mut answer)?;
    Ok(answer)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A chunked body (RFC 9112 §7.1) decoded; `None` if it is malformed.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = find(rest, b"\r\n")?;
        let size = std::str::from_utf8(&rest[..line]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

/// What `session_info` reports of the principal.
pub fn principal_info(ctx: &RequestContext) -> Value {
    match ctx.principal() {
        Some(p) => json!({"subject": p.subject, "clientId": p.client_id, "scopes": p.scopes}),
        None => Value::Null,
    }
}
