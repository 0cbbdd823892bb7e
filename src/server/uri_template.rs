//! Matching URIs against RFC 6570 templates (the subset MCP servers use).
//!
//! `{name}` matches one or more characters other than `/`, `?` and `#`;
//! `{+name}` and `{#name}` match anything non-empty, slashes included.
//! Literal text must match exactly. Expansion percent-encodes (RFC 6570
//! §3.2.1), so matching decodes: `%20` in a value is a space, `caf%C3%A9`
//! is `café`; a malformed escape, or escapes that decode to invalid UTF-8,
//! make the URI not match. In `{+name}` values, escapes of reserved
//! characters (`%2F`, `%3F`, …) stay encoded, so that a decoded `/` is
//! always a separator the URI had (RFC 6570 §3.2.3).

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// A parsed URI template.
#[derive(Debug, Clone)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    pub(crate) fn parse(template: &str) -> UriTemplate {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let close = match rest[open..].find('}') {
                Some(c) => open + c,
                None => break,
            };
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let expr = &rest[open + 1..close];
            let (reserved, name) = match expr.chars().next() {
                Some('+') | Some('#') => (true, &expr[1..]),
                _ => (false, expr),
            };
            parts.push(Part::Var {
                name: name.to_string(),
                reserved,
            });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        UriTemplate { parts }
    }

    /// The variables of `uri`, or `None` if it does not match.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        if match_parts(&self.parts, uri, &mut vars) {
            Some(vars)
        } else {
            None
        }
    }
}

fn match_parts(parts: &[Part], input: &str, vars: &mut BTreeMap<String, String>) -> bool {
    match parts.split_first() {
        None => input.is_empty(),
        Some((Part::Literal(lit), rest)) => {
            input.starts_with(lit.as_str()) && match_parts(rest, &input[lit.len()..], vars)
        }
        Some((Part::Var { name, reserved }, rest)) => {
            // Try every end position, shortest first, within the allowed set.
            for (i, c) in input.char_indices() {
                if !reserved && matches!(c, '/' | '?' | '#') {
                    break;
                }
                let end = i + c.len_utf8();
                let value = match percent_decode(&input[..end], *reserved) {
                    Some(value) => value,
                    None => continue,
                };
                if match_parts(rest, &input[end..], vars) {
                    vars.insert(name.clone(), value);
                    return true;
                }
            }
            false
        }
    }
}

/// RFC 3986 §2.2: the reserved characters.
fn is_reserved(byte: u8) -> bool {
    b":/?#[]@!$&'()*+,;=".contains(&byte)
}

/// Decodes `%XX` escapes; `None` for a malformed escape or invalid UTF-8.
/// With `keep_reserved`, escapes of reserved characters stay as they are.
fn percent_decode(text: &str, keep_reserved: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let hex = bytes.get(i + 1..i + 3)?;
        let digits = std::str::from_utf8(hex).ok()?;
        let byte = u8::from_str_radix(digits, 16).ok()?;
        if !hex.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        if keep_reserved && is_reserved(byte) {
            out.extend_from_slice(&bytes[i..i + 3]);
        } else {
            out.push(byte);
        }
        i += 3;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // RES-6 / resources-templates-read: {id} is matched and extracted.
    #[test]
    fn matches_one_segment() {
        let t = UriTemplate::parse("test://template/{id}/data");
        let vars = t.matches("test://template/123/data").unwrap();
        assert_eq!(vars["id"], "123");
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/123/data/x").is_none());
    }

    #[test]
    fn reserved_expansion_takes_slashes() {
        let t = UriTemplate::parse("file:///{+path}");
        assert_eq!(t.matches("file:///a/b/c.txt").unwrap()["path"], "a/b/c.txt");
    }

    #[test]
    fn several_variables() {
        let t = UriTemplate::parse("db://{table}/{row}");
        let vars = t.matches("db://users/42").unwrap();
        assert_eq!(
            (vars["table"].as_str(), vars["row"].as_str()),
            ("users", "42")
        );
    }

    // RFC 6570 §3.2.1: simple expansion percent-encodes, so matching
    // decodes; malformed escapes and invalid UTF-8 do not match.
    #[test]
    fn values_are_percent_decoded() {
        let t = UriTemplate::parse("test://template/{id}/data");
        let get = |uri: &str| t.matches(uri).map(|v| v["id"].clone());
        assert_eq!(
            get("test://template/hello%20world/data").as_deref(),
            Some("hello world")
        );
        assert_eq!(
            get("test://template/caf%C3%A9/data").as_deref(),
            Some("café")
        );
        assert_eq!(get("test://template/%ZZ/data"), None);
        assert_eq!(get("test://template/%C3/data"), None, "invalid UTF-8");
        assert_eq!(get("test://template/50%/data"), None, "a truncated escape");
        let r = UriTemplate::parse("file:///{+path}");
        let path = r.matches("file:///a%20b/c%2Fd").unwrap();
        assert_eq!(path["path"], "a b/c%2Fd", "reserved escapes stay encoded");
    }
}
