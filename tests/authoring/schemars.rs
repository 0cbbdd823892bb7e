//! Tool schemas generated from types (feature `schemars`, issue 13): what
//! a client lists, and that the crate's own checks accept them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tiny_mcp::{RequestContext, Server, Tool};

use crate::support::{call_tool, connect, first_text};

/// Where to look.
#[derive(Deserialize, JsonSchema)]
struct Area {
    /// The city's name.
    city: String,
    /// Kilometres around the city.
    radius: Option<u16>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    Nearest,
    Newest,
}

#[derive(Deserialize, JsonSchema)]
struct Search {
    /// Where to look.
    area: Area,
    /// At most this many places.
    limit: u32,
    order: Option<Order>,
}

#[derive(Serialize, JsonSchema)]
struct Place {
    name: String,
    distance_km: f64,
}

#[derive(Serialize, JsonSchema)]
struct Places {
    places: Vec<Place>,
    count: u32,
}

fn server() -> Server {
    let tool = match Tool::from_types::<Search, Places>("search") {
        Ok(tool) => tool.with_description("Places near a city"),
        Err(e) => panic!("no schemas for search: {}", e),
    };
    Server::builder("schemars", "1")
        .typed_tool(tool, |_: &RequestContext, args: Search| {
            let n = args.limit.min(2);
            // The newest places are the farther ones.
            let share = match args.order {
                Some(Order::Newest) => 1.0,
                Some(Order::Nearest) | None => 0.5,
            };
            let places = (0..n)
                .map(|i| Place {
                    name: format!("{} {}", args.area.city, i),
                    distance_km: f64::from(args.area.radius.unwrap_or(5)) * share,
                })
                .collect();
            Ok(Places { places, count: n })
        })
        .build()
}

/// Every path in `value` where `$ref`, `$defs`, `definitions` or `$schema`
/// is a key.
fn references(value: &Value, at: String, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                let here = format!("{}/{}", at, key);
                if ["$ref", "$defs", "definitions", "$schema"].contains(&key.as_str()) {
                    found.push(here.clone());
                }
                references(child, here, found);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                references(child, format!("{}/{}", at, i), found);
            }
        }
        _ => {}
    }
}

// server/tools "Tool" (TOOL-3): a tool generated from its types lists an
// object inputSchema and outputSchema, every subschema written out (no
// `$ref`), field docs as descriptions, Option fields not required.
#[test]
fn generated_schemas_are_listed_inlined() {
    let server = server();
    let mut client = connect(&server, json!({}));
    let listed = match client.request("tools/list", None) {
        Ok(listed) => listed,
        Err(e) => panic!("tools/list failed: {}", e),
    };
    let tool = &listed["tools"][0];
    assert_eq!(tool["name"], "search");
    let mut found = Vec::new();
    references(tool, String::new(), &mut found);
    assert!(found.is_empty(), "references at {:?} in {}", found, tool);
    let input = &tool["inputSchema"];
    assert_eq!(input["type"], "object");
    assert_eq!(input["required"], json!(["area", "limit"]));
    assert_eq!(
        input["properties"]["area"],
        json!({
            "description": "Where to look.",
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"description": "The city's name.", "type": "string"},
                "radius": {
                    "description": "Kilometres around the city.",
                    "type": ["integer", "null"],
                    "format": "uint16",
                    "minimum": 0.0
                }
            }
        })
    );
    assert_eq!(
        input["properties"]["order"],
        json!({"type": ["string", "null"], "enum": ["nearest", "newest", null]})
    );
    let output = &tool["outputSchema"];
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], json!(["count", "places"]));
    assert_eq!(
        output["properties"]["places"]["items"]["properties"]["distance_km"],
        json!({"type": "number", "format": "double"})
    );
}

// TOOL-5, server/tools "Output Schema": the structured result of a typed tool
// conforms to the schema generated from its type (the crate checks it
// before it is sent), and the generated argument schema accepts what
// serde accepts: a null optional field, a left-out one.
#[test]
fn generated_schemas_accept_what_the_types_accept() {
    let server = server();
    let mut client = connect(&server, json!({}));
    let arguments = json!({"area": {"city": "Lyon", "radius": 8}, "limit": 5, "order": null});
    let answer = call_tool(&mut client, "search", arguments);
    assert!(answer.get("isError").is_none(), "{}", answer);
    assert_eq!(
        answer["structuredContent"],
        json!({"count": 2, "places": [
            {"name": "Lyon 0", "distance_km": 4.0},
            {"name": "Lyon 1", "distance_km": 4.0}]})
    );
    let plain = json!({"area": {"city": "Nice"}, "limit": 1, "order": "newest"});
    let answer = call_tool(&mut client, "search", plain);
    assert_eq!(answer["structuredContent"]["count"], 1, "{}", answer);
}

// TOOL-6: with a generated schema, a wrong argument is refused by the
// schema checks, which name it, before serde ("invalid value: integer
// `-3`, expected u32") sees it.
#[test]
fn wrong_arguments_are_named() {
    let server = server();
    let mut client = connect(&server, json!({}));
    let answer = call_tool(
        &mut client,
        "search",
        json!({"area": {"city": "Lyon"}, "limit": -3}),
    );
    assert_eq!(answer["isError"], true);
    assert_eq!(
        first_text(&answer),
        "invalid arguments for tool search: argument \"limit\" must be at least 0, not -3"
    );
    let wide = json!({"area": {"city": "Lyon", "radius": 70000}, "limit": 1});
    let answer = call_tool(&mut client, "search", wide);
    assert!(
        first_text(&answer).contains("\"area.radius\" must be a uint16 (0 to 65535)"),
        "{}",
        answer
    );
    let order = json!({"area": {"city": "Lyon"}, "limit": 1, "order": "oldest"});
    let answer = call_tool(&mut client, "search", order);
    assert!(
        first_text(&answer).contains("\"order\" must be one of"),
        "{}",
        answer
    );
}

// TOOL-6: a schema that says less leaves the refusal to serde, whose
// message then names the argument too.
#[test]
fn serde_refusals_name_the_argument() {
    let server = Server::builder("loose", "1")
        .typed_tool(
            Tool::new("search", json!({"type": "object"})),
            |_: &RequestContext, args: Search| Ok(args.limit.to_string()),
        )
        .build();
    let mut client = connect(&server, json!({}));
    let answer = call_tool(
        &mut client,
        "search",
        json!({"area": {"city": "Lyon"}, "limit": -3}),
    );
    assert_eq!(answer["isError"], true);
    assert_eq!(
        first_text(&answer),
        "invalid arguments: invalid value: integer `-3`, expected u32 (argument \"limit\")"
    );
}

// TOOL-5, server/tools "Output Schema": both sides agree on a `None`
// field: the generated outputSchema lets an `Option` field be `null` and
// does not require it, so the `null` serde writes is kept and passes.
#[test]
fn generated_output_schemas_accept_none_fields() {
    #[derive(Deserialize, JsonSchema)]
    struct NoArguments {}
    #[derive(Serialize, JsonSchema)]
    struct Found {
        title: String,
        note: Option<String>,
    }
    let tool = match Tool::from_types::<NoArguments, Found>("find") {
        Ok(tool) => tool,
        Err(e) => panic!("no schemas for find: {}", e),
    };
    assert_eq!(
        tool.output_schema
            .as_ref()
            .map(|s| s["properties"]["note"].clone()),
        Some(json!({"type": ["string", "null"]}))
    );
    let server = Server::builder("schemars", "1")
        .typed_tool(tool, |_: &RequestContext, _: NoArguments| {
            Ok(Found {
                title: "t".to_string(),
                note: None,
            })
        })
        .build();
    let mut client = connect(&server, json!({}));
    let answer = call_tool(&mut client, "find", Value::Null);
    assert!(answer.get("isError").is_none(), "{}", answer);
    assert_eq!(
        answer["structuredContent"],
        json!({"title": "t", "note": null})
    );
}
