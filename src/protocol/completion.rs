//! Spec: server/utilities/completion (2025-11-25).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::JsonObject;

/// Params of `completion/complete`:
/// `{"ref", "argument": {"name", "value"}, "context"?: {"arguments"?}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument and the text typed so far.
    pub argument: CompleteArgument,
    /// Values of other arguments already given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// `{"type":"ref/prompt","name"}` or `{"type":"ref/resource","uri"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// A prompt's argument.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A resource template's variable.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI or URI template.
        uri: String,
    },
}

/// Read as a plain object and then matched on `type`, with the messages
/// of serde's internally tagged enums ("missing field `name`", "unknown
/// variant …"): the derived reading buffers the whole object first, and
/// is about 4 KB of code larger.
impl<'de> Deserialize<'de> for Reference {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Wire {
            #[serde(rename = "type")]
            kind: String,
            name: Option<String>,
            uri: Option<String>,
        }
        let wire = Wire::deserialize(deserializer)?;
        match wire.kind.as_str() {
            "ref/prompt" => wire
                .name
                .map(|name| Reference::Prompt { name })
                .ok_or_else(|| D::Error::missing_field("name")),
            "ref/resource" => wire
                .uri
                .map(|uri| Reference::Resource { uri })
                .ok_or_else(|| D::Error::missing_field("uri")),
            other => Err(D::Error::unknown_variant(
                other,
                &["ref/prompt", "ref/resource"],
            )),
        }
    }
}

impl Reference {
    /// `{"type": "ref/prompt", "name"}`.
    pub fn prompt(name: impl Into<String>) -> Reference {
        Reference::Prompt { name: name.into() }
    }

    /// `{"type": "ref/resource", "uri"}`: a resource template (or URI).
    pub fn resource(uri: impl Into<String>) -> Reference {
        Reference::Resource { uri: uri.into() }
    }
}

/// `{"name", "value"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteArgument {
    /// The argument's name.
    pub name: String,
    /// What was typed so far.
    pub value: String,
}

/// `{"arguments"?: {name: value}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteContext {
    /// Arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
}

/// Result of `completion/complete`: `{"completion": {"values", "total"?, "hasMore"?}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
}

/// `{"values", "total"?, "hasMore"?}`; at most 100 values (CMP-2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// Suggestions, best first.
    pub values: Vec<String>,
    /// How many there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl CompleteResult {
    /// A result from suggestions: the first 100 are sent, with `total` and
    /// `hasMore` set from the full list.
    pub fn new(mut values: Vec<String>) -> CompleteResult {
        let total = values.len() as u64;
        let has_more = values.len() > 100;
        values.truncate(100);
        CompleteResult {
            completion: Completion {
                values,
                total: Some(total),
                has_more: Some(has_more),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: serde_json::Value) -> Result<Reference, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    // server/utilities/completion: a ref is `ref/prompt` with `name` or
    // `ref/resource` with `uri`; anything else is refused with the
    // messages of serde's tagged enums (they reach the client in -32602).
    #[test]
    fn references_read_by_type() {
        let prompt = read(json!({"type": "ref/prompt", "name": "p", "extra": 1}));
        assert_eq!(prompt, Ok(Reference::prompt("p")));
        let resource = read(json!({"type": "ref/resource", "uri": "test://{id}"}));
        assert_eq!(resource, Ok(Reference::resource("test://{id}")));
        let no_name = read(json!({"type": "ref/prompt", "uri": "x"}));
        assert_eq!(no_name.unwrap_err(), "missing field `name`");
        let no_uri = read(json!({"type": "ref/resource"}));
        assert_eq!(no_uri.unwrap_err(), "missing field `uri`");
        let unknown = read(json!({"type": "ref/tool", "name": "t"})).unwrap_err();
        assert!(
            unknown.starts_with("unknown variant `ref/tool`"),
            "{}",
            unknown
        );
        let untyped = read(json!({"name": "p"})).unwrap_err();
        assert_eq!(untyped, "missing field `type`");
        let serialized = serde_json::to_value(Reference::prompt("p")).unwrap();
        assert_eq!(serialized, json!({"type": "ref/prompt", "name": "p"}));
    }
}
