//! The check of a client's answer to the server's own form elicitation,
//! before the handler sees it (ELIC-8: servers SHOULD validate elicitation
//! responses against the requested schema), in both eras: the answer to a
//! 2025-11-25 `elicitation/create` request, and an entry of a 2026-07-28
//! retry's `inputResponses`.
//!
//! A form's `requestedSchema` is flat: an object whose `properties` are
//! primitives (`PrimitiveSchemaDefinition`, client/elicitation
//! 2025-11-25). Checked: `required`; each property's `type` (`string`,
//! `number`, `integer`, `boolean`, `array`); its choices (`enum`, or
//! `oneOf`/`anyOf` of `{"const", "title"}`; of each item for a
//! multi-select `array`); `minLength`/`maxLength` (in characters);
//! `format` `email`, `uri`, `date`, `date-time`; `minimum`/`maximum`;
//! `minItems`/`maxItems`. A property the schema does not name is accepted,
//! as the TypeScript SDK accepts it (its JSON Schema validator gets the
//! requested schema, which says nothing of other properties), when its
//! value is one a form answer may hold (`ElicitResult.content`: a string,
//! a number, a boolean or a list of strings). An `accept` without
//! `content` is checked as an empty form, so a required field is missing
//! (the TypeScript SDK checks only an answer with content). Decline and
//! cancel answers, and URL-mode elicitations, are not checked.
//!
//! `server/validate.rs` (tool arguments) does not fit: it checks no
//! `oneOf`/`anyOf` choices and no string formats, and reads a schema once
//! per tool; a form's schema comes with each request and is flat.
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
        Some(other) => Err(format!("content must be an object, not {}", shown(other))),
    };
    checked.map_err(|why| match key {
        Some(key) => Error::invalid_params(format!("elicitation answer {}: {}", text(key), why)),
        None => Error::invalid_params(format!("elicitation answer: {}", why)),
    })
}

/// A form's values against its schema: the first problem, spelled out.
fn check_content(schema: &Value, content: &JsonObject) -> Result<(), String> {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !content.contains_key(name) {
                return Err(format!("field {} is required (required)", text(name)));
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, value) in content {
        let checked = match properties.and_then(|p| p.get(name)) {
            Some(field) => check_field(field, value),
            None => form_value(value),
        };
        checked.map_err(|rule| format!("field {} {}", text(name), rule))?;
    }
    Ok(())
}

fn check_field(field: &Value, value: &Value) -> Result<(), String> {
    match field.get("type").and_then(Value::as_str) {
        Some("string") => check_string(field, value),
        Some("number") => check_number(field, value, "a number"),
        Some("integer") => check_number(field, value, "an integer"),
        Some("boolean") if value.is_boolean() => Ok(()),
        Some("boolean") => Err(wrong_type("a boolean", value)),
        Some("array") => check_array(field, value),
        // No type, or one a form does not have: any value a form holds.
        _ => form_value(value),
    }
}

fn check_string(field: &Value, value: &Value) -> Result<(), String> {
    let string = value
        .as_str()
        .ok_or_else(|| wrong_type("a string", value))?;
    check_choice(field, value).map_err(|keyword| {
        format!(
            "must be one of its choices ({}), not {}",
            keyword,
            shown(value)
        )
    })?;
    if field.get("minLength").is_some() || field.get("maxLength").is_some() {
        let length = string.chars().count() as f64;
        within(
            field,
            length,
            ["minLength", "maxLength"],
            " characters long",
        )?;
    }
    let (fits, what) = match field.get("format").and_then(Value::as_str) {
        Some("email") => (is_email(string), "an email address"),
        Some("uri") => (is_uri(string), "an absolute URI"),
        Some("date") => (is_date(string.as_bytes()), "a date (YYYY-MM-DD)"),
        Some("date-time") => (is_date_time(string.as_bytes()), "an RFC 3339 date-time"),
        _ => return Ok(()),
    };
    if fits {
        Ok(())
    } else {
        Err(format!("must be {} (format), not {}", what, shown(value)))
    }
}

fn check_number(field: &Value, value: &Value, what: &str) -> Result<(), String> {
    let integer = what == "an integer";
    match value.as_f64() {
        Some(n) if !integer || n.fract() == 0.0 => within(field, n, ["minimum", "maximum"], ""),
        _ => Err(wrong_type(what, value)),
    }
}

/// A multi-select: a list of strings, each one of the items' choices.
fn check_array(field: &Value, value: &Value) -> Result<(), String> {
    let what = "a list of strings";
    let items = value.as_array().ok_or_else(|| wrong_type(what, value))?;
    within(
        field,
        items.len() as f64,
        ["minItems", "maxItems"],
        " items",
    )?;
    for item in items {
        if !item.is_string() {
            return Err(format!(
                "must be {} (type), not holding {}",
                what,
                shown(item)
            ));
        }
        if let Some(choices) = field.get("items") {
            check_choice(choices, item).map_err(|keyword| {
                format!(
                    "may hold only its choices (items.{}), not {}",
                    keyword,
                    shown(item)
                )
            })?;
        }
    }
    Ok(())
}

/// `Err` with the keyword when `field` lists its choices (`enum`, or
/// `oneOf`/`anyOf` of `{"const"}`) and `value` is none of them.
fn check_choice(field: &Value, value: &Value) -> Result<(), &'static str> {
    if let Some(Value::Array(listed)) = field.get("enum") {
        return if listed.contains(value) {
            Ok(())
        } else {
            Err("enum")
        };
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(titled)) = field.get(keyword) {
            let found = titled
                .iter()
                .any(|choice| choice.get("const") == Some(value));
            return if found { Ok(()) } else { Err(keyword) };
        }
    }
    Ok(())
}

/// `n` against the bounds `field` gives under `keywords` (low, high).
fn within(field: &Value, n: f64, keywords: [&str; 2], unit: &str) -> Result<(), String> {
    let [low, high] = keywords;
    if let Some(min) = field
        .get(low)
        .and_then(Value::as_f64)
        .filter(|min| n < *min)
    {
        return Err(format!(
            "must be at least {}{} ({}), not {}",
            min, unit, low, n
        ));
    }
    if let Some(max) = field
        .get(high)
        .and_then(Value::as_f64)
        .filter(|max| n > *max)
    {
        return Err(format!(
            "must be at most {}{} ({}), not {}",
            max, unit, high, n
        ));
    }
    Ok(())
}

/// A value `ElicitResult.content` may hold: a string, a number, a boolean
/// or a list of strings.
fn form_value(value: &Value) -> Result<(), String> {
    let fits = match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(wrong_type(
            "a string, a number, a boolean or a list of strings",
            value,
        ))
    }
}

fn wrong_type(what: &str, value: &Value) -> String {
    format!("must be {} (type), not {}", what, shown(value))
}

/// `value` for a message: a string quoted and cut to [`SHOWN_CHARS`]
/// characters, a list or an object named, not written out.
fn shown(value: &Value) -> String {
    match value {
        Value::String(string) => text(string),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
        // null, a boolean or a number: short.
        short => short.to_string(),
    }
}

/// `string` quoted (escaped as Rust writes it) and cut to [`SHOWN_CHARS`]
/// characters.
fn text(string: &str) -> String {
    match string.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{:?}…", &string[..at]),
        None => format!("{:?}", string),
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
        refused(
            problem(schema.clone(), json!({})),
            &["\"name\"", "(required)"],
        );
        let empty = json!({"action": "accept"});
        assert!(check_answer(&schema, &empty, None).is_err());
        let open = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert!(check_answer(&open, &empty, None).is_ok());
        let wrong = json!({"action": "accept", "content": [1]});
        refused(
            check_answer(&open, &wrong, None)
                .err()
                .map(|e| e.to_string()),
            &["content"],
        );
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
        assert_eq!(field(of("string"), json!("x")), None);
        refused(
            field(of("string"), json!(1)),
            &["\"f\"", "a string (type)", "not 1"],
        );
        assert_eq!(field(of("number"), json!(2.5)), None);
        refused(field(of("number"), json!("2")), &["a number (type)"]);
        assert_eq!(field(of("integer"), json!(2)), None);
        assert_eq!(field(of("integer"), json!(2.0)), None);
        refused(
            field(of("integer"), json!(2.5)),
            &["an integer (type)", "not 2.5"],
        );
        assert_eq!(field(of("boolean"), json!(false)), None);
        refused(field(of("boolean"), json!("true")), &["a boolean (type)"]);
        refused(field(of("string"), json!(null)), &["not null"]);
    }

    // SEP-1330: single-select enums, untitled, titled and legacy.
    #[test]
    fn single_select_choices() {
        let untitled = json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]});
        assert_eq!(field(untitled.clone(), json!("b")), None);
        refused(field(untitled, json!("c")), &["(enum)", "\"c\""]);
        let titled = json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]});
        assert_eq!(field(titled.clone(), json!("a")), None);
        refused(field(titled, json!("A")), &["(oneOf)"]);
    }

    // SEP-1330: multi-select enums, untitled and titled, with their counts.
    #[test]
    fn multi_select_choices() {
        let untitled = json!({"type": "array", "minItems": 1, "maxItems": 2,
                              "items": {"type": "string", "enum": ["a", "b", "c"]}});
        assert_eq!(field(untitled.clone(), json!(["a", "c"])), None);
        refused(
            field(untitled.clone(), json!(["a", "d"])),
            &["(items.enum)", "\"d\""],
        );
        refused(
            field(untitled.clone(), json!([])),
            &["at least 1 items (minItems), not 0"],
        );
        refused(
            field(untitled.clone(), json!(["a", "b", "c"])),
            &["(maxItems)"],
        );
        refused(field(untitled.clone(), json!(["a", 1])), &["(type)"]);
        refused(field(untitled, json!("a")), &["a list of strings (type)"]);
        let titled = json!({"type": "array",
                            "items": {"anyOf": [{"const": "x", "title": "X"}]}});
        assert_eq!(field(titled.clone(), json!(["x"])), None);
        refused(field(titled, json!(["y"])), &["(items.anyOf)"]);
    }

    // client/elicitation "Requested Schema": string lengths count
    // characters, not bytes.
    #[test]
    fn string_lengths() {
        let schema = json!({"type": "string", "minLength": 2, "maxLength": 3});
        assert_eq!(field(schema.clone(), json!("\u{e9}t\u{e9}")), None);
        refused(field(schema.clone(), json!("a")), &["(minLength)", "not 1"]);
        refused(
            field(schema, json!("abcd")),
            &["at most 3 characters long (maxLength)"],
        );
    }

    // client/elicitation "Requested Schema": number bounds.
    #[test]
    fn number_bounds() {
        let schema = json!({"type": "integer", "minimum": 0, "maximum": 120});
        assert_eq!(field(schema.clone(), json!(120)), None);
        refused(
            field(schema.clone(), json!(-1)),
            &["at least 0 (minimum), not -1"],
        );
        refused(
            field(schema, json!(121)),
            &["at most 120 (maximum), not 121"],
        );
        let ratio = json!({"type": "number", "minimum": 0.5});
        refused(field(ratio, json!(0.25)), &["at least 0.5 (minimum)"]);
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
                assert!(message.contains("(format)"), "{}", message);
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
        refused(
            problem(schema.clone(), json!({"o": {"a": 1}})),
            &["\"o\"", "an object"],
        );
        refused(problem(schema, json!({"l": [1]})), &["\"l\"", "a list"]);
    }

    // A message shows at most 64 characters of a value or a name.
    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(10_000);
        let schema = json!({"type": "string", "format": "email"});
        let message = field(schema, json!(long)).expect("refused");
        assert!(
            message.contains(&format!("\"{}\"…", "x".repeat(64))),
            "{}",
            message
        );
        assert!(message.len() < 200, "{}", message);
        let named = json!({"type": "object", "properties": {}, "required": [long]});
        let message = problem(named, json!({})).expect("refused");
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
