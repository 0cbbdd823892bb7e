//! Finding the authorization server: the protected resource metadata of
//! the MCP server (RFC 9728), then the authorization server's metadata
//! (RFC 8414, OpenID Connect Discovery 1.0), each checked before use.
//!
//! Spec: basic/authorization "Authorization Server Discovery"
//! (2025-11-25; its own page in 2026-07-28).

use serde::Deserialize;

use super::fetch::{failed, shown, Fetcher};
use super::url;
use crate::challenge::BearerChallenge;
use crate::error::Error;

const RESOURCE_STEP: &str = "protected resource metadata";
const SERVER_STEP: &str = "authorization server metadata";

/// A protected resource metadata document (RFC 9728 §2), the members the
/// client uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    pub(crate) resource: String,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// An authorization server metadata document (RFC 8414 §2; RFC 9207 §3;
/// the Client ID Metadata Document draft), the members the client uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) authorization_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
}

impl ServerMetadata {
    /// The endpoints of a 2025-03-26 server without metadata, at its
    /// origin (basic/authorization 2025-03-26, "Fallbacks for Servers
    /// without Metadata Discovery").
    pub(crate) fn defaults(origin: &str) -> ServerMetadata {
        ServerMetadata {
            issuer: origin.to_string(),
            authorization_endpoint: Some(format!("{}/authorize", origin)),
            token_endpoint: Some(format!("{}/token", origin)),
            registration_endpoint: Some(format!("{}/register", origin)),
            scopes_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".to_string()]),
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
        }
    }

    /// Whether `scope` is listed in `scopes_supported`.
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .map_or(false, |s| s.iter().any(|s| s == scope))
    }

    pub(crate) fn token_endpoint(&self) -> Result<&str, Error> {
        self.token_endpoint
            .as_deref()
            .ok_or_else(|| failed(SERVER_STEP, "the metadata has no token_endpoint"))
    }
}

/// The protected resource metadata of `server`: from the challenge's
/// `resource_metadata` when it has one, else from the well-known locations
/// in order (RFC 9728 §3.1; basic/authorization "Protected Resource
/// Metadata Discovery Requirements"). `None` when no location has one (a 2025-03-26 server). Its
/// `resource` must name `server` (RFC 9728 §3.3): a document for another
/// resource is refused, never used.
pub(crate) fn resource_metadata(
    fetcher: &Fetcher,
    server: &str,
    challenge: Option<&BearerChallenge>,
) -> Result<Option<ResourceMetadata>, Error> {
    // The challenge's location when it names one, else the well-known ones.
    let locations = match challenge.and_then(|c| c.resource_metadata.clone()) {
        Some(location) => vec![location],
        None => url::resource_metadata_urls(server),
    };
    for location in locations {
        let reply = fetcher.get(RESOURCE_STEP, &location)?;
        if reply.status != 200 {
            log::debug!(
                "no resource metadata at {} ({})",
                shown(&location),
                reply.status
            );
            continue;
        }
        let value = reply.json(RESOURCE_STEP, &shown(&location))?;
        let metadata: ResourceMetadata = serde_json::from_value(value)
            .map_err(|e| failed(RESOURCE_STEP, format!("{}: {}", shown(&location), e)))?;
        if !url::covers(&metadata.resource, server) {
            return Err(failed(
                RESOURCE_STEP,
                format!(
                    "the document at {} is for {}, not for {}: refused (RFC 9728 §3.3)",
                    shown(&location),
                    shown(&metadata.resource),
                    shown(server)
                ),
            ));
        }
        if metadata.authorization_servers.is_empty() {
            return Err(failed(
                RESOURCE_STEP,
                format!("{} lists no authorization_servers", shown(&location)),
            ));
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

/// The metadata of the authorization server `issuer`, from the first of
/// its well-known locations that has it; its `issuer` must be `issuer`,
/// character for character (RFC 8414 §3.3), and it must offer PKCE with
/// `S256` (basic/authorization "Authorization Code Protection").
pub(crate) fn server_metadata(fetcher: &Fetcher, issuer: &str) -> Result<ServerMetadata, Error> {
    let metadata = find_server_metadata(fetcher, issuer, true)?.ok_or_else(|| {
        failed(
            SERVER_STEP,
            format!(
                "{} has no metadata at any well-known location (RFC 8414, OpenID Connect Discovery)",
                shown(issuer)
            ),
        )
    })?;
    check_pkce(&metadata)?;
    Ok(metadata)
}

/// The metadata of the server at `origin`, of a 2025-03-26 MCP server
/// without resource metadata: its RFC 8414 document when it has one, else
/// the default endpoints. That revision tied the authorization server to
/// the MCP server's origin and did not ask for the `issuer` check (its
/// servers put the issuer below the origin, as `/oauth`), so the issuer
/// is not compared here.
pub(crate) fn legacy_server_metadata(
    fetcher: &Fetcher,
    origin: &str,
) -> Result<ServerMetadata, Error> {
    match find_server_metadata(fetcher, origin, false)? {
        Some(metadata) => {
            check_pkce(&metadata)?;
            Ok(metadata)
        }
        None => Ok(ServerMetadata::defaults(origin)),
    }
}

fn find_server_metadata(
    fetcher: &Fetcher,
    issuer: &str,
    check_issuer: bool,
) -> Result<Option<ServerMetadata>, Error> {
    for location in url::server_metadata_urls(issuer) {
        let reply = fetcher.get(SERVER_STEP, &location)?;
        if reply.status != 200 {
            log::debug!(
                "no server metadata at {} ({})",
                shown(&location),
                reply.status
            );
            continue;
        }
        let value = reply.json(SERVER_STEP, &shown(&location))?;
        let metadata: ServerMetadata = serde_json::from_value(value)
            .map_err(|e| failed(SERVER_STEP, format!("{}: {}", shown(&location), e)))?;
        if check_issuer && metadata.issuer != issuer {
            return Err(failed(
                SERVER_STEP,
                format!(
                    "the document at {} names the issuer {}, not {}: refused (RFC 8414 §3.3)",
                    shown(&location),
                    shown(&metadata.issuer),
                    shown(issuer)
                ),
            ));
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

fn check_pkce(metadata: &ServerMetadata) -> Result<(), Error> {
    let methods = metadata.code_challenge_methods_supported.as_deref();
    if methods.map_or(false, |m| m.iter().any(|m| m == "S256")) {
        return Ok(());
    }
    Err(failed(
        SERVER_STEP,
        format!(
            "{} does not list S256 in code_challenge_methods_supported: PKCE cannot be used, \
             so the client does not proceed",
            shown(&metadata.issuer)
        ),
    ))
}
