//! Authorization for the `everything` example, for tests and demos:
//! `--auth-demo` checks four fixed tokens, `--introspect URL` asks an
//! authorization server (RFC 7662 token introspection).
//!
//! Either way the server is an OAuth 2.1 protected resource: every request
//! needs `mcp:tools`, the tool `admin_echo` also `mcp:admin`, and the
//! metadata document names `--auth-issuer` (default
//! `http://127.0.0.1:9000`) as the authorization server.

use std::io::{BufRead, BufReader, Read, Write};
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
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{:02X}", b),
        })
        .collect()
}

/// A minimal HTTP/1.1 POST to a plain `http://host:port/path` URL, with a
/// 5 s timeout, returning the JSON body of a 200 (by `Content-Length`,
/// chunked, or to the end of the connection; at most 64 KiB). (Written out here rather
/// than taken from a client crate: the example builds with Debian's
/// packaged crates, and they have no small HTTP client.)
fn post_form(url: &str, body: &str) -> Result<Value, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// introspection URLs are supported")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let timeout = Some(Duration::from_secs(5));
    let mut stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(timeout)
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(timeout)
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        path,
        authority,
        body.len(),
        body
    )
    .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).map_err(|e| e.to_string())?;
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("introspection answered {}", status.trim()));
    }
    let (mut length, mut chunked) = (None, false);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let line = line.trim();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<u64>().ok();
            }
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.trim().eq_ignore_ascii_case("chunked");
            }
        }
    }
    let bytes = if chunked {
        read_chunked(&mut reader)?
    } else {
        let mut bytes = Vec::new();
        let limit = length.unwrap_or(MAX_ANSWER).min(MAX_ANSWER);
        reader
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        bytes
    };
    serde_json::from_slice(&bytes).map_err(|e| format!("introspection answer: {}", e))
}

/// The most bytes of an introspection answer that are read.
const MAX_ANSWER: u64 = 64 * 1024;

/// A chunked body (RFC 9112 §7.1), at most `MAX_ANSWER` bytes.
fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let size = line.trim().split(';').next().unwrap_or("");
        let size = u64::from_str_radix(size, 16).map_err(|_| "a bad chunk size")?;
        if size == 0 {
            return Ok(body);
        }
        if body.len() as u64 + size > MAX_ANSWER {
            return Err("the introspection answer is too large".into());
        }
        let start = body.len();
        body.resize(start + size as usize, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|e| e.to_string())?;
        let mut crlf = String::new();
        reader.read_line(&mut crlf).map_err(|e| e.to_string())?;
    }
}

/// What `session_info` reports of the principal.
pub fn principal_info(ctx: &RequestContext) -> Value {
    match ctx.principal() {
        Some(p) => json!({"subject": p.subject, "clientId": p.client_id, "scopes": p.scopes}),
        None => Value::Null,
    }
}
