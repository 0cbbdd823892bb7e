//! Enterprise-managed authorization (the MCP authorization extension of
//! SEP-990, "Cross-App Access"): the user is already signed in to the
//! company's identity provider; its ID token is exchanged there for an
//! Identity Assertion JWT Authorization Grant (ID-JAG, RFC 8693 token
//! exchange), which the MCP server's authorization server takes as a JWT
//! bearer grant (RFC 7523 §2.1). No browser.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::discovery::ServerMetadata;
use super::fetch::{failed, Fetcher};
use super::store::{Registration, Tokens};
use super::token::TokenRequest;
use super::url;
use crate::error::Error;

const STEP: &str = "token exchange";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

type IdTokenFn = dyn Fn() -> Result<String, Error> + Send + Sync;

/// The company's identity provider, for
/// [`OAuth::enterprise`](super::OAuth::enterprise): its token endpoint,
/// the client's id there, and where the user's ID token comes from (the
/// program's own single sign-on).
#[derive(Clone)]
pub struct IdentityProvider {
    token_endpoint: String,
    client_id: Option<String>,
    client_secret: Option<String>,
    id_token: Arc<IdTokenFn>,
}

impl fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IdentityProvider {
    /// The identity provider whose token endpoint is `token_endpoint`;
    /// `id_token` returns the user's current OpenID Connect ID token,
    /// asked each time a token is needed.
    pub fn new(
        token_endpoint: &str,
        id_token: impl Fn() -> Result<String, Error> + Send + Sync + 'static,
    ) -> IdentityProvider {
        IdentityProvider {
            token_endpoint: token_endpoint.into(),
            client_id: None,
            client_secret: None,
            id_token: Arc::new(id_token),
        }
    }

    /// The client's id at the identity provider, sent as `client_id`.
    pub fn client_id(mut self, client_id: &str) -> IdentityProvider {
        self.client_id = Some(client_id.into());
        self
    }

    /// The client's secret at the identity provider (HTTP Basic).
    pub fn client_secret(mut self, secret: &str) -> IdentityProvider {
        self.client_secret = Some(secret.into());
        self
    }
}

/// The exchange and the grant: an ID-JAG for the authorization server of
/// `metadata` and the `resource`, then tokens for it.
pub(crate) fn grant(
    fetcher: &Fetcher,
    idp: &IdentityProvider,
    metadata: &ServerMetadata,
    registration: &Registration,
    resource: &str,
    scope: Option<&str>,
) -> Result<Tokens, Error> {
    let id_jag = exchange(fetcher, idp, &metadata.issuer, resource, scope)?;
    let mut params = vec![("grant_type", JWT_BEARER), ("assertion", id_jag.as_str())];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    TokenRequest {
        step: "token request",
        metadata,
        registration,
        resource,
        params,
        assertion: None,
    }
    .send(fetcher, scope)
}

/// RFC 8693 §2.1 at the identity provider: the ID token for an ID-JAG
/// whose audience is the authorization server and whose resource is the
/// MCP server.
fn exchange(
    fetcher: &Fetcher,
    idp: &IdentityProvider,
    audience: &str,
    resource: &str,
    scope: Option<&str>,
) -> Result<String, Error> {
    let id_token = (idp.id_token)()?;
    let mut params = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("subject_token", id_token.as_str()),
        ("subject_token_type", ID_TOKEN),
        ("audience", audience),
        ("resource", resource),
    ];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    if let Some(id) = &idp.client_id {
        params.push(("client_id", id));
    }
    let mut headers = Vec::new();
    if let (Some(id), Some(secret)) = (&idp.client_id, &idp.client_secret) {
        let pair = format!("{}:{}", url::encode(id), url::encode(secret));
        let basic = crate::base64::encode_padded(pair.as_bytes());
        headers.push(("Authorization", format!("Basic {}", basic)));
    }
    let body = url::form(&params);
    let reply = fetcher.post(
        STEP,
        &idp.token_endpoint,
        &headers,
        "application/x-www-form-urlencoded",
        body.as_bytes(),
    )?;
    let value = reply.json(STEP, "the identity provider's answer")?;
    let text = |name: &str| value.get(name).and_then(Value::as_str);
    if reply.status != 200 || text("error").is_some() {
        return Err(failed(
            STEP,
            format!(
                "the identity provider answered {}: {}",
                reply.status,
                text("error")
                    .unwrap_or("no error code")
                    .chars()
                    .take(100)
                    .collect::<String>()
            ),
        ));
    }
    if text("issued_token_type") != Some(ID_JAG) {
        return Err(failed(STEP, "the identity provider issued no ID-JAG"));
    }
    text("access_token")
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .ok_or_else(|| failed(STEP, "the answer has no access_token"))
}
