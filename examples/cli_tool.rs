//! A command-line program that offers one of its commands as an MCP tool.
//!
//! ```text
//! cargo run --example cli_tool -- count FILE...   # lines, words, bytes, as wc prints them
//! cargo run --example cli_tool -- mcp             # the same, as the tool `count`, over stdio
//! ```
//!
//! Both commands call the same function, [`count`], and print with the
//! same [`render`]: the tool's text is what the command line prints, and
//! its `structuredContent` holds the numbers (server/tools "Structured
//! Content"). The tool reads whatever files the process may read; give
//! it to clients you would let run the command.

use std::fs;
use std::process;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tiny_mcp::{CallToolResult, Error, JsonObject, RequestContext, Server, Tool};

const USAGE: &str = "usage: cli_tool count FILE... | cli_tool mcp";

#[derive(Serialize)]
struct Counts {
    file: String,
    lines: usize,
    words: usize,
    bytes: usize,
}

/// Counts each file, or says which one could not be read.
fn count(files: &[String]) -> Result<Vec<Counts>, String> {
    let count_one = |file: &String| {
        let bytes = fs::read(file).map_err(|e| format!("{}: {}", file, e))?;
        let text = String::from_utf8_lossy(&bytes);
        let (lines, words) = (text.lines().count(), text.split_whitespace().count());
        let (file, bytes) = (file.clone(), bytes.len());
        Ok(Counts {
            file,
            lines,
            words,
            bytes,
        })
    };
    files.iter().map(count_one).collect()
}

fn render(counts: &[Counts]) -> String {
    let row = |c: &Counts| format!("{:>7} {:>7} {:>7} {}\n", c.lines, c.words, c.bytes, c.file);
    counts.iter().map(row).collect()
}

#[derive(Deserialize)]
struct CountArgs {
    files: Vec<String>,
}

fn serve() -> Result<(), Error> {
    let schema = json!({
        "type": "object",
        "properties": {"files": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "required": ["files"]
    });
    let tool = Tool::new("count", schema).with_description("Counts lines, words and bytes");
    Server::builder("cli_tool", "1.0.0")
        .tool(tool, |_: &RequestContext, args: JsonObject| {
            let args: CountArgs = serde_json::from_value(Value::Object(args))?;
            let counts = count(&args.files).map_err(Error::msg)?;
            let text = render(&counts);
            Ok(CallToolResult::text_and_structured(
                text,
                json!({ "files": counts }),
            ))
        })
        .build()
        .serve_stdio()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.split_first() {
        Some((command, files)) if command == "count" && !files.is_empty() => {
            count(files).map(|counts| print!("{}", render(&counts)))
        }
        Some((command, rest)) if command == "mcp" && rest.is_empty() => {
            serve().map_err(|e| e.to_string())
        }
        _ => {
            eprintln!("{}", USAGE);
            process::exit(2);
        }
    };
    if let Err(message) = outcome {
        eprintln!("cli_tool: {}", message);
        process::exit(1);
    }
}
