//! The YAML frontmatter of a `SKILL.md` as a JSON object (SEP-2640
//! "Frontmatter": verbatim, every field the author wrote).
//!
//! The library has no YAML dependency, so this reads the subset Agent
//! Skills frontmatter is written in: `key: value` mappings (nested by
//! indentation), block lists (`- item`), flow lists of scalars (`[a, b]`),
//! literal and folded block scalars (`|`, `>`, with `-` to strip), quoted
//! and plain scalars (`true`, `false`, `null`, numbers and strings, as
//! YAML 1.2's core schema types them), and `#` comments. Anything else
//! (anchors, tags, flow mappings) is an error naming the line, so a skill
//! is never served with frontmatter that differs from what a YAML parser
//! reads.

use serde_json::Value;

use crate::jsonrpc::JsonObject;

/// The frontmatter of `text` (a `SKILL.md`): between a first line `---` and
/// the next line `---`.
///
/// # Errors
///
/// A sentence saying what is missing or which line is not understood.
pub(crate) fn parse(text: &str) -> Result<JsonObject, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md does not begin with a `---` frontmatter line".into());
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        block.push(line);
    }
    if !closed {
        return Err("the frontmatter of SKILL.md has no closing `---` line".into());
    }
    let lines: Vec<Line<'_>> = block
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(n, l)| Line {
            number: n + 2,
            indent: l.len() - l.trim_start().len(),
            text: l.trim(),
            raw: l,
        })
        .collect();
    let mut at = 0;
    let map = mapping(&lines, &mut at, 0)?;
    match lines.get(at) {
        Some(line) => Err(format!(
            "frontmatter line {}: unexpected indentation",
            line.number
        )),
        None => Ok(map),
    }
}

#[derive(Clone, Copy)]
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
    raw: &'a str,
}

/// The mapping whose keys sit at `indent`, from line `at`.
fn mapping(lines: &[Line<'_>], at: &mut usize, indent: usize) -> Result<JsonObject, String> {
    let mut map = JsonObject::new();
    while let Some(line) = lines.get(*at) {
        if line.indent < indent {
            break;
        }
        if line.indent > indent {
            return Err(format!(
                "frontmatter line {}: unexpected indentation",
                line.number
            ));
        }
        let (key, rest) = split_key(line)?;
        *at += 1;
        let value = match rest {
            "" => nested(lines, at, indent)?,
            "|" | "|-" | ">" | ">-" => block_scalar(lines, at, indent, rest),
            _ => scalar_or_flow(rest, line)?,
        };
        map.insert(key, value);
    }
    Ok(map)
}

/// `key: rest`, the key unquoted.
fn split_key<'a>(line: &Line<'a>) -> Result<(String, &'a str), String> {
    let text = line.text;
    let colon = match text
        .find(": ")
        .or_else(|| text.strip_suffix(':').map(|k| k.len()))
    {
        Some(colon) => colon,
        None => {
            return Err(format!(
                "frontmatter line {}: expected `key: value`",
                line.number
            ))
        }
    };
    let key = text[..colon].trim();
    let key = match quoted(key) {
        Some(Ok(key)) => key,
        _ => key.to_string(),
    };
    Ok((key, text[colon + 1..].trim()))
}

/// What follows a `key:` with nothing after it: a list, a mapping, or null.
fn nested(lines: &[Line<'_>], at: &mut usize, indent: usize) -> Result<Value, String> {
    let next = match lines.get(*at) {
        Some(next) if next.indent > indent || (next.indent == indent && is_item(next)) => *next,
        _ => return Ok(Value::Null),
    };
    if is_item(&next) {
        let mut items = Vec::new();
        while let Some(line) = lines.get(*at) {
            if line.indent != next.indent || !is_item(line) {
                break;
            }
            items.push(scalar_or_flow(line.text[1..].trim(), line)?);
            *at += 1;
        }
        return Ok(Value::Array(items));
    }
    mapping(lines, at, next.indent).map(Value::Object)
}

fn is_item(line: &Line<'_>) -> bool {
    line.text == "-" || line.text.starts_with("- ")
}

/// A `|` (literal) or `>` (folded) block: the lines indented past `indent`;
/// one final newline kept, or none with `-`.
fn block_scalar(lines: &[Line<'_>], at: &mut usize, indent: usize, style: &str) -> Value {
    let mut body: Vec<&str> = Vec::new();
    let start = lines.get(*at).map_or(indent + 1, |l| l.indent);
    while let Some(line) = lines.get(*at) {
        if line.indent <= indent {
            break;
        }
        body.push(
            line.raw
                .get(start.min(line.indent)..)
                .unwrap_or(line.text)
                .trim_end(),
        );
        *at += 1;
    }
    let mut text = if style.starts_with('|') {
        body.join("\n")
    } else {
        body.join(" ")
    };
    if !style.ends_with('-') && !text.is_empty() {
        text.push('\n');
    }
    Value::String(text)
}

/// A scalar, or a flow list of scalars (`[a, "b"]`).
fn scalar_or_flow(text: &str, line: &Line<'_>) -> Result<Value, String> {
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let items = inner.split(',').map(str::trim).filter(|s| !s.is_empty());
        return items
            .map(|item| scalar(item, line))
            .collect::<Result<_, _>>()
            .map(Value::Array);
    }
    scalar(text, line)
}

fn scalar(text: &str, line: &Line<'_>) -> Result<Value, String> {
    if let Some(unquoted) = quoted(text) {
        return unquoted
            .map(Value::String)
            .map_err(|e| format!("frontmatter line {}: {}", line.number, e));
    }
    let text = match text.find(" #") {
        Some(comment) => text[..comment].trim_end(),
        None => text,
    };
    if text.starts_with(['{', '&', '*', '!', '|', '>', '@', '`'].as_ref()) {
        return Err(format!(
            "frontmatter line {}: `{}` is YAML this reader does not take; quote it",
            line.number, text
        ));
    }
    Ok(match text {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "Null" | "NULL" | "~" | "" => Value::Null,
        _ => number(text).unwrap_or_else(|| Value::String(text.to_string())),
    })
}

/// An integer or a decimal number as YAML 1.2's core schema reads one.
fn number(text: &str) -> Option<Value> {
    let digits = text.strip_prefix(['-', '+'].as_ref()).unwrap_or(text);
    if digits.is_empty()
        || !digits.bytes().all(|b| {
            b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'-' || b == b'+'
        })
    {
        return None;
    }
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if let Ok(n) = text.parse::<i64>() {
        return Some(Value::from(n));
    }
    let n: f64 = text.parse().ok()?;
    serde_json::Number::from_f64(n).map(Value::Number)
}

/// A single- or double-quoted string, unquoted; `None` if not quoted.
fn quoted(text: &str) -> Option<Result<String, String>> {
    if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') {
        return Some(Ok(text[1..text.len() - 1].replace("''", "'")));
    }
    if !(text.len() >= 2 && text.starts_with('"') && text.ends_with('"')) {
        return None;
    }
    let mut out = String::new();
    let mut chars = text[1..text.len() - 1].chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            other => return Some(Err(format!("unknown escape \\{}", other.unwrap_or(' ')))),
        }
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // SEP-2640 "Frontmatter": every field, typed as a YAML parser types it.
    #[test]
    fn reads_the_agent_skills_subset() {
        let text = "---\nname: code-review\ndescription: >\n  Review a change\n  for style.\n\
            license: 'Apache-2.0'\n# a comment\nmetadata:\n  version: \"1.2\"\n  stable: true\n  \
            count: 3\nallowed-tools: [Read, Grep]\ntags:\n  - one\n  - two  # trailing\n\
            notes: |-\n  line one\n  line two\n---\n# Body\n";
        let front = parse(text).unwrap();
        assert_eq!(
            Value::Object(front),
            json!({
                "name": "code-review",
                "description": "Review a change for style.\n",
                "license": "Apache-2.0",
                "metadata": {"version": "1.2", "stable": true, "count": 3},
                "allowed-tools": ["Read", "Grep"],
                "tags": ["one", "two"],
                "notes": "line one\nline two",
            })
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(parse("# no frontmatter\n").is_err());
        assert!(parse("---\nname: x\n").is_err());
        assert!(parse("---\nname: {a: 1}\n---\n")
            .unwrap_err()
            .contains("line 2"));
        assert!(parse("---\njust text\n---\n").is_err());
        assert!(parse("---\nname: x\n   bad: indent\n---\n").is_err());
    }
}
