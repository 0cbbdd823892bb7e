//! The files of a directory as resources, over stdio.
//!
//! ```text
//! cargo run --example directory -- DIR
//! ```
//!
//! - `resources/list` lists the files directly in DIR, 20 to a page, from
//!   a [`ResourceProvider`] that reads the directory on each request.
//! - The template `file:///{+path}` reads any text file under DIR, in
//!   subdirectories too (`file:///notes/today.md`); a path that leads out
//!   of DIR (`file:///../secret`, or a symbolic link) is not found.
//! - `completion/complete` suggests values of `path` as they are typed:
//!   `no` gives `notes/`, `notes/t` gives `notes/today.md`.
//!
//! URIs name paths relative to DIR, so a client never learns where DIR is.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use tiny_mcp::{
    Error, ReadResourceResult, RequestContext, Resource, ResourcePage, ResourceProvider,
    ResourceTemplate, Server, TemplateVariables,
};

const TEMPLATE: &str = "file:///{+path}";
const PAGE_SIZE: usize = 20;

#[derive(Clone)]
struct Directory {
    /// Canonical, so that every path under it starts with it.
    root: PathBuf,
}

impl Directory {
    fn read(&self, uri: &str, relative: &str) -> Result<ReadResourceResult, Error> {
        // Canonicalizing resolves `..` and symbolic links: what is still
        // under the root is inside it (server/resources "Security").
        let path = match self.root.join(relative).canonicalize() {
            Ok(path) if path.starts_with(&self.root) && path.is_file() => path,
            _ => return Err(Error::resource_not_found(uri)),
        };
        // Not `?`: an io::Error's text would not reach the client.
        let text = fs::read_to_string(path).map_err(|e| Error::msg(format!("{}: {}", uri, e)))?;
        Ok(ReadResourceResult::text(uri, text))
    }

    /// The entries under `typed`'s directory whose names start with the
    /// rest of it; directories end with `/`.
    fn complete(&self, typed: &str) -> Vec<String> {
        let (parent, prefix) = typed.split_at(typed.rfind('/').map_or(0, |i| i + 1));
        let dir = match self.root.join(parent).canonicalize() {
            Ok(dir) if dir.starts_with(&self.root) => dir,
            _ => return Vec::new(),
        };
        let entries = fs::read_dir(dir).into_iter().flatten().flatten();
        let mut values: Vec<String> = entries
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let slash = if entry.path().is_dir() { "/" } else { "" };
                name.starts_with(prefix)
                    .then(|| format!("{}{}{}", parent, name, slash))
            })
            .collect();
        values.sort();
        values
    }
}

impl ResourceProvider for Directory {
    fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
        let mut files = Vec::new();
        for entry in fs::read_dir(&self.root)?.flatten() {
            let metadata = entry.metadata()?;
            match entry.file_name().into_string() {
                Ok(name) if metadata.is_file() => {
                    let resource = Resource::new(file_uri(&name), name);
                    files.push(
                        resource
                            .with_mime_type("text/plain")
                            .with_size(metadata.len()),
                    );
                }
                _ => {} // A directory, a symbolic link, or a name that is not UTF-8.
            }
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        ResourcePage::paginate(files, cursor, PAGE_SIZE)
    }

    fn read(&self, _: &RequestContext, _: &str) -> Option<Result<ReadResourceResult, Error>> {
        None // The template reads every file, listed or not.
    }
}

/// `file:///` and `relative`, percent-encoded as the template expands it
/// (RFC 6570 reserved expansion keeps `/`).
fn file_uri(relative: &str) -> String {
    let mut uri = String::from("file:///");
    for byte in relative.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(byte))
            }
            _ => uri.push_str(&format!("%{:02X}", byte)),
        }
    }
    uri
}

fn main() -> Result<(), Error> {
    let root = match std::env::args_os().nth(1) {
        Some(dir) => PathBuf::from(dir).canonicalize()?,
        None => {
            eprintln!("usage: directory DIR");
            std::process::exit(2);
        }
    };
    let dir = Directory { root };
    let (reader, completer) = (dir.clone(), dir.clone());
    let template = ResourceTemplate::new(TEMPLATE, "file")
        .with_description("A text file under the directory")
        .with_mime_type("text/plain");
    Server::builder("directory", "1.0.0")
        .resource_provider(dir)
        .resource_template(
            template,
            move |_: &RequestContext, uri: &str, vars: &TemplateVariables| {
                // The template has one variable, so a match has it.
                reader.read(uri, &vars["path"])
            },
        )
        .complete_template_variable(
            TEMPLATE,
            "path",
            move |_: &RequestContext, typed: &str, _: &BTreeMap<String, String>| {
                Ok(completer.complete(typed))
            },
        )
        .build()
        .serve_stdio()
}
