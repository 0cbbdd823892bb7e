//! A notes tool over stdio: typed tools with structured output, a delete
//! that asks the user first (elicitation), a summary that reports progress,
//! every note as a resource (a template to read one, a list to browse
//! them), a review prompt, and completion of note ids.
//!
//! ```text
//! cargo run --example notes     # then speak MCP on stdin and stdout
//! ```
//!
//! The notes live in memory and are gone when the program exits.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tiny_mcp::{
    ArgumentCompleter, ElicitAction, ElicitRequestFormParams, Error, GetPromptResult, Prompt,
    PromptArgument, ReadResourceResult, RequestContext, Resource, ResourceContents, ResourcePage,
    ResourceProvider, ResourceTemplate, Server, ServerBuilder, TemplateVariables, Tool,
};

/// The template of every note's URI, `note://ID`.
const NOTE_TEMPLATE: &str = "note://{id}";
/// Notes per page of `resources/list`.
const PAGE_SIZE: usize = 20;

fn main() -> Result<(), Error> {
    let notes = Arc::new(Notes::default());
    let server = Server::builder("notes", "1.0.0")
        .instructions("Keeps short notes. Search before adding a duplicate.");
    let server = tools(server, &notes);
    let server = resources(server, &notes);
    let server = prompts(server, &notes);
    server.build().serve_stdio()
}

// The tools: their arguments, results and schemas.

/// `add_note`'s arguments.
#[derive(Deserialize)]
struct AddNote {
    title: String,
    body: String,
    #[serde(default)]
    tags: Vec<String>,
}

/// `search_notes`'s arguments.
#[derive(Deserialize)]
struct SearchNotes {
    query: String,
    limit: usize,
}

/// `delete_note`'s arguments.
#[derive(Deserialize)]
struct DeleteNote {
    id: u64,
}

/// A note by id and title: what `add_note` returns, and each hit of
/// `search_notes`.
#[derive(Serialize)]
struct NoteRef {
    id: u64,
    title: String,
}

/// What `search_notes` returns.
#[derive(Serialize)]
struct SearchResult {
    notes: Vec<NoteRef>,
}

/// What `delete_note` returns.
#[derive(Serialize)]
struct Deleted {
    id: u64,
    deleted: bool,
}

fn tools(server: ServerBuilder, notes: &Arc<Notes>) -> ServerBuilder {
    let note_ref = json!({"type": "object", "required": ["id", "title"],
        "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}});
    let add_input = json!({"type": "object", "required": ["title", "body"], "properties": {
        "title": {"type": "string", "minLength": 1},
        "body": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}}});
    let search_input = json!({"type": "object", "required": ["query", "limit"], "properties": {
        "query": {"type": "string", "description": "Words to find in titles, bodies and tags"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50}}});
    let search_output = json!({"type": "object", "required": ["notes"],
        "properties": {"notes": {"type": "array", "items": note_ref.clone()}}});
    let id_input = json!({"type": "object", "required": ["id"],
        "properties": {"id": {"type": "integer", "minimum": 1}}});
    let deleted_output = json!({"type": "object", "required": ["id", "deleted"],
        "properties": {"id": {"type": "integer"}, "deleted": {"type": "boolean"}}});
    let (add, search, delete, summarize) = (
        Arc::clone(notes),
        Arc::clone(notes),
        Arc::clone(notes),
        Arc::clone(notes),
    );
    server
        .typed_tool(
            Tool::new("add_note", add_input)
                .with_description("Saves a note; returns its id")
                .with_output_schema(note_ref),
            move |ctx, args: AddNote| {
                let note = add.add(args.title, args.body, args.tags);
                ctx.server().notify_resources_list_changed();
                Ok(NoteRef {
                    id: note.id,
                    title: note.title,
                })
            },
        )
        .typed_tool(
            Tool::new("search_notes", search_input)
                .with_description("Finds notes whose title, body or tags contain the query")
                .with_output_schema(search_output),
            move |_, args: SearchNotes| {
                let hits = search.search(&args.query, args.limit);
                let notes = hits
                    .into_iter()
                    .map(|note| NoteRef {
                        id: note.id,
                        title: note.title,
                    })
                    .collect();
                Ok(SearchResult { notes })
            },
        )
        .typed_tool(
            Tool::new("delete_note", id_input)
                .with_description("Deletes a note once the user confirms")
                .with_output_schema(deleted_output),
            move |ctx, args: DeleteNote| {
                let note = delete.get(args.id);
                let note = note.ok_or_else(|| Error::msg(format!("no note {}", args.id)))?;
                let question = format!("Delete note {} \"{}\"?", note.id, note.title);
                let form = json!({"type": "object", "required": ["confirm"], "properties": {
                    "confirm": {"type": "boolean", "title": "Delete it", "default": false}}});
                let answer = ctx.elicit(ElicitRequestFormParams::new(question, form))?;
                let confirmed = answer.action == ElicitAction::Accept
                    && answer.content.as_ref().and_then(|c| c.get("confirm"))
                        == Some(&Value::Bool(true));
                if confirmed && delete.remove(args.id) {
                    ctx.server().notify_resources_list_changed();
                }
                Ok(Deleted {
                    id: args.id,
                    deleted: confirmed,
                })
            },
        )
        .typed_tool(
            Tool::without_arguments("summarize")
                .with_description("One line per note, with progress as it goes"),
            move |ctx, (): ()| {
                let all = summarize.all();
                let mut lines = Vec::with_capacity(all.len());
                for (done, note) in all.iter().enumerate() {
                    ctx.check_cancelled()?;
                    lines.push(note.summary());
                    let total = Some(all.len() as f64);
                    ctx.notify_progress((done + 1) as f64, total, Some(&note.title));
                }
                if lines.is_empty() {
                    return Ok("No notes yet.".to_string());
                }
                Ok(lines.join("\n"))
            },
        )
}

// The resources: `note://{id}` to read one note, and a list of them all.

/// Every note as a resource `note://ID`, computed when a client asks.
struct NoteList(Arc<Notes>);

impl ResourceProvider for NoteList {
    fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
        let all = self.0.all().into_iter().map(|note| {
            Resource::new(note.uri(), note.title.clone()).with_mime_type("text/markdown")
        });
        ResourcePage::paginate(all.collect(), cursor, PAGE_SIZE)
    }
    // No `read`: the template reads them.
}

fn resources(server: ServerBuilder, notes: &Arc<Notes>) -> ServerBuilder {
    let read = Arc::clone(notes);
    server
        .resource_provider(NoteList(Arc::clone(notes)))
        .resource_template(
            ResourceTemplate::new(NOTE_TEMPLATE, "note")
                .with_description("One note, as Markdown")
                .with_mime_type("text/markdown"),
            move |_: &RequestContext, uri: &str, variables: &TemplateVariables| {
                let note = variables.get("id").and_then(|id| read.find(id));
                let note = note.ok_or_else(|| Error::resource_not_found(uri))?;
                let contents = ResourceContents::text(uri, "text/markdown", note.markdown());
                Ok(ReadResourceResult::new(vec![contents]))
            },
        )
        .complete_template_variable(NOTE_TEMPLATE, "id", id_completer(notes))
}

// The prompt.

fn prompts(server: ServerBuilder, notes: &Arc<Notes>) -> ServerBuilder {
    let review = Arc::clone(notes);
    server
        .prompt(
            Prompt::new("review_note")
                .with_description("Asks the model to review one note")
                .with_argument(PromptArgument::new("id", "The note's id", true)),
            move |_: &RequestContext, args: BTreeMap<String, String>| {
                let id = args.get("id").map_or("", String::as_str);
                let note = review
                    .find(id)
                    .ok_or_else(|| Error::invalid_params(format!("no note {}", id)))?;
                let text = format!(
                    "Review this note: is it clear, and which tags fit it?\n\n{}",
                    note.markdown()
                );
                Ok(GetPromptResult::user_text(text))
            },
        )
        .complete_prompt_argument("review_note", "id", id_completer(notes))
}

/// Suggests the ids that start with what the user typed.
fn id_completer(notes: &Arc<Notes>) -> impl ArgumentCompleter {
    let notes = Arc::clone(notes);
    move |_: &RequestContext, typed: &str, _: &BTreeMap<String, String>| {
        Ok(notes.ids_starting_with(typed))
    }
}

// The store: nothing here knows about MCP.

/// One note.
#[derive(Debug, Clone)]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
}

impl Note {
    fn uri(&self) -> String {
        format!("note://{}", self.id)
    }

    fn markdown(&self) -> String {
        let mut text = format!("# {}\n\n{}\n", self.title, self.body);
        if !self.tags.is_empty() {
            text.push_str(&format!("\nTags: {}\n", self.tags.join(", ")));
        }
        text
    }

    fn summary(&self) -> String {
        let first = self.body.lines().next().unwrap_or("");
        format!("#{} {}: {}", self.id, self.title, first)
    }

    fn contains(&self, query: &str) -> bool {
        let query = query.to_lowercase();
        let has = |text: &str| text.to_lowercase().contains(&query);
        has(&self.title) || has(&self.body) || self.tags.iter().any(|tag| has(tag))
    }
}

/// The notes, in memory, by id; ids count up from 1 and are never reused.
#[derive(Default)]
struct Notes {
    last_id: AtomicU64,
    notes: Mutex<BTreeMap<u64, Note>>,
}

impl Notes {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Note>> {
        // A handler that panicked holding the lock left whole notes behind.
        self.notes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn add(&self, title: String, body: String, tags: Vec<String>) -> Note {
        let id = self.last_id.fetch_add(1, Ordering::Relaxed) + 1;
        let note = Note {
            id,
            title,
            body,
            tags,
        };
        self.lock().insert(id, note.clone());
        note
    }

    fn get(&self, id: u64) -> Option<Note> {
        self.lock().get(&id).cloned()
    }

    /// The note whose id is `id`, written as text.
    fn find(&self, id: &str) -> Option<Note> {
        self.get(id.parse().ok()?)
    }

    fn remove(&self, id: u64) -> bool {
        self.lock().remove(&id).is_some()
    }

    fn all(&self) -> Vec<Note> {
        self.lock().values().cloned().collect()
    }

    fn search(&self, query: &str, limit: usize) -> Vec<Note> {
        let notes = self.lock();
        let hits = notes.values().filter(|note| note.contains(query));
        hits.take(limit).cloned().collect()
    }

    fn ids_starting_with(&self, prefix: &str) -> Vec<String> {
        let ids = self.lock().keys().map(u64::to_string).collect::<Vec<_>>();
        ids.into_iter()
            .filter(|id| id.starts_with(prefix))
            .collect()
    }
}
