//! The check of a client's answer to the server's own form elicitation,
//! before the handler sees it (ELIC-8: servers SHOULD validate elicitation
//! responses against the requested schema), in both eras: the answer to a
//! 2025-11-25 `elicitation/create` request, and an entry of a 2026-07-28
//! retry's `inputResponses` (or of a task's `tasks/update`).
//!
//! A form's `requestedSchema` is flat: an object whose `properties` are
//! primitives (`PrimitiveSchemaDefinition`, client/elicitation
//! 2025-11-25). The light check of tool arguments (`server/validate.rs`)
//! reads its keywords: `required`, each property's `type`, `enum` (also of
//! a multi-select's `items`), `minLength`/`maxLength` (in characters),
//! `minimum`/`maximum`, `minItems`/`maxItems`. This module adds what a
//! form has beyond it: titled choices (`oneOf`, or a multi-select's
//! `items.anyOf`, of `{"const", "title"}`) and the string `format`s
//! `email`, `uri`, `date`, `date-time`. A property the schema does not
//! name is accepted, as the TypeScript SDK accepts it (its JSON Schema
//! validator gets the requested schema, which says nothing of other
//! properties), when its value is one a form answer may hold
//! (`ElicitResult.content`: a string, a number, a boolean or a list of
//! strings). An `accept` without `content` is checked as an empty form, so
//! a required field is missing (the TypeScript SDK checks only an answer
//! with content). Decline and cancel answers, and URL-mode elicitations,
//! are not checked.
//!
//! The answers that come back in 2026-07-28 are matched to requests by
//! key: the handler asks again, with the same request under the same key,
//! on every run (DESIGN.md §9), so the schema an answer is checked against
//! is the one the handler asks with in this run, not a copy carried in
//! `requestState`.

use serde_json::Value;

use super::InputRequest;
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::protocol::methods;
use crate::server::validate::Schema;

/// How many characters of a value (or a field's name) a message shows.
const SHOWN_CHARS: usize = 64;

/// The schema an answer to `request` must meet: the `requestedSchema` of
/// a form-mode `elicitation/create`; `None` for any other request.
pub(crate) fn requested_schema(request: &InputRequest) -> Option<&Value> {
    if request.method != methods::ELICITATION_CREATE {
        return None;
    }
    match request.params.get("mode").and_then(Value::as_str) {
        None | Some("form") => request.params.get("requestedSchema"),
        Some(_) => None,
    }
}

/// The keys and schemas of the form elicitations among `requests`, kept
/// to check their answers once the requests are gone.
pub(crate) fn requested_schemas(requests: &[(String, InputRequest)]) -> Vec<(String, Value)> {
    let form = |(key, request): &(String, InputRequest)| {
        Some((key.clone(), requested_schema(request)?.clone()))
    };
    requests.iter().filter_map(form).collect()
}

/// Checks each of `answers` that answers one of `schemas`' forms.
///
/// # Errors
///
/// As [`check_answer`], naming the input's key.
pub(crate) fn check_answers(
    schemas: &[(String, Value)],
    answers: &JsonObject,
) -> Result<(), Error> {
    for (key, schema) in schemas {
        if let Some(answer) = answers.get(key) {
            check_answer(schema, answer, Some(key))?;
        }
    }
    Ok(())
}

/// Checks `answer`, the client's `ElicitResult` for a form that asked for
/// `schema`; `key` is the input's, named in the message when the handler
/// chose it ([`request_inputs`](crate::RequestContext::request_inputs)).
///
/// # Errors
///
/// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) naming
/// the field and the rule it breaks, when the answer accepts content that
/// does not fit `schema` (as the TypeScript SDK, which answers
/// `InvalidParams`); a value is shown cut to 64 characters.
pub(crate) fn check_answer(schema: &Value, answer: &Value, key: Option<&str>) -> Result<(), Error> {
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return Ok(());
    }
    let checked = match answer.get("content") {
        None | Some(Value::Null) => check_content(schema, &JsonObject::new()),
        Some(Value::Object(content)) => check_content(schema, content),
        Some(_) => Err("content must be an object".to_string()),
    };
    checked.map_err(|why| match key {
        Some(key) => Error::invalid_params(format!("elicitation answer {}: {}", text(key), why)),
        None => Error::invalid_params(format!("elicitation answer: {}", why)),
    })
}

/// A form's values against its schema: the first problem, spelled out.
fn check_content(schema: &Value, content: &JsonObject) -> Result<(), String> {
    if let Some(schema) = schema.as_object() {
        Schema::compile(schema).check_form(content)?;
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, value) in content {
        let field = properties.and_then(|p| p.get(name));
        check_field(field, value).map_err(|rule| format!("field {} {}", text(name), rule))?;
    }
    Ok(())
}

/// What `validate` leaves out: a value a form holds, a titled choice, a
/// string's format.
fn check_field(field: Option<&Value>, value: &Value) -> Result<(), String> {
    let wrong = match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => return check_string(field, value),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let choices = field.and_then(|field| field.get("items"));
            return items
                .iter()
                .try_for_each(|item| check_string(choices, item));
        }
        Value::Null => "null",
        Value::Object(_) => "an object",
        Value::Array(_) => "a list holding other values",
    };
    Err(format!(
        "must be a string, a number, a boolean or a list of strings, not {}",
        wrong
    ))
}

/// A string's titled choice (`oneOf`/`anyOf` of `{"const", "title"}`,
/// SEP-1330) and format; any other value passes.
fn check_string(field: Option<&Value>, value: &Value) -> Result<(), String> {
    let (field, string) = match (field, value) {
        (Some(field), Value::String(string)) => (field, string.as_str()),
        _ => return Ok(()),
    };
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(choices)) = field.get(keyword) {
            let listed =
                |choice: &Value| choice.get("const").and_then(Value::as_str) == Some(string);
            if !choices.iter().any(listed) {
                return Err(format!(
                    "must be one of its {} choices, not {}",
                    keyword,
                    text(string)
                ));
            }
        }
    }
    let format = field.get("format").and_then(Value::as_str).unwrap_or("");
    let fits = match format {
        "email" => is_email(string),
        "uri" => is_uri(string),
        "date" => is_date(string.as_bytes()),
        "date-time" => is_date_time(string.as_bytes()),
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "must be of format {:?}, not {}",
            format,
            text(string)
        ))
    }
}

/// `string` quoted (escaped as Rust writes it) and cut to [`SHOWN_CHARS`]
/// characters.
fn text(string: &str) -> String {
    let escaped = format!("{:?}", string);
    match escaped.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &escaped[..at]),
        None => escaped,
    }
}

/// RFC 5321 `Mailbox` as JSON Schema's `email` (and the TypeScript SDK's
/// validator) reads it: a dot-atom, `@`, a domain of two labels or more.
fn is_email(string: &str) -> bool {
    let (local, domain) = match string.rsplit_once('@') {
        Some(parts) => parts,
        None => return false,
    };
    let atom = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~-".contains(&b);
    let local_fits = local
        .split('.')
        .all(|part| !part.is_empty() && part.bytes().all(atom));
    let label = |part: &str| {
        !part.is_empty()
            && part.len() <= 63
            && !part.starts_with('-')
            && !part.ends_with('-')
            && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    local_fits && domain.contains('.') && domain.split('.').all(label)
}

/// RFC 3986 `URI`: a scheme, `:`, then only the characters a URI holds,
/// each `%` followed by two hex digits.
fn is_uri(string: &str) -> bool {
    let (scheme, rest) = match string.split_once(':') {
        Some(parts) => parts,
        None => return false,
    };
    let mut scheme = scheme.bytes();
    let scheme_fits = scheme.next().map_or(false, |b| b.is_ascii_alphabetic())
        && scheme.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    let rest = rest.as_bytes();
    scheme_fits
        && rest.iter().enumerate().all(|(i, b)| match b {
            b'%' => rest
                .get(i + 1..i + 3)
                .map_or(false, |hex| hex.iter().all(u8::is_ascii_hexdigit)),
            _ => b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(b),
        })
}

/// RFC 3339 `full-date`: `YYYY-MM-DD`, a day its month has.
fn is_date(bytes: &[u8]) -> bool {
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    match (
        digits(&bytes[..4]),
        digits(&bytes[5..7]),
        digits(&bytes[8..]),
    ) {
        (Some(year), Some(month), Some(day)) => {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            let days = match month {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            (1..=12).contains(&month) && (1..=days).contains(&day)
        }
        _ => false,
    }
}

/// RFC 3339 `date-time`: a date, `T` (or `t`, or a space), `hh:mm:ss`, a
/// fraction if any, then `Z` or an offset `+hh:mm`.
fn is_date_time(bytes: &[u8]) -> bool {
    if bytes.len() < 20 || !is_date(&bytes[..10]) || !matches!(bytes[10], b'T' | b't' | b' ') {
        return false;
    }
    let clock = (
        digits(&bytes[11..13]),
        digits(&bytes[14..16]),
        digits(&bytes[17..19]),
    );
    let clock_fits = bytes[13] == b':'
        && bytes[16] == b':'
        && matches!(clock, (Some(h), Some(m), Some(s)) if h <= 23 && m <= 59 && s <= 60);
    let mut zone = &bytes[19..];
    if zone.first() == Some(&b'.') {
        let fraction = zone[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if fraction == 0 {
            return false;
        }
        zone = &zone[1 + fraction..];
    }
    clock_fits
        && match zone {
            [b'Z' | b'z'] => true,
            [b'+' | b'-', _, _, b':', _, _] => matches!(
                (digits(&zone[1..3]), digits(&zone[4..])),
                (Some(h), Some(m)) if h <= 23 && m <= 59
            ),
            _ => false,
        }
}

/// The number `bytes` write in decimal digits, if they are all digits.
fn digits(bytes: &[u8]) -> Option<u32> {
    bytes.iter().try_fold(0u32, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{ElicitRequestFormParams, ElicitRequestUrlParams};

    /// The message of the check of `content` (accepted) against `schema`,
    /// `None` when it passes.
    fn problem(schema: Value, content: Value) -> Option<String> {
        let answer = json!({"action": "accept", "content": content});
        check_answer(&schema, &answer, None)
            .err()
            .map(|e| e.to_string())
    }

    /// The message of the check of `value` as the form's one field `f`.
    fn field(schema: Value, value: Value) -> Option<String> {
        problem(
            json!({"type": "object", "properties": {"f": schema}}),
            json!({ "f": value }),
        )
    }

    fn refused(message: Option<String>, words: &[&str]) {
        let message = message.expect("the answer was refused");
        assert!(message.starts_with("elicitation answer"), "{}", message);
        for word in words {
            assert!(message.contains(word), "{:?} not in {}", word, message);
        }
    }

    // ELIC-8, client/elicitation "Requested Schema": a required field must
    // be there; an accept without content is an empty form.
    #[test]
    fn required_fields_must_be_there() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]});
        assert_eq!(problem(schema.clone(), json!({"name": "Ada"})), None);
        let missing = problem(schema.clone(), json!({}));
        refused(missing, &["field \"name\" is required"]);
        let empty = json!({"action": "accept"});
        assert!(check_answer(&schema, &empty, None).is_err());
        let open = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert!(check_answer(&open, &empty, None).is_ok());
        let wrong = json!({"action": "accept", "content": [1]});
        let message = check_answer(&open, &wrong, None).err();
        refused(message.map(|e| e.to_string()), &["content"]);
    }

    // ELIC-8: decline and cancel carry nothing to check.
    #[test]
    fn decline_and_cancel_are_not_checked() {
        let schema = json!({"type": "object", "properties": {}, "required": ["name"]});
        for action in ["decline", "cancel"] {
            let answer = json!({"action": action, "content": {"name": 1}});
            assert!(check_answer(&schema, &answer, None).is_ok(), "{}", action);
        }
    }

    // client/elicitation "Requested Schema": each primitive type.
    #[test]
    fn types_are_checked() {
        let of = |name: &str| json!({ "type": name });
        let wrong = "field \"f\" must be of type";
        assert_eq!(field(of("string"), json!("x")), None);
        refused(
            field(of("string"), json!(1)),
            &[wrong, "\"string\", not number"],
        );
        assert_eq!(field(of("number"), json!(2.5)), None);
        refused(field(of("number"), json!("2")), &[wrong, "\"number\""]);
        assert_eq!(field(of("integer"), json!(2)), None);
        assert_eq!(field(of("integer"), json!(2.0)), None);
        refused(field(of("integer"), json!(2.5)), &[wrong, "\"integer\""]);
        assert_eq!(field(of("boolean"), json!(false)), None);
        refused(field(of("boolean"), json!("true")), &[wrong, "\"boolean\""]);
        refused(field(of("string"), json!(null)), &[wrong, "not null"]);
    }

    // SEP-1330: single-select enums, untitled, titled and legacy.
    #[test]
    fn single_select_choices() {
        let untitled = json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]});
        assert_eq!(field(untitled.clone(), json!("b")), None);
        refused(
            field(untitled, json!("c")),
            &["must be one of [\"a\",\"b\"]"],
        );
        let titled = json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]});
        assert_eq!(field(titled.clone(), json!("a")), None);
        refused(
            field(titled, json!("A")),
            &["one of its oneOf choices, not \"A\""],
        );
    }

    // SEP-1330: multi-select enums, untitled and titled, with their counts.
    #[test]
    fn multi_select_choices() {
        let untitled = json!({"type": "array", "minItems": 1, "maxItems": 2,
                              "items": {"type": "string", "enum": ["a", "b", "c"]}});
        assert_eq!(field(untitled.clone(), json!(["a", "c"])), None);
        let cases = [
            (json!(["a", "d"]), "field \"f[1]\" must be one of"),
            (json!([]), "must have at least 1 items, not 0"),
            (json!(["a", "b", "c"]), "must have at most 2 items"),
            (json!(["a", 1]), "field \"f[1]\" must be of type \"string\""),
            (json!("a"), "must be of type \"array\""),
        ];
        for (value, words) in cases.iter() {
            refused(field(untitled.clone(), value.clone()), &[words]);
        }
        let titled = json!({"type": "array",
                            "items": {"anyOf": [{"const": "x", "title": "X"}]}});
        assert_eq!(field(titled.clone(), json!(["x"])), None);
        let message = field(titled, json!(["y"]));
        refused(
            message,
            &["field \"f\" must be one of its anyOf choices, not \"y\""],
        );
    }

    // client/elicitation "Requested Schema": string lengths count
    // characters, not bytes.
    #[test]
    fn string_lengths() {
        let schema = json!({"type": "string", "minLength": 2, "maxLength": 3});
        assert_eq!(field(schema.clone(), json!("\u{e9}t\u{e9}")), None);
        refused(
            field(schema.clone(), json!("a")),
            &["at least 2 characters, not 1"],
        );
        refused(
            field(schema, json!("abcd")),
            &["at most 3 characters, not 4"],
        );
    }

    // client/elicitation "Requested Schema": number bounds.
    #[test]
    fn number_bounds() {
        let schema = json!({"type": "integer", "minimum": 0, "maximum": 120});
        assert_eq!(field(schema.clone(), json!(120)), None);
        refused(
            field(schema.clone(), json!(-1)),
            &["must be at least 0, not -1"],
        );
        refused(field(schema, json!(121)), &["must be at most 120, not 121"]);
        let ratio = json!({"type": "number", "minimum": 0.5});
        refused(field(ratio, json!(0.25)), &["must be at least 0.5"]);
    }

    // client/elicitation "Requested Schema": the four string formats.
    #[test]
    fn string_formats() {
        let cases = [
            ("email", "ada@example.com", true),
            ("email", "a.b+c@mail.example.org", true),
            ("email", "ada@localhost", false),
            ("email", "ada.example.com", false),
            ("email", "a b@example.com", false),
            ("email", "ada@-x.com", false),
            ("uri", "https://example.com/a?b=c#d", true),
            ("uri", "mailto:ada@example.com", true),
            ("uri", "urn:isbn:0451450523", true),
            ("uri", "/relative/path", false),
            ("uri", "https://example.com/a b", false),
            ("uri", "https://example.com/%zz", false),
            ("uri", "1http://x", false),
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("date", "2024-13-01", false),
            ("date", "2024-1-01", false),
            ("date-time", "2024-02-29T12:30:00Z", true),
            ("date-time", "2024-02-29t12:30:00.125+05:30", true),
            ("date-time", "2024-02-29T23:59:60-00:00", true),
            ("date-time", "2024-02-29T12:30:00", false),
            ("date-time", "2024-02-29T24:00:00Z", false),
            ("date-time", "2024-02-29T12:30:00.Z", false),
            ("date-time", "2024-02-29T12:30:00+0530", false),
            ("date-time", "2024-02-29T12:30:00\u{e9}Z", false),
        ];
        for (format, value, fits) in cases.iter() {
            let schema = json!({"type": "string", "format": format});
            let found = field(schema, json!(value));
            assert_eq!(
                found.is_none(),
                *fits,
                "{} {:?}: {:?}",
                format,
                value,
                found
            );
            if let Some(message) = found {
                let rule = format!("must be of format {:?}, not {:?}", format, value);
                assert!(message.contains(&rule), "{}", message);
            }
        }
        let other = json!({"type": "string", "format": "hostname"});
        assert_eq!(field(other, json!("not checked")), None);
    }

    // Properties the schema does not name pass, as in the TypeScript SDK,
    // when they hold a value a form answer may hold.
    #[test]
    fn other_properties_pass_when_they_hold_form_values() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let extra = json!({"name": "Ada", "n": 1, "b": true, "l": ["x"], "s": "t"});
        assert_eq!(problem(schema.clone(), extra), None);
        let object = problem(schema.clone(), json!({"o": {"a": 1}}));
        refused(object, &["field \"o\" must be a string", "not an object"]);
        refused(
            problem(schema, json!({"l": [1]})),
            &["\"l\"", "not a list holding other values"],
        );
    }

    // A message shows at most 64 characters of a value or of a name the
    // client chose.
    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(10_000);
        // 64 characters of the escaped text: its opening quote and 63 more.
        let cut = format!("\"{}…", "x".repeat(63));
        let schema = json!({"type": "string", "format": "email"});
        let message = field(schema, json!(long)).expect("refused");
        assert!(message.contains(&cut) && message.len() < 200, "{}", message);
        let open = json!({"type": "object", "properties": {}});
        let message = problem(open, json!({ long: {} })).expect("refused");
        assert!(message.contains(&cut) && message.len() < 200, "{}", message);
        // Escapes count as what is shown, not as the characters they stand for.
        let controls = "\u{1}".repeat(1_000);
        let schema = json!({"type": "string", "format": "email"});
        let message = field(schema, json!(controls)).expect("refused");
        assert!(message.len() < 200, "{}", message);
        // A number and a schema's member name are cut too.
        let huge = json!({"type": "object", "properties": {"d": {"type": "number", "maximum": 5}}});
        let message = problem(huge, json!({"d": 1e308})).expect("refused");
        assert!(message.len() < 200, "{}", message);
        let name = "n".repeat(1_000);
        let named = json!({"type": "object", "properties": { name.clone(): {"type": "number"} }});
        let message = problem(named, json!({ name: "x" })).expect("refused");
        assert!(message.len() < 200, "{}", message);
    }

    // The schema is a form elicitation's; other requests are not checked.
    #[test]
    fn only_form_elicitations_have_a_schema() {
        let schema = json!({"type": "object", "properties": {}});
        let form = InputRequest::elicit(ElicitRequestFormParams::new("m", schema.clone()));
        assert_eq!(requested_schema(&form), Some(&schema));
        let mut bare = form.clone();
        bare.params.as_object_mut().map(|p| p.remove("mode"));
        assert_eq!(requested_schema(&bare), Some(&schema));
        let url = InputRequest::elicit(ElicitRequestUrlParams::new("m", "https://x", "e"));
        assert_eq!(requested_schema(&url), None);
        assert_eq!(requested_schema(&InputRequest::list_roots()), None);
        let requests = vec![("a".to_string(), form), ("b".to_string(), url)];
        let schemas = requested_schemas(&requests);
        assert_eq!(schemas, vec![("a".to_string(), schema)]);
        let mut answers = JsonObject::new();
        answers.insert(
            "a".into(),
            json!({"action": "accept", "content": {"n": {}}}),
        );
        answers.insert(
            "b".into(),
            json!({"action": "accept", "content": {"n": {}}}),
        );
        let message = check_answers(&schemas, &answers).unwrap_err().to_string();
        assert!(
            message.starts_with("elicitation answer \"a\": field \"n\""),
            "{}",
            message
        );
    }
}
