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

/// Which argument goes into which header, per tool name.
#[derive(Debug, Default)]
pub(crate) struct ParamHeaders {
    tools: Mutex<HashMap<String, Vec<(String, String)>>>,
}

impl ParamHeaders {
    /// Remembers the `x-mcp-header` properties of `tools`.
    pub(crate) fn learn(&self, tools: &[Tool]) {
        let mut known = self.tools.lock();
        for tool in tools {
            let headers = annotated(&tool.input_schema);
            if headers.is_empty() {
                known.remove(&tool.name);
            } else if known.len() < MAX_TOOLS || known.contains_key(&tool.name) {
                known.insert(tool.name.clone(), headers);
            }
        }
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
            .filter_map(|(property, header)| {
                let value = match arguments.and_then(|a| a.get(property))? {
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

/// `(property, header name)` of each annotated property.
fn annotated(schema: &crate::jsonrpc::JsonObject) -> Vec<(String, String)> {
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Vec::new(),
    };
    properties
        .iter()
        .filter_map(|(property, schema)| {
            let header = schema.get("x-mcp-header").and_then(Value::as_str)?;
            let valid = !header.is_empty()
                && header
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if valid {
                Some((property.clone(), header.to_string()))
            } else {
                None
            }
        })
        .collect()
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
            "plain": {"type": "string"}
        }});
        let headers = ParamHeaders::default();
        headers.learn(&[Tool::new("t", schema)]);
        let mut got = headers.headers(
            "t",
            Some(&json!({"region": "eu-west", "count": 3, "flag": true, "bad": "x", "plain": "y"})),
        );
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-Count".to_string(), "3".to_string()),
                ("Mcp-Param-Flag".to_string(), "true".to_string()),
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
