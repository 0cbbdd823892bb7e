//! The claim rules both verifiers share: issuer, audience, times, scopes
//! and the principal (RFC 9068 §4, RFC 7662 §2.2, RFC 8707 §2). Data in,
//! a [`Principal`] or a refusal out; no I/O.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::jsonrpc::JsonObject;
use crate::server::Principal;
use crate::transport::http::TokenError;

/// What a token's claims are checked against.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// The issuer `iss` must equal; `None`: not checked (introspection,
    /// where the endpoint itself vouches for the token).
    pub(crate) issuer: Option<String>,
    /// The audiences one of which `aud` must name; empty: the principal
    /// carries `aud` and the endpoint compares it with its resource.
    pub(crate) audiences: Vec<String>,
    /// How far clocks may disagree.
    pub(crate) leeway: Duration,
    /// `exp` must be present (JWT) or may be absent (introspection).
    pub(crate) expiry_required: bool,
}

impl Rules {
    /// The principal of `claims`, or the check that failed.
    pub(crate) fn principal(&self, claims: JsonObject) -> Result<Principal, TokenError> {
        let issuer = self.issuer(&claims)?;
        let expires_at = self.times(&claims, SystemTime::now())?;
        let audience = self.audience(&claims)?;
        let subject = match claims.get("sub") {
            Some(Value::String(sub)) if !sub.is_empty() => sub.clone(),
            _ => return Err(TokenError::invalid("the token has no subject (sub)")),
        };
        let mut principal = Principal::new(subject)
            .with_scopes(scopes(&claims)?)
            .with_audience(audience);
        let client = ["client_id", "azp"]
            .iter()
            .find_map(|name| claims.get(*name).and_then(Value::as_str));
        if let Some(client) = client {
            principal = principal.with_client_id(client);
        }
        if let Some(issuer) = issuer {
            principal = principal.with_issuer(issuer);
        }
        if let Some(at) = expires_at {
            principal = principal.with_expires_at(at);
        }
        Ok(principal.with_claims(claims))
    }

    fn issuer(&self, claims: &JsonObject) -> Result<Option<String>, TokenError> {
        let iss = claims.get("iss");
        match (&self.issuer, iss) {
            (Some(want), Some(Value::String(got))) if got == want => Ok(Some(got.clone())),
            (Some(_), _) => Err(TokenError::invalid("issuer does not match")),
            (None, Some(Value::String(got))) => Ok(Some(got.clone())),
            (None, None) => Ok(None),
            (None, Some(_)) => Err(TokenError::invalid("the issuer claim is malformed")),
        }
    }

    /// Checks `exp`, `nbf` and `iat` against `now` with the leeway;
    /// returns the expiry.
    fn times(
        &self,
        claims: &JsonObject,
        now: SystemTime,
    ) -> Result<Option<SystemTime>, TokenError> {
        let exp = numeric_date(claims, "exp")?;
        let (earliest, latest) = (
            now.checked_sub(self.leeway).unwrap_or(UNIX_EPOCH),
            now + self.leeway,
        );
        match exp {
            None if self.expiry_required => {
                return Err(TokenError::invalid("the token has no expiry (exp)"))
            }
            Some(exp) if exp <= earliest => return Err(TokenError::invalid("token expired")),
            _ => {}
        }
        if numeric_date(claims, "nbf")?.map_or(false, |nbf| nbf > latest) {
            return Err(TokenError::invalid("token not yet valid (nbf)"));
        }
        if numeric_date(claims, "iat")?.map_or(false, |iat| iat > latest) {
            return Err(TokenError::invalid("token issued in the future (iat)"));
        }
        // The endpoint refuses a principal past `expires_at` without
        // leeway; give it the leeway the check above allowed.
        Ok(exp.map(|exp| exp + self.leeway))
    }

    /// `aud` (a string or an array of strings, required: AUTH-4): checked
    /// here against the configured audiences (the principal then carries
    /// none), or carried for the endpoint's own check.
    fn audience(&self, claims: &JsonObject) -> Result<Vec<String>, TokenError> {
        let aud: Vec<String> = match claims.get("aud") {
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(many)) => many
                .iter()
                .map(|a| a.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| TokenError::invalid("the audience claim is malformed"))?,
            None => Vec::new(),
            Some(_) => return Err(TokenError::invalid("the audience claim is malformed")),
        };
        if aud.is_empty() {
            return Err(TokenError::invalid("the token names no audience (aud)"));
        }
        if self.audiences.is_empty() {
            return Ok(aud);
        }
        let trim = |s: &str| s.trim_end_matches('/').to_string();
        let matches = aud
            .iter()
            .any(|a| self.audiences.iter().any(|want| trim(want) == trim(a)));
        if matches {
            Ok(Vec::new())
        } else {
            Err(TokenError::invalid("audience does not match"))
        }
    }
}

/// The scopes of `scope` (space-separated, RFC 9068 §2.2.3 and RFC 8693
/// §4.2) or else `scp` (an array or a string, as Entra ID and Okta send).
fn scopes(claims: &JsonObject) -> Result<Vec<String>, TokenError> {
    let malformed = || TokenError::invalid("the scope claim is malformed");
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => Ok(words(s)),
        (Some(_), _) => Err(malformed()),
        (None, Some(Value::String(s))) => Ok(words(s)),
        (None, Some(Value::Array(many))) => many
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(malformed),
        (None, Some(_)) => Err(malformed()),
        (None, None) => Ok(Vec::new()),
    }
}

/// A NumericDate claim (RFC 7519 §2: seconds since the epoch, possibly
/// fractional); `None` when absent.
fn numeric_date(claims: &JsonObject, name: &'static str) -> Result<Option<SystemTime>, TokenError> {
    let value = match claims.get(name) {
        None => return Ok(None),
        Some(value) => value,
    };
    let secs = value
        .as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e11)
        .ok_or_else(|| TokenError::invalid(format!("the {} claim is malformed", name)))?;
    Ok(Some(UNIX_EPOCH + Duration::from_secs_f64(secs)))
}
