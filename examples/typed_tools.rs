//! Typed tools with structured output, over stdio.
//!
//! ```text
//! cargo run --example typed_tools
//! ```
//!
//! Each tool takes a Rust type deserialized from its `arguments` and
//! returns one that the crate serializes into `structuredContent`, with
//! the same JSON as text (server/tools "Structured Content"). The
//! `inputSchema` tells clients what to send and is checked before the
//! handler runs: `{"text": "a b", "top": 0}` gets an `isError` result
//! saying `argument "top" must be at least 1, not 0`. The `outputSchema`
//! tells clients what comes back, and the crate checks each result
//! against it.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tiny_mcp::{Error, RequestContext, Server, Tool};

#[derive(Clone, Copy, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
enum Unit {
    M,
    Km,
    Mi,
    Ft,
}

impl Unit {
    fn meters(self) -> f64 {
        match self {
            Unit::M => 1.0,
            Unit::Km => 1000.0,
            Unit::Mi => 1609.344,
            Unit::Ft => 0.3048,
        }
    }
}

#[derive(Deserialize)]
struct Convert {
    value: f64,
    from: Unit,
    to: Unit,
}

#[derive(Serialize)]
struct Length {
    value: f64,
    unit: Unit,
}

fn convert(_: &RequestContext, args: Convert) -> Result<Length, Error> {
    let meters = args.value * args.from.meters();
    let value = (meters / args.to.meters() * 1e6).round() / 1e6;
    let unit = args.to;
    Ok(Length { value, unit })
}

#[derive(Deserialize)]
struct WordStatsArgs {
    text: String,
    top: Option<usize>,
}

#[derive(Serialize)]
struct WordStats {
    words: usize,
    unique: usize,
    top: Vec<WordCount>,
}

#[derive(Serialize)]
struct WordCount {
    word: String,
    count: usize,
}

fn word_stats(_: &RequestContext, args: WordStatsArgs) -> Result<WordStats, Error> {
    let mut counts = BTreeMap::new();
    let words = args.text.split(|c: char| !c.is_alphanumeric());
    for word in words.filter(|w| !w.is_empty()) {
        *counts.entry(word.to_lowercase()).or_insert(0) += 1;
    }
    let (words, unique) = (counts.values().sum(), counts.len());
    let top = counts
        .into_iter()
        .map(|(word, count)| WordCount { word, count });
    let mut top: Vec<WordCount> = top.collect();
    top.sort_by_key(|w| Reverse(w.count)); // Stable: ties stay alphabetical.
    top.truncate(args.top.unwrap_or(3));
    Ok(WordStats { words, unique, top })
}

fn main() -> Result<(), Error> {
    let units = json!({"type": "string", "enum": ["m", "km", "mi", "ft"]});
    let convert_tool = Tool::new(
        "convert",
        json!({
            "type": "object",
            "properties": {"value": {"type": "number"}, "from": units, "to": units},
            "required": ["value", "from", "to"]
        }),
    )
    .with_description("Converts a length between m, km, mi and ft")
    .with_output_schema(json!({
        "type": "object",
        "properties": {"value": {"type": "number"}, "unit": units},
        "required": ["value", "unit"]
    }));
    let stats_tool = Tool::new(
        "word_stats",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "top": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Default 3"}
            },
            "required": ["text"]
        }),
    )
    .with_description("Counts the words of a text and its most frequent ones")
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "words": {"type": "integer", "minimum": 0},
            "unique": {"type": "integer", "minimum": 0},
            "top": {"type": "array", "items": {
                "type": "object",
                "properties": {"word": {"type": "string"}, "count": {"type": "integer"}},
                "required": ["word", "count"]
            }}
        },
        "required": ["words", "unique", "top"]
    }));
    Server::builder("typed-tools", "1.0.0")
        .typed_tool(convert_tool, convert)
        .typed_tool(stats_tool, word_stats)
        .build()
        .serve_stdio()
}
