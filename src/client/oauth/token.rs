//! The token endpoint (RFC 6749 §3.2, §4.1.3, §4.4, §6): exchanging an
//! authorization code, refreshing, client credentials; the client's
//! authentication there (RFC 6749 §2.3.1, RFC 7591 §2); the answer read
//! into [`Tokens`].

use serde_json::Value;

use super::discovery::ServerMetadata;
use super::fetch::{failed, Fetcher};
use super::store::{now_secs, Registration, Tokens};
use super::{url, AssertionFn};
use crate::error::Error;

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A token request: the grant's own parameters, and what every grant
/// sends (the client, the `resource` of RFC 8707).
pub(crate) struct TokenRequest<'a> {
    pub(crate) step: &'static str,
    pub(crate) metadata: &'a ServerMetadata,
    pub(crate) registration: &'a Registration,
    /// The canonical URI of the MCP server (RFC 8707 §2).
    pub(crate) resource: &'a str,
    pub(crate) params: Vec<(&'a str, &'a str)>,
    /// The signer, for `private_key_jwt`.
    pub(crate) assertion: Option<&'a AssertionFn>,
}

impl TokenRequest<'_> {
    /// Sends the request; the tokens, or the server's `error` as the
    /// step's error (RFC 6749 §5.2).
    pub(crate) fn send(
        self,
        fetcher: &Fetcher,
        asked_scope: Option<&str>,
    ) -> Result<Tokens, Error> {
        let endpoint = self.metadata.token_endpoint()?;
        let mut params = self.params.clone();
        params.push(("resource", self.resource));
        let mut headers = Vec::new();
        let reg = self.registration;
        let assertion;
        match reg.token_endpoint_auth_method.as_str() {
            "private_key_jwt" => {
                let sign = self
                    .assertion
                    .ok_or_else(|| failed(self.step, "private_key_jwt without a client key"))?;
                assertion = sign(&reg.client_id, &self.metadata.issuer)?;
                params.push(("client_id", &reg.client_id));
                params.push(("client_assertion_type", ASSERTION_TYPE));
                params.push(("client_assertion", &assertion));
            }
            "client_secret_basic" => {
                let secret = reg.client_secret.as_deref().unwrap_or("");
                let pair = format!("{}:{}", url::encode(&reg.client_id), url::encode(secret));
                let basic = crate::base64::encode_padded(pair.as_bytes());
                headers.push(("Authorization", format!("Basic {}", basic)));
                // Some servers want it in the body as well (the Python SDK's).
                params.push(("client_id", &reg.client_id));
            }
            "client_secret_post" => {
                params.push(("client_id", &reg.client_id));
                params.push(("client_secret", reg.client_secret.as_deref().unwrap_or("")));
            }
            _ => params.push(("client_id", &reg.client_id)),
        }
        let body = url::form(&params);
        let reply = fetcher.post(
            self.step,
            endpoint,
            &headers,
            "application/x-www-form-urlencoded",
            body.as_bytes(),
        )?;
        let value = reply
            .json(self.step, "the token endpoint's answer")
            .or_else(|e| match reply.status {
                200 => Err(e),
                status => Ok(serde_json::json!({ "error": format!("HTTP {}", status) })),
            })?;
        if reply.status != 200 || value.get("error").is_some() {
            return Err(refused(self.step, reply.status, &value));
        }
        read_tokens(self.step, &value, asked_scope)
    }
}

/// The server's refusal: its `error` code and description (RFC 6749 §5.2),
/// never the request's secrets.
fn refused(step: &'static str, status: u16, value: &Value) -> Error {
    let text = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or("");
    let code = match text("error") {
        "" => "no error code".to_string(),
        code => code.chars().take(100).collect(),
    };
    let description: String = text("error_description").chars().take(300).collect();
    failed(
        step,
        match description.is_empty() {
            true => format!("the token endpoint answered {}: {}", status, code),
            false => format!(
                "the token endpoint answered {}: {}: {}",
                status, code, description
            ),
        },
    )
}

/// Whether an error of a refresh says the refresh token is no good
/// (`invalid_grant`), so that only a new login helps.
pub(crate) fn is_invalid_grant(error: &Error) -> bool {
    error.to_string().contains("invalid_grant")
}

/// A successful answer (RFC 6749 §5.1): `access_token` of type `Bearer`,
/// `expires_in` turned into a time, `scope` (else the one asked for).
fn read_tokens(
    step: &'static str,
    value: &Value,
    asked_scope: Option<&str>,
) -> Result<Tokens, Error> {
    let access_token = match value.get("access_token").and_then(Value::as_str) {
        Some(token) if !token.is_empty() => token.to_string(),
        _ => return Err(failed(step, "the answer has no access_token")),
    };
    let kind = value
        .get("token_type")
        .and_then(Value::as_str)
        .unwrap_or("Bearer");
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(failed(
            step,
            format!(
                "token_type {:?} is not Bearer",
                kind.chars().take(40).collect::<String>()
            ),
        ));
    }
    let expires_in = match value.get("expires_in") {
        Some(Value::Number(n)) => n.as_f64().map(|n| n.max(0.0) as u64),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    Ok(Tokens {
        access_token,
        refresh_token: value
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string),
        expires_at: expires_in.map(|secs| now_secs().saturating_add(secs)),
        scope: value
            .get("scope")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| asked_scope.map(str::to_string)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 6749 §5.1: a lower-case token_type is Bearer; expires_in becomes
    // a time; a missing scope is the one asked for.
    #[test]
    fn token_answers_are_read() {
        let value = serde_json::json!({
            "access_token": "at", "token_type": "bearer", "expires_in": 60, "refresh_token": "rt"
        });
        let tokens = read_tokens("token request", &value, Some("a b")).unwrap();
        assert_eq!(tokens.access_token, "at");
        assert_eq!(tokens.refresh_token.as_deref(), Some("rt"));
        assert_eq!(tokens.scope.as_deref(), Some("a b"));
        assert!(tokens.expires_within(61) && !tokens.expires_within(30));
        let mac = serde_json::json!({ "access_token": "at", "token_type": "mac" });
        assert!(read_tokens("token request", &mac, None).is_err());
        assert!(read_tokens("token request", &serde_json::json!({}), None).is_err());
    }

    // RFC 6749 §5.2: the error names the code and description only.
    #[test]
    fn refusals_name_the_error_code() {
        let value = serde_json::json!({ "error": "invalid_grant", "error_description": "expired" });
        let error = refused("token refresh", 400, &value);
        assert_eq!(
            error.to_string(),
            "authorization failed (token refresh): the token endpoint answered 400: invalid_grant: expired"
        );
        assert!(is_invalid_grant(&error));
    }
}
