//! The client's identity at an authorization server, in the spec's order
//! (basic/authorization "Client Registration"): credentials the program
//! gives, then a Client ID Metadata Document URL where the server supports
//! them, then a registration kept from an earlier login with the same
//! server, then Dynamic Client Registration (RFC 7591).

use serde_json::{json, Value};

use super::discovery::ServerMetadata;
use super::fetch::{failed, shown, Fetcher};
use super::store::Registration;
use super::Identity;
use crate::error::Error;

const STEP: &str = "client registration";

/// What registering needs to know of the client.
pub(crate) struct Client<'a> {
    pub(crate) identity: &'a Identity,
    pub(crate) redirect_uri: Option<&'a str>,
    /// The grant types it uses (`authorization_code` and `refresh_token`,
    /// or `client_credentials`).
    pub(crate) grant_types: &'a [&'a str],
    /// A registration kept from before, if any.
    pub(crate) kept: Option<&'a Registration>,
}

/// The registration to use with the server of `metadata`.
pub(crate) fn choose(
    fetcher: &Fetcher,
    metadata: &ServerMetadata,
    client: &Client<'_>,
) -> Result<Registration, Error> {
    let identity = client.identity;
    if let Some(id) = &identity.client_id {
        return pre_registered(metadata, identity, id);
    }
    if let (Some(url), true) = (
        &identity.metadata_url,
        metadata.client_id_metadata_document_supported,
    ) {
        return Ok(Registration {
            issuer: metadata.issuer.clone(),
            client_id: url.clone(),
            client_secret: None,
            token_endpoint_auth_method: "none".into(),
            redirect_uris: client
                .redirect_uri
                .map(str::to_string)
                .into_iter()
                .collect(),
        });
    }
    if let Some(kept) = client
        .kept
        .filter(|kept| still_good(kept, metadata, client))
    {
        return Ok(kept.clone());
    }
    match &metadata.registration_endpoint {
        Some(endpoint) => register(fetcher, metadata, endpoint, client),
        None => Err(failed(
            STEP,
            format!(
                "{} supports neither Client ID Metadata Documents (or none was given) nor \
                 dynamic registration: give the client's id (OAuth::client_id)",
                shown(&metadata.issuer)
            ),
        )),
    }
}

/// Pre-registered credentials, for the server they were registered with
/// ("Authorization Server Binding": never another's).
fn pre_registered(
    metadata: &ServerMetadata,
    identity: &Identity,
    id: &str,
) -> Result<Registration, Error> {
    if let Some(issuer) = identity.issuer.as_deref().filter(|i| *i != metadata.issuer) {
        return Err(failed(
            STEP,
            format!(
                "the client id was registered with {}, but the server now uses {}: \
                 not sent to another authorization server",
                shown(issuer),
                shown(&metadata.issuer)
            ),
        ));
    }
    let method = match (&identity.auth_method, &identity.client_secret) {
        (Some(method), _) => method.clone(),
        (None, _) if identity.assertion.is_some() => "private_key_jwt".to_string(),
        (None, None) => "none".to_string(),
        (None, Some(_)) => secret_method(metadata),
    };
    Ok(Registration {
        issuer: metadata.issuer.clone(),
        client_id: id.to_string(),
        client_secret: identity.client_secret.clone(),
        token_endpoint_auth_method: method,
        redirect_uris: Vec::new(),
    })
}

/// How a client with a secret authenticates: `client_secret_basic` unless
/// the server lists only `client_secret_post` of the two (RFC 8414 §2:
/// basic is the default when the list is absent).
fn secret_method(metadata: &ServerMetadata) -> String {
    let listed = |m: &str| {
        metadata
            .token_endpoint_auth_methods_supported
            .as_ref()
            .map_or(m == "client_secret_basic", |l| l.iter().any(|x| x == m))
    };
    match listed("client_secret_basic") || !listed("client_secret_post") {
        true => "client_secret_basic".into(),
        false => "client_secret_post".into(),
    }
}

/// A kept registration is used again with the same server, for the same
/// redirect URI.
fn still_good(kept: &Registration, metadata: &ServerMetadata, client: &Client<'_>) -> bool {
    kept.issuer == metadata.issuer
        && client
            .redirect_uri
            .map_or(true, |uri| kept.redirect_uris.iter().any(|r| r == uri))
}

/// Dynamic Client Registration (RFC 7591 §3.1): the client's metadata
/// POSTed; the answer's `client_id`, `client_secret` and
/// `token_endpoint_auth_method` kept.
fn register(
    fetcher: &Fetcher,
    metadata: &ServerMetadata,
    endpoint: &str,
    client: &Client<'_>,
) -> Result<Registration, Error> {
    let method = requested_method(metadata);
    let mut request = json!({
        "client_name": client.identity.client_name,
        "grant_types": client.grant_types,
        "token_endpoint_auth_method": method,
    });
    if let Some(uri) = client.redirect_uri {
        request["redirect_uris"] = json!([uri]);
        request["response_types"] = json!(["code"]);
        // 2026-07-28 "Application Type and Redirect URI Constraints".
        request["application_type"] = json!(if is_loopback(uri) { "native" } else { "web" });
    }
    if let Some(uri) = &client.identity.client_uri {
        request["client_uri"] = json!(uri);
    }
    let body = crate::error::to_json_bytes("the registration request", &request)?;
    let reply = fetcher.post(STEP, endpoint, &[], "application/json", &body)?;
    let value = reply
        .json(STEP, "the registration answer")
        .unwrap_or(Value::Null);
    if !matches!(reply.status, 200 | 201) {
        let error = value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("no error code");
        let description = value
            .get("error_description")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(failed(
            STEP,
            format!(
                "{} refused the registration ({}): {} {}",
                shown(endpoint),
                reply.status,
                error.chars().take(100).collect::<String>(),
                description.chars().take(300).collect::<String>()
            ),
        ));
    }
    let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_string);
    let client_id = text("client_id")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| failed(STEP, "the registration answer has no client_id"))?;
    let client_secret = text("client_secret");
    let method = text("token_endpoint_auth_method").unwrap_or_else(|| match &client_secret {
        Some(_) if method == "none" => "client_secret_basic".into(),
        _ => method.to_string(),
    });
    Ok(Registration {
        issuer: metadata.issuer.clone(),
        client_id,
        client_secret,
        token_endpoint_auth_method: method,
        redirect_uris: client
            .redirect_uri
            .map(str::to_string)
            .into_iter()
            .collect(),
    })
}

/// The authentication a registering client asks for: `none` (a public
/// client, as a CLI is) where the server lists it or lists nothing, else
/// the first of the secret methods it lists.
fn requested_method(metadata: &ServerMetadata) -> &'static str {
    let listed = match &metadata.token_endpoint_auth_methods_supported {
        None => return "none",
        Some(listed) => listed,
    };
    for method in ["none", "client_secret_basic", "client_secret_post"] {
        if listed.iter().any(|m| m == method) {
            return method;
        }
    }
    "client_secret_basic"
}

fn is_loopback(uri: &str) -> bool {
    ["http://127.0.0.1", "http://localhost", "http://[::1]"]
        .iter()
        .any(|p| uri.starts_with(p))
}
