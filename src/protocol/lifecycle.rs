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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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

/// Read as a plain object, the four known members taken out of it and
/// the rest kept as `extra`, with the derived reader's messages: the
/// derived reading of a flattened map buffers every member first, about
/// 7 KB of code more.
impl<'de> Deserialize<'de> for ClientCapabilities {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut extra = deserializer.deserialize_map(Members)?;
        let mut take = |key: &str| match extra.remove(key) {
            None => Ok(None),
            Some(value) => {
                serde_json::from_value::<Option<JsonObject>>(value).map_err(D::Error::custom)
            }
        };
        Ok(ClientCapabilities {
            roots: take("roots")?,
            sampling: take("sampling")?,
            elicitation: take("elicitation")?,
            experimental: take("experimental")?,
            extra,
        })
    }
}

/// An object's members, expected as the derived reader expected them.
struct Members;

impl<'de> serde::de::Visitor<'de> for Members {
    type Value = JsonObject;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct ClientCapabilities")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<JsonObject, A::Error> {
        let mut members = JsonObject::new();
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            members.insert(key, value);
        }
        Ok(members)
    }
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
    /// Declared in `server/discover`, and MCP Apps in `initialize` too.
    /// Read as absent when it is not an object (2025-11-25's schema does
    /// not define it, so a server may send anything there).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "object_or_none"
    )]
    pub extensions: Option<JsonObject>,
}

/// An object member, or `None` for anything else.
fn object_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<JsonObject>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Object(object) => Some(object),
        _ => None,
    })
}

impl ServerCapabilities {
    /// `true` when `extensions` names `id` (e.g.
    /// `io.modelcontextprotocol/ui`, which a server declares in every era).
    pub fn declares_extension(&self, id: &str) -> bool {
        self.extensions
            .as_ref()
            .map_or(false, |e| e.contains_key(id))
    }

    /// What `initialize` declares: of the `extensions`, only MCP Apps,
    /// which negotiates through `initialize` in every era (its "Client<>Server
    /// Capability Negotiation"); the others are 2026-07-28's.
    pub(crate) fn for_era(&self, era: super::Era) -> ServerCapabilities {
        let mut capabilities = self.clone();
        match era {
            super::Era::V2025_11_25 => {
                let ui = capabilities
                    .extensions
                    .take()
                    .and_then(|mut e| e.remove_entry(super::extensions::UI));
                capabilities.extensions = ui.map(|(id, settings)| {
                    let mut only = JsonObject::new();
                    only.insert(id, settings);
                    only
                });
            }
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

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// The derived reader the hand-written one replaced.
    #[derive(Debug, PartialEq, Deserialize)]
    struct Derived {
        #[serde(default)]
        roots: Option<JsonObject>,
        #[serde(default)]
        sampling: Option<JsonObject>,
        #[serde(default)]
        elicitation: Option<JsonObject>,
        #[serde(default)]
        experimental: Option<JsonObject>,
        #[serde(flatten)]
        extra: JsonObject,
    }

    // A 2025-11-25 server may put anything under `extensions` (its schema
    // has no such member): the capabilities still read.
    #[test]
    fn odd_server_extensions_read_as_absent() {
        for odd in [json!([]), json!("x"), json!(3)] {
            let caps: ServerCapabilities =
                serde_json::from_value(json!({"tools": {}, "extensions": odd})).unwrap();
            assert_eq!(caps.extensions, None);
            assert!(caps.tools.is_some());
        }
    }

    // The capabilities read as the derived reader read them: known members
    // out, null as absent, the rest in `extra`, the same messages.
    #[test]
    fn client_capabilities_read_as_derived() {
        let cases = [
            json!({}),
            json!({"roots": {"listChanged": true}, "sampling": {}, "x": 1}),
            json!({"elicitation": {"form": {}}, "experimental": {"a": {}}, "tasks": {}}),
            json!({"roots": null, "extensions": {"io.modelcontextprotocol/tasks": {}}}),
            json!({"roots": "yes"}),
            json!({"sampling": [1]}),
            json!({"elicitation": 3}),
            json!([]),
            json!("caps"),
            Value::Null,
        ];
        for case in cases.iter() {
            let ours = serde_json::from_value::<ClientCapabilities>(case.clone());
            let derived = serde_json::from_value::<Derived>(case.clone());
            match (ours, derived) {
                (Ok(ours), Ok(derived)) => {
                    assert_eq!(ours.roots, derived.roots, "{}", case);
                    assert_eq!(ours.sampling, derived.sampling, "{}", case);
                    assert_eq!(ours.elicitation, derived.elicitation, "{}", case);
                    assert_eq!(ours.experimental, derived.experimental, "{}", case);
                    assert_eq!(ours.extra, derived.extra, "{}", case);
                }
                (Err(ours), Err(derived)) => {
                    let derived = derived.to_string().replace("Derived", "ClientCapabilities");
                    assert_eq!(ours.to_string(), derived, "{}", case)
                }
                (ours, derived) => panic!("{}: {:?} vs {:?}", case, ours, derived),
            }
        }
        let text = r#"{"roots": {}, "other": true}"#;
        let ours: ClientCapabilities = serde_json::from_str(text).unwrap();
        assert!(ours.supports_roots());
        assert_eq!(
            ours.extra,
            json!({"other": true}).as_object().unwrap().clone()
        );
    }
}
