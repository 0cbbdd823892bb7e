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
//!
//! The URI is the peer's: matching is bounded. A variable ends only where
//! what follows can start (the next literal, or the end of the URI), a
//! (part, position) that failed once is not tried again, and a match that
//! takes more than [`MATCH_BUDGET`] steps (positions tried plus bytes
//! decoded) does not match.

use std::collections::{BTreeMap, HashSet};

/// Most steps one match may take (positions tried plus bytes decoded);
/// past it the URI does not match the template (DESIGN.md §6).
pub(crate) const MATCH_BUDGET: usize = 4_000_000;

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
        let mut search = Search {
            parts: &self.parts,
            uri,
            failed: HashSet::new(),
            steps: 0,
        };
        let mut vars = BTreeMap::new();
        if search.from(0, 0, &mut vars) {
            Some(vars)
        } else {
            None
        }
    }
}

/// One match of a URI against a template's parts.
struct Search<'a> {
    parts: &'a [Part],
    uri: &'a str,
    /// (part, position) pairs known not to match.
    failed: HashSet<(usize, usize)>,
    steps: usize,
}

impl Search<'_> {
    /// Whether parts `k..` match the URI from byte `at`; on success their
    /// variables are in `vars`.
    fn from(&mut self, k: usize, at: usize, vars: &mut BTreeMap<String, String>) -> bool {
        if self.steps > MATCH_BUDGET || self.failed.contains(&(k, at)) {
            return false;
        }
        let input = &self.uri[at..];
        let matched = match self.parts.get(k) {
            None => input.is_empty(),
            Some(Part::Literal(lit)) => {
                input.starts_with(lit.as_str()) && self.from(k + 1, at + lit.len(), vars)
            }
            Some(Part::Var { name, reserved }) => self.var(k, at, name, *reserved, vars),
        };
        if !matched {
            self.failed.insert((k, at));
        }
        matched
    }

    /// Tries every end of variable `k` from `at`, shortest first, within
    /// its allowed characters, where what follows it can start.
    fn var(
        &mut self,
        k: usize,
        at: usize,
        name: &str,
        reserved: bool,
        vars: &mut BTreeMap<String, String>,
    ) -> bool {
        let input = &self.uri[at..];
        for (i, c) in input.char_indices() {
            self.steps += 1;
            if self.steps > MATCH_BUDGET || (!reserved && matches!(c, '/' | '?' | '#')) {
                return false;
            }
            let end = i + c.len_utf8();
            let rest = &input[end..];
            let can_follow = match self.parts.get(k + 1) {
                None => rest.is_empty(),
                Some(Part::Literal(lit)) => rest.starts_with(lit.as_str()),
                Some(Part::Var { .. }) => !rest.is_empty(),
            };
            if !can_follow {
                continue;
            }
            self.steps += end;
            let value = match percent_decode(&input[..end], reserved) {
                Some(value) => value,
                None => continue,
            };
            if self.from(k + 1, at + end, vars) {
                vars.insert(name.to_string(), value);
                return true;
            }
        }
        false
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

    // A URI is the peer's: a template with many variables in a row and a
    // long URI that almost matches stay within the budget (before, this
    // tried every split of 20,000 characters into seven parts).
    #[test]
    fn matching_is_bounded() {
        let t = UriTemplate::parse("x://{a}{b}{c}{d}{e}{+f}{#g}!");
        let long = format!("x://{}", "a".repeat(20_000));
        let mut search = Search {
            parts: &t.parts,
            uri: &long,
            failed: HashSet::new(),
            steps: 0,
        };
        assert!(!search.from(0, 0, &mut BTreeMap::new()));
        assert!(
            search.steps <= MATCH_BUDGET + 20_000,
            "{} steps",
            search.steps
        );
        // And a long URI that does match still matches.
        let one = UriTemplate::parse("file:///{+path}");
        let path = "p/".repeat(50_000);
        let vars = one.matches(&format!("file:///{}", path)).unwrap();
        assert_eq!(vars["path"], path);
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
