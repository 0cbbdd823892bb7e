//! Spec: client/sampling (2025-11-25).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Role;
use crate::jsonrpc::JsonObject;

/// Params of `sampling/createMessage` (server to client).
///
/// Shape: `{"messages", "maxTokens", "systemPrompt"?, "modelPreferences"?,
/// "includeContext"?, "temperature"?, "stopSequences"?, "metadata"?,
/// "tools"?, "toolChoice"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Model preferences, `{"hints"?, "costPriority"?, …}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// `none`, `thisServer` or `allServers` (SAMP-3: avoid the last two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may call (needs `sampling.tools`, SAMP-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    /// `{"mode": "auto"|"required"|"none"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CreateMessageRequestParams {
    /// A request with messages and a token limit.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u32) -> CreateMessageRequestParams {
        CreateMessageRequestParams {
            messages,
            max_tokens,
            system_prompt: None,
            model_preferences: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            meta: None,
        }
    }
}

/// One message of a sampling conversation: `{"role", "content"}`.
///
/// `content` is one content object (`text`, `image`, `audio`, `tool_use`,
/// `tool_result`) or an array of them, kept as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: Role,
    /// The content.
    pub content: Value,
}

impl SamplingMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage {
            role: Role::User,
            content: serde_json::json!({ "type": "text", "text": text.into() }),
        }
    }
}

/// Result of `sampling/createMessage`: `{"role", "content", "model", "stopReason"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Usually `assistant`.
    pub role: Role,
    /// One content object or an array of them.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CreateMessageResult {
    /// An `assistant` answer with one text block from `model`, stop reason
    /// `endTurn`: what a client's sampling handler usually returns.
    pub fn assistant_text(
        text: impl Into<String>,
        model: impl Into<String>,
    ) -> CreateMessageResult {
        CreateMessageResult {
            role: Role::Assistant,
            content: serde_json::json!({ "type": "text", "text": text.into() }),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
            meta: None,
        }
    }

    /// The text of the first text block, if any.
    pub fn text(&self) -> Option<&str> {
        let first_text = |v: &'_ Value| -> bool { v["type"] == "text" };
        match &self.content {
            Value::Array(items) => items
                .iter()
                .find(|v| first_text(v))
                .and_then(|v| v["text"].as_str()),
            v if first_text(v) => v["text"].as_str(),
            _ => None,
        }
    }
}
