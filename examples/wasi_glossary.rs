//! A glossary over stdio that also runs as WebAssembly under a WASI
//! runtime: a typed tool, a resource template, a prompt, and a tool that
//! asks the user (elicitation in form mode).
//!
//! Natively:
//!
//! ```text
//! cargo run --example wasi_glossary
//! ```
//!
//! For WASI preview 1, which has no threads (the crate then serves one
//! request at a time on the thread that reads stdin, and a question to
//! the client reads its answer from stdin there too):
//!
//! ```text
//! rustup target add wasm32-wasip1
//! cargo build --release --target wasm32-wasip1 --example wasi_glossary
//! wasmtime target/wasm32-wasip1/release/examples/wasi_glossary.wasm
//! ```
//!
//! `wasm32-wasip2` works the same way and gives a component, which
//! `wasmtime` runs too. Without the `wasmtime` command, the `wasmtime`
//! package from PyPI runs either: `python3
//! tests/interop/python/wasi_run.py FILE.wasm` (what
//! scripts/interop/interop-wasi.sh does). Either command is what an MCP
//! client starts as its stdio server. Nothing here needs a thread, a
//! file or a socket: a WASI module gets stdin, stdout and stderr only.
//!
//! - `define` (typed): `{"term": "wasi"}` gives `{"term": "wasi",
//!   "definition": "…"}` as `structuredContent`; an unknown term is an
//!   `isError` result.
//! - `glossary://{term}`: a term as Markdown (resources/read).
//! - `explain`: a prompt asking the model to explain a term to an
//!   audience.
//! - `add_term`: asks the user for the definition of a new term, then
//!   keeps it until the program exits.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tiny_mcp::{
    ElicitAction, ElicitRequestFormParams, Error, GetPromptResult, Prompt, PromptArgument,
    ReadResourceResult, RequestContext, ResourceContents, ResourceTemplate, Server,
    TemplateVariables, Tool,
};

/// The terms the glossary starts with.
const TERMS: [(&str, &str); 3] = [
    (
        "mcp",
        "Model Context Protocol: how an application offers tools, resources and prompts to a language model.",
    ),
    (
        "wasi",
        "WebAssembly System Interface: the calls a WebAssembly module makes to its host instead of to an operating system.",
    ),
    (
        "stdio",
        "Standard input and output: the MCP transport where the client starts the server and speaks to it through its pipes.",
    ),
];

/// The terms, by name in lowercase. A `Mutex` costs nothing without
/// threads and keeps the handlers `Sync`, as the builder requires.
#[derive(Default)]
struct Glossary(Mutex<BTreeMap<String, String>>);

impl Glossary {
    fn terms(&self) -> MutexGuard<'_, BTreeMap<String, String>> {
        // A handler that panicked while holding the lock left the map
        // whole (every change is one insert): keep using it.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn find(&self, term: &str) -> Option<String> {
        self.terms().get(&term.to_lowercase()).cloned()
    }
}

#[derive(Deserialize)]
struct Define {
    term: String,
}

#[derive(Serialize)]
struct Definition {
    term: String,
    definition: String,
}

#[derive(Deserialize)]
struct AddTerm {
    term: String,
}

#[derive(Serialize)]
struct Added {
    term: String,
    added: bool,
}

fn main() -> Result<(), Error> {
    let glossary = Arc::new(Glossary::default());
    for (term, definition) in TERMS {
        glossary.terms().insert(term.into(), definition.into());
    }
    let term_only = json!({
        "type": "object",
        "properties": {"term": {"type": "string", "minLength": 1}},
        "required": ["term"]
    });
    let define_tool = Tool::new("define", term_only.clone())
        .with_description("Looks a term up in the glossary")
        .with_output_schema(json!({
            "type": "object",
            "properties": {"term": {"type": "string"}, "definition": {"type": "string"}},
            "required": ["term", "definition"]
        }));
    let add_tool = Tool::new("add_term", term_only)
        .with_description("Adds a term, asking the user for its definition")
        .with_output_schema(json!({
            "type": "object",
            "properties": {"term": {"type": "string"}, "added": {"type": "boolean"}},
            "required": ["term", "added"]
        }));
    let template = ResourceTemplate::new("glossary://{term}", "term")
        .with_description("One term of the glossary, as Markdown")
        .with_mime_type("text/markdown");
    let prompt = Prompt::new("explain")
        .with_description("Asks the model to explain a term of the glossary")
        .with_argument(PromptArgument::new("term", "The term to explain", true))
        .with_argument(PromptArgument::new(
            "audience",
            "Who the explanation is for (default: a newcomer)",
            false,
        ));
    let (define, add, read, explain) = (
        Arc::clone(&glossary),
        Arc::clone(&glossary),
        Arc::clone(&glossary),
        glossary,
    );
    Server::builder("wasi-glossary", "1.0.0")
        .instructions("A small glossary. Look terms up with define before explaining them.")
        .typed_tool(define_tool, move |_, args: Define| {
            let definition = define.find(&args.term);
            let definition =
                definition.ok_or_else(|| Error::msg(format!("no term {:?}", args.term)))?;
            let term = args.term.to_lowercase();
            Ok(Definition { term, definition })
        })
        .typed_tool(add_tool, move |ctx, args: AddTerm| {
            add_term(ctx, &add, args)
        })
        .resource_template(
            template,
            move |_: &RequestContext, uri: &str, variables: &TemplateVariables| {
                read_term(&read, uri, variables)
            },
        )
        .prompt(
            prompt,
            move |_: &RequestContext, args: BTreeMap<String, String>| explain_term(&explain, &args),
        )
        .build()
        .serve_stdio()
}

/// Reads `glossary://{term}`: the term as Markdown.
fn read_term(
    glossary: &Glossary,
    uri: &str,
    variables: &TemplateVariables,
) -> Result<ReadResourceResult, Error> {
    let term = variables.get("term").map_or("", String::as_str);
    let definition = glossary.find(term);
    let definition = definition.ok_or_else(|| Error::resource_not_found(uri))?;
    let text = format!("# {}\n\n{}\n", term, definition);
    let contents = ResourceContents::text(uri, "text/markdown", text);
    Ok(ReadResourceResult::new(vec![contents]))
}

/// Renders the `explain` prompt; `term` is required (the crate checks
/// that before this runs), `audience` is optional.
fn explain_term(
    glossary: &Glossary,
    args: &BTreeMap<String, String>,
) -> Result<GetPromptResult, Error> {
    let term = args.get("term").map_or("", String::as_str);
    let definition = glossary.find(term);
    let definition =
        definition.ok_or_else(|| Error::invalid_params(format!("no term {:?}", term)))?;
    let audience = args.get("audience").map_or("a newcomer", String::as_str);
    Ok(GetPromptResult::user_text(format!(
        "Explain \"{}\" to {} in three sentences. The glossary says: {}",
        term, audience, definition
    )))
}

/// Asks the user for the definition of `args.term` and keeps it. In the
/// 2026-07-28 era `elicit` ends this run and the client calls again with
/// the answer: nothing before it changes anything, so running again from
/// the top is safe.
fn add_term(ctx: &RequestContext, glossary: &Glossary, args: AddTerm) -> Result<Added, Error> {
    let term = args.term.to_lowercase();
    if glossary.find(&term).is_some() {
        return Err(Error::msg(format!("{:?} is in the glossary already", term)));
    }
    let form = ElicitRequestFormParams::new(
        format!("What does \"{}\" mean?", term),
        json!({
            "type": "object",
            "properties": {
                "definition": {"type": "string", "title": "Definition", "minLength": 1}
            },
            "required": ["definition"]
        }),
    );
    let answer = ctx.elicit(form)?;
    // The user may decline, and the client may send anything (ELIC-8).
    let definition = match (answer.action, answer.content) {
        (ElicitAction::Accept, Some(content)) => match content.get("definition") {
            Some(Value::String(text)) if !text.trim().is_empty() => text.trim().to_string(),
            _ => return Err(Error::msg("the answer has no definition")),
        },
        _ => return Ok(Added { term, added: false }),
    };
    glossary.terms().insert(term.clone(), definition);
    Ok(Added { term, added: true })
}
