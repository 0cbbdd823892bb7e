//! Matching URIs against RFC 6570 templates (the subset MCP servers use).
//!
//! `{name}` matches one or more characters other than `/`, `?` and `#`;
//! `{+name}` and `{#name}` match anything non-empty, slashes included.
//! Literal text must match exactly.

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
                if match_parts(rest, &input[end..], vars) {
                    vars.insert(name.clone(), input[..end].to_string());
                    return true;
                }
            }
            false
        }
    }
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
}
