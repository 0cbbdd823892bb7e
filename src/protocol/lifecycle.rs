//! Spec: basic/lifecycle (2025-11-25): `initialize` and capabilities.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Implementation;
use crate::jsonrpc::JsonObject;

/// Params of `initialize`: `{"protocolVersion", "capabilities", "clientInfo"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeRequestParams {
    /// The newest version the client speaks.
    pub protocol_version: String,
    /// What the client can do.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `initialize`:
/// `{"protocolVersion", "capabilities", "serverInfo", "instructions"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The version both sides will speak.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// What a client can do (2025-11-25).
///
/// Shape: `{"roots"?: {"listChanged"?}, "sampling"?: {"context"?, "tools"?},
/// "elicitation"?: {"form"?, "url"?}, "experimental"?, "tasks"?}`. Unknown
/// members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// `roots`: the client lists roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// `sampling`: the client runs `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// `elicitation`: `{}` means form mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Everything else the client declared.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// `true` if the client declared `sampling`.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// `true` if the client declared `roots`.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// `true` if the client takes form-mode elicitation: `elicitation: {}` or
    /// `elicitation: {"form": {}}`.
    pub fn supports_elicitation_form(&self) -> bool {
        match &self.elicitation {
            None => false,
            Some(e) => e.contains_key("form") || !e.contains_key("url"),
        }
    }

    /// `true` if the client declared `elicitation.url`.
    pub fn supports_elicitation_url(&self) -> bool {
        matches!(&self.elicitation, Some(e) if e.contains_key("url"))
    }

    /// `true` if the client declared the extension `id` under
    /// `extensions` (2026-07-28, e.g. `io.modelcontextprotocol/tasks`).
    pub fn supports_extension(&self, id: &str) -> bool {
        match self.extra.get("extensions") {
            Some(Value::Object(extensions)) => extensions.contains_key(id),
            _ => false,
        }
    }
}

/// What a server offers, derived from what was registered.
///
/// Shape: `{"tools"?: {"listChanged"?}, "resources"?: {"subscribe"?,
/// "listChanged"?}, "prompts"?: {"listChanged"?}, "logging"?: {},
/// "completions"?: {}, "experimental"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Tools are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Resources are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Prompts are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// `notifications/message` may be sent; `logging/setLevel` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// `completion/complete` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// 2025-11-25 tasks: `{"list"?, "cancel"?, "requests"?: {"tools"?:
    /// {"call"?}}}` (basic/utilities/tasks). Declared in `initialize` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// 2026-07-28 extensions by identifier (e.g.
    /// `io.modelcontextprotocol/tasks`), each with its settings object.
    /// Declared in `server/discover` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

impl ServerCapabilities {
    /// `true` when `extensions` names `id` (2026-07-28).
    pub(crate) fn declares_extension(&self, id: &str) -> bool {
        self.extensions
            .as_ref()
            .map_or(false, |e| e.contains_key(id))
    }

    /// What `initialize` declares: without the 2026-07-28 `extensions`.
    pub(crate) fn for_era(&self, era: super::Era) -> ServerCapabilities {
        let mut capabilities = self.clone();
        match era {
            super::Era::V2025_11_25 => capabilities.extensions = None,
            super::Era::V2026_07_28 => capabilities.tasks = None,
        }
        capabilities
    }
}

/// `{"listChanged"?: bool}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// The server sends `…/list_changed` notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// `{"subscribe"?: bool, "listChanged"?: bool}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// `resources/subscribe` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Params of `notifications/cancelled`: `{"requestId"?, "reason"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The id of the request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<Value>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
