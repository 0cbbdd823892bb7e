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
    /// Remembers the `x-mcp-header` properties of `tools`, and drops
    /// (with a warning) every tool whose annotations are invalid: a name
    /// that is not an RFC 9110 token, two names equal but for case, or one
    /// on a property that is not a string, integer or boolean (MHTTP-15:
    /// clients exclude such tools).
    pub(crate) fn admit(&self, tools: Vec<Tool>) -> Vec<Tool> {
        let mut known = self.tools.lock();
        let mut seen = self.seen.lock();
        let mut admitted = Vec::with_capacity(tools.len());
        for tool in tools {
            let headers = match annotated(&tool.input_schema) {
                Ok(headers) => headers,
                Err(why) => {
                    log::warn!("leaving out tool {:?}: its x-mcp-header {}", tool.name, why);
                    continue;
                }
            };
            if seen.len() < MAX_TOOLS {
                seen.insert(tool.name.clone());
            }
            if headers.is_empty() {
                known.remove(&tool.name);
            } else if known.len() < MAX_TOOLS || known.contains_key(&tool.name) {
                known.insert(tool.name.clone(), headers);
            }
            admitted.push(tool);
        }
        admitted
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
                    Value::String(s) => header_value(s),
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
/// only (MHTTP-15); an error names the first invalid annotation.
fn annotated(schema: &crate::jsonrpc::JsonObject) -> Result<Vec<Annotated>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found)?;
    let mut names = std::collections::HashSet::new();
    for (_, header) in &found {
        if !names.insert(header.to_ascii_lowercase()) {
            return Err(format!("{:?} is used twice", header));
        }
    }
    Ok(found)
}

/// Depth of nested `properties` followed at most.
const MAX_DEPTH: usize = 8;

fn walk(
    schema: &crate::jsonrpc::JsonObject,
    path: &mut Vec<String>,
    found: &mut Vec<Annotated>,
) -> Result<(), String> {
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) if path.len() < MAX_DEPTH => p,
        _ => return Ok(()),
    };
    for (property, inner) in properties {
        let inner = match inner {
            Value::Object(inner) => inner,
            _ => continue,
        };
        path.push(property.clone());
        match inner.get("x-mcp-header") {
            Some(Value::String(header)) if !is_token(header) => {
                return Err(format!("{:?} is not a header name", header))
            }
            Some(Value::String(header)) => {
                let kind = inner.get("type").and_then(Value::as_str);
                if !matches!(kind, Some("string") | Some("integer") | Some("boolean")) {
                    return Err(format!("{:?} is on a property of type {:?}", header, kind));
                }
                found.push((path.clone(), header.clone()));
            }
            Some(other) => return Err(format!("{} is not a string", other)),
            None => walk(inner, path, found)?,
        }
        path.pop();
    }
    Ok(())
}

/// RFC 9110 §5.6.2: `tchar`s, at least one.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A value as sent in `Mcp-Name` or an `Mcp-Param-*` header: the value
/// itself when it is visible ASCII without leading or trailing spaces, else
/// `=?base64?…?=` (HTTP-3).
pub(crate) fn header_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !value.starts_with("=?");
    if plain {
        value.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            crate::base64::encode_padded(value.as_bytes())
        )
    }
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
            "where": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Geo.Zone"}}},
            "plain": {"type": "string"}
        }});
        let headers = ParamHeaders::default();
        assert_eq!(headers.admit(vec![Tool::new("t", schema)]).len(), 1);
        let mut got = headers.headers(
            "t",
            Some(&json!({"region": "eu-west", "count": 3, "flag": true,
                "plain": "y", "where": {"zone": "z1"}})),
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

#[cfg(test)]
mod invalid {
    use super::*;
    use serde_json::json;

    // MHTTP-15: clients leave out tools whose x-mcp-header is invalid.
    #[test]
    fn tools_with_invalid_annotations_are_left_out() {
        let tool = |name: &str, properties: Value| {
            Tool::new(name, json!({"type": "object", "properties": properties}))
        };
        let tools = vec![
            tool(
                "good",
                json!({"a": {"type": "string", "x-mcp-header": "A"}}),
            ),
            tool(
                "empty",
                json!({"a": {"type": "string", "x-mcp-header": ""}}),
            ),
            tool(
                "space",
                json!({"a": {"type": "string", "x-mcp-header": "A B"}}),
            ),
            tool(
                "colon",
                json!({"a": {"type": "string", "x-mcp-header": "A:B"}}),
            ),
            tool(
                "number",
                json!({"a": {"type": "number", "x-mcp-header": "A"}}),
            ),
            tool(
                "object",
                json!({"a": {"type": "object", "x-mcp-header": "A"}}),
            ),
            tool(
                "twice",
                json!({"a": {"type": "string", "x-mcp-header": "A"},
                                  "b": {"type": "string", "x-mcp-header": "a"}}),
            ),
            tool(
                "not-a-string",
                json!({"a": {"type": "string", "x-mcp-header": 7}}),
            ),
            tool("plain", json!({"a": {"type": "number"}})),
        ];
        let admitted: Vec<String> = ParamHeaders::default()
            .admit(tools)
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(admitted, vec!["good", "plain"]);
    }
}
