//! JSON-RPC 2.0 messages: parse one, write one.
//!
//! This module knows nothing about MCP. It turns one JSON text into a
//! [`Message`] (or the [`ErrorObject`] that the peer must be sent back), and
//! writes a [`Message`] as one line of JSON.
//!
//! Rules it enforces (Spec: basic, 2025-11-25; JSON-RPC 2.0):
//! - ids are strings or integers and keep their JSON type: `0` and `"0"` are
//!   different ids ([`RequestId`]);
//! - a `null` id, a fractional id, or a missing `method` is an invalid request
//!   (`-32600`);
//! - unparsable text is a parse error (`-32700`) answered with id `null`;
//! - a top-level array (a batch, removed in 2025-06-18) gets one `-32600`;
//! - a message without an `id` is a notification and is never answered.

use std::fmt;
use std::io;

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod members;
use members::Members;

/// A JSON object: the shape of `params`, `arguments` and `_meta`.
pub type JsonObject = Map<String, Value>;

/// The id of a request: a string or an integer, echoed with its JSON type.
///
/// Shape: `1` or `"abc"`. `null` and fractional numbers are not ids
/// (BASE-2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id such as `7`.
    Number(i64),
    /// A string id such as `"req-7"`.
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for `null`, floats, objects, …
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            // JSON's `-0` is the integer zero, which serde reads as a float.
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| *f == 0.0).map(|_| 0))
                .map(RequestId::Number),
            _ => None,
        }
    }

    /// The id as a JSON value with its original type.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{}", n),
            RequestId::String(s) => write!(f, "{:?}", s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_string())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RequestId::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("a request id is a string or an integer"))
    }
}

/// A JSON-RPC error code: an `i32` with the codes MCP uses as constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the text is not JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: not a valid request object (also: batches, duplicate `initialize`).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the method does not exist or is not offered.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: the params are wrong (unknown tool or prompt, bad cursor, …).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: the server failed (a handler panicked, …).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32002`: `resources/read` of an unknown URI (2025-11-25 and older).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// `-32042`: the request needs URL-mode elicitations first (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// `-32020`: an HTTP header is missing or disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `-32021`: the request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `-32022`: the protocol version is not served (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// The `error` member of a JSON-RPC error response.
///
/// Shape: `{"code": -32602, "message": "unknown tool: x", "data": …}`.
/// Wire errors are data: a handler that wants a particular code returns one
/// of these through [`crate::Error::rpc`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// One short sentence.
    pub message: String,
    /// Anything else the peer should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` set.
    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(data);
        self
    }

    /// `-32600` with `message`.
    pub fn invalid_request(message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601` naming `method`.
    pub fn method_not_found(method: &str) -> ErrorObject {
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {}", method),
        )
    }

    /// `-32602` with `message`.
    pub fn invalid_params(message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603` with `message`.
    pub fn internal(message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

/// A request: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The params, when present (`null` counts as absent).
    pub params: Option<Value>,
}

/// A notification: a request without an id, never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `notifications/cancelled`.
    pub method: String,
    /// The params, when present.
    pub params: Option<Value>,
}

/// A response: a result or an error for the request with the same id.
///
/// `id` is `None` only for errors about input whose id could not be read
/// (written as `"id": null`, BASE-3).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered.
    pub id: Option<RequestId>,
    /// `Ok(result)` or `Err(error)`.
    pub outcome: Result<Value, ErrorObject>,
}

impl Response {
    /// A success response.
    pub fn ok(id: RequestId, result: Value) -> Response {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    /// An error response; `id` is `None` when the request's id is unknown.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Response {
        Response {
            id,
            outcome: Err(error),
        }
    }
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request, answered with a [`Response`].
    Request(Request),
    /// A notification, never answered.
    Notification(Notification),
    /// A response to a request this side sent.
    Response(Response),
}

/// Why a text could not be read as a [`Message`], and what to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// The id to answer with, when one could be read (else `null`).
    pub id: Option<RequestId>,
    /// The error to send back.
    pub error: ErrorObject,
    /// `true` when the input looked like a notification: it gets no answer.
    pub silent: bool,
}

impl ParseError {
    fn answer(id: Option<RequestId>, error: ErrorObject) -> ParseError {
        ParseError {
            id,
            error,
            silent: false,
        }
    }

    /// The error response to send, unless the input was a notification.
    pub fn response(&self) -> Option<Response> {
        if self.silent {
            None
        } else {
            Some(Response::error(self.id.clone(), self.error.clone()))
        }
    }
}

impl Message {
    /// Parses one message from JSON text (one line on stdio, one body on HTTP).
    ///
    /// # Errors
    ///
    /// A [`ParseError`] carrying `-32700` for text that is not JSON (or not
    /// UTF-8), and `-32600` for JSON that is not one valid JSON-RPC 2.0
    /// message (arrays included).
    pub fn parse(bytes: &[u8]) -> Result<Message, ParseError> {
        // The members are read straight into their slots; anything that is
        // not one JSON object (or not JSON) is read again as a value, for
        // the error that fits it.
        if let Ok(members) = serde_json::from_slice::<Members>(bytes) {
            return members.into_message();
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            ParseError::answer(
                None,
                ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {}", e)),
            )
        })?;
        Message::from_value(value)
    }

    /// Reads a message from an already parsed JSON value.
    ///
    /// # Errors
    ///
    /// As [`Message::parse`], without the `-32700` case.
    pub fn from_value(value: Value) -> Result<Message, ParseError> {
        match value {
            Value::Object(object) => Members::from_object(object).into_message(),
            Value::Array(_) => Err(ParseError::answer(
                None,
                ErrorObject::invalid_request(
                    "batch requests are not supported: send one JSON-RPC message at a time",
                ),
            )),
            _ => Err(ParseError::answer(
                None,
                ErrorObject::invalid_request("a JSON-RPC message must be a JSON object"),
            )),
        }
    }

    /// Writes this message as compact JSON, without a trailing newline.
    ///
    /// U+2028 and U+2029 are written escaped, so a line-oriented reader that
    /// treats them as line breaks still sees one message per line.
    ///
    /// # Errors
    ///
    /// The writer's I/O errors.
    pub fn write_to<W: io::Write>(&self, writer: W) -> io::Result<()> {
        let mut serializer = serde_json::Serializer::with_formatter(writer, LineSafeFormatter);
        self.serialize(&mut serializer).map_err(io::Error::from)
    }

    /// This message as a compact JSON string (see [`Message::write_to`]).
    pub fn to_json_string(&self) -> String {
        let mut out = Vec::with_capacity(128);
        // Writing to a Vec cannot fail, and every map key is a string; a
        // failure would be a bug of ours: logged, and the text left empty.
        if let Err(e) = self.write_to(&mut out) {
            log::error!("cannot serialize a JSON-RPC message: {}", e);
            out.clear();
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// A request.
    pub fn request(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Message {
        Message::Request(Request {
            id,
            method: method.into(),
            params,
        })
    }

    /// A notification.
    pub fn notification(method: impl Into<String>, params: Option<Value>) -> Message {
        Message::Notification(Notification {
            method: method.into(),
            params,
        })
    }
}

impl From<Response> for Message {
    fn from(response: Response) -> Self {
        Message::Response(response)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Message::Request(request) => {
                map.serialize_entry("id", &request.id)?;
                map.serialize_entry("method", &request.method)?;
                if let Some(params) = &request.params {
                    map.serialize_entry("params", params)?;
                }
            }
            Message::Notification(notification) => {
                map.serialize_entry("method", &notification.method)?;
                if let Some(params) = &notification.params {
                    map.serialize_entry("params", params)?;
                }
            }
            Message::Response(response) => {
                map.serialize_entry("id", &response.id)?;
                match &response.outcome {
                    Ok(result) => map.serialize_entry("result", result)?,
                    Err(error) => map.serialize_entry("error", error)?,
                }
            }
        }
        map.end()
    }
}

/// Writes the response `{"jsonrpc":"2.0","id":…,"result":…}` for a result
/// that is not a [`Value`] yet, as [`Message::write_to`] writes one: the
/// same JSON as `result` made a value first, without building it (its
/// members in the type's order, not sorted).
pub(crate) fn write_result_to<W: io::Write, T: Serialize>(
    writer: W,
    id: &RequestId,
    result: &T,
) -> io::Result<()> {
    struct Typed<'a, T> {
        id: &'a RequestId,
        result: &'a T,
    }
    impl<T: Serialize> Serialize for Typed<'_, T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("jsonrpc", "2.0")?;
            map.serialize_entry("id", self.id)?;
            map.serialize_entry("result", self.result)?;
            map.end()
        }
    }
    let mut serializer = serde_json::Serializer::with_formatter(writer, LineSafeFormatter);
    Typed { id, result }
        .serialize(&mut serializer)
        .map_err(io::Error::from)
}

/// [`write_result_to`] into `out`; a result that cannot be serialized (a
/// bug of ours: logged, the result neither logged nor sent) is answered
/// with an internal error (`-32603`) instead.
pub(crate) fn write_result_or_error<T: Serialize>(out: &mut Vec<u8>, id: &RequestId, result: &T) {
    let start = out.len();
    if let Err(e) = write_result_to(&mut *out, id, result) {
        write_unserializable(out, start, id, &e);
    }
}

/// The error half of [`write_result_or_error`], kept out of its
/// instances: the line from `start` on becomes a `-32603` response.
#[cold]
#[inline(never)]
fn write_unserializable(out: &mut Vec<u8>, start: usize, id: &RequestId, e: &io::Error) {
    log::error!("cannot serialize the result of request {}: {}", id, e);
    out.truncate(start);
    let error = ErrorObject::internal("cannot serialize the result");
    // Writing to a Vec cannot fail, nor can an error object.
    let _ = Message::Response(Response::error(Some(id.clone()), error)).write_to(&mut *out);
}

/// A compact formatter that also escapes U+2028 and U+2029.
struct LineSafeFormatter;

impl serde_json::ser::Formatter for LineSafeFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Both separators encode as E2 80 A8 / E2 80 A9; most fragments
        // hold no E2 at all (one memchr), the rest are scanned.
        let bytes = fragment.as_bytes();
        if !bytes.contains(&0xE2) {
            return writer.write_all(bytes);
        }
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == 0xE2
                && i + 2 < bytes.len()
                && bytes[i + 1] == 0x80
                && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9)
            {
                writer.write_all(&bytes[start..i])?;
                writer.write_all(if bytes[i + 2] == 0xA8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                })?;
                i += 3;
                start = i;
            } else {
                i += 1;
            }
        }
        writer.write_all(&bytes[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A result that cannot be serialized is answered with -32603, whole
    // and without the result, never with half a line.
    #[test]
    fn an_unserializable_result_is_an_internal_error() {
        let mut bad = std::collections::HashMap::new();
        bad.insert((1, 2), "a secret");
        let mut out = b"before ".to_vec();
        write_result_or_error(&mut out, &RequestId::Number(7), &bad);
        let text = String::from_utf8(out).unwrap();
        let json = text.strip_prefix("before ").unwrap();
        let value: Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["error"]["code"], ErrorCode::INTERNAL_ERROR.0);
        assert!(!text.contains("secret"));
    }

    fn parse(text: &str) -> Result<Message, ParseError> {
        Message::parse(text.as_bytes())
    }

    // BASE-2: ids keep their JSON type; 0 and "0" differ.
    #[test]
    fn ids_keep_their_json_type() {
        let number = parse(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#).unwrap();
        let string = parse(r#"{"jsonrpc":"2.0","id":"0","method":"ping"}"#).unwrap();
        assert_ne!(number, string);
        let answer = |m: Message| match m {
            Message::Request(r) => {
                Message::Response(Response::ok(r.id, Value::Object(Map::new()))).to_json_string()
            }
            other => panic!("not a request: {:?}", other),
        };
        assert_eq!(answer(number), r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        assert_eq!(answer(string), r#"{"jsonrpc":"2.0","id":"0","result":{}}"#);
    }

    // BASE-2: a null id is an invalid request.
    #[test]
    fn null_id_is_invalid_request() {
        let err = parse(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(
            err.response().unwrap(),
            Response::error(None, err.error.clone())
        );
    }

    // BASE-2: a fractional id is not an id.
    #[test]
    fn fractional_id_is_invalid_request() {
        let err = parse(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
    }

    // BASE-2: `-0` is JSON's integer zero, an id like `0` (serde reads it
    // as the float -0.0, so a zero float reads as zero too).
    #[test]
    fn negative_zero_id_is_zero() {
        match parse(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#) {
            Ok(Message::Request(r)) => assert_eq!(r.id, RequestId::Number(0)),
            other => panic!("expected a request, got {:?}", other),
        }
    }

    // BASE-1: unparsable text is -32700 with id null.
    #[test]
    fn garbage_is_parse_error_with_null_id() {
        let err = parse("{not json").unwrap_err();
        assert_eq!(err.error.code, ErrorCode::PARSE_ERROR);
        let text = Message::from(err.response().unwrap()).to_json_string();
        assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"#));
    }

    // BASE-1: a batch array gets a single -32600 (batches removed in 2025-06-18).
    #[test]
    fn batch_is_one_invalid_request() {
        let err = parse(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(err.id, None);
    }

    // BASE-5: a message without an id is a notification.
    #[test]
    fn missing_id_is_notification() {
        let msg = parse(r#"{"jsonrpc":"2.0","method":"notifications/made_up"}"#).unwrap();
        assert!(matches!(msg, Message::Notification(n) if n.method == "notifications/made_up"));
    }

    // BASE-5: a malformed notification is never answered.
    #[test]
    fn malformed_notification_is_silent() {
        let err = parse(r#"{"jsonrpc":"1.0","method":"notifications/x"}"#).unwrap_err();
        assert!(err.response().is_none());
    }

    // BASE-3: responses from the peer are read with their id and outcome.
    #[test]
    fn responses_are_read() {
        let ok = parse(r#"{"jsonrpc":"2.0","id":"s-1","result":{"a":1}}"#).unwrap();
        assert!(matches!(
            ok,
            Message::Response(Response {
                id: Some(_),
                outcome: Ok(_)
            })
        ));
        let err = parse(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#).unwrap();
        match err {
            Message::Response(Response {
                outcome: Err(e), ..
            }) => assert_eq!(e.code, ErrorCode(-1)),
            other => panic!("{:?}", other),
        }
    }

    // STDIO-1: messages never contain raw line breaks, U+2028/2029 included.
    #[test]
    fn output_is_one_line() {
        let msg = Message::notification(
            "x",
            Some(serde_json::json!({ "text": "a\nb\u{2028}c\u{2029}" })),
        );
        let text = msg.to_json_string();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","method":"x","params":{"text":"a\nb\u2028c\u2029"}}"#
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["params"]["text"], "a\nb\u{2028}c\u{2029}");
    }

    // A result written straight from its type is the JSON of the same
    // result made a value first, on one line with U+2028 escaped.
    #[test]
    fn typed_results_write_the_same_json() {
        #[derive(Serialize)]
        struct Echo {
            text: &'static str,
            count: u32,
        }
        let echo = Echo {
            text: "a\u{2028}b",
            count: 3,
        };
        let id = RequestId::String("x".into());
        let mut typed = Vec::new();
        write_result_to(&mut typed, &id, &echo).unwrap();
        let value = serde_json::to_value(&echo).unwrap();
        let via_value = Message::from(Response::ok(id, value)).to_json_string();
        let typed = String::from_utf8(typed).unwrap();
        assert!(
            typed.contains("\\u2028") && !typed.contains('\n'),
            "{}",
            typed
        );
        let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(parse(&typed), parse(&via_value));
    }

    // BASE-4: error objects have code and message, data optional.
    #[test]
    fn error_object_shape() {
        let msg = Message::from(Response::error(
            Some(RequestId::Number(2)),
            ErrorObject::method_not_found("nope"),
        ));
        assert_eq!(
            msg.to_json_string(),
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: nope"}}"#
        );
    }
}
