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
//!
//! A schema is read once, when its tool is registered ([`Schema::compile`]),
//! into the keywords that are checked: a call then costs no map look-ups
//! in the schema and no allocation unless it fails.

use serde_json::Value;

use crate::jsonrpc::JsonObject;

/// How deep nested schemas are followed.
const MAX_DEPTH: usize = 32;

/// The checked keywords of one schema (see the module docs), read once.
#[derive(Debug, Default)]
pub(crate) struct Schema {
    /// `type`: as written (for messages) and the kinds it allows.
    types: Option<(Value, Vec<Kind>)>,
    /// `enum`, when it is a list (kept as written, for messages).
    allowed: Option<Value>,
    /// `const`.
    constant: Option<Value>,
    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
    bounds: [Option<f64>; 4],
    /// An integer `format`, with its range.
    width: Option<(String, (f64, f64))>,
    /// `minLength`, `maxLength`.
    length: (Option<u64>, Option<u64>),
    /// `minItems`, `maxItems`.
    count: (Option<u64>, Option<u64>),
    /// `items`, when it is a schema.
    items: Option<Box<Schema>>,
    /// `required`: the names that are strings.
    required: Vec<String>,
    /// `properties`: the members whose schema is an object, in the
    /// source's order.
    properties: Vec<(String, Schema)>,
}

/// A name in `type`.
#[derive(Debug, Clone, Copy)]
enum Kind {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
    /// A name JSON Schema does not have: allows anything.
    Other,
}

impl Schema {
    /// Reads `schema`'s checked keywords; deeper than [`MAX_DEPTH`] nested
    /// schemas allow anything.
    pub(crate) fn compile(schema: &JsonObject) -> Schema {
        compile(schema, 0)
    }

    /// The schema of property `name`, if it has one.
    fn property(&self, name: &str) -> Option<&Schema> {
        // A scan: schemas have few properties, and the order is the
        // source's, sorted or not (serde_json's `preserve_order`).
        let found = self.properties.iter().find(|(key, _)| key == name);
        found.map(|(_, schema)| schema)
    }

    /// `Err` with a readable reason when `arguments` break this schema
    /// (a tool's `inputSchema`).
    pub(crate) fn check_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        check_object(self, arguments, &At::Root).map_err(|p| p.describe("argument"))
    }

    /// `Err` with a readable reason when a form's values break this schema
    /// (an elicitation's `requestedSchema`, `input/answer_check.rs`).
    pub(crate) fn check_form(&self, content: &JsonObject) -> Result<(), String> {
        check_object(self, content, &At::Root).map_err(|p| p.describe("field"))
    }

    /// `Err` with a readable reason when a structured result breaks this
    /// schema (a tool's `outputSchema`).
    pub(crate) fn check_output(&self, value: &Value) -> Result<(), String> {
        check(self, value, &At::Root).map_err(|p| p.describe("structuredContent"))
    }

    /// Leaves out the members of `object` that are `null` where this
    /// schema declares the property, does not require it, and refuses
    /// `null` (a serde `Option` that is `None`, meant as "absent"); `true`
    /// if any was left out.
    pub(crate) fn drop_refused_nulls(&self, object: &mut JsonObject) -> bool {
        let before = object.len();
        object.retain(|name, value| {
            let refused = value.is_null()
                && !self.required.iter().any(|required| required == name)
                && self
                    .property(name)
                    .map_or(false, |property| check(property, value, &At::Root).is_err());
            !refused
        });
        object.len() != before
    }
}

fn compile(schema: &JsonObject, depth: usize) -> Schema {
    if depth > MAX_DEPTH {
        return Schema::default();
    }
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    let count = |key: &str| schema.get(key).and_then(Value::as_u64);
    let [min_length, max_length, min_items, max_items] =
        ["minLength", "maxLength", "minItems", "maxItems"].map(count);
    let width = schema
        .get("format")
        .and_then(Value::as_str)
        .and_then(|f| integer_range(f).map(|range| (f.to_string(), range)));
    let nested = |value: &Value| match value {
        Value::Object(object) => Some(compile(object, depth + 1)),
        _ => None,
    };
    Schema {
        types: schema.get("type").and_then(kinds),
        allowed: schema.get("enum").filter(|v| v.is_array()).cloned(),
        constant: schema.get("const").cloned(),
        bounds: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].map(number),
        width,
        length: (min_length, max_length),
        count: (min_items, max_items),
        items: schema.get("items").and_then(nested).map(Box::new),
        required: match schema.get("required") {
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        },
        properties: match schema.get("properties") {
            Some(Value::Object(properties)) => {
                // A list, not a map: no map code for `Schema` in every
                // binary (the static one has a size limit).
                let mut read = Vec::new();
                for (name, value) in properties {
                    if let Some(schema) = nested(value) {
                        read.push((name.clone(), schema));
                    }
                }
                read
            }
            _ => Vec::new(),
        },
    }
}

/// `type` as one name or a list of names; anything else checks nothing.
fn kinds(types: &Value) -> Option<(Value, Vec<Kind>)> {
    let kinds = match types {
        Value::String(name) => vec![kind(name)],
        Value::Array(names) => names.iter().filter_map(Value::as_str).map(kind).collect(),
        _ => return None,
    };
    Some((types.clone(), kinds))
}

fn kind(name: &str) -> Kind {
    match name {
        "string" => Kind::String,
        "number" => Kind::Number,
        "integer" => Kind::Integer,
        "boolean" => Kind::Boolean,
        "object" => Kind::Object,
        "array" => Kind::Array,
        "null" => Kind::Null,
        _ => Kind::Other,
    }
}

/// Where in the value a check is: built as the check descends, spelled
/// out only for a problem (`limit`, `items[2].name`), so that arguments
/// that pass cost no allocation.
#[derive(Clone, Copy)]
enum At<'a> {
    Root,
    Member(&'a At<'a>, &'a str),
    Item(&'a At<'a>, usize),
}

impl At<'_> {
    fn spell(&self, out: &mut String) {
        match self {
            At::Root => {}
            At::Member(parent, name) => {
                parent.spell(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            At::Item(parent, i) => {
                parent.spell(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

/// A problem, and where in the value it is.
struct Problem {
    at: String,
    what: String,
}

impl Problem {
    /// The message, the place cut to 64 characters (a schema's member
    /// names are any length).
    fn describe(self, root: &str) -> String {
        if self.at.is_empty() {
            format!("{} {}", root, self.what)
        } else {
            format!("{} \"{}\" {}", root, cut(self.at), self.what)
        }
    }
}

/// `text` cut to 64 characters, `…` marking a cut.
fn cut(text: String) -> String {
    match text.char_indices().nth(64) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn problem(at: &At<'_>, what: String) -> Problem {
    let mut spelled = String::new();
    at.spell(&mut spelled);
    Problem { at: spelled, what }
}

/// Checks `value` against `schema`. There is no depth to watch here:
/// `compile` stops at [`MAX_DEPTH`], below which a schema allows anything.
fn check(schema: &Schema, value: &Value, at: &At<'_>) -> Result<(), Problem> {
    check_type(schema, value, at)?;
    if let Some(listed @ Value::Array(allowed)) = &schema.allowed {
        if !allowed.contains(value) {
            return Err(problem(at, format!("must be one of {}", listed)));
        }
    }
    if let Some(expected) = &schema.constant {
        if expected != value {
            return Err(problem(at, format!("must be {}", expected)));
        }
    }
    match value {
        Value::Number(n) => check_number(schema, n.as_f64().unwrap_or(0.0), at),
        Value::String(s) => check_length(schema.length, || s.chars().count(), "characters", at),
        Value::Array(items) => check_array(schema, items, at),
        Value::Object(object) => check_object(schema, object, at),
        _ => Ok(()),
    }
}

fn check_type(schema: &Schema, value: &Value, at: &At<'_>) -> Result<(), Problem> {
    let (written, kinds) = match &schema.types {
        Some(types) => types,
        None => return Ok(()),
    };
    if kinds.iter().any(|kind| has_kind(value, *kind)) {
        return Ok(());
    }
    Err(problem(
        at,
        format!("must be of type {}, not {}", written, type_name(value)),
    ))
}

fn check_number(schema: &Schema, n: f64, at: &At<'_>) -> Result<(), Problem> {
    let [minimum, maximum, above, below] = schema.bounds;
    let fails = [
        (minimum, n < minimum.unwrap_or(f64::MIN), "at least"),
        (maximum, n > maximum.unwrap_or(f64::MAX), "at most"),
        (above, n <= above.unwrap_or(f64::MIN), "more than"),
        (below, n >= below.unwrap_or(f64::MAX), "less than"),
    ];
    for (limit, broken, words) in fails.iter() {
        if let (Some(limit), true) = (limit, broken) {
            return Err(problem(
                at,
                format!("must be {} {}, not {}", words, limit, cut(n.to_string())),
            ));
        }
    }
    if let Some((format, (low, high))) = &schema.width {
        if n < *low || n > *high {
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

/// `minLength`/`maxLength` or `minItems`/`maxItems`: `len` is counted
/// only when a bound is given (a string's characters are not free).
fn check_length(
    (min, max): (Option<u64>, Option<u64>),
    len: impl Fn() -> usize,
    unit: &str,
    at: &At<'_>,
) -> Result<(), Problem> {
    if min.is_none() && max.is_none() {
        return Ok(());
    }
    let len = len() as u64;
    if let Some(min) = min.filter(|min| len < *min) {
        return Err(problem(
            at,
            format!("must have at least {} {}, not {}", min, unit, len),
        ));
    }
    if let Some(max) = max.filter(|max| len > *max) {
        return Err(problem(
            at,
            format!("must have at most {} {}, not {}", max, unit, len),
        ));
    }
    Ok(())
}

fn check_array(schema: &Schema, items: &[Value], at: &At<'_>) -> Result<(), Problem> {
    check_length(schema.count, || items.len(), "items", at)?;
    if let Some(item_schema) = &schema.items {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &At::Item(at, i))?;
        }
    }
    Ok(())
}

fn check_object(schema: &Schema, object: &JsonObject, at: &At<'_>) -> Result<(), Problem> {
    for name in &schema.required {
        if !object.contains_key(name) {
            return Err(problem(
                &At::Member(at, name),
                "is required and missing".to_string(),
            ));
        }
    }
    if schema.properties.is_empty() {
        return Ok(());
    }
    for (name, value) in object {
        if let Some(property) = schema.property(name) {
            check(property, value, &At::Member(at, name))?;
        }
    }
    Ok(())
}

fn has_kind(value: &Value, kind: Kind) -> bool {
    match kind {
        Kind::String => value.is_string(),
        Kind::Number => value.is_number(),
        Kind::Integer => value.as_f64().map_or(false, |x| x.fract() == 0.0),
        Kind::Boolean => value.is_boolean(),
        Kind::Object => value.is_object(),
        Kind::Array => value.is_array(),
        Kind::Null => value.is_null(),
        Kind::Other => true,
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

    fn check_arguments(schema: &JsonObject, arguments: &JsonObject) -> Result<(), String> {
        Schema::compile(schema).check_arguments(arguments)
    }

    fn check_output(schema: &JsonObject, value: &Value) -> Result<(), String> {
        Schema::compile(schema).check_output(value)
    }

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

    // Nested schemas are followed to MAX_DEPTH and no further: a wrong
    // type at depth 5 is found, one past the limit is not looked at.
    #[test]
    fn nesting_stops_at_the_depth_limit() {
        fn nested(levels: usize, leaf: Value) -> (Value, Value) {
            let mut schema = json!({"type": "string"});
            let mut value = leaf;
            for _ in 0..levels {
                schema = json!({"type": "object", "properties": {"a": schema}});
                value = json!({ "a": value });
            }
            (schema, value)
        }
        let (schema, value) = nested(5, json!(1));
        assert!(check_output(schema.as_object().unwrap(), &value).is_err());
        let (schema, value) = nested(MAX_DEPTH + 2, json!(1));
        assert!(check_output(schema.as_object().unwrap(), &value).is_ok());
    }
}
