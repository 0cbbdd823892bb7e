//! Reading skills from a directory tree: every directory holding a
//! `SKILL.md` is a skill, its files are every regular file beneath it
//! (nested skills' files included, SEP-2640 "Nested Skills"), read once
//! and served from memory so that what `resources/read` returns always
//! matches the digests `skills/list` published.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{frontmatter, Skill, SkillFile, SKILL_MD};
use crate::error::Error;
use crate::jsonrpc::JsonObject;

/// SEP-2640 "Limits": files per skill.
pub(crate) const MAX_FILES: usize = 512;
/// SEP-2640 "Limits": bytes per skill, summed over its files.
pub(crate) const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Directories deeper than this under the root are not looked into.
const MAX_DEPTH: usize = 16;

/// The skills under `root`, each at `skill://<its path below root>`.
///
/// # Errors
///
/// When `root` cannot be read, or a skill breaks a rule of SEP-2640 (its
/// name is not its directory's, its frontmatter lacks `name` or
/// `description`, it is over the limits): the error names the skill.
pub(crate) fn skills_under(root: &Path) -> Result<Vec<Skill>, Error> {
    let mut dirs = Vec::new();
    find_skill_dirs(root, &mut Vec::new(), &mut dirs)?;
    dirs.into_iter()
        .map(|(segments, dir)| load_skill(&segments, &dir))
        .collect()
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::msg(format!(
        "cannot read the skills folder {}: {}",
        path.display(),
        e
    ))
}

/// The directories under `dir` (the root when `segments` is empty) that
/// hold a `SKILL.md`, with their paths below the root. Symbolic links are
/// not followed.
fn find_skill_dirs(
    dir: &Path,
    segments: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, PathBuf)>,
) -> Result<(), Error> {
    if segments.len() > MAX_DEPTH {
        return Ok(());
    }
    if !segments.is_empty() && dir.join(SKILL_MD).is_file() {
        out.push((segments.clone(), dir.to_path_buf()));
    }
    for entry in sorted_entries(dir).map_err(|e| io_error(dir, e))? {
        let is_dir = entry.file_type().map_or(false, |t| t.is_dir());
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_dir && !name.starts_with('.') {
            segments.push(name);
            find_skill_dirs(&entry.path(), segments, out)?;
            segments.pop();
        }
    }
    Ok(())
}

/// One skill: its files, their digests, and its checked frontmatter.
fn load_skill(segments: &[String], dir: &Path) -> Result<Skill, Error> {
    let path = segments.join("/");
    let fail = |why: String| Error::msg(format!("skill {}: {}", path, why));
    let mut relative = Vec::new();
    list_files(dir, &mut Vec::new(), &mut relative).map_err(|e| fail(e.to_string()))?;
    if relative.len() > MAX_FILES {
        return Err(fail(format!(
            "{} files, over the limit of {}",
            relative.len(),
            MAX_FILES
        )));
    }
    let base = format!("skill://{}", encode_path(segments));
    let mut files = Vec::with_capacity(relative.len());
    let mut total = 0u64;
    for rel in relative {
        let on_disk = rel.iter().fold(dir.to_path_buf(), |p, s| p.join(s));
        let bytes = read_within(&on_disk, MAX_BYTES - total)
            .map_err(|why| fail(format!("{}{}", rel.join("/"), why)))?;
        total += bytes.len() as u64;
        files.push(SkillFile::new(
            format!("{}/{}", base, encode_path(&rel)),
            &rel,
            bytes,
        ));
    }
    let manifest = files
        .iter()
        .find(|f| f.relative == SKILL_MD)
        .ok_or_else(|| fail(no_manifest(dir)))?;
    let text =
        std::str::from_utf8(&manifest.bytes).map_err(|_| fail("SKILL.md is not UTF-8".into()))?;
    let front = frontmatter::parse(text).map_err(fail)?;
    check_frontmatter(&front, segments).map_err(fail)?;
    Ok(Skill {
        uri: format!("{}/{}", base, SKILL_MD),
        frontmatter: front,
        files,
    })
}

/// The file at `path`, read only when its size is at most `room` bytes,
/// and then at most `room` bytes of it (a file that grew meanwhile is
/// refused, never read whole).
///
/// # Errors
///
/// The reason, to follow the file's name: " is 1073741824 bytes, over
/// the limit of …", or ": " and the I/O error.
fn read_within(path: &Path, room: u64) -> Result<Vec<u8>, String> {
    let over = |size: u64| {
        let limit = MAX_BYTES;
        format!(
            " is {} bytes, over the limit of {} bytes per skill",
            size, limit
        )
    };
    let mut file = fs::File::open(path).map_err(|e| format!(": {}", e))?;
    let size = file.metadata().map_err(|e| format!(": {}", e))?.len();
    if size > room {
        return Err(over(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    (&mut file)
        .take(room.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!(": {}", e))?;
    if bytes.len() as u64 > room {
        return Err(over(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Why a skill directory has no `SKILL.md` among its files: symbolic
/// links are not followed, so a linked one is named as such.
fn no_manifest(dir: &Path) -> String {
    match fs::symlink_metadata(dir.join(SKILL_MD)) {
        Ok(meta) if meta.file_type().is_symlink() => {
            "SKILL.md is a symbolic link, and links are not followed".into()
        }
        Ok(_) => "SKILL.md is not a regular file".into(),
        Err(_) => "no SKILL.md".into(),
    }
}

/// SEP-2640 "Skill Format", "Resource Mapping": `name` and `description`
/// are strings, and the name is the directory's and follows the Agent
/// Skills naming rules (1-64 of `a-z 0-9 -`, no leading, trailing or
/// double `-`).
fn check_frontmatter(front: &JsonObject, segments: &[String]) -> Result<(), String> {
    let name = match front.get("name") {
        Some(Value::String(name)) => name,
        _ => return Err("its frontmatter has no string `name`".into()),
    };
    if !matches!(front.get("description"), Some(Value::String(_))) {
        return Err("its frontmatter has no string `description`".into());
    }
    if segments.last() != Some(name) {
        return Err(format!("its name `{}` is not its directory's name", name));
    }
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if valid {
        Ok(())
    } else {
        Err(format!(
            "its name `{}` breaks the Agent Skills naming rules",
            name
        ))
    }
}

/// Every regular file under `dir`, as path segments, sorted.
fn list_files(
    dir: &Path,
    prefix: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> std::io::Result<()> {
    for entry in sorted_entries(dir)? {
        let kind = entry.file_type()?;
        let name = entry.file_name().to_string_lossy().into_owned();
        prefix.push(name);
        if kind.is_dir() && prefix.len() <= MAX_DEPTH {
            list_files(&entry.path(), prefix, out)?;
        } else if kind.is_file() {
            out.push(prefix.clone());
        }
        prefix.pop();
        if out.len() > MAX_FILES {
            break;
        }
    }
    Ok(())
}

/// The entries of `dir` that could be read, sorted by name: taken from a
/// heap of names (unique in a folder), for both walks, with no sort
/// routine in the binary.
fn sorted_entries(dir: &Path) -> std::io::Result<Vec<fs::DirEntry>> {
    let mut entries: Vec<Option<fs::DirEntry>> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(Some)
        .collect();
    let mut names: BinaryHeap<Reverse<(OsString, usize)>> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some(Reverse((e.as_ref()?.file_name(), i))))
        .collect();
    let mut sorted = Vec::with_capacity(entries.len());
    while let Some(Reverse((_, i))) = names.pop() {
        sorted.extend(entries[i].take());
    }
    Ok(sorted)
}

/// Path segments joined by `/`, each percent-encoded outside RFC 3986's
/// unreserved and sub-delimiter characters.
fn encode_path(segments: &[String]) -> String {
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        for byte in segment.bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    out.push(char::from(byte))
                }
                b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
                | b'@' => out.push(char::from(byte)),
                _ => out.push_str(&format!("%{:02X}", byte)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // DESIGN.md §6 (issue 27 item 9): a file over the limit is refused by
    // its size: a sparse 1 GiB file costs no memory to refuse.
    #[test]
    fn a_huge_file_is_refused_without_reading_it() {
        let path = std::env::temp_dir().join(format!("tiny-mcp-huge-{}", std::process::id()));
        let file = fs::File::create(&path).expect("create a temporary file");
        file.set_len(1 << 30).expect("a sparse 1 GiB file");
        let (read, peak) = crate::test_alloc::peak_during(|| read_within(&path, MAX_BYTES));
        let _ = fs::remove_file(&path);
        let why = read.expect_err("a 1 GiB file is refused");
        assert!(why.contains("over the limit of 16777216 bytes"), "{}", why);
        assert!(peak < 1 << 20, "{} bytes held to refuse it", peak);
    }

    #[test]
    fn paths_are_percent_encoded() {
        let segments = vec!["a b".to_string(), "ü.md".to_string()];
        assert_eq!(encode_path(&segments), "a%20b/%C3%BC.md");
    }

    // Agent Skills naming rules, and the name must be the directory's.
    #[test]
    fn names_follow_the_rules() {
        let front = |name: &str| {
            let mut o = JsonObject::new();
            o.insert("name".into(), Value::from(name));
            o.insert("description".into(), Value::from("d"));
            o
        };
        let dir = |name: &str| vec!["prefix".to_string(), name.to_string()];
        assert!(check_frontmatter(&front("code-review"), &dir("code-review")).is_ok());
        assert!(check_frontmatter(&front("code-review"), &dir("other")).is_err());
        for bad in ["Code", "a--b", "-a", "a-", ""] {
            assert!(
                check_frontmatter(&front(bad), &dir(bad)).is_err(),
                "{}",
                bad
            );
        }
    }
}
