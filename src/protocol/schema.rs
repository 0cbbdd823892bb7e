//! Tool schemas generated from Rust types (feature `schemars`):
//! [`Tool::from_types`] and [`Tool::from_input_type`], whose docs say how
//! schemars' output is made fit for `inputSchema` and `outputSchema`.
//!
//! Spec: server/tools "Tool" and "Output Schema" (2025-11-25).

use schemars::gen::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

use super::Tool;
use crate::error::Error;
use crate::jsonrpc::JsonObject;

impl Tool {
    /// A tool whose `inputSchema` is generated from its arguments type `A`
    /// and whose `outputSchema` from its result type `R`: the types of a
    /// [`ServerBuilder::typed_tool`](crate::ServerBuilder::typed_tool)
    /// handler `|ctx: &RequestContext, args: A| -> Result<R, Error>`.
    ///
    /// Needs the `schemars` feature, and `schemars = "0.8"` in your own
    /// `Cargo.toml` for `#[derive(JsonSchema)]`. With an `outputSchema`,
    /// each result of the tool is checked against it before it is sent.
    ///
    /// # Schemas
    ///
    /// schemars 0.8 writes the JSON Schema of each type; the crate makes it
    /// fit for a tool:
    ///
    /// - **Self-contained.** Every subschema is written out where it is
    ///   used: no `$ref`, no `definitions` or `$defs`, no `$schema`, since
    ///   several clients reject references. A recursive type (a tree whose
    ///   nodes hold nodes) cannot be written out so, and is refused (see
    ///   Errors); write its schema by hand with [`Tool::new`].
    /// - **An object at the root**, `"type": "object"`, as the spec wants
    ///   of both schemas: a struct, a map, or an enum whose every variant
    ///   is an object (then `"type": "object"` is added beside its
    ///   `oneOf`).
    /// - **Described.** Doc comments on the type and its fields become
    ///   `description`s, which the model reads. The root `title`, which
    ///   schemars fills with the Rust type's name, is dropped: the tool has
    ///   its own `name` and `title`.
    /// - **2020-12**, the MCP default dialect: a tuple's draft-07
    ///   `items: [...]` becomes `prefixItems`. An `Option` field is not
    ///   `required` and its `type` allows `null` (`["integer", "null"]`);
    ///   an optional unit enum lists `null` in its `enum` too.
    ///
    /// The argument checks that run before a handler read what schemars
    /// writes: `type` lists, `minimum: 0.0` on unsigned integers, and the
    /// integer widths of `format` (`uint8`, `int32`, …). So a wrong
    /// argument is reported with its name, e.g. `argument "limit" must be
    /// at least 0, not -3`, before serde sees it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Message`](crate::ErrorKind::Message) naming the tool
    /// and the type when `A` or `R` is recursive (its schema would need a
    /// `$ref`) or is not described by an object schema (a number, a
    /// string, a list, `()`, `serde_json::Value`, an `Option` of a
    /// struct), e.g. `tool t: no schema for type u32: its schema has type
    /// "integer", and a tool's schemas must have type "object" (use a
    /// struct or a map)`. These are programming errors: the same types
    /// always give the same answer, so a test that builds the server finds
    /// them. For a result that is not an object, use
    /// [`Tool::from_input_type`]: the typed handler sends it as text, with
    /// no `structuredContent`.
    ///
    /// # Example
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use tiny_mcp::{RequestContext, Server, Tool};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Search {
    ///     /// What to look for.
    ///     query: String,
    ///     /// At most this many hits.
    ///     limit: Option<u32>,
    /// }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Hits {
    ///     hits: Vec<String>,
    /// }
    ///
    /// let tool = Tool::from_types::<Search, Hits>("search")?
    ///     .with_description("Searches the notes");
    /// let input = serde_json::json!({
    ///     "type": "object",
    ///     "required": ["query"],
    ///     "properties": {
    ///         "query": {"type": "string", "description": "What to look for."},
    ///         "limit": {
    ///             "type": ["integer", "null"],
    ///             "format": "uint32",
    ///             "minimum": 0.0,
    ///             "description": "At most this many hits."
    ///         }
    ///     }
    /// });
    /// assert_eq!(serde_json::Value::Object(tool.input_schema.clone()), input);
    /// let server = Server::builder("notes", "1")
    ///     .typed_tool(tool, |_: &RequestContext, args: Search| {
    ///         let hits = vec![format!("a note on {}", args.query)];
    ///         let limit = args.limit.unwrap_or(10) as usize;
    ///         Ok(Hits { hits: hits.into_iter().take(limit).collect() })
    ///     })
    ///     .build();
    /// # drop(server);
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    ///
    /// Spec: server/tools "Output Schema" (2025-11-25).
    pub fn from_types<A: JsonSchema, R: JsonSchema>(
        name: impl Into<String>,
    ) -> Result<Tool, Error> {
        let mut tool = Tool::from_input_type::<A>(name)?;
        let output = object_schema::<R>().map_err(|why| refusal::<R>(&tool.name, why))?;
        tool.output_schema = Some(output);
        Ok(tool)
    }

    /// A tool whose `inputSchema` is generated from its arguments type `A`,
    /// with no `outputSchema`: for a typed handler whose result is not an
    /// object (it is sent as text), or a [`ToolHandler`](crate::ToolHandler)
    /// that builds its own [`CallToolResult`](crate::CallToolResult).
    ///
    /// The schema is made as for [`Tool::from_types`] (see its Schemas
    /// section). Needs the `schemars` feature.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Message`](crate::ErrorKind::Message) naming the tool
    /// and the type when `A` is recursive or is not described by an object
    /// schema, as for [`Tool::from_types`]. A tool without arguments takes
    /// an empty struct (`struct NoArguments {}`), whose schema is
    /// `{"type": "object"}`.
    ///
    /// # Example
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use tiny_mcp::{RequestContext, Server, Tool};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Add {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// let server = Server::builder("calc", "1")
    ///     .typed_tool(
    ///         Tool::from_input_type::<Add>("add")?,
    ///         |_: &RequestContext, args: Add| Ok(args.a + args.b), // sent as text
    ///     )
    ///     .build();
    /// # drop(server);
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    ///
    /// Spec: server/tools "Tool" (2025-11-25).
    pub fn from_input_type<A: JsonSchema>(name: impl Into<String>) -> Result<Tool, Error> {
        let name = name.into();
        let input = object_schema::<A>().map_err(|why| refusal::<A>(&name, why))?;
        Ok(Tool::new(name, Value::Object(input)))
    }
}

/// The error for a type whose schema cannot serve a tool.
fn refusal<T>(tool: &str, why: String) -> Error {
    Error::msg(format!(
        "tool {}: no schema for type {}: {}",
        tool,
        std::any::type_name::<T>(),
        why
    ))
}

/// `T`'s schema, self-contained and with an object at its root.
fn object_schema<T: JsonSchema>() -> Result<JsonObject, String> {
    let settings = SchemaSettings::draft07().with(|settings| {
        settings.inline_subschemas = true;
        settings.meta_schema = None;
    });
    let root = settings.into_generator().into_root_schema_for::<T>();
    // With `inline_subschemas`, schemars still writes a `$ref` (and a
    // definition) for a type met again inside itself.
    if !root.definitions.is_empty() {
        let names: Vec<&str> = root.definitions.keys().map(String::as_str).collect();
        return Err(format!(
            "it is recursive (through {}), and a schema without $ref cannot describe it; \
             write the schema by hand with Tool::new",
            names.join(", ")
        ));
    }
    let mut schema = match serde_json::to_value(&root.schema) {
        Ok(Value::Object(schema)) => schema,
        Ok(other) => return Err(format!("schemars wrote {} instead of an object", other)),
        Err(e) => return Err(format!("schemars wrote a schema that is not JSON: {}", e)),
    };
    schema.remove("title");
    fix(&mut schema)?;
    if object_root(&mut schema) {
        Ok(schema)
    } else {
        let found = schema.get("type").map_or_else(
            || "no type".to_string(),
            |t| format!("type {}", Value::to_string(t)),
        );
        Err(format!(
            "its schema has {}, and a tool's schemas must have type \"object\" \
             (use a struct or a map)",
            found
        ))
    }
}

/// Whether `schema` describes only objects; `"type": "object"` is added
/// to a `oneOf` or `anyOf` whose every branch is an object (an enum of
/// struct variants).
fn object_root(schema: &mut JsonObject) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => return t == "object",
        Some(_) => return false,
        None => {}
    }
    let is_object = |branch: &Value| branch.get("type") == Some(&Value::from("object"));
    let objects_only = ["oneOf", "anyOf"].iter().any(|key| match schema.get(*key) {
        Some(Value::Array(branches)) => !branches.is_empty() && branches.iter().all(is_object),
        _ => false,
    });
    if objects_only {
        schema.insert("type".into(), Value::from("object"));
    }
    objects_only
}

/// Refuses a reference left in `schema` and rewrites draft-07 forms to
/// 2020-12, in `schema` and every subschema.
fn fix(schema: &mut JsonObject) -> Result<(), String> {
    for keyword in ["$ref", "$defs", "definitions"] {
        if schema.contains_key(keyword) {
            return Err(format!(
                "schemars wrote a {} that cannot be inlined",
                keyword
            ));
        }
    }
    // A tuple: draft-07 `items: [..]` and `additionalItems` are 2020-12
    // `prefixItems` and `items`.
    if let Some(Value::Array(_)) = schema.get("items") {
        if let Some(prefix) = schema.remove("items") {
            schema.insert("prefixItems".into(), prefix);
        }
        if let Some(rest) = schema.remove("additionalItems") {
            schema.insert("items".into(), rest);
        }
    }
    allow_null_in_enum(schema);
    // Subschemas: keyed by property name, one, or a list.
    for keyword in ["properties", "patternProperties"] {
        if let Some(Value::Object(named)) = schema.get_mut(keyword) {
            for subschema in named.values_mut() {
                fix_value(subschema)?;
            }
        }
    }
    for keyword in [
        "items",
        "additionalProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    ] {
        if let Some(subschema) = schema.get_mut(keyword) {
            fix_value(subschema)?;
        }
    }
    for keyword in ["prefixItems", "allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = schema.get_mut(keyword) {
            for subschema in list {
                fix_value(subschema)?;
            }
        }
    }
    Ok(())
}

/// [`fix`] for a subschema, which may also be `true` or `false`.
fn fix_value(subschema: &mut Value) -> Result<(), String> {
    match subschema {
        Value::Object(schema) => fix(schema),
        _ => Ok(()),
    }
}

/// schemars makes an `Option` of an inlined unit enum nullable by adding
/// `"null"` to its `type` only, so `null` would still fail its `enum`.
fn allow_null_in_enum(schema: &mut JsonObject) {
    let nullable = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    if let (true, Some(Value::Array(allowed))) = (nullable, schema.get_mut("enum")) {
        if !allowed.contains(&Value::Null) {
            allowed.push(Value::Null);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde_json::{json, Value};

    use super::*;

    fn input<A: JsonSchema>() -> Value {
        match Tool::from_input_type::<A>("t") {
            Ok(tool) => Value::Object(tool.input_schema),
            Err(e) => panic!("no schema: {}", e),
        }
    }

    fn refused<A: JsonSchema>() -> String {
        match Tool::from_input_type::<A>("t") {
            Ok(tool) => panic!("expected a refusal, got {:?}", tool.input_schema),
            Err(e) => e.to_string(),
        }
    }

    /// Every place in `value` where a reference keyword appears as a key.
    fn references(value: &Value, at: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                for (key, child) in object {
                    if ["$ref", "$defs", "definitions", "$schema"].contains(&key.as_str()) {
                        found.push(format!("{}/{}", at, key));
                    }
                    references(child, &format!("{}/{}", at, key), found);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    references(child, &format!("{}/{}", at, i), found);
                }
            }
            _ => {}
        }
    }

    fn assert_self_contained(schema: &Value) {
        let mut found = Vec::new();
        references(schema, "", &mut found);
        assert!(found.is_empty(), "references at {:?} in {}", found, schema);
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)] // Only the schema is used.
    struct Point {
        x: i32,
        y: i32,
    }

    /// A shape to draw.
    #[derive(JsonSchema)]
    #[allow(dead_code)] // Only the schema is used.
    struct Shape {
        /// Where the shape starts.
        origin: Point,
        /// The other corners.
        corners: Vec<Point>,
        label: Option<String>,
        colour: Option<Colour>,
        style: Style,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)] // Only the schema is used.
    enum Colour {
        Red,
        Green,
    }

    #[derive(JsonSchema)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    #[allow(dead_code)] // Only the schema is used.
    enum Style {
        Solid { width: u8 },
        Dashed { dash: u8, gap: u8 },
    }

    // TOOL-3, server/tools "Tool": inputSchema is a JSON Schema object with
    // `type: "object"`; clients that reject `$ref` get every subschema
    // written out where it is used.
    #[test]
    fn nested_structs_are_inlined() {
        let schema = input::<Shape>();
        assert_self_contained(&schema);
        assert_eq!(schema["type"], "object");
        let point = json!({"type": "object", "required": ["x", "y"], "properties": {
            "x": {"type": "integer", "format": "int32"},
            "y": {"type": "integer", "format": "int32"}}});
        let mut origin = point.clone();
        origin["description"] = json!("Where the shape starts.");
        assert_eq!(schema["properties"]["origin"], origin);
        assert_eq!(schema["properties"]["corners"]["type"], "array");
        assert_eq!(schema["properties"]["corners"]["items"], point);
    }

    // TOOL-3: an Option field may be left out (not `required`) or be null.
    #[test]
    fn option_fields_are_not_required() {
        let schema = input::<Shape>();
        assert_eq!(
            schema["required"],
            json!(["corners", "origin", "style"]),
            "{}",
            schema
        );
        assert_eq!(
            schema["properties"]["label"]["type"],
            json!(["string", "null"])
        );
    }

    // TOOL-3: unit enums are string enums; an optional one also allows null.
    // Enums of struct variants are a `oneOf` of objects.
    #[test]
    fn enums_are_enums_and_oneofs() {
        let schema = input::<Shape>();
        assert_eq!(
            schema["properties"]["colour"],
            json!({"type": ["string", "null"], "enum": ["red", "green", null]})
        );
        let style = &schema["properties"]["style"];
        let variants = style["oneOf"].as_array().cloned().unwrap_or_default();
        assert_eq!(variants.len(), 2, "{}", style);
        assert_eq!(variants[0]["properties"]["kind"]["enum"], json!(["solid"]));
        assert_eq!(
            variants[1]["required"],
            json!(["dash", "gap", "kind"]),
            "{}",
            style
        );
        assert_eq!(
            variants[1]["properties"]["gap"],
            json!({"type": "integer", "format": "uint8", "minimum": 0.0})
        );
    }

    // TOOL-3: doc comments reach the model as `description`; the root `title`
    // (the Rust type's name) and `$schema` do not go out.
    #[test]
    fn doc_comments_become_descriptions() {
        let schema = input::<Shape>();
        assert_eq!(schema["description"], "A shape to draw.");
        assert_eq!(
            schema["properties"]["corners"]["description"],
            "The other corners."
        );
        assert!(schema.get("title").is_none(), "{}", schema);
        assert!(schema.get("$schema").is_none(), "{}", schema);
    }

    // TOOL-3: an enum whose every variant is an object is an object schema.
    #[test]
    fn enums_of_objects_are_objects_at_the_root() {
        let schema = input::<Style>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["oneOf"].as_array().map(Vec::len), Some(2));
        let map = input::<BTreeMap<String, u16>>();
        assert_eq!(map["type"], "object");
        assert_eq!(map["additionalProperties"]["format"], "uint16");
    }

    // TOOL-3: a tool without arguments takes an empty struct, an object.
    #[test]
    fn empty_structs_take_no_arguments() {
        #[derive(JsonSchema)]
        struct NoArguments {}
        assert_eq!(input::<NoArguments>(), json!({"type": "object"}));
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)] // Only the schema is used.
    struct Node {
        name: String,
        children: Vec<Node>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)] // Only the schema is used.
    struct Tree {
        root: Node,
    }

    // TOOL-3: a recursive type cannot be written without `$ref`: refused,
    // with its name.
    #[test]
    fn recursive_types_are_refused() {
        let error = refused::<Tree>();
        assert!(
            error.starts_with("tool t: no schema for type ")
                && error.contains("Tree")
                && error.contains("recursive (through Node)"),
            "{}",
            error
        );
        assert!(refused::<Node>().contains("recursive"));
    }

    // TOOL-3, TOOL-5: both schemas must be objects at the root
    // (server/tools "Tool").
    #[test]
    fn non_objects_are_refused() {
        let error = refused::<u32>();
        assert_eq!(
            error,
            "tool t: no schema for type u32: its schema has type \"integer\", \
             and a tool's schemas must have type \"object\" (use a struct or a map)"
        );
        assert!(refused::<Vec<Point>>().contains("type \"array\""));
        assert!(refused::<Option<Point>>().contains("[\"object\",\"null\"]"));
        assert!(refused::<Value>().contains("no type"));
        let output = Tool::from_types::<Point, String>("t").map(|_| ());
        let error = output.map_err(|e| e.to_string()).unwrap_err();
        assert!(
            error.contains("type alloc::string::String") && error.contains("\"string\""),
            "{}",
            error
        );
    }

    // TOOL-3, TOOL-5: a tuple in 2020-12 form; results get an outputSchema.
    #[test]
    fn tuples_use_prefix_items_and_results_get_output_schemas() {
        #[derive(JsonSchema)]
        #[allow(dead_code)] // Only the schema is used.
        struct Span {
            range: (u32, String),
        }
        let tool = match Tool::from_types::<Point, Span>("t") {
            Ok(tool) => tool,
            Err(e) => panic!("{}", e),
        };
        let output = Value::Object(tool.output_schema.unwrap_or_default());
        assert_self_contained(&output);
        let range = &output["properties"]["range"];
        assert_eq!(range["prefixItems"][1], json!({"type": "string"}));
        assert!(range.get("items").is_none(), "{}", range);
        assert_eq!(range["minItems"], 2);
    }
}
