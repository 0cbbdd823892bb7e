//! The builder's MCP Apps settings (the extension
//! `io.modelcontextprotocol/ui`, SEP-1865): views, and how they are
//! listed.

use std::sync::Arc;

use super::ServerBuilder;
use crate::error::Error;
use crate::protocol::Resource;
use crate::server::apps::{checked_view, fixed_html, View};
use crate::server::handler::ResourceHandler;

impl ServerBuilder {
    /// Adds an MCP Apps view whose HTML is `html`: the resource
    /// `resource` (a `ui://` URI; its MIME type
    /// `text/html;profile=mcp-app`, set when absent), read as that one
    /// text. Its `_meta.ui` ([`Resource::with_ui`]: CSP origins,
    /// permissions, domain, border) is listed and copied onto the
    /// contents. A tool names the view with
    /// [`Tool::with_ui`](crate::Tool::with_ui); the server then declares
    /// the extension (`{}`) in `initialize` and `server/discover`.
    ///
    /// ```
    /// use serde_json::json;
    /// use tiny_mcp::{CallToolResult, Resource, Server, Tool, ToolUiMeta, UiResourceMeta};
    ///
    /// let view = Resource::new("ui://clock/view", "clock_view")
    ///     .with_ui(UiResourceMeta::new().with_prefers_border(true));
    /// let server = Server::builder("clock", "1.0.0")
    ///     .ui_resource(view, "<!DOCTYPE html><html><body>…</body></html>")?
    ///     .tool(
    ///         Tool::without_arguments("now").with_ui(ToolUiMeta::new("ui://clock/view")),
    ///         |_: &tiny_mcp::RequestContext, _: tiny_mcp::JsonObject| {
    ///             // `content` for hosts without views; the view reads the rest.
    ///             Ok(CallToolResult::text_and_structured("12:00", json!({"time": "12:00"})))
    ///         },
    ///     )
    ///     .try_build()?;
    /// # drop(server);
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    ///
    /// A second view (or resource) at the same URI replaces the first.
    /// With [`capabilities`](Self::capabilities) set by hand, the
    /// declaration is yours to write (`extensions` with
    /// [`extensions::UI`](crate::extensions::UI)). Views and tools added
    /// while serving ([`ServerHandle`](crate::ServerHandle)) are plain
    /// resources and tools: nothing checks them against each other, and
    /// only a built server with a view declares the extension.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for a
    /// URI without the `ui://` scheme, another MIME type (case and spaces
    /// aside), or an entry of a `_meta.ui.csp` list that is not an origin
    /// (`https://api.example.com`, `https://*.example.com`; a path, a
    /// bare `*` or a `;` is refused: hosts build their Content Security
    /// Policy from these).
    ///
    /// Spec: MCP Apps "UI Resource Format" (2026-01-26).
    pub fn ui_resource(self, resource: Resource, html: impl Into<String>) -> Result<Self, Error> {
        let reader = fixed_html(&resource.uri, html.into());
        self.ui_resource_with(resource, reader)
    }

    /// [`ui_resource`](Self::ui_resource) with a reader of its own (HTML
    /// made per request, or a `blob`): contents of the view's URI get the
    /// view's MIME type, and its `_meta.ui` when they carry none (a
    /// contents' own `_meta.ui` takes precedence).
    ///
    /// # Errors
    ///
    /// As [`ui_resource`](Self::ui_resource).
    pub fn ui_resource_with(
        mut self,
        resource: Resource,
        reader: impl ResourceHandler,
    ) -> Result<Self, Error> {
        let resource = checked_view(resource)?;
        let view = View {
            uri: resource.uri.clone(),
            ui: resource.ui(),
            reader: Arc::new(reader),
        };
        self.registry.insert_resource(resource, Arc::new(view));
        Ok(self)
    }

    /// Whether `resources/list` lists the views. Defaults to `true`: hosts
    /// may review views when they connect. `false` leaves them out (MCP
    /// Apps allows it: hosts find views through the tools' `_meta.ui`);
    /// `resources/read` serves them either way.
    pub fn list_ui_resources(mut self, listed: bool) -> Self {
        self.config.list_ui_resources = listed;
        self
    }

    /// Whether a client that renders no views (it did not declare the
    /// extension with `text/html;profile=mcp-app`) gets the tools without
    /// their `_meta.ui`, and without the tools only views call
    /// (`visibility: ["app"]`). Decided per request: the session's
    /// capabilities in 2025-11-25, the request's in 2026-07-28. Defaults to
    /// `false` (every client gets the same list, as the official SDKs
    /// list it). Either way a tool with a view must return meaningful
    /// `content` for hosts that show only text.
    ///
    /// Hiding is not access control: any client may still call an
    /// app-only tool by name (refusing a view's call of a tool without
    /// `"app"` is the host's job, MCP Apps "Visibility"). A handler that
    /// must answer only hosts with views checks
    /// [`RequestContext::supports_ui`](crate::RequestContext::supports_ui).
    /// A client whose capabilities are unknown (2025-11-25 stateless HTTP)
    /// gets the whole list. The list then depends on the client: do not
    /// give `tools/list` a `public` cache hint
    /// ([`cache_hints`](Self::cache_hints)) with this on.
    ///
    /// Spec: MCP Apps "Graceful Degradation".
    pub fn hide_ui_from_text_clients(mut self, hide: bool) -> Self {
        self.config.hide_ui_from_text_clients = hide;
        self
    }
}
