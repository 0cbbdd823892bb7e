//! A light JSON Schema check of tool arguments (against `inputSchema`) and
//! of structured results (against `outputSchema`).
//!
//! Checked, at any depth reached through `properties` and `items`: `type`
//! (one or a list), `enum`, `const`, `required`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum` (numbers), `minLength`,
//! `maxLength` (strings, in characters), `minItems`, `maxItems`, and the
//! integer widths of `format` that schemars writes (`int8` to `int128`,
//! `uint8` to `uint128`; `int` and `uint` as 64 bits). Not checked, and
//! so accepted: `pattern` and other `format`s (the crate has no regular
//! expressions), `$ref`, `allOf`/`anyOf`/`oneOf`/`not`,
//! `additionalProperties`, `uniqueItems`, `dependent*`, `if`/`then`/`else`.
//! A deeper check is the handler's job (TOOL-7). The first problem found
//! is reported, naming where it is (`limit`, `items[2].name`).

use serde_json::Value;

use crate::jsonrpc::JsonObject;

/// How deep nested schemas are followed.
const MAX_DEPTH: usize = 32;

/// `Err` with a readable reason when `arguments` break `schema`.
pub(crate) fn check_arguments(schema: &JsonObject, arguments: &JsonObject) -> Result<(), String> {
    check_object(schema, arguments, "", 0).map_err(|p| p.describe("argument"))
}

/// `Err` with a readable reason when a structured result breaks `schema`.
pub(crate) fn check_output(schema: &JsonObject, value: &Value) -> Result<(), String> {
    check(schema, value, "", 0).map_err(|p| p.describe("structuredContent"))
}

/// A problem, and where in the value it is.
struct Problem {
    at: String,
    what: String,
}

impl Problem {
    fn describe(self, root: &str) -> String {
        if self.at.is_empty() {
            format!("{} {}", root, self.what)
        } else {
            format!("{} \"{}\" {}", root, self.at, self.what)
        }
    }
}

fn problem(at: &str, what: String) -> Problem {
    Problem {
        at: at.to_string(),
        what,
    }
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{}.{}", at, name)
    }
}

fn check(schema: &JsonObject, value: &Value, at: &str, depth: usize) -> Result<(), Problem> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    check_type(schema, value, at)?;
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(value) {
            return Err(problem(
                at,
                format!("must be one of {}", Value::Array(allowed.clone())),
            ));
        }
    }
    if let Some(expected) = schema.get("const") {
        if expected != value {
            return Err(problem(at, format!("must be {}", expected)));
        }
    }
    match value {
        Value::Number(n) => check_number(schema, n.as_f64().unwrap_or(0.0), at),
        Value::String(s) => check_length(
            schema,
            s.chars().count(),
            "minLength",
            "maxLength",
            "characters",
            at,
        ),
        Value::Array(items) => check_array(schema, items, at, depth),
        Value::Object(object) => check_object(schema, object, at, depth),
        _ => Ok(()),
    }
}

fn check_type(schema: &JsonObject, value: &Value, at: &str) -> Result<(), Problem> {
    let types = match schema.get("type") {
        Some(types) => types,
        None => return Ok(()),
    };
    let ok = match types {
        Value::String(t) => has_type(value, t),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| has_type(value, t)),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(problem(
            at,
            format!("must be of type {}, not {}", types, type_name(value)),
        ))
    }
}

fn check_number(schema: &JsonObject, n: f64, at: &str) -> Result<(), Problem> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let fails = [
        (
            bound("minimum"),
            n < bound("minimum").unwrap_or(f64::MIN),
            "at least",
        ),
        (
            bound("maximum"),
            n > bound("maximum").unwrap_or(f64::MAX),
            "at most",
        ),
        (
            bound("exclusiveMinimum"),
            n <= bound("exclusiveMinimum").unwrap_or(f64::MIN),
            "more than",
        ),
        (
            bound("exclusiveMaximum"),
            n >= bound("exclusiveMaximum").unwrap_or(f64::MAX),
            "less than",
        ),
    ];
    for (limit, broken, words) in fails.iter() {
        if let (Some(limit), true) = (limit, broken) {
            return Err(problem(
                at,
                format!("must be {} {}, not {}", words, limit, n),
            ));
        }
    }
    let format = schema.get("format").and_then(Value::as_str);
    if let Some((format, (low, high))) = format.and_then(|f| integer_range(f).map(|r| (f, r))) {
        if n < low || n > high {
            return Err(problem(
                at,
                format!("must be a {} ({} to {}), not {}", format, low, high, n),
            ));
        }
    }
    Ok(())
}

/// The range of an integer `format` as schemars writes them: `uint8` for
/// `u8`, `int32` for `i32`, `uint` for `usize`. Bounds past 2^53 are
/// rounded, as the number checked is.
fn integer_range(format: &str) -> Option<(f64, f64)> {
    let (signed, bits) = match format.strip_prefix("uint") {
        Some(bits) => (false, bits),
        None => (true, format.strip_prefix("int")?),
    };
    let bits: i32 = match bits {
        "" => 64,
        "8" | "16" | "32" | "64" | "128" => bits.parse().ok()?,
        _ => return None,
    };
    Some(if signed {
        let half = 2f64.powi(bits - 1);
        (-half, half - 1.0)
    } else {
        (0.0, 2f64.powi(bits) - 1.0)
    })
}

fn check_length(
    schema: &JsonObject,
    len: usize,
    min: &str,
    max: &str,
    unit: &str,
    at: &str,
) -> Result<(), Problem> {
    if let Some(min) = schema.get(min).and_then(Value::as_u64) {
        if (len as u64) < min {
            return Err(problem(
                at,
                format!("must have at least {} {}, not {}", min, unit, len),
            ));
        }
    }
    if let Some(max) = schema.get(max).and_then(Value::as_u64) {
        if (len as u64) > max {
            return Err(problem(
                at,
                format!("must have at most {} {}, not {}", max, unit, len),
            ));
        }
    }
    Ok(())
}

fn check_array(
    schema: &JsonObject,
    items: &[Value],
    at: &str,
    depth: usize,
) -> Result<(), Problem> {
    check_length(schema, items.len(), "minItems", "maxItems", "items", at)?;
    if let Some(Value::Object(item_schema)) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{}[{}]", at, i), depth + 1)?;
        }
    }
    Ok(())
}

fn check_object(
    schema: &JsonObject,
    object: &JsonObject,
    at: &str,
    depth: usize,
) -> Result<(), Problem> {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                return Err(problem(
                    &join(at, name),
                    "is required and missing".to_string(),
                ));
            }
        }
    }
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Ok(()),
    };
    for (name, value) in object {
        if let Some(Value::Object(property)) = properties.get(name) {
            check(property, value, &join(at, name), depth + 1)?;
        }
    }
    Ok(())
}

fn has_type(value: &Value, schema_type: &str) -> bool {
    match schema_type {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().map_or(false, |x| x.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    // TOOL-6: a wrongly typed or missing argument is reported readably.
    #[test]
    fn types_required_and_enums() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "s": {"type": ["string", "null"]},
                "e": {"enum": ["a", "b"]}
            },
            "required": ["n"]
        }));
        assert!(check_arguments(&schema, &obj(json!({"n": 3}))).is_ok());
        assert!(check_arguments(&schema, &obj(json!({"n": 3.0, "s": null}))).is_ok());
        let err = check_arguments(&schema, &obj(json!({"n": "3"}))).unwrap_err();
        assert!(err.contains("\"n\"") && err.contains("integer"), "{}", err);
        assert!(check_arguments(&schema, &obj(json!({})))
            .unwrap_err()
            .contains("missing"));
        assert!(check_arguments(&schema, &obj(json!({"n": 1, "e": "c"}))).is_err());
        assert!(check_arguments(&schema, &obj(json!({"n": 1.5}))).is_err());
    }

    // The keywords the module docs list, each named with where it failed.
    #[test]
    fn bounds_lengths_items_and_nesting() {
        let schema = obj(json!({"type": "object", "properties": {
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "name": {"type": "string", "minLength": 2, "maxLength": 4},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            "owner": {"type": "object", "required": ["id"], "properties": {"id": {"const": 7}}},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"v": {"type": "integer"}}}}
        }}));
        let err = |v: Value| check_arguments(&schema, &obj(v)).unwrap_err();
        assert_eq!(
            err(json!({"limit": -3})),
            "argument \"limit\" must be at least 1, not -3"
        );
        assert!(err(json!({"limit": 101})).contains("at most 100"));
        assert!(err(json!({"ratio": 0})).contains("more than 0"));
        assert!(err(json!({"name": "é"})).contains("at least 2 characters"));
        assert!(err(json!({"name": "abcde"})).contains("at most 4 characters"));
        assert!(err(json!({"tags": ["a", "b", "c"]})).contains("at most 2 items"));
        assert!(err(json!({"tags": ["a", 1]})).contains("\"tags[1]\""));
        assert!(err(json!({"owner": {}})).contains("\"owner.id\" is required"));
        assert!(err(json!({"owner": {"id": 8}})).contains("must be 7"));
        assert!(err(json!({"rows": [{"v": 1}, {"v": "x"}]})).contains("\"rows[1].v\""));
        let fine =
            json!({"limit": 5, "ratio": 0.5, "name": "abc", "tags": ["a"], "owner": {"id": 7}});
        assert!(check_arguments(&schema, &obj(fine)).is_ok());
    }

    // TOOL-6: the integer widths schemars writes as `format` (`u8` is
    // `uint8`) bound the value, and the refusal names the argument.
    #[test]
    fn integer_formats_bound_the_value() {
        let schema = obj(json!({"type": "object", "properties": {
            "small": {"type": "integer", "format": "uint8", "minimum": 0.0},
            "signed": {"type": "integer", "format": "int16"},
            "size": {"type": "integer", "format": "uint"},
            "ratio": {"type": "number", "format": "float"}
        }}));
        let err = |v: Value| check_arguments(&schema, &obj(v)).unwrap_err();
        assert_eq!(
            err(json!({"small": 256})),
            "argument \"small\" must be a uint8 (0 to 255), not 256"
        );
        assert_eq!(
            err(json!({"small": -1})),
            "argument \"small\" must be at least 0, not -1"
        );
        assert!(err(json!({"signed": -32769})).contains("int16 (-32768 to 32767)"));
        assert!(err(json!({"size": -1})).contains("must be a uint"));
        let fine = json!({"small": 255, "signed": -32768, "size": 1u64 << 40, "ratio": 1e300});
        assert!(check_arguments(&schema, &obj(fine)).is_ok());
    }

    #[test]
    fn outputs_are_checked_from_the_root() {
        let schema = obj(json!({"type": "object", "required": ["total"],
            "properties": {"total": {"type": "number"}}}));
        assert!(check_output(&schema, &json!({"total": 3})).is_ok());
        assert_eq!(
            check_output(&schema, &json!([1])).unwrap_err(),
            "structuredContent must be of type \"object\", not array"
        );
        assert!(check_output(&schema, &json!({}))
            .unwrap_err()
            .contains("\"total\" is required"));
    }
}
