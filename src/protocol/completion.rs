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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
