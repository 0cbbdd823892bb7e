//! `Mcp-Param-{Name}` headers of 2026-07-28 HTTP (HTTP-4): a tool whose
//! `inputSchema` property carries `"x-mcp-header": "{Name}"` gets that
//! argument mirrored in a header. The client learns which from the tool
//! lists it has read.

use std::collections::HashMap;

use parking_lot::Mutex;
use serde_json::Value;

use crate::protocol::Tool;

/// Tools seen so far, at most this many remembered.
const MAX_TOOLS: usize = 10_000;

/// The path of an annotated argument through `properties`, and its
/// header name.
type Annotated = (Vec<String>, String);

/// Which argument goes into which header, per tool name.
#[derive(Debug, Default)]
pub(crate) struct ParamHeaders {
    tools: Mutex<HashMap<String, Vec<Annotated>>>,
    /// Tools of every list read so far, annotated or not.
    seen: Mutex<std::collections::HashSet<String>>,
}

impl ParamHeaders {
    /// Remembers the `x-mcp-header` properties of `tools`.
    pub(crate) fn learn(&self, tools: &[Tool]) {
        let mut known = self.tools.lock();
        let mut seen = self.seen.lock();
        for tool in tools {
            if seen.len() < MAX_TOOLS {
                seen.insert(tool.name.clone());
            }
            let headers = annotated(&tool.input_schema);
            if headers.is_empty() {
                known.remove(&tool.name);
            } else if known.len() < MAX_TOOLS || known.contains_key(&tool.name) {
                known.insert(tool.name.clone(), headers);
            }
        }
    }

    /// `true` once a tool list named `name`.
    pub(crate) fn knows(&self, name: &str) -> bool {
        self.seen.lock().contains(name)
    }

    /// The headers of a `tools/call` of `name` with `arguments`: one per
    /// annotated argument that is present and not `null` (HTTP-4).
    pub(crate) fn headers(&self, name: &str, arguments: Option<&Value>) -> Vec<(String, String)> {
        let known = self.tools.lock();
        let pairs = match known.get(name) {
            Some(pairs) => pairs,
            None => return Vec::new(),
        };
        pairs
            .iter()
            .filter_map(|(path, header)| {
                let mut value = arguments?;
                for key in path {
                    value = value.get(key)?;
                }
                let value = match value {
                    Value::String(s) => super::http::header_value(s),
                    Value::Bool(b) => b.to_string(),
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some((format!("Mcp-Param-{}", header), value))
            })
            .collect()
    }
}

/// Each annotated property, reachable from the root through `properties`
/// only (MHTTP-15), with a header name that is an RFC 9110 token.
fn annotated(schema: &crate::jsonrpc::JsonObject) -> Vec<Annotated> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found);
    found
}

/// Depth of nested `properties` followed at most.
const MAX_DEPTH: usize = 8;

fn walk(schema: &crate::jsonrpc::JsonObject, path: &mut Vec<String>, found: &mut Vec<Annotated>) {
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) if path.len() < MAX_DEPTH => p,
        _ => return,
    };
    for (property, inner) in properties {
        let inner = match inner {
            Value::Object(inner) => inner,
            _ => continue,
        };
        path.push(property.clone());
        match inner.get("x-mcp-header").and_then(Value::as_str) {
            Some(header) if is_token(header) => found.push((path.clone(), header.to_string())),
            Some(_) => {}
            None => walk(inner, path, found),
        }
        path.pop();
    }
}

/// RFC 9110 §5.6.2: `tchar`s, at least one.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // HTTP-4: present arguments are mirrored, absent and null ones are not;
    // strings that are not plain visible ASCII are base64-wrapped (HTTP-3).
    #[test]
    fn annotated_arguments_become_headers() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "bad": {"type": "string", "x-mcp-header": "no spaces"},
            "where": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Geo.Zone"}}},
            "plain": {"type": "string"}
        }});
        let headers = ParamHeaders::default();
        headers.learn(&[Tool::new("t", schema)]);
        let mut got = headers.headers(
            "t",
            Some(
                &json!({"region": "eu-west", "count": 3, "flag": true, "bad": "x",
                "plain": "y", "where": {"zone": "z1"}}),
            ),
        );
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-Count".to_string(), "3".to_string()),
                ("Mcp-Param-Flag".to_string(), "true".to_string()),
                ("Mcp-Param-Geo.Zone".to_string(), "z1".to_string()),
                ("Mcp-Param-Region".to_string(), "eu-west".to_string()),
            ]
        );
        let none = headers.headers("t", Some(&json!({"region": null})));
        assert!(none.is_empty());
        let wrapped = headers.headers("t", Some(&json!({"region": "Zürich"})));
        assert_eq!(wrapped[0].1, "=?base64?WsO8cmljaA==?=");
        assert!(headers
            .headers("unknown", Some(&json!({"region": "x"})))
            .is_empty());
    }
}
