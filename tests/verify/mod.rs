//! The crate's token verifiers behind a real protected HTTP endpoint
//! (127.0.0.1:0): [`tiny_mcp::JwtVerifier`] (feature `jwt`) against a JWKS
//! served by a stub, and [`tiny_mcp::IntrospectionVerifier`] against a stub
//! introspection endpoint. RFC 6750 §3.1 (the refusals), RFC 7519, RFC
//! 7662, RFC 9068, RFC 8707.

use std::net::SocketAddr;

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, Error, HttpServer, JsonObject, ProtectedResource, RequestContext, Server,
    TokenVerifier, Tool,
};

use crate::support::http::{initialize_body, notification, rpc, Conn, Req, LATEST};

#[cfg(feature = "jwt")]
mod hostile;
mod introspect;
#[cfg(feature = "jwt")]
mod jwt;
#[cfg(feature = "jwt")]
mod keys;
mod stub;

/// A protected endpoint on 127.0.0.1 whose resource is its own URL.
pub struct Protected {
    pub addr: SocketAddr,
    /// The resource identifier, `http://127.0.0.1:PORT/mcp`.
    #[cfg_attr(not(feature = "jwt"), allow(dead_code))]
    pub resource: String,
    _http: HttpServer,
}

/// Serves a server with the tool `whoami` (every request needs
/// `mcp:tools`), its tokens checked by `verifier`.
pub fn protect(verifier: impl TokenVerifier) -> Protected {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let resource = format!("http://127.0.0.1:{}/mcp", port);
    let server = Server::builder("verify-tests", "1")
        .tool(Tool::new("whoami", json!({"type": "object"})), whoami)
        .require_scopes(["mcp:tools"])
        .build();
    let protected = ProtectedResource::new(resource.as_str(), verifier)
        .authorization_server("https://issuer.example.com");
    let http = server
        .http()
        .protect(protected)
        .serve(("127.0.0.1", port))
        .expect("serve");
    Protected {
        addr: http.local_addr(),
        resource,
        _http: http,
    }
}

fn whoami(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    let principal = ctx.principal().map(|p| {
        json!({"subject": p.subject, "clientId": p.client_id, "scopes": p.scopes,
               "issuer": p.issuer})
    });
    Ok(CallToolResult::text(json!(principal).to_string()))
}

fn bearer(req: Req, token: &str) -> Req {
    req.header("Authorization", &format!("Bearer {}", token))
}

impl Protected {
    /// The status and `error_description` of an `initialize` with
    /// `token` (see [`refusal`]).
    pub fn refusal(&self, token: &str) -> (u16, String) {
        refusal(self.addr, token)
    }

    /// The principal the handler sees for `token`: a session opened and
    /// `whoami` called with it.
    pub fn whoami(&self, token: &str) -> Value {
        let mut conn = Conn::open(self.addr);
        let init = bearer(
            Req::post(initialize_body(json!(0), LATEST, json!({}))),
            token,
        );
        let response = conn.request(&init, "initialize");
        response.expect_status(200, "initialize");
        let id = response
            .header("mcp-session-id")
            .expect("a session")
            .to_string();
        let done = bearer(
            Req::post(notification("notifications/initialized", json!({}))),
            token,
        );
        conn.request(&done.session(&id), "initialized")
            .expect_status(202, "initialized");
        let call = rpc(
            json!(1),
            "tools/call",
            json!({"name": "whoami", "arguments": {}}),
        );
        let response = conn.request(&bearer(Req::post(call), token).session(&id), "whoami");
        response.expect_status(200, "whoami");
        let text = response.rpc()["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// The status and `error_description` of an `initialize` with `token` at
/// `addr`; asserts the description never shows the token.
pub fn refusal(addr: SocketAddr, token: &str) -> (u16, String) {
    let init = bearer(
        Req::post(initialize_body(json!(0), LATEST, json!({}))),
        token,
    );
    let response = Conn::open(addr).request(&init, "initialize with a token");
    let text = response.text();
    assert!(
        token.len() < 8 || !text.contains(token),
        "the refusal shows the token: {}",
        text
    );
    let description = match response.status() {
        200 => String::new(),
        _ => response.json()["error_description"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    };
    (response.status(), description)
}
