//! A light check of tool arguments against the top level of `inputSchema`.
//!
//! It checks what catches most mistakes at little cost: `required`
//! properties are present, and each given property has the JSON `type` (or
//! one of the types) and, when listed, one of the `enum` values its schema
//! names. Deeper validation is the handler's job (TOOL-7).

use serde_json::Value;

use crate::jsonrpc::JsonObject;

/// `Err` with a readable reason when `arguments` break `schema`.
pub(crate) fn check_arguments(schema: &JsonObject, arguments: &JsonObject) -> Result<(), String> {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(name) {
                return Err(format!("missing required argument \"{}\"", name));
            }
        }
    }
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Ok(()),
    };
    for (name, value) in arguments {
        let property = match properties.get(name) {
            Some(Value::Object(p)) => p,
            _ => continue,
        };
        if let Some(types) = property.get("type") {
            let ok = match types {
                Value::String(t) => has_type(value, t),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|t| has_type(value, t)),
                _ => true,
            };
            if !ok {
                return Err(format!(
                    "argument \"{}\" must be of type {}, not {}",
                    name,
                    types,
                    type_name(value)
                ));
            }
        }
        if let Some(Value::Array(allowed)) = property.get("enum") {
            if !allowed.contains(value) {
                return Err(format!(
                    "argument \"{}\" must be one of {}",
                    name,
                    Value::Array(allowed.clone())
                ));
            }
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
}
