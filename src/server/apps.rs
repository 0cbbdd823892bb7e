//! MCP Apps on the server (the extension `io.modelcontextprotocol/ui`,
//! SEP-1865, `specification/2026-01-26/apps.mdx` of
//! `modelcontextprotocol/ext-apps`): what makes a resource a view, the
//! checks a builder runs, the view's reader that stamps its contents, the
//! declaration, and whether a request's client renders views.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::context::RequestContext;
use super::handler::ResourceHandler;
use super::registry::Registry;
use super::session::Session;
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::protocol::{
    extensions, meta, ClientCapabilities, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities, UiResourceCsp, UiResourceMeta, UI_MIME_TYPE, UI_SCHEME,
};

/// `true` for an MCP Apps view: a `ui://` resource of type
/// `text/html;profile=mcp-app`.
pub(crate) fn is_view(resource: &Resource) -> bool {
    resource.uri.starts_with(UI_SCHEME) && resource.mime_type.as_deref() == Some(UI_MIME_TYPE)
}

/// "Content Requirements": the URI is `ui://…` and the MIME type, when
/// given, `text/html;profile=mcp-app` (written as the spec spells it when
/// it differs only in case or spaces); an absent one is set. The CSP lists
/// of `_meta.ui` hold origins only.
pub(crate) fn checked_view(mut resource: Resource) -> Result<Resource, Error> {
    if !resource.uri.starts_with(UI_SCHEME) || resource.uri.len() == UI_SCHEME.len() {
        return Err(Error::invalid_params(format!(
            "an MCP Apps view needs a ui:// URI (e.g. ui://my-server/view), not {:?}",
            cut(&resource.uri)
        )));
    }
    match resource.mime_type.as_deref() {
        None => resource.mime_type = Some(UI_MIME_TYPE.into()),
        Some(given) if same_mime_type(given) => resource.mime_type = Some(UI_MIME_TYPE.into()),
        Some(other) => {
            return Err(Error::invalid_params(format!(
                "the MCP Apps view {} has MIME type {:?}; a view's is {:?}",
                resource.uri,
                cut(other),
                UI_MIME_TYPE
            )))
        }
    }
    let declared = resource
        .meta
        .as_ref()
        .map_or(false, |m| m.contains_key("ui"));
    match resource.ui() {
        Some(ui) => check_ui(&resource.uri, &ui)?,
        None if declared => {
            return Err(Error::invalid_params(format!(
                "the _meta.ui of the MCP Apps view {} is not the extension's shape \
                 (build it with UiResourceMeta)",
                resource.uri
            )))
        }
        None => {}
    }
    Ok(resource)
}

/// `given` is the view MIME type but for ASCII case and spaces (RFC 9110
/// §8.3.1: types and parameter names are case-insensitive).
fn same_mime_type(given: &str) -> bool {
    let squeezed: String = given.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    squeezed.eq_ignore_ascii_case(UI_MIME_TYPE)
}

/// A view's `_meta.ui`: its CSP origins, and a `domain` without what would
/// end a header or a directive (its format is the host's).
fn check_ui(uri: &str, ui: &UiResourceMeta) -> Result<(), Error> {
    if let Some(csp) = &ui.csp {
        check_csp(uri, csp)?;
    }
    let bad = |c: char| c.is_whitespace() || c.is_control() || matches!(c, ';' | ',' | '\'' | '"');
    match &ui.domain {
        Some(domain) if domain.is_empty() || domain.contains(bad) => {
            Err(Error::invalid_params(format!(
                "the MCP Apps view {} has the domain {:?}: a host name such as \
                 abc123.example-host.com, without spaces, quotes, commas or ';'",
                uri,
                cut(domain)
            )))
        }
        _ => Ok(()),
    }
}

/// Each entry of each CSP list is an origin: `scheme://host[:port]`, the
/// host maybe `*.`-prefixed ("UI Resource Format": wildcard subdomains).
/// A host builds its policy from them, so a path, a quote, a `;` or a
/// space (which would end the directive) or a bare `*` is refused.
fn check_csp(uri: &str, csp: &UiResourceCsp) -> Result<(), Error> {
    let lists = [
        ("connectDomains", &csp.connect_domains),
        ("resourceDomains", &csp.resource_domains),
        ("frameDomains", &csp.frame_domains),
        ("baseUriDomains", &csp.base_uri_domains),
    ];
    for (name, list) in lists {
        for origin in list.iter().flatten() {
            if !is_origin(origin) {
                return Err(Error::invalid_params(format!(
                    "the MCP Apps view {} lists {:?} in csp.{}: each entry is an origin such \
                     as https://api.example.com or https://*.example.com",
                    uri,
                    cut(origin),
                    name
                )));
            }
        }
    }
    Ok(())
}

/// `scheme://host[:port]`, nothing after the authority.
fn is_origin(text: &str) -> bool {
    let (scheme, rest) = match text.split_once("://") {
        Some(parts) => parts,
        None => return false,
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let host = rest.strip_prefix("*.").unwrap_or(rest);
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '[' | ']'));
    scheme_ok && host_ok
}

/// "Resource Discovery": every tool's `_meta.ui.resourceUri` names a
/// registered view ("Resource MUST exist on the server").
pub(crate) fn check_tools(registry: &Registry) -> Result<(), Error> {
    for entry in &registry.tools {
        let uri = match entry.tool.ui().and_then(|ui| ui.resource_uri) {
            Some(uri) => uri,
            None => continue,
        };
        let found = registry.resources.iter().find(|r| r.resource.uri == uri);
        let problem = match found {
            Some(r) if is_view(&r.resource) => continue,
            Some(_) => {
                "is a resource but not a view (register it with \
                        ServerBuilder::ui_resource: MIME type text/html;profile=mcp-app)"
            }
            None if !uri.starts_with(UI_SCHEME) => "is not a ui:// URI, as a view's must be",
            None => "is not registered (add it with ServerBuilder::ui_resource)",
        };
        return Err(Error::invalid_params(format!(
            "the tool {:?} names the view {:?}, which {}",
            entry.tool.name,
            cut(&uri),
            problem
        )));
    }
    Ok(())
}

/// Declares the extension, with no settings (`{}`): in `server/discover`
/// and, as MCP Apps asks of every era, in `initialize`.
pub(crate) fn declare(capabilities: &mut ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(JsonObject::new)
        .insert(extensions::UI.into(), Value::Object(JsonObject::new()));
}

/// Whether the client of this request renders views: the session's
/// capabilities in 2025-11-25, the request's `_meta` in 2026-07-28 (read
/// here for the rows answered inline, which have no context). `None` when
/// nobody knows: a 2025-11-25 stateless POST, whose session saw no
/// `initialize`.
pub(crate) fn request_supports_ui(session: &Session, params: Option<&Value>) -> Option<bool> {
    let envelope = params
        .and_then(|p| p.get("_meta"))
        .filter(|m| m.get(meta::PROTOCOL_VERSION).is_some());
    match envelope {
        Some(meta_object) => Some(match meta_object.get(meta::CLIENT_CAPABILITIES) {
            Some(caps) => ClientCapabilities::deserialize_from(caps).supports_ui(),
            None => false,
        }),
        None => {
            let state = session.state.lock();
            let initialized = state.client_info.is_some();
            initialized.then(|| state.client_capabilities.supports_ui())
        }
    }
}

impl ClientCapabilities {
    /// Capabilities read from `value`; nothing declared when they do not
    /// read.
    fn deserialize_from(value: &Value) -> ClientCapabilities {
        serde::Deserialize::deserialize(value).unwrap_or_default()
    }
}

/// The reader of a view: the program's reader, whose contents of the
/// view's URI get the view's MIME type and, when they carry none, its
/// `_meta.ui` (MCP Apps: `_meta.ui` on both the listing and the contents).
pub(crate) struct View {
    pub(crate) uri: String,
    pub(crate) ui: Option<UiResourceMeta>,
    pub(crate) reader: Arc<dyn ResourceHandler>,
}

impl ResourceHandler for View {
    fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadResourceResult, Error> {
        let mut result = self.reader.read(ctx, uri)?;
        for contents in &mut result.contents {
            let (mime_type, meta) = match contents {
                ResourceContents::Text {
                    uri,
                    mime_type,
                    meta,
                    ..
                }
                | ResourceContents::Blob {
                    uri,
                    mime_type,
                    meta,
                    ..
                } if *uri == self.uri => (mime_type, meta),
                _ => continue,
            };
            *mime_type = Some(UI_MIME_TYPE.into());
            // The contents' own `_meta.ui` wins when it reads as one.
            let own = meta.as_ref().and_then(|m| m.get("ui"));
            let has_ui = own.map_or(false, |ui| UiResourceMeta::deserialize(ui).is_ok());
            if let (false, Some(ui)) = (has_ui, &self.ui) {
                let value = serde_json::to_value(ui).unwrap_or(Value::Null);
                meta.get_or_insert_with(JsonObject::new)
                    .insert("ui".into(), value);
            }
        }
        Ok(result)
    }
}

/// A view whose HTML is fixed: its one text contents.
pub(crate) fn fixed_html(uri: &str, html: String) -> impl ResourceHandler {
    let uri = uri.to_string();
    move |_: &RequestContext, _: &str| {
        let contents = ResourceContents::text(uri.as_str(), UI_MIME_TYPE, html.as_str());
        Ok(ReadResourceResult::new(vec![contents]))
    }
}

/// At most 64 characters of a program's value, for a message.
fn cut(text: &str) -> String {
    let mut shown: String = text.chars().take(64).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    // "Content Requirements": the scheme and the MIME type.
    #[test]
    fn views_are_checked() {
        let ok = checked_view(Resource::new("ui://clock/view", "clock")).unwrap();
        assert_eq!(ok.mime_type.as_deref(), Some(UI_MIME_TYPE));
        assert!(is_view(&ok));
        let scheme = checked_view(Resource::new("https://x/view", "v")).unwrap_err();
        assert!(scheme.to_string().contains("ui:// URI"), "{}", scheme);
        assert!(checked_view(Resource::new("ui://", "v")).is_err());
        let typed = Resource::new("ui://v", "v").with_mime_type("text/html");
        let message = checked_view(typed).unwrap_err().to_string();
        assert!(message.contains("text/html;profile=mcp-app"), "{}", message);
        let spaced = Resource::new("ui://v", "v").with_mime_type("Text/HTML; profile=mcp-app");
        let spaced = checked_view(spaced).unwrap();
        assert_eq!(spaced.mime_type.as_deref(), Some(UI_MIME_TYPE));
    }

    // The CSP lists hold origins: nothing a host's policy would read as
    // another source or directive.
    #[test]
    fn odd_ui_is_refused() {
        let string_list: Resource = serde_json::from_value(serde_json::json!({
            "uri": "ui://v", "name": "v",
            "_meta": {"ui": {"csp": {"connectDomains": "https://evil; script-src *"}}}
        }))
        .unwrap();
        let message = checked_view(string_list).unwrap_err().to_string();
        assert!(message.contains("not the extension's shape"), "{}", message);
        let domain = UiResourceMeta::new().with_domain("a.com; script-src *");
        let view = Resource::new("ui://v", "v").with_ui(domain);
        assert!(checked_view(view).is_err());
        let fine = UiResourceMeta::new().with_domain("a904794854a047f6.claudemcpcontent.com");
        assert!(checked_view(Resource::new("ui://v", "v").with_ui(fine)).is_ok());
    }

    #[test]
    fn csp_entries_are_origins() {
        for good in [
            "https://api.example.com",
            "wss://realtime.example.com",
            "https://*.example.com",
            "http://127.0.0.1:8080",
        ] {
            assert!(is_origin(good), "{}", good);
        }
        for bad in [
            "*",
            "api.example.com",
            "https://api.example.com/v1",
            "https://a.com; script-src *",
            "https://a.com 'unsafe-eval'",
            "https://",
            "://a.com",
        ] {
            assert!(!is_origin(bad), "{}", bad);
            let csp = UiResourceCsp::new().with_resource_domains([bad]);
            let view = Resource::new("ui://v", "v").with_ui(UiResourceMeta::new().with_csp(csp));
            let message = checked_view(view).unwrap_err().to_string();
            assert!(message.contains("csp.resourceDomains"), "{}", message);
        }
    }
}
