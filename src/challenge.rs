//! `WWW-Authenticate` challenges, both ways: the client reads the `Bearer`
//! challenge of a `401` or `403` (RFC 6750 §3, RFC 9728 §5.1; MCP
//! basic/authorization) among the challenges of any number of field lines
//! (RFC 9110 §11.2, §11.6.1), and the HTTP transport writes its own
//! (`format_bearer`). One place for the grammar: auth-params, quoting.
//! A leaf: it knows nothing of MCP, the client or the server.

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
    /// Parses one `WWW-Authenticate` value, which may hold several
    /// challenges (`Basic realm="x", Bearer scope="a"`); the first `Bearer`
    /// one wherever it stands, `None` when there is none. Scheme and
    /// parameter names are case-insensitive, values are tokens or quoted
    /// strings (quoted pairs unescaped), unknown parameters are skipped.
    ///
    /// Spec: RFC 9110 §11.2 and §11.6.1, RFC 6750 §3.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        BearerChallenge::from_values(std::iter::once(header))
    }

    /// The first `Bearer` challenge in the values of several
    /// `WWW-Authenticate` field lines, each parsed on its own.
    pub(crate) fn from_values<'a>(
        values: impl IntoIterator<Item = &'a str>,
    ) -> Option<BearerChallenge> {
        let bearer = values
            .into_iter()
            .flat_map(challenges)
            .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))?;
        let mut challenge = BearerChallenge::default();
        for (name, value) in bearer.params {
            let slot = match name.as_str() {
                "resource_metadata" => &mut challenge.resource_metadata,
                "scope" => &mut challenge.scope,
                "error" => &mut challenge.error,
                "error_description" => &mut challenge.error_description,
                "realm" => &mut challenge.realm,
                _ => continue,
            };
            // A name given twice is an error (RFC 9110 §11.2): the first stands.
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        Some(challenge)
    }
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

/// `Bearer name="value", name="value"` (RFC 6750 §3, RFC 9110 §11.6.1),
/// each value a quoted string of the characters RFC 6750 allows.
pub(crate) fn format_bearer(params: &[(&str, String)]) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|(name, value)| format!("{}=\"{}\"", name, quotable(value)))
        .collect();
    if params.is_empty() {
        "Bearer".to_string()
    } else {
        format!("Bearer {}", params.join(", "))
    }
}

/// `value` without the characters a challenge's quoted value may not hold
/// (RFC 6750 §3: %x20-21 / %x23-5B / %x5D-7E).
fn quotable(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

/// One challenge of a `WWW-Authenticate` value (RFC 9110 §11.2):
/// `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// The scheme as sent (compare it case-insensitively).
    pub(crate) scheme: String,
    /// The `token68` form (`Negotiate abc==`), when that is what followed.
    pub(crate) token68: Option<String>,
    /// The `auth-param`s: names in lower case, values unquoted.
    pub(crate) params: Vec<(String, String)>,
}

/// Every challenge of one `WWW-Authenticate` value, in order. A malformed
/// element is skipped up to the next comma outside a quoted string; what
/// follows is still read.
pub(crate) fn challenges(value: &str) -> Vec<Challenge> {
    let mut cursor = Cursor { text: value, at: 0 };
    let mut out = Vec::new();
    loop {
        cursor.skip_separators();
        if cursor.peek().is_none() {
            return out;
        }
        let scheme = match cursor.token() {
            Some(scheme) => scheme,
            None => {
                cursor.skip_element();
                continue;
            }
        };
        let mut challenge = Challenge {
            scheme: scheme.to_string(),
            ..Challenge::default()
        };
        let spaced = cursor.skip_spaces();
        match cursor.peek() {
            None | Some(b',') => {}
            Some(_) if spaced => match cursor.token68() {
                Some(token) => challenge.token68 = Some(token.to_string()),
                None => cursor.params(&mut challenge.params),
            },
            // `Scheme"x"`: neither a new element nor parameters.
            Some(_) => {
                cursor.skip_element();
                continue;
            }
        }
        out.push(challenge);
    }
}

/// A position in a field value; every delimiter it stops at is ASCII, so
/// each position is on a character boundary.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips spaces and tabs (OWS, BWS); `true` when there were some.
    fn skip_spaces(&mut self) -> bool {
        let from = self.at;
        while matches!(self.peek(), Some(b' ') | Some(b'\t')) {
            self.at += 1;
        }
        self.at > from
    }

    /// Skips list separators: commas and the spaces around them, empty
    /// elements included (RFC 9110 §5.6.1).
    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b' ') | Some(b'\t') | Some(b',')) {
            self.at += 1;
        }
    }

    /// `token = 1*tchar`.
    fn token(&mut self) -> Option<&'a str> {
        let from = self.at;
        while self.peek().map_or(false, is_tchar) {
            self.at += 1;
        }
        if self.at > from {
            Some(&self.text[from..self.at])
        } else {
            None
        }
    }

    /// `token68`, when it is the whole rest of the challenge (followed by
    /// OWS then a comma or the end); else nothing is consumed.
    fn token68(&mut self) -> Option<&'a str> {
        let from = self.at;
        let mut end = from;
        let bytes = self.text.as_bytes();
        while end < bytes.len() && is_token68_char(bytes[end]) {
            end += 1;
        }
        if end == from {
            return None;
        }
        while end < bytes.len() && bytes[end] == b'=' {
            end += 1;
        }
        let mut after = end;
        while after < bytes.len() && matches!(bytes[after], b' ' | b'\t') {
            after += 1;
        }
        if after < bytes.len() && bytes[after] != b',' {
            return None;
        }
        self.at = end;
        Some(&self.text[from..end])
    }

    /// `#auth-param`, until the end or the next challenge's scheme.
    fn params(&mut self, params: &mut Vec<(String, String)>) {
        loop {
            self.skip_separators();
            let start = self.at;
            let name = match self.token() {
                Some(name) => name,
                None if self.peek().is_none() => return,
                None => {
                    self.skip_element();
                    continue;
                }
            };
            self.skip_spaces();
            if self.peek() != Some(b'=') {
                // `scheme` alone or `scheme 1*SP …`: the next challenge.
                self.at = start;
                return;
            }
            self.at += 1;
            self.skip_spaces();
            let value = match self.peek() {
                Some(b'"') => self.quoted(),
                _ => self.token().map(str::to_string),
            };
            self.skip_spaces();
            match (value, self.peek()) {
                (Some(value), None) | (Some(value), Some(b',')) => {
                    params.push((name.to_ascii_lowercase(), value));
                }
                _ => self.skip_element(),
            }
        }
    }

    /// `quoted-string`, unescaped; `None` when it does not end.
    fn quoted(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.text[self.at + 1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, next)) => out.push(next),
                    None => break,
                },
                '"' => {
                    self.at += 1 + i + 1;
                    return Some(out);
                }
                c => out.push(c),
            }
        }
        self.at = self.text.len();
        None
    }

    /// Skips to the next comma that is not inside a quoted string.
    fn skip_element(&mut self) {
        let bytes = self.text.as_bytes();
        let mut quoted = false;
        while let Some(&b) = bytes.get(self.at) {
            match b {
                b'"' => quoted = !quoted,
                b'\\' if quoted => self.at += 1,
                b',' if !quoted => return,
                _ => {}
            }
            self.at += 1;
        }
    }
}

/// `tchar` (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The characters of `token68` before its trailing `=`s (RFC 9110 §11.2).
fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
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

    fn schemes(value: &str) -> Vec<String> {
        challenges(value).into_iter().map(|c| c.scheme).collect()
    }

    // RFC 9110 §11.2: several challenges in one value, a token68 one, a
    // scheme with nothing after it, empty list elements.
    #[test]
    fn several_challenges_in_one_value() {
        let got = challenges(r#"Negotiate abc==, Basic realm="a, b", , NTLM,Bearer"#);
        assert_eq!(
            got,
            vec![
                Challenge {
                    scheme: "Negotiate".into(),
                    token68: Some("abc==".into()),
                    params: vec![],
                },
                Challenge {
                    scheme: "Basic".into(),
                    token68: None,
                    params: vec![("realm".into(), "a, b".into())],
                },
                Challenge {
                    scheme: "NTLM".into(),
                    ..Challenge::default()
                },
                Challenge {
                    scheme: "Bearer".into(),
                    ..Challenge::default()
                },
            ]
        );
        assert_eq!(schemes("Foo a=, Bar b/c+d=="), ["Foo", "Bar"]);
        assert_eq!(challenges("Foo a=")[0].token68.as_deref(), Some("a="));
    }

    // RFC 9110 §11.2: `auth-param = token BWS "=" BWS ( token / quoted-string )`;
    // names are case-insensitive; §5.6.4: quoted pairs are unescaped.
    #[test]
    fn auth_params_with_bws_case_and_quoted_pairs() {
        let got =
            challenges("Bearer REALM = \"a\\\"b\\\\c\" ,Scope=x\t, error_Description=\"1,2\"");
        assert_eq!(
            got[0].params,
            vec![
                ("realm".to_string(), "a\"b\\c".to_string()),
                ("scope".to_string(), "x".to_string()),
                ("error_description".to_string(), "1,2".to_string()),
            ]
        );
        assert_eq!(got.len(), 1);
    }

    // RFC 9110 §11.2: a malformed element is passed over; the challenges
    // after it are still read; nothing panics on odd input.
    #[test]
    fn malformed_elements_are_skipped() {
        let c = BearerChallenge::parse(r#"Basic "x", Foo a=b c, Bearer scope=s"#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
        let c = BearerChallenge::parse(r#"Bearer "junk", scope=s, x="unterminated"#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
        for odd in [
            "=",
            ",",
            "\"",
            "Bearer =",
            "Bearer a=\"\\",
            "Bearer a\u{e9}=\u{e9}",
            "é, Bearer",
        ] {
            let _ = challenges(odd);
        }
        assert_eq!(schemes("é, Bearer"), ["Bearer"]);
    }

    // RFC 6750 §3 with RFC 9110 §11.6.1: the Bearer challenge wherever it
    // stands, after a token68 challenge or in a later field line.
    #[test]
    fn bearer_is_found_wherever_it_stands() {
        let c = BearerChallenge::parse(
            r#"Negotiate abc==, bearer resource_metadata="http://h/.well-known/oauth-protected-resource", Basic realm="y""#,
        )
        .unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://h/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.realm, None, "the Basic realm is not the Bearer's");
        let c = BearerChallenge::parse(r#"Basic realm="a, Bearer scope=evil", Bearer scope=good"#);
        assert_eq!(
            c.unwrap().scope.as_deref(),
            Some("good"),
            "not inside a quoted string"
        );
        let c = BearerChallenge::from_values(vec![r#"Basic realm="x""#, r#"Bearer scope="a b""#]);
        assert_eq!(c.unwrap().scope.as_deref(), Some("a b"));
        assert!(BearerChallenge::from_values(vec!["Basic", "Negotiate abc=="]).is_none());
        let c = BearerChallenge::parse("Bearer scope=a, scope=b").unwrap();
        assert_eq!(
            c.scope.as_deref(),
            Some("a"),
            "the first of a repeated name"
        );
    }

    // RFC 6750 §3: quoted values, comma-separated, nothing that breaks
    // the quoting.
    #[test]
    fn challenge_syntax() {
        let params = [
            ("error", "invalid_token".to_string()),
            ("error_description", "a \"quoted\"\nline".to_string()),
        ];
        assert_eq!(
            format_bearer(&params),
            r#"Bearer error="invalid_token", error_description="a 'quoted'?line""#
        );
    }
}
