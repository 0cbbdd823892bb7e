//! Spec: MCP Apps, the extension `io.modelcontextprotocol/ui` (SEP-1865,
//! stable 2026-01-26; repository `modelcontextprotocol/ext-apps`,
//! `specification/2026-01-26/apps.mdx`): UI resources, the tool metadata
//! that names them, and the client's declaration.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{extensions, ClientCapabilities, Resource, ResourceContents, Tool};
use crate::jsonrpc::JsonObject;

/// The MIME type of an MCP Apps HTML view, `text/html;profile=mcp-app`
/// ("UI Resource Format": the only content type of 2026-01-26).
pub const UI_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme every UI resource uses (`ui://…`, "Content
/// Requirements").
pub const UI_SCHEME: &str = "ui://";

/// The `_meta` member under which the extension's metadata lives.
const UI_KEY: &str = "ui";

/// The deprecated flat `_meta` key of a tool's view (`ui/resourceUri`),
/// still written beside `_meta.ui.resourceUri` and read when that is
/// absent ("Resource Discovery", deprecation notice).
pub const UI_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// `_meta.ui` of a UI resource, in its `resources/list` entry and on its
/// `resources/read` contents: what the host needs to sandbox the view.
///
/// Shape: `{"csp"?: UiResourceCsp, "permissions"?: UiPermissions,
/// "domain"?: string, "prefersBorder"?: bool}`. Every member is optional;
/// a host applies its restrictive defaults to what is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiResourceMeta {
    /// The origins the view may reach (the host's Content Security
    /// Policy); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiResourceCsp>,
    /// Browser features the view asks for (the iframe's `allow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated sandbox origin, in the form the host documents (e.g.
    /// `a904794854a047f6.claudemcpcontent.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// `true`: the host draws a border and background; `false`: it does
    /// not; absent: the host decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// Nothing declared: the host's restrictive defaults.
    pub fn new() -> UiResourceMeta {
        UiResourceMeta::default()
    }

    /// Sets `csp`.
    pub fn with_csp(mut self, csp: UiResourceCsp) -> UiResourceMeta {
        self.csp = Some(csp);
        self
    }

    /// Sets `permissions`.
    pub fn with_permissions(mut self, permissions: UiPermissions) -> UiResourceMeta {
        self.permissions = Some(permissions);
        self
    }

    /// Sets `domain`.
    pub fn with_domain(mut self, domain: impl Into<String>) -> UiResourceMeta {
        self.domain = Some(domain.into());
        self
    }

    /// Sets `prefersBorder`.
    pub fn with_prefers_border(mut self, prefers: bool) -> UiResourceMeta {
        self.prefers_border = Some(prefers);
        self
    }
}

/// `_meta.ui.csp`: origins the view needs, each list mapping to CSP
/// directives the host builds ("Host Behavior", "Content Security Policy
/// Enforcement"). An absent or empty list allows no origin.
///
/// Shape: `{"connectDomains"?, "resourceDomains"?, "frameDomains"?,
/// "baseUriDomains"?}`, each an array of origins such as
/// `https://api.example.com` (wildcard subdomains `https://*.example.com`
/// in `resourceDomains`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiResourceCsp {
    /// `connect-src`: fetch, XHR, WebSocket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// `img-src`, `script-src`, `style-src`, `font-src`, `media-src`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// `frame-src`: nested iframes (absent: `'none'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// `base-uri` (absent: `'self'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
}

impl UiResourceCsp {
    /// No origin allowed.
    pub fn new() -> UiResourceCsp {
        UiResourceCsp::default()
    }

    /// Sets `connectDomains`.
    pub fn with_connect_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> UiResourceCsp {
        self.connect_domains = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Sets `resourceDomains`.
    pub fn with_resource_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> UiResourceCsp {
        self.resource_domains = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Sets `frameDomains`.
    pub fn with_frame_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> UiResourceCsp {
        self.frame_domains = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Sets `baseUriDomains`.
    pub fn with_base_uri_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> UiResourceCsp {
        self.base_uri_domains = Some(origins.into_iter().map(Into::into).collect());
        self
    }
}

/// `_meta.ui.permissions`: browser features the view asks for, each
/// present as `{}`. A host may grant them; a view must not assume it did.
///
/// Shape: `{"camera"?: {}, "microphone"?: {}, "geolocation"?: {},
/// "clipboardWrite"?: {}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiPermissions {
    /// Permission Policy `camera`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// Permission Policy `microphone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// Permission Policy `geolocation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Permission Policy `clipboard-write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
}

impl UiPermissions {
    /// Asks for nothing.
    pub fn new() -> UiPermissions {
        UiPermissions::default()
    }

    /// Asks for `camera`.
    pub fn with_camera(mut self) -> UiPermissions {
        self.camera = Some(JsonObject::new());
        self
    }

    /// Asks for `microphone`.
    pub fn with_microphone(mut self) -> UiPermissions {
        self.microphone = Some(JsonObject::new());
        self
    }

    /// Asks for `geolocation`.
    pub fn with_geolocation(mut self) -> UiPermissions {
        self.geolocation = Some(JsonObject::new());
        self
    }

    /// Asks for `clipboardWrite`.
    pub fn with_clipboard_write(mut self) -> UiPermissions {
        self.clipboard_write = Some(JsonObject::new());
        self
    }
}

/// Who may call a tool with a view (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolVisibility {
    /// `"model"`: the agent sees and calls it.
    Model,
    /// `"app"`: views of this server's connection call it.
    App,
}

/// `_meta.ui` of a tool: the view its results render in, and who may
/// call it ("Resource Discovery").
///
/// Shape: `{"resourceUri"?: "ui://…", "visibility"?: ["model" | "app"]}`;
/// `visibility` absent means both. A host leaves a tool without `"model"`
/// out of the agent's list, and refuses a view's call of a tool without
/// `"app"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUiMeta {
    /// The `ui://` resource the results render in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool; absent: `["model", "app"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<ToolVisibility>>,
}

impl ToolUiMeta {
    /// Results render in the view at `resource_uri` (`ui://…`); model and
    /// views may call the tool.
    pub fn new(resource_uri: impl Into<String>) -> ToolUiMeta {
        ToolUiMeta {
            resource_uri: Some(resource_uri.into()),
            visibility: None,
        }
    }

    /// Sets `visibility`: e.g. `[ToolVisibility::App]` for a tool only a
    /// view calls (a refresh button), hidden from the model.
    pub fn with_visibility(
        mut self,
        visibility: impl IntoIterator<Item = ToolVisibility>,
    ) -> ToolUiMeta {
        self.visibility = Some(visibility.into_iter().collect());
        self
    }

    /// `true` when `who` may call the tool (absent `visibility`: both).
    pub fn is_visible_to(&self, who: ToolVisibility) -> bool {
        self.visibility.as_ref().map_or(true, |v| v.contains(&who))
    }
}

impl Tool {
    /// Sets `_meta.ui` (MCP Apps), and the deprecated flat
    /// `_meta["ui/resourceUri"]` that hosts may still read; other `_meta`
    /// members stay.
    pub fn with_ui(mut self, ui: ToolUiMeta) -> Tool {
        let meta = self.meta.get_or_insert_with(JsonObject::new);
        match &ui.resource_uri {
            Some(uri) => meta.insert(UI_RESOURCE_URI_KEY.into(), Value::from(uri.as_str())),
            None => meta.remove(UI_RESOURCE_URI_KEY),
        };
        meta.insert(UI_KEY.into(), to_object(&ui));
        self
    }

    /// `_meta.ui` (MCP Apps), with `resourceUri` taken from the deprecated
    /// `_meta["ui/resourceUri"]` when only that is set; `None` for a tool
    /// without either. Read leniently, and closed where it matters: an
    /// unknown `visibility` value is skipped, and a `visibility` that is
    /// not a list of strings reads as visible to no one (a host must not
    /// show the model a tool it cannot tell is meant for it).
    pub fn ui(&self) -> Option<ToolUiMeta> {
        let meta = self.meta.as_ref()?;
        let mut ui = meta.get(UI_KEY).map(read_tool_ui).unwrap_or_default();
        if ui.resource_uri.is_none() {
            ui.resource_uri = meta
                .get(UI_RESOURCE_URI_KEY)
                .and_then(Value::as_str)
                .map(String::from);
        }
        match (&ui.resource_uri, meta.contains_key(UI_KEY)) {
            (None, false) => None,
            _ => Some(ui),
        }
    }

    /// `true` unless `_meta.ui.visibility` leaves the model out: what a
    /// host checks before showing the tool to its agent.
    pub fn is_visible_to_model(&self) -> bool {
        self.ui()
            .map_or(true, |ui| ui.is_visible_to(ToolVisibility::Model))
    }

    /// The tool without its MCP Apps metadata (`_meta.ui`, the flat key),
    /// as listed to a client that does not render views.
    pub(crate) fn without_ui(mut self) -> Tool {
        if let Some(meta) = &mut self.meta {
            meta.remove(UI_KEY);
            meta.remove(UI_RESOURCE_URI_KEY);
            if meta.is_empty() {
                self.meta = None;
            }
        }
        self
    }
}

impl Resource {
    /// Sets `_meta.ui` (MCP Apps); other `_meta` members stay.
    pub fn with_ui(mut self, ui: UiResourceMeta) -> Resource {
        let value = to_object(&ui);
        self.meta
            .get_or_insert_with(JsonObject::new)
            .insert(UI_KEY.into(), value);
        self
    }

    /// `_meta.ui` (MCP Apps), `None` when absent or not the extension's
    /// shape.
    pub fn ui(&self) -> Option<UiResourceMeta> {
        read_ui(self.meta.as_ref())
    }
}

impl ResourceContents {
    /// `_meta.ui` (MCP Apps): the view's sandbox settings, which take
    /// precedence over the listing's.
    pub fn ui(&self) -> Option<UiResourceMeta> {
        read_ui(self.meta())
    }

    /// Sets `_meta.ui`; other `_meta` members stay.
    pub fn with_ui(mut self, ui: UiResourceMeta) -> ResourceContents {
        let value = to_object(&ui);
        match &mut self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => {
                meta.get_or_insert_with(JsonObject::new)
                    .insert(UI_KEY.into(), value);
            }
        }
        self
    }
}

impl ClientCapabilities {
    /// The MIME types the client renders as MCP Apps views: its
    /// `extensions["io.modelcontextprotocol/ui"].mimeTypes`, empty when it
    /// did not declare the extension ("Client<>Server Capability
    /// Negotiation").
    pub fn ui_mime_types(&self) -> Vec<String> {
        let declared = match self.extra.get("extensions") {
            Some(Value::Object(extensions)) => extensions.get(extensions::UI),
            _ => None,
        };
        declared
            .and_then(|settings| settings.get("mimeTypes"))
            .and_then(Value::as_array)
            .map(|types| {
                let texts = types.iter().filter_map(Value::as_str);
                texts.map(String::from).collect()
            })
            .unwrap_or_default()
    }

    /// `true` when the client renders HTML views
    /// (`text/html;profile=mcp-app` among its `mimeTypes`).
    pub fn supports_ui(&self) -> bool {
        self.ui_mime_types().iter().any(|t| t == UI_MIME_TYPE)
    }

    /// Declares the extension `id` with its `settings` object, replacing
    /// an earlier declaration of it.
    pub fn with_extension(mut self, id: &str, settings: JsonObject) -> ClientCapabilities {
        let extensions = self
            .extra
            .entry("extensions")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if !extensions.is_object() {
            *extensions = Value::Object(JsonObject::new());
        }
        if let Value::Object(map) = extensions {
            map.insert(id.into(), Value::Object(settings));
        }
        self
    }
}

/// `_meta.ui` of a tool, member by member (see [`Tool::ui`]).
fn read_tool_ui(value: &Value) -> ToolUiMeta {
    let resource_uri = value
        .get("resourceUri")
        .and_then(Value::as_str)
        .map(String::from);
    let visibility = value.get("visibility").map(|v| match v.as_array() {
        Some(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|item| ToolVisibility::deserialize(item).ok())
            .collect(),
        _ => Vec::new(),
    });
    ToolUiMeta {
        resource_uri,
        visibility,
    }
}

/// `_meta.ui` of a resource or contents, read as the extension's shape.
fn read_ui(meta: Option<&JsonObject>) -> Option<UiResourceMeta> {
    UiResourceMeta::deserialize(meta?.get(UI_KEY)?).ok()
}

/// Our own metadata as a JSON object (its fields are strings, lists and
/// flags, which always serialize).
fn to_object<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_else(|_| Value::Object(JsonObject::new()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // "Resource Discovery": `_meta.ui` and the deprecated flat key are both
    // written; either reads back; visibility defaults to both.
    #[test]
    fn tool_ui_written_and_read() {
        let tool = Tool::without_arguments("refresh")
            .with_ui(ToolUiMeta::new("ui://clock/view").with_visibility([ToolVisibility::App]));
        let wire = serde_json::to_value(&tool).unwrap();
        assert_eq!(
            wire["_meta"],
            json!({"ui": {"resourceUri": "ui://clock/view", "visibility": ["app"]},
                   "ui/resourceUri": "ui://clock/view"})
        );
        assert!(!tool.is_visible_to_model());
        let flat: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {},
            "_meta": {"ui/resourceUri": "ui://a"}}))
        .unwrap();
        assert_eq!(flat.ui().unwrap().resource_uri.as_deref(), Some("ui://a"));
        assert!(flat.is_visible_to_model());
        let plain = Tool::without_arguments("p");
        assert_eq!(plain.ui(), None);
        assert_eq!(tool.clone().without_ui().meta, None);
        // Replacing the view with none drops the flat key too.
        let cleared = tool.with_ui(ToolUiMeta::default());
        assert_eq!(cleared.ui().unwrap().resource_uri, None);
    }

    // "Visibility": an app-only tool stays out of the model's list even
    // when its metadata carries a value this crate does not know, and a
    // malformed `visibility` fails closed.
    #[test]
    fn tool_ui_read_leniently_and_closed() {
        let read = |ui: Value| {
            let tool: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {},
                "_meta": {"ui": ui, "ui/resourceUri": "ui://flat"}}))
            .unwrap();
            (tool.ui().unwrap(), tool.is_visible_to_model())
        };
        let (ui, model) = read(json!({"resourceUri": "ui://v", "visibility": ["app", "pip"]}));
        assert_eq!(ui.visibility, Some(vec![ToolVisibility::App]));
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://v"));
        assert!(!model);
        for odd in [
            json!("app"),
            json!([1]),
            json!({"app": true}),
            json!(["App"]),
        ] {
            let (ui, model) = read(json!({ "visibility": odd }));
            assert!(!model, "{:?}", ui);
            assert!(!ui.is_visible_to(ToolVisibility::App), "{:?}", ui);
            assert_eq!(ui.resource_uri.as_deref(), Some("ui://flat"));
        }
        let (ui, model) = read(json!("not an object"));
        assert!(model && ui.visibility.is_none());
    }

    // "UI Resource Format": every member of `_meta.ui` with its wire name.
    #[test]
    fn resource_ui_shape() {
        let ui = UiResourceMeta::new()
            .with_csp(
                UiResourceCsp::new()
                    .with_connect_domains(["https://api.example.com"])
                    .with_resource_domains(["https://cdn.example.com"])
                    .with_frame_domains(["https://www.youtube.com"])
                    .with_base_uri_domains(["https://cdn.example.com"]),
            )
            .with_permissions(UiPermissions::new().with_camera().with_clipboard_write())
            .with_domain("abc.example.net")
            .with_prefers_border(true);
        let resource = Resource::new("ui://v", "v").with_ui(ui.clone());
        assert_eq!(
            serde_json::to_value(&resource).unwrap()["_meta"]["ui"],
            json!({"csp": {"connectDomains": ["https://api.example.com"],
                           "resourceDomains": ["https://cdn.example.com"],
                           "frameDomains": ["https://www.youtube.com"],
                           "baseUriDomains": ["https://cdn.example.com"]},
                   "permissions": {"camera": {}, "clipboardWrite": {}},
                   "domain": "abc.example.net", "prefersBorder": true})
        );
        assert_eq!(resource.ui(), Some(ui.clone()));
        let contents = ResourceContents::text("ui://v", UI_MIME_TYPE, "<html></html>").with_ui(ui);
        assert_eq!(contents.ui(), resource.ui());
        assert_eq!(contents.mime_type(), Some(UI_MIME_TYPE));
    }

    // "Client (Host) Capabilities": `mimeTypes` under the extension's id.
    #[test]
    fn client_declares_ui() {
        let mut settings = JsonObject::new();
        settings.insert("mimeTypes".into(), json!([UI_MIME_TYPE]));
        let caps = ClientCapabilities::default().with_extension(extensions::UI, settings);
        assert!(caps.supports_ui());
        let wire = serde_json::to_value(&caps).unwrap();
        assert_eq!(
            wire,
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [UI_MIME_TYPE]}}})
        );
        let other: ClientCapabilities = serde_json::from_value(
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/x"]}}}),
        )
        .unwrap();
        assert!(!other.supports_ui());
        assert!(!ClientCapabilities::default().supports_ui());
    }
}
