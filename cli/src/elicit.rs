//! Elicitation on the terminal: the server's questions on stderr, the
//! answers read from stdin, each checked against the field's type.
//!
//! Spec: client/elicitation (form and URL modes).

use std::io::{self, BufRead};

use serde_json::Value;
use tiny_mcp::{ElicitRequestFormParams, ElicitRequestParams, ElicitResult, Error, JsonObject};

/// Linux: stdin is a terminal when fd 0 is a tty or pts device.
#[cfg(target_os = "linux")]
pub fn stdin_is_terminal() -> bool {
    std::fs::read_link("/proc/self/fd/0")
        .map(|target| {
            let target = target.to_string_lossy().into_owned();
            target.starts_with("/dev/pts/") || target.starts_with("/dev/tty")
        })
        .unwrap_or(false)
}

/// Elsewhere (macOS, Windows): `std::io::IsTerminal`, when the compiler
/// has it (Rust 1.70, `cfg(mcp_is_terminal)` from build.rs).
#[cfg(all(not(target_os = "linux"), mcp_is_terminal))]
#[allow(clippy::incompatible_msrv)]
pub fn stdin_is_terminal() -> bool {
    use std::io::IsTerminal;
    io::stdin().is_terminal()
}

/// Elsewhere, built with Rust 1.63 to 1.69: never a terminal (no safe
/// way to ask), so `mcp` declares no elicitation.
#[cfg(all(not(target_os = "linux"), not(mcp_is_terminal)))]
pub fn stdin_is_terminal() -> bool {
    false
}

/// Asks on the terminal (stderr for the questions, stdin for answers).
/// When stdin ends before the form is filled, the request is cancelled.
pub fn elicit_on_terminal(request: ElicitRequestParams) -> Result<ElicitResult, Error> {
    match request {
        ElicitRequestParams::Url(url) => {
            eprintln!("mcp: the server asks: {}\n  open {}", url.message, url.url);
            Ok(match ask("  accept? [y/N] ")? {
                Some(answer) if answer.eq_ignore_ascii_case("y") => ElicitResult::accept(None),
                Some(_) => ElicitResult::decline(),
                None => ElicitResult::cancel(),
            })
        }
        ElicitRequestParams::Form(form) => {
            eprintln!("mcp: the server asks: {}", form.message);
            let values = match fill(&form)? {
                Some(values) => values,
                None => return Ok(ElicitResult::cancel()),
            };
            Ok(match ask("  send? [Y/n] ")? {
                Some(answer) if answer.eq_ignore_ascii_case("n") => ElicitResult::decline(),
                Some(_) => ElicitResult::accept(Some(values)),
                None => ElicitResult::cancel(),
            })
        }
        _ => Ok(ElicitResult::decline()),
    }
}

/// One line from stdin, trimmed, after `question` on stderr; `None` when
/// stdin has ended.
fn ask(question: &str) -> Result<Option<String>, Error> {
    eprint!("{}", question);
    let mut line = String::new();
    if io::stdin().lock().read_line(&mut line)? == 0 {
        eprintln!();
        return Ok(None);
    }
    Ok(Some(line.trim().to_string()))
}

/// The form's fields asked in the schema's order, each until its answer
/// has the field's type; `None` when stdin ended.
fn fill(form: &ElicitRequestFormParams) -> Result<Option<JsonObject>, Error> {
    let schema = &form.requested_schema;
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required = |name: &str| {
        schema["required"]
            .as_array()
            .map_or(false, |r| r.iter().any(|n| n.as_str() == Some(name)))
    };
    let mut values = JsonObject::new();
    for name in form.property_names() {
        let name = name.to_string();
        let field = &properties[&name];
        let needed = required(&name);
        loop {
            let answer = match ask(&question(&name, field, needed))? {
                Some(answer) => answer,
                None => return Ok(None),
            };
            match typed(field, &answer, needed) {
                Ok(Some(value)) => {
                    values.insert(name.clone(), value);
                    break;
                }
                Ok(None) => break,
                Err(why) => eprintln!("  {}", why),
            }
        }
    }
    Ok(Some(values))
}

/// `  name (integer, required) description [1) a 2) b] [default 3]: `
fn question(name: &str, field: &Value, required: bool) -> String {
    let kind = field["type"].as_str().unwrap_or("string");
    let mut text = format!(
        "  {} ({}{})",
        name,
        kind,
        if required { ", required" } else { "" }
    );
    if let Some(description) = field["description"].as_str() {
        text.push_str(&format!(" {}", description));
    }
    let options = choices(if kind == "array" {
        &field["items"]
    } else {
        field
    });
    if !options.is_empty() {
        let listed: Vec<String> = options
            .iter()
            .enumerate()
            .map(|(i, (value, title))| match title {
                Some(title) => format!("{}) {} ({})", i + 1, value, title),
                None => format!("{}) {}", i + 1, value),
            })
            .collect();
        let how = if kind == "array" {
            ", several with commas"
        } else {
            ""
        };
        text.push_str(&format!(" [{}{}]", listed.join(" "), how));
    }
    if let Some(default) = field.get("default") {
        text.push_str(&format!(" [default {}]", default));
    }
    text.push_str(": ");
    text
}

/// The answer as the field's type says: `Ok(None)` to leave an optional
/// field out, `Err` (why) to ask again.
fn typed(field: &Value, answer: &str, required: bool) -> Result<Option<Value>, String> {
    if answer.is_empty() {
        return match field.get("default") {
            Some(default) => Ok(Some(default.clone())),
            None if required => Err("an answer is needed".into()),
            None => Ok(None),
        };
    }
    let value = match field["type"].as_str().unwrap_or("string") {
        "integer" => answer
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{:?} is not an integer", answer))?,
        "number" => match serde_json::from_str::<Value>(answer) {
            Ok(number) if number.is_number() => number,
            _ => return Err(format!("{:?} is not a number", answer)),
        },
        "boolean" => match answer.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" => Value::Bool(true),
            "false" | "no" | "n" => Value::Bool(false),
            _ => return Err(format!("{:?} is not true or false", answer)),
        },
        "array" => several(field, answer)?,
        _ => chosen(field, answer)?,
    };
    Ok(Some(value))
}

/// A multi-select: comma-separated choices, as many as the schema allows.
fn several(field: &Value, answer: &str) -> Result<Value, String> {
    let picked = answer
        .split(',')
        .map(|item| chosen(&field["items"], item.trim()))
        .collect::<Result<Vec<Value>, String>>()?;
    let min = field["minItems"].as_u64().unwrap_or(0);
    let max = field["maxItems"].as_u64().unwrap_or(u64::MAX);
    let count = picked.len() as u64;
    if count < min || count > max {
        return Err(format!("pick from {} to {} of them", min, max));
    }
    Ok(Value::Array(picked))
}

/// A string, one of the field's choices when it has some: by value, by
/// title, or by number.
fn chosen(field: &Value, answer: &str) -> Result<Value, String> {
    let options = choices(field);
    if options.is_empty() {
        return Ok(Value::from(answer));
    }
    let number = answer.parse::<usize>().ok();
    options
        .iter()
        .enumerate()
        .find(|(i, (value, title))| {
            value == answer
                || title
                    .as_deref()
                    .map_or(false, |t| t.eq_ignore_ascii_case(answer))
                || number == Some(i + 1)
        })
        .map(|(_, (value, _))| Value::from(value.as_str()))
        .ok_or_else(|| format!("{:?} is not one of the choices", answer))
}

/// A field's choices and their titles: `enum` (with `enumNames`), or
/// `oneOf` / `anyOf` of `{"const", "title"}`.
fn choices(field: &Value) -> Vec<(String, Option<String>)> {
    if let Some(values) = field["enum"].as_array() {
        let names = field["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let title = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                Some((v.as_str()?.to_string(), title.map(str::to_string)))
            })
            .collect();
    }
    let listed = field["oneOf"]
        .as_array()
        .or_else(|| field["anyOf"].as_array());
    listed
        .into_iter()
        .flatten()
        .filter_map(|option| {
            let value = option["const"].as_str()?.to_string();
            Some((value, option["title"].as_str().map(str::to_string)))
        })
        .collect()
}
