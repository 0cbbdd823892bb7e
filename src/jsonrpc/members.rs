//! The members of one JSON-RPC message object, read without building the
//! object itself, and the rules that make them a [`Message`].
//!
//! A message line is read straight into [`Members`]: its six member slots
//! (`jsonrpc`, `id`, `method`, `params`, `result`, `error`), every other
//! member skipped. A member given twice keeps its last value, as when the
//! object is read as a [`Value`] first ([`Message::from_value`]); both
//! paths end in [`Members::into_message`], so they agree on every rule.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{ErrorObject, Message, Notification, ParseError, Request, RequestId, Response};

/// A message object's members; `Some(Value::Null)` is a member given as
/// `null`, `None` one that is absent.
#[derive(Default)]
pub(super) struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

/// A member name, read without allocating.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Name {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        deserializer.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
        let mut members = Members::default();
        while let Some(name) = map.next_key::<Name>()? {
            let slot = match name {
                Name::Jsonrpc => &mut members.jsonrpc,
                Name::Id => &mut members.id,
                Name::Method => &mut members.method,
                Name::Params => &mut members.params,
                Name::Result => &mut members.result,
                Name::Error => &mut members.error,
                Name::Other => {
                    // Read as a value and dropped, not skipped: skipping
                    // checks less (UTF-8, surrogates, number range, depth)
                    // than reading, and both paths must refuse alike.
                    map.next_value::<Value>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value::<Value>()?);
        }
        Ok(members)
    }
}

impl Members {
    /// The members of an object already read as a value.
    pub(super) fn from_object(mut object: Map<String, Value>) -> Members {
        Members {
            jsonrpc: object.remove("jsonrpc"),
            id: object.remove("id"),
            method: object.remove("method"),
            params: object.remove("params"),
            result: object.remove("result"),
            error: object.remove("error"),
        }
    }

    /// The message these members make, or the error to answer (BASE-1,
    /// BASE-2): see the rules in the parent module's docs.
    pub(super) fn into_message(self) -> Result<Message, ParseError> {
        let has_id = self.id.is_some();
        let id = self.id.as_ref().and_then(RequestId::from_value);
        let version_ok = matches!(&self.jsonrpc, Some(Value::String(v)) if v == "2.0");
        let is_response = self.result.is_some() || self.error.is_some();
        let invalid = |message: &str, silent: bool| ParseError {
            id: id.clone(),
            error: ErrorObject::invalid_request(message),
            silent,
        };
        if !version_ok {
            // A notification is never answered, even when it is malformed.
            let silent = !has_id && self.method.is_some();
            return Err(invalid("the \"jsonrpc\" member must be \"2.0\"", silent));
        }
        match self.method {
            Some(Value::String(method)) => {
                let params = match self.params {
                    None | Some(Value::Null) => None,
                    Some(p @ Value::Object(_)) | Some(p @ Value::Array(_)) => Some(p),
                    Some(_) => {
                        return Err(invalid("\"params\" must be an object or an array", !has_id))
                    }
                };
                if !has_id {
                    return Ok(Message::Notification(Notification { method, params }));
                }
                match id {
                    Some(id) => Ok(Message::Request(Request { id, method, params })),
                    None => Err(invalid(
                        "a request id must be a string or an integer",
                        false,
                    )),
                }
            }
            Some(_) => Err(invalid("\"method\" must be a string", !has_id)),
            None if is_response => {
                let outcome = match (self.result, self.error) {
                    (Some(result), None) => Ok(result),
                    (None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
                        Ok(error) => Err(error),
                        Err(_) => return Err(invalid("malformed \"error\" member", true)),
                    },
                    _ => {
                        return Err(invalid(
                            "a response has exactly one of \"result\" and \"error\"",
                            true,
                        ))
                    }
                };
                if id.is_none() && outcome.is_ok() {
                    return Err(invalid("a response must carry the request's id", true));
                }
                Ok(Message::Response(Response { id, outcome }))
            }
            None => Err(invalid("a request needs a \"method\"", false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways in: straight from the text, and through a `Value`.
    fn both(text: &str) -> (Result<Message, ParseError>, Result<Message, ParseError>) {
        let value: Value = serde_json::from_str(text).unwrap();
        (Message::parse(text.as_bytes()), Message::from_value(value))
    }

    // A member given twice keeps its last value on both paths, and
    // members outside JSON-RPC are ignored (BASE-1).
    #[test]
    fn last_member_wins_and_others_are_skipped() {
        let text =
            r#"{"jsonrpc":"2.0","id":1,"x":[1,{"y":2}],"method":"a","method":"ping","id":2}"#;
        let (direct, via_value) = both(text);
        assert_eq!(direct, via_value);
        assert_eq!(
            direct.unwrap(),
            Message::request(RequestId::Number(2), "ping", None)
        );
    }

    // Escaped member names are the names they spell.
    #[test]
    fn escaped_names_are_read() {
        let text = r#"{"json\u0072pc":"2\u002e0","\u0069d":"a","method":"ping"}"#;
        let (direct, via_value) = both(text);
        assert_eq!(direct, via_value);
        assert!(matches!(direct, Ok(Message::Request(_))));
    }

    // BASE-1: text that is not JSON is -32700 wherever it sits, in a
    // member outside JSON-RPC too (bytes that are not UTF-8, a lone
    // surrogate, a number out of range, nesting past serde_json's limit).
    #[test]
    fn bad_json_in_other_members_is_a_parse_error() {
        let head = br#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"#.to_vec();
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let tails: [&[u8]; 4] = [b"\"\xFF\"}", br#""\ud800"}"#, b"1e400}", deep.as_bytes()];
        for tail in tails {
            let mut text = head.clone();
            text.extend_from_slice(tail);
            if tail == deep.as_bytes() {
                text.push(b'}');
            }
            match Message::parse(&text) {
                Err(e) => assert_eq!(e.error.code, crate::jsonrpc::ErrorCode::PARSE_ERROR),
                Ok(m) => panic!("{:?} was read as {:?}", String::from_utf8_lossy(&text), m),
            }
        }
    }

    // Malformed messages get the same answer on both paths, including a
    // null id (BASE-2) and a response with both members.
    #[test]
    fn both_paths_refuse_alike() {
        for text in [
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"1.0","method":"ping"}"#,
            r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":{"v":["2.0"]},"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":["2.0"],"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#,
        ] {
            let (direct, via_value) = both(text);
            let (direct, via_value) = (direct.unwrap_err(), via_value.unwrap_err());
            assert_eq!(
                (direct.id, direct.error, direct.silent),
                (via_value.id, via_value.error, via_value.silent),
                "{}",
                text
            );
        }
    }
}
