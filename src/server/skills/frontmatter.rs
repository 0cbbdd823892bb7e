//! The YAML frontmatter of a `SKILL.md` as a JSON object (SEP-2640
//! "Frontmatter": verbatim, every field the author wrote).
//!
//! The library has no YAML dependency, so this reads the subset Agent
//! Skills frontmatter is written in: `key: value` mappings (nested by
//! indentation), block lists of scalars (`- item`), flow lists of plain
//! scalars (`[a, b]`), literal and folded block scalars (`|`, `>`, with `-`
//! to strip the final newline; blank and `#` lines inside them kept),
//! quoted and plain scalars (`true`, `false`, `null`, integers and decimal
//! numbers as YAML 1.2's core schema types them; strings otherwise), and
//! `#` comments. Whatever this reader might read differently from a YAML
//! parser (anchors, tags, flow mappings, `key: value` list items, a plain
//! value holding `: `, quotes inside flow lists, tabs, hexadecimal or
//! oversized numbers, uneven block indentation) is an error naming the
//! line: a skill is refused rather than served with frontmatter that
//! differs from its file.

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
    for (n, raw) in lines.enumerate() {
        if raw.trim_end() == "---" {
            closed = true;
            break;
        }
        let text = raw.trim();
        let indent = raw.len() - raw.trim_start().len();
        if raw[..indent].contains('\t') {
            return Err(format!(
                "frontmatter line {}: a tab in the indentation",
                n + 2
            ));
        }
        block.push(Line {
            number: n + 2,
            indent,
            text,
            raw,
            filler: text.is_empty() || text.starts_with('#'),
        });
    }
    if !closed {
        return Err("the frontmatter of SKILL.md has no closing `---` line".into());
    }
    let mut at = 0;
    let map = mapping(&block, &mut at, 0)?;
    skip_filler(&block, &mut at);
    match block.get(at) {
        Some(line) => Err(at_line(line, "unexpected indentation")),
        None => Ok(map),
    }
}

#[derive(Clone, Copy)]
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
    raw: &'a str,
    /// Blank or a comment: skipped, except inside a block scalar.
    filler: bool,
}

fn at_line(line: &Line<'_>, what: &str) -> String {
    format!("frontmatter line {}: {}", line.number, what)
}

fn skip_filler(lines: &[Line<'_>], at: &mut usize) {
    while lines.get(*at).map_or(false, |l| l.filler) {
        *at += 1;
    }
}

/// The next line that is not filler, without consuming it.
fn peek<'a>(lines: &[Line<'a>], at: usize) -> Option<Line<'a>> {
    lines[at.min(lines.len())..]
        .iter()
        .find(|l| !l.filler)
        .copied()
}

/// The mapping whose keys sit at `indent`, from line `at`.
fn mapping(lines: &[Line<'_>], at: &mut usize, indent: usize) -> Result<JsonObject, String> {
    let mut map = JsonObject::new();
    loop {
        skip_filler(lines, at);
        let line = match lines.get(*at) {
            Some(line) if line.indent >= indent => *line,
            _ => break,
        };
        if line.indent > indent {
            return Err(at_line(&line, "unexpected indentation"));
        }
        let (key, rest) = split_key(&line)?;
        *at += 1;
        let value = match rest {
            "" => nested(lines, at, indent)?,
            "|" | "|-" | ">" | ">-" => block_scalar(lines, at, indent, rest)?,
            _ => value(rest, &line)?,
        };
        if map.insert(key, value).is_some() {
            return Err(at_line(&line, "a key given twice"));
        }
    }
    Ok(map)
}

/// `key: rest`; the key plain (quoted keys are refused).
fn split_key<'a>(line: &Line<'a>) -> Result<(String, &'a str), String> {
    let text = line.text;
    let colon = text
        .find(": ")
        .or_else(|| text.strip_suffix(':').map(str::len));
    let key = match colon {
        Some(colon) => text[..colon].trim(),
        None => return Err(at_line(line, "expected `key: value`")),
    };
    let plain = !key.is_empty()
        && !key.starts_with(['"', '\'', '-', '?', '[', '{', '&', '*', '!'].as_ref());
    if !plain {
        return Err(at_line(
            line,
            "a key this reader does not take (quote-free keys only)",
        ));
    }
    Ok((key.to_string(), text[key.len() + 1..].trim()))
}

/// What follows a `key:` with nothing after it: a list, a mapping, or null.
fn nested(lines: &[Line<'_>], at: &mut usize, indent: usize) -> Result<Value, String> {
    let next = match peek(lines, *at) {
        Some(next) if next.indent > indent || (next.indent == indent && is_item(&next)) => next,
        _ => return Ok(Value::Null),
    };
    if !is_item(&next) {
        return mapping(lines, at, next.indent).map(Value::Object);
    }
    let mut items = Vec::new();
    loop {
        skip_filler(lines, at);
        let line = match lines.get(*at) {
            Some(line) if line.indent == next.indent && is_item(line) => *line,
            _ => break,
        };
        let item = line.text[1..].trim();
        if split_key(&Line { text: item, ..line }).is_ok() {
            return Err(at_line(
                &line,
                "a `key: value` list item; this reader takes scalar items only",
            ));
        }
        items.push(value(item, &line)?);
        *at += 1;
    }
    Ok(Value::Array(items))
}

fn is_item(line: &Line<'_>) -> bool {
    line.text == "-" || line.text.starts_with("- ")
}

/// A `|` (literal) or `>` (folded) block: the lines indented past `indent`,
/// blank and `#` lines included; one final newline kept, none with `-`.
fn block_scalar(
    lines: &[Line<'_>],
    at: &mut usize,
    indent: usize,
    style: &str,
) -> Result<Value, String> {
    let start = match peek(lines, *at) {
        Some(first) if first.indent > indent => first.indent,
        _ => return Ok(Value::String(String::new())),
    };
    let mut body: Vec<&str> = Vec::new();
    while let Some(line) = lines.get(*at) {
        let blank = line.text.is_empty();
        if !blank && line.indent <= indent {
            break;
        }
        if !blank && line.indent < start {
            return Err(at_line(
                line,
                "a block line indented less than the block's first",
            ));
        }
        body.push(if blank { "" } else { &line.raw[start..] });
        *at += 1;
    }
    while body.last() == Some(&"") {
        body.pop();
    }
    let mut text = if style.starts_with('|') {
        body.join("\n")
    } else {
        fold(&body)
    };
    if !style.ends_with('-') && !text.is_empty() {
        text.push('\n');
    }
    Ok(Value::String(text))
}

/// YAML folding of plain lines: a line break becomes a space, and each
/// blank line a newline.
fn fold(body: &[&str]) -> String {
    let mut out = String::new();
    let mut breaks = 0;
    for line in body {
        if line.is_empty() {
            breaks += 1;
            continue;
        }
        if !out.is_empty() {
            if breaks == 0 {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(breaks));
            }
        }
        breaks = 0;
        out.push_str(line.trim_end());
    }
    out
}

/// A value after `key: ` or `- `: a flow list of plain scalars, or a scalar,
/// either with a trailing `# comment`.
fn value(text: &str, line: &Line<'_>) -> Result<Value, String> {
    if text.starts_with(['"', '\''].as_ref()) {
        return quoted(text)
            .map(Value::String)
            .map_err(|e| at_line(line, &e));
    }
    let text = match text.find(" #") {
        Some(comment) => text[..comment].trim_end(),
        None => text,
    };
    if let Some(inner) = text.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| at_line(line, "a flow list without its `]`"))?;
        if inner.contains(['"', '\'', '[', '{', ':'].as_ref()) {
            return Err(at_line(
                line,
                "a flow list of plain scalars only (no quotes, no nesting)",
            ));
        }
        let items = inner.split(',').map(str::trim).filter(|s| !s.is_empty());
        return items
            .map(|item| plain(item, line))
            .collect::<Result<_, _>>()
            .map(Value::Array);
    }
    plain(text, line)
}

/// A plain scalar, typed as YAML 1.2's core schema types it.
fn plain(text: &str, line: &Line<'_>) -> Result<Value, String> {
    let refused = text
        .starts_with(['{', '&', '*', '!', '|', '>', '@', '`', '%', '-', '?', ']'].as_ref())
        && text != "-"
        && !text
            .starts_with(|c: char| c == '-' && text[1..].starts_with(|d: char| d.is_ascii_digit()));
    if refused || text.contains(": ") || text.ends_with(':') || text.contains('\t') {
        return Err(at_line(
            line,
            &format!("`{}` is YAML this reader does not take; quote it", text),
        ));
    }
    Ok(match text {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "Null" | "NULL" | "~" | "" => Value::Null,
        _ => match number(text) {
            Some(Ok(n)) => n,
            Some(Err(())) => {
                return Err(at_line(
                    line,
                    &format!("the number `{}` is not one JSON keeps; quote it", text),
                ))
            }
            None => Value::String(text.to_string()),
        },
    })
}

/// `Some` for a YAML 1.2 core number: its value, or `Err` for one that
/// would not survive JSON (an integer past 64 bits, hex, octal, `.inf`).
fn number(text: &str) -> Option<Result<Value, ()>> {
    let digits = text.strip_prefix(['-', '+'].as_ref()).unwrap_or(text);
    if digits.starts_with("0x")
        || digits.starts_with("0o")
        || digits.starts_with(".inf")
        || digits == ".nan"
    {
        return Some(Err(()));
    }
    let numeric = !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || b"._eE+-".contains(&b));
    if !numeric {
        return None;
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        return Some(text.parse::<i64>().map(Value::from).map_err(|_| ()));
    }
    let n: f64 = text.parse().ok()?;
    Some(serde_json::Number::from_f64(n).map(Value::Number).ok_or(()))
}

/// A single- or double-quoted string, unquoted, with at most a trailing
/// `# comment` after it.
fn quoted(text: &str) -> Result<String, String> {
    let quote = text.chars().next().unwrap_or('"');
    let mut out = String::new();
    let mut chars = text[1..].char_indices();
    let end = loop {
        let (i, c) = chars
            .next()
            .ok_or("a quoted string without its closing quote")?;
        match (quote, c) {
            ('\'', '\'') if text[1 + i + 1..].starts_with('\'') => {
                out.push('\'');
                chars.next();
            }
            (q, c) if c == q => break 1 + i + 1,
            ('"', '\\') => match chars.next().map(|(_, e)| e) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                other => return Err(format!("unknown escape \\{}", other.unwrap_or(' '))),
            },
            (_, c) => out.push(c),
        }
    };
    let rest = text[end..].trim_start();
    if rest.is_empty() || (rest.starts_with('#') && text[end..].starts_with(char::is_whitespace)) {
        Ok(out)
    } else {
        Err(format!("`{}` after a quoted string", rest))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // SEP-2640 "Frontmatter": every field, typed as a YAML parser types it
    // (the expected values are PyYAML's and js-yaml's for this text).
    #[test]
    fn reads_the_agent_skills_subset() {
        let text = "---\nname: code-review # the name\ndescription: >\n  Review a change\n  for style.\n\n  \
            Second paragraph.\nlicense: 'Apache-2.0'\n# a comment\nmetadata:\n  version: \"1.2\" # quoted\n  \
            stable: true\n  count: 3\nallowed-tools: [Read, Grep] # tools\ntags:\n  - one\n  - two  # trailing\n\
            notes: |-\n  # Usage\n  line one\n\n  line two\n---\n# Body\n";
        let front = parse(text).unwrap();
        assert_eq!(
            Value::Object(front),
            json!({
                "name": "code-review",
                "description": "Review a change for style.\nSecond paragraph.\n",
                "license": "Apache-2.0",
                "metadata": {"version": "1.2", "stable": true, "count": 3},
                "allowed-tools": ["Read", "Grep"],
                "tags": ["one", "two"],
                "notes": "# Usage\nline one\n\nline two",
            })
        );
    }

    // What a YAML parser would read differently is refused, not guessed.
    #[test]
    fn refuses_what_it_cannot_read() {
        let refused = [
            "# no frontmatter\n",
            "---\nname: x\n",
            "---\nname: {a: 1}\n---\n",
            "---\njust text\n---\n",
            "---\nname: x\n   bad: indent\n---\n",
            "---\ndescription: Use when: the user asks\n---\n",
            "---\ntags: [\"a, b\", c]\n---\n",
            "---\nauthors:\n  - name: Alice\n---\n",
            "---\n\"a: b\": c\n---\n",
            "---\nname: \"x\n---\n",
            "---\nname: 'a' 'b'\n---\n",
            "---\nn: 12345678901234567890\n---\n",
            "---\nv: 0x1F\n---\n",
            "---\n\tname: x\n---\n",
            "---\nd: |\n    deep\n  shallow\n---\n",
            "---\nd: - d\n---\n",
            "---\nname: a\nname: b\n---\n",
        ];
        for text in refused {
            assert!(
                parse(text).is_err(),
                "{:?} was read as {:?}",
                text,
                parse(text)
            );
        }
        assert!(parse("---\nname: {a: 1}\n---\n")
            .unwrap_err()
            .contains("line 2"));
    }
}
