//! The claim rules both verifiers share: issuer, audience, times, scopes
//! and the principal (RFC 9068 §4, RFC 7662 §2.2, RFC 8707 §2). Data in,
//! a [`Principal`] or a refusal out; no I/O.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::jsonrpc::JsonObject;
use crate::server::Principal;
use crate::transport::http::TokenError;

/// The claims a [`Principal`]'s own fields stand for, not kept again in
/// its `claims` (`azp` and the others stay).
const MAPPED: &[&str] = &["sub", "iss", "aud", "exp", "scope", "scp", "client_id"];

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
        // The fields above stand for their claims; the rest rides along
        // (fewer to copy for each request the accepted-token cache serves).
        let mut claims = claims;
        for name in MAPPED {
            claims.remove(*name);
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
            now.checked_add(self.leeway).unwrap_or(now),
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
        Ok(exp.map(|exp| exp.checked_add(self.leeway).unwrap_or(exp)))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rules(audiences: &[&str]) -> Rules {
        Rules {
            issuer: Some("https://iss".into()),
            audiences: audiences.iter().map(|a| a.to_string()).collect(),
            leeway: Duration::from_secs(60),
            expiry_required: true,
        }
    }

    fn now() -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }

    fn claims(extra: serde_json::Value) -> JsonObject {
        let mut base = json!({"iss": "https://iss", "sub": "alice", "aud": "api://x",
                              "exp": now() + 300.5});
        if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
            base.extend(extra.clone());
        }
        match base {
            serde_json::Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    fn refusal(rules: &Rules, extra: serde_json::Value) -> String {
        match rules.principal(claims(extra)) {
            Ok(p) => panic!("accepted: {:?}", p),
            Err(e) => e.to_string(),
        }
    }

    // RFC 9068 §2.2.3 and the providers' `scp`: a string of words or an
    // array; `client_id`, else `azp` (OIDC Core §2), is the client.
    #[test]
    fn scopes_and_client_from_either_claim() {
        let r = rules(&["api://x"]);
        let p = r
            .principal(claims(json!({"scp": ["a", "b"], "azp": "app"})))
            .expect("valid");
        assert_eq!(
            (p.scopes, p.client_id),
            (vec!["a".into(), "b".into()], Some("app".into()))
        );
        let p = r
            .principal(claims(
                json!({"scope": "x y", "scp": "z", "client_id": "c", "azp": "app"}),
            ))
            .expect("valid");
        assert_eq!(
            (p.scopes, p.client_id),
            (vec!["x".into(), "y".into()], Some("c".into()))
        );
        let p = r
            .principal(claims(json!({"scp": "one two"})))
            .expect("valid");
        assert_eq!(p.scopes, vec!["one".to_string(), "two".into()]);
        assert_eq!(
            refusal(&r, json!({"scp": [1]})),
            "the scope claim is malformed"
        );
    }

    // RFC 8707 / AUTH-4: a configured audience is checked here and the
    // principal carries none; without one, `aud` rides on for the
    // endpoint; an `aud` array may name it anywhere.
    #[test]
    fn audience_checked_here_or_carried() {
        let p = rules(&["api://x/"])
            .principal(claims(json!({})))
            .expect("slash aside");
        assert!(p.audience.is_empty());
        let p = rules(&[])
            .principal(claims(json!({"aud": ["a", "b"]})))
            .expect("carried");
        assert_eq!(p.audience, vec!["a".to_string(), "b".into()]);
        let r = rules(&["api://y"]);
        assert_eq!(refusal(&r, json!({})), "audience does not match");
        assert_eq!(
            refusal(&r, json!({"aud": []})),
            "the token names no audience (aud)"
        );
        assert_eq!(
            refusal(&r, json!({"aud": 7})),
            "the audience claim is malformed"
        );
    }

    // RFC 7519 §4.1.4-6 with the leeway: 30 s late or early passes, 120 s
    // does not; the expiry handed on includes the leeway.
    #[test]
    fn times_with_leeway() {
        let r = rules(&[]);
        assert!(r.principal(claims(json!({"exp": now() - 30.0}))).is_ok());
        assert!(r
            .principal(claims(json!({"nbf": now() + 30.0, "iat": now() + 30.0})))
            .is_ok());
        assert_eq!(refusal(&r, json!({"exp": now() - 120.0})), "token expired");
        assert_eq!(
            refusal(&r, json!({"nbf": now() + 120.0})),
            "token not yet valid (nbf)"
        );
        assert_eq!(
            refusal(&r, json!({"iat": now() + 120.0})),
            "token issued in the future (iat)"
        );
        assert_eq!(
            refusal(&r, json!({"exp": "soon"})),
            "the exp claim is malformed"
        );
        assert_eq!(
            refusal(&r, json!({"exp": -1})),
            "the exp claim is malformed"
        );
        assert_eq!(
            refusal(&r, json!({"exp": 1e300})),
            "the exp claim is malformed"
        );
        let exp = now() + 300.0;
        let p = r.principal(claims(json!({"exp": exp}))).expect("valid");
        let handed = p
            .expires_at
            .and_then(|at| at.duration_since(UNIX_EPOCH).ok());
        assert_eq!(
            handed.map(|d| d.as_secs_f64().round()),
            Some((exp + 60.0).round())
        );
    }

    // `iss` exact; `sub` required and not empty.
    #[test]
    fn issuer_and_subject() {
        let r = rules(&[]);
        assert_eq!(
            refusal(&r, json!({"iss": "https://iss/"})),
            "issuer does not match"
        );
        assert_eq!(
            refusal(&r, json!({"sub": ""})),
            "the token has no subject (sub)"
        );
        let open = Rules {
            issuer: None,
            ..rules(&[])
        };
        let p = open
            .principal(claims(json!({"iss": "https://other"})))
            .expect("unchecked");
        assert_eq!(p.issuer.as_deref(), Some("https://other"));
    }
}
