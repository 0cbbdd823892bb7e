//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension of
//! 2026-07-28): directories of instructions for a model, each file a
//! resource under `skill://<skill-path>/<file-path>`, enumerated by
//! `skills/list`, described by `skills/get`, and browsed by
//! `resources/directory/read`.
//!
//! Skills are read from disk when added ([`load`]) and kept in memory;
//! their files are served by a [`ResourceProvider`] of the server, so that
//! `resources/read` and `resources/list` (which shows each `SKILL.md`) need
//! nothing of their own.

mod frontmatter;
mod load;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::Deserialize;
use serde_json::Value;

use super::caller::Caller;
use super::context::RequestContext;
use super::inline::parse_params;
use super::provider::{ResourcePage, ResourceProvider};
use super::reply::Answer;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, JsonObject};
use crate::protocol::{
    extensions, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
};
use crate::server::session::Session;

/// The manifest every skill directory holds.
pub(crate) const SKILL_MD: &str = "SKILL.md";
/// The MIME type of a directory resource (SEP-2640 "Directory Resources").
const DIRECTORY: &str = "inode/directory";

/// One skill, as loaded.
#[derive(Debug)]
pub(crate) struct Skill {
    /// `skill://<skill-path>/SKILL.md`.
    pub(crate) uri: String,
    pub(crate) frontmatter: JsonObject,
    /// Every file, `SKILL.md` included, sorted by path.
    pub(crate) files: Vec<SkillFile>,
}

/// One file of a skill.
#[derive(Debug)]
pub(crate) struct SkillFile {
    pub(crate) uri: String,
    /// Its path below the skill's root, `/`-separated.
    pub(crate) relative: String,
    pub(crate) bytes: Vec<u8>,
    digest: String,
    mime_type: &'static str,
}

impl SkillFile {
    pub(crate) fn new(uri: String, segments: &[String], bytes: Vec<u8>) -> SkillFile {
        let relative = segments.join("/");
        SkillFile {
            digest: crate::sha256::tagged_hex(&bytes),
            mime_type: mime_type(&relative),
            uri,
            relative,
            bytes,
        }
    }
}

/// A MIME type from a file name's extension.
fn mime_type(name: &str) -> &'static str {
    let extension = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// The skills a server serves; shared with the provider that serves their
/// files.
#[derive(Debug, Default)]
pub(crate) struct SkillSet {
    skills: RwLock<Vec<Arc<Skill>>>,
    /// The provider is in the registry (skills were added once).
    pub(crate) offered: AtomicBool,
}

impl SkillSet {
    /// Adds the skills under `root`, replacing those with the same URIs;
    /// returns their `SKILL.md` URIs.
    pub(crate) fn add_dir(&self, root: &Path) -> Result<Vec<String>, Error> {
        let loaded = load::skills_under(root)?;
        let uris: Vec<String> = loaded.iter().map(|s| s.uri.clone()).collect();
        // Kept sorted by URI as they go in: no sort routine in the binary.
        let mut skills = self.skills.write();
        for skill in loaded {
            match skills.binary_search_by(|s| s.uri.cmp(&skill.uri)) {
                Ok(i) => skills[i] = Arc::new(skill),
                Err(i) => skills.insert(i, Arc::new(skill)),
            }
        }
        Ok(uris)
    }

    /// Removes the skill whose `SKILL.md` is `uri`; `true` if it was there.
    pub(crate) fn remove(&self, uri: &str) -> bool {
        let mut skills = self.skills.write();
        let before = skills.len();
        skills.retain(|s| s.uri != uri);
        skills.len() != before
    }

    fn all(&self) -> Vec<Arc<Skill>> {
        self.skills.read().clone()
    }

    fn file(&self, uri: &str) -> Option<(Arc<Skill>, usize)> {
        let skills = self.skills.read();
        skills.iter().find_map(|skill| {
            let i = skill.files.iter().position(|f| f.uri == uri)?;
            Some((Arc::clone(skill), i))
        })
    }
}

/// Declares the extension (with `directoryRead`) and `resources`, which
/// it needs (SEP-2640 "Capability Negotiation").
pub(crate) fn declare(capabilities: &mut ServerCapabilities) {
    let extensions = capabilities.extensions.get_or_insert_with(JsonObject::new);
    extensions.insert(
        extensions::SKILLS.into(),
        serde_json::json!({ "directoryRead": true }),
    );
    capabilities
        .resources
        .get_or_insert_with(super::builder::subscribable);
}

/// A skill's entry: `{"uri", "frontmatter", "resources": [{"uri",
/// "digest", "size"}]}` (SEP-2640 "Skill Entries").
fn entry(skill: &Skill) -> Value {
    let resources: Vec<Value> = skill
        .files
        .iter()
        .map(|f| serde_json::json!({"uri": f.uri, "digest": f.digest, "size": f.bytes.len()}))
        .collect();
    serde_json::json!({
        "uri": skill.uri,
        "frontmatter": skill.frontmatter,
        "resources": resources,
    })
}

#[derive(Deserialize, Default)]
struct Paged {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct Uri {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

/// The page of `items` a cursor (`None` or an offset) starts.
fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => match super::inline::offset(c) {
            Some(n) if n <= items.len() => n,
            _ => return Err(super::inline::invalid_cursor(c)),
        },
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = if end < items.len() {
        Some(end.to_string())
    } else {
        None
    };
    Ok((items[start..end].to_vec(), next))
}

/// `skills/list`: every skill's entry, in pages (SEP-2640 "Listing Skills").
pub(crate) fn list(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: Paged = match params {
        None | Some(Value::Null) => Paged::default(),
        params => parse_params(params)?,
    };
    let server = &session.server;
    let skills = server.skills.all();
    let (skills, next) = page(&skills, params.cursor.as_deref(), server.config.page_size)?;
    let entries: Vec<Value> = skills.iter().map(|s| entry(s)).collect();
    let mut result = serde_json::json!({ "skills": entries });
    if let Some(next) = next {
        result["nextCursor"] = Value::from(next);
    }
    Ok(result)
}

/// `skills/get`: one skill's entry by its `SKILL.md` URI; `-32602` for
/// any other (SEP-2640 "Getting a Skill").
pub(crate) fn get(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: Uri = parse_params(params)?;
    let skill = session
        .server
        .skills
        .all()
        .into_iter()
        .find(|s| s.uri == params.uri);
    match skill {
        Some(skill) => Ok(serde_json::json!({ "skill": entry(&skill) })),
        None => Err(ErrorObject::invalid_params(format!(
            "no skill is served at {}",
            params.uri
        ))),
    }
}

/// `resources/directory/read`: the direct children of a directory of the
/// skill namespace (a skill's root, a folder in it, or a folder of skill
/// paths), files with their metadata and folders as `inode/directory`;
/// `-32602` for anything else (SEP-2640 "Reading Directories").
pub(crate) fn read_directory(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: Uri = parse_params(params)?;
    let dir = params.uri.strip_suffix('/').unwrap_or(&params.uri);
    let names_a_path = dir.find("://").map_or(false, |i| dir.len() > i + 3);
    let prefix = format!("{}/", dir);
    let mut children: Vec<Resource> = Vec::new();
    for skill in session.server.skills.all() {
        for file in &skill.files {
            let rest = match file.uri.strip_prefix(&prefix) {
                Some(rest) if !rest.is_empty() => rest,
                _ => continue,
            };
            let child = match rest.split_once('/') {
                Some((folder, _)) => {
                    Resource::new(format!("{}{}", prefix, folder), folder).with_mime_type(DIRECTORY)
                }
                None => Resource::new(file.uri.clone(), rest)
                    .with_mime_type(file.mime_type)
                    .with_size(file.bytes.len() as u64),
            };
            // Sorted by URI, each once, as they go in.
            if let Err(i) = children.binary_search_by(|c| c.uri.cmp(&child.uri)) {
                children.insert(i, child);
            }
        }
    }
    if children.is_empty() || !names_a_path {
        return Err(ErrorObject::invalid_params(format!(
            "{} is not a directory resource of this server",
            params.uri
        )));
    }
    let size = session.server.config.page_size;
    let (children, next) = page(&children, params.cursor.as_deref(), size)?;
    let mut result = serde_json::json!({ "resources": children });
    if let Some(next) = next {
        result["nextCursor"] = Value::from(next);
    }
    Ok(result)
}

/// Serves skill files through `resources/read`, and lists each `SKILL.md`
/// in `resources/list` (name and description from its frontmatter,
/// SEP-2640 "Resource Metadata").
pub(crate) struct SkillFiles(pub(crate) Arc<SkillSet>);

impl ResourceProvider for SkillFiles {
    fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
        let manifests: Vec<Resource> = self
            .0
            .all()
            .iter()
            .map(|skill| {
                let text = |key: &str| {
                    skill
                        .frontmatter
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                let size = skill
                    .files
                    .iter()
                    .find(|f| f.uri == skill.uri)
                    .map_or(0, |f| f.bytes.len());
                Resource::new(skill.uri.clone(), text("name"))
                    .with_description(text("description"))
                    .with_mime_type("text/markdown")
                    .with_size(size as u64)
            })
            .collect();
        ResourcePage::paginate(manifests, cursor, 100)
    }

    fn read(&self, _: &RequestContext, uri: &str) -> Option<Result<ReadResourceResult, Error>> {
        let (skill, i) = self.0.file(uri)?;
        let file = &skill.files[i];
        let contents = match std::str::from_utf8(&file.bytes) {
            Ok(text)
                if !file.mime_type.starts_with("image/")
                    && file.mime_type != "application/octet-stream" =>
            {
                ResourceContents::text(uri, file.mime_type, text)
            }
            _ => ResourceContents::blob(
                uri,
                file.mime_type,
                crate::base64::encode_padded(&file.bytes),
            ),
        };
        Some(Ok(ReadResourceResult::new(vec![contents])))
    }
}
