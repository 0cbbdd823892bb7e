//! The authorization code grant (OAuth 2.1 §4.1) with PKCE `S256`
//! (RFC 7636), `state`, the `resource` indicator (RFC 8707) and the
//! issuer check of the response (RFC 9207 §2.4).
//!
//! Spec: basic/authorization "Authorization Flow Steps", "Authorization
//! Response Validation" (2026-07-28), "Authorization Code Protection".

use super::agent::UserAgent;
use super::discovery::ServerMetadata;
use super::fetch::{failed, Fetcher};
use super::store::{Registration, Tokens};
use super::token::TokenRequest;
use super::{url, AssertionFn};
use crate::base64::{encode_unpadded, Alphabet};
use crate::error::Error;

const STEP: &str = "authorization";

/// One authorization: who asks, for what, where the answer comes back.
pub(crate) struct Authorization<'a> {
    pub(crate) metadata: &'a ServerMetadata,
    pub(crate) registration: &'a Registration,
    pub(crate) redirect_uri: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) scope: Option<&'a str>,
    pub(crate) assertion: Option<&'a AssertionFn>,
}

/// `bytes` random bytes (UUID v4's source: the system's generator), as
/// unpadded base64url: a PKCE verifier or a `state`.
fn random_text(uuids: usize) -> String {
    let mut bytes = Vec::with_capacity(16 * uuids);
    for _ in 0..uuids {
        bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    encode_unpadded(&bytes, Alphabet::Url)
}

/// Runs the grant: the user sent to the authorization endpoint by
/// `agent`, the answer checked, the code exchanged for tokens.
pub(crate) fn authorize(
    fetcher: &Fetcher,
    agent: &dyn UserAgent,
    request: &Authorization<'_>,
) -> Result<Tokens, Error> {
    let metadata = request.metadata;
    let endpoint = metadata
        .authorization_endpoint
        .as_deref()
        .ok_or_else(|| failed(STEP, "the metadata has no authorization_endpoint"))?;
    // RFC 7636 §4.1: 64 characters of the unreserved set (366 random bits).
    let verifier = random_text(3);
    let challenge = encode_unpadded(&crate::sha256::digest(verifier.as_bytes()), Alphabet::Url);
    let state = random_text(1);
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", request.registration.client_id.as_str()),
        ("redirect_uri", request.redirect_uri),
        ("state", state.as_str()),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("resource", request.resource),
    ];
    if let Some(scope) = request.scope {
        params.push(("scope", scope));
    }
    let back = agent.authorize(&url::with_query(endpoint, &params))?;
    let code = read_response(&back, &state, metadata)?;
    TokenRequest {
        step: "token request",
        metadata,
        registration: request.registration,
        resource: request.resource,
        params: vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", request.redirect_uri),
            ("code_verifier", verifier.as_str()),
        ],
        assertion: request.assertion,
    }
    .send(fetcher, request.scope)
}

/// The authorization response at the redirect URI: its `iss` checked
/// first (a response from another server is not acted on, not even its
/// `error`), then `state`, then `error` or `code`.
fn read_response(back: &str, state: &str, metadata: &ServerMetadata) -> Result<String, Error> {
    let query = back.split('#').next().unwrap_or("");
    let query = query.split_once('?').map_or("", |(_, q)| q);
    let params = url::parse_query(query);
    let get = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    check_issuer(get("iss"), metadata)?;
    if get("state") != Some(state) {
        return Err(failed(
            STEP,
            "the answer's state is not the one sent: refused (RFC 6749 §10.12)",
        ));
    }
    if let Some(error) = get("error") {
        let description = get("error_description").unwrap_or("");
        return Err(failed(
            STEP,
            format!(
                "the authorization server refused: {} {}",
                error.chars().take(100).collect::<String>(),
                description.chars().take(300).collect::<String>()
            )
            .trim_end()
            .to_string(),
        ));
    }
    match get("code") {
        Some(code) if !code.is_empty() => Ok(code.to_string()),
        _ => Err(failed(STEP, "the answer has no code")),
    }
}

/// RFC 9207 §2.4 as the spec's table has it: a present `iss` must equal
/// the recorded issuer, compared as strings without normalization; an
/// absent one is refused only when the server advertises
/// `authorization_response_iss_parameter_supported`.
fn check_issuer(iss: Option<&str>, metadata: &ServerMetadata) -> Result<(), Error> {
    match iss {
        Some(iss) if iss == metadata.issuer => Ok(()),
        Some(_) => Err(failed(
            STEP,
            "the answer's iss is not the authorization server's issuer: refused (RFC 9207)",
        )),
        None if metadata.authorization_response_iss_parameter_supported => Err(failed(
            STEP,
            "the authorization server advertises iss, but the answer has none: refused (RFC 9207)",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(iss_supported: bool) -> ServerMetadata {
        let mut m = ServerMetadata::defaults("https://as.example");
        m.authorization_response_iss_parameter_supported = iss_supported;
        m
    }

    // The four rows of the spec's RFC 9207 table, and no normalization.
    #[test]
    fn issuer_table() {
        let yes = metadata(true);
        let no = metadata(false);
        let good = "http://127.0.0.1/cb?code=c&state=s&iss=https%3A%2F%2Fas.example";
        assert_eq!(read_response(good, "s", &yes).unwrap(), "c");
        assert!(read_response("http://x/cb?code=c&state=s", "s", &yes).is_err());
        assert_eq!(read_response(good, "s", &no).unwrap(), "c");
        assert_eq!(
            read_response("http://x/cb?code=c&state=s", "s", &no).unwrap(),
            "c"
        );
        let other = "http://x/cb?code=c&state=s&iss=https%3A%2F%2FAS.example";
        assert!(read_response(other, "s", &no).is_err());
        let slash = "http://x/cb?code=c&state=s&iss=https%3A%2F%2Fas.example%2F";
        assert!(read_response(slash, "s", &yes).is_err());
    }

    // A wrong state is refused; an error from the right server is shown;
    // an error with a wrong iss is not acted on.
    #[test]
    fn state_and_errors() {
        let m = metadata(false);
        assert!(read_response("http://x/cb?code=c&state=t", "s", &m).is_err());
        let denied = read_response("http://x/cb?error=access_denied&state=s", "s", &m);
        assert!(denied.unwrap_err().to_string().contains("access_denied"));
        let spoofed = "http://x/cb?error=access_denied&state=s&iss=https%3A%2F%2Fevil";
        let e = read_response(spoofed, "s", &m).unwrap_err().to_string();
        assert!(e.contains("iss") && !e.contains("access_denied"), "{}", e);
    }

    // RFC 7636 §4.1: a verifier of 43 to 128 unreserved characters.
    #[test]
    fn verifier_shape() {
        let v = random_text(3);
        assert_eq!(v.len(), 64);
        assert!(v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_ne!(v, random_text(3));
    }
}
