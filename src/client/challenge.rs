//! The `Bearer` challenge of a `401` or `403` (RFC 6750 §3, RFC 9728 §5.1;
//! MCP basic/authorization).

use std::fmt;

/// What a server's `WWW-Authenticate: Bearer …` said: where to learn how
/// to get a token, which scopes it wants, and what was wrong with the one
/// sent. Returned in [`ErrorKind::Http`](crate::ErrorKind::Http) for the
/// program to act on (get a token with those scopes, then retry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `resource_metadata`: the URL of the protected resource metadata
    /// (RFC 9728), which names the authorization servers.
    pub resource_metadata: Option<String>,
    /// `scope`: space-separated scopes the request needs.
    pub scope: Option<String>,
    /// `error`: `invalid_request`, `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// `error_description`, for people.
    pub error_description: Option<String>,
    /// `realm`.
    pub realm: Option<String>,
}

impl BearerChallenge {
    /// Parses a `WWW-Authenticate` value; `None` when it has no `Bearer`
    /// challenge. Parameters are `name=value` or `name="quoted \" value"`,
    /// comma-separated; unknown ones are skipped.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        let start = find_scheme(header)?;
        let mut rest = &header[start + "bearer".len()..];
        let mut challenge = BearerChallenge::default();
        loop {
            rest = rest.trim_start_matches(|c: char| c == ',' || c.is_ascii_whitespace());
            let eq = match rest.find('=') {
                Some(eq) => eq,
                None => break,
            };
            let name = rest[..eq].trim();
            if name.contains(' ') {
                // The next challenge's scheme: this one is over.
                break;
            }
            let (value, after) = value(&rest[eq + 1..]);
            rest = after;
            let slot = match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => &mut challenge.resource_metadata,
                "scope" => &mut challenge.scope,
                "error" => &mut challenge.error,
                "error_description" => &mut challenge.error_description,
                "realm" => &mut challenge.realm,
                _ => continue,
            };
            *slot = Some(value);
        }
        Some(challenge)
    }
}

/// Where `Bearer` starts as a scheme (case-insensitive, at the start or
/// after a comma).
fn find_scheme(header: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find("bearer") {
        let at = from + i;
        let before = lower[..at].trim_end();
        let after = lower[at + 6..].chars().next();
        if (before.is_empty() || before.ends_with(',')) && after.map_or(true, |c| c == ' ') {
            return Some(at);
        }
        from = at + 6;
    }
    None
}

/// One parameter value, quoted or a token, and what follows it.
fn value(text: &str) -> (String, &str) {
    let text = text.trim_start();
    if let Some(quoted) = text.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, next)) = chars.next() {
                        out.push(next);
                    }
                }
                '"' => return (out, &quoted[i + 1..]),
                c => out.push(c),
            }
        }
        return (out, "");
    }
    let end = text.find(',').unwrap_or(text.len());
    (text[..end].trim().to_string(), &text[end..])
}

impl fmt::Display for BearerChallenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bearer")?;
        if let Some(error) = &self.error {
            write!(f, " error={}", error)?;
        }
        if let Some(scope) = &self.scope {
            write!(f, " scope=\"{}\"", scope)?;
        }
        if let Some(url) = &self.resource_metadata {
            write!(f, " resource_metadata={}", url)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 6750 §3 and RFC 9728 §5.1: the parameters MCP clients act on.
    #[test]
    fn parses_the_parameters_a_client_needs() {
        let c = BearerChallenge::parse(
            r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", scope="mcp:tools files:read", error="insufficient_scope", error_description="needs \"files:read\"""#,
        )
        .unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://127.0.0.1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("mcp:tools files:read"));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.error_description.as_deref(), Some("needs \"files:read\""));
    }

    #[test]
    fn finds_bearer_among_challenges_and_tokens() {
        let c =
            BearerChallenge::parse(r#"Basic realm="x", Bearer error=invalid_token, realm="mcp""#)
                .unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.realm.as_deref(), Some("mcp"));
        assert_eq!(
            BearerChallenge::parse("Bearer").unwrap(),
            BearerChallenge::default()
        );
        assert!(BearerChallenge::parse(r#"Basic realm="bearer""#).is_none());
        assert!(BearerChallenge::parse("").is_none());
    }
}
