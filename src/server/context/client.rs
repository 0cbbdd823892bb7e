//! What the context knows of the request's client: what it declared (in
//! `initialize` in 2025-11-25, in this request's `_meta` in 2026-07-28),
//! and the protocol version.

use super::{ClientLink, RequestContext};
use crate::protocol::{ClientCapabilities, Implementation};

impl RequestContext {
    /// The client's `clientInfo`: from `initialize`, or in the 2026-07-28
    /// era from this request's `_meta`.
    pub fn client_info(&self) -> Option<Implementation> {
        match &self.link {
            ClientLink::Connection { .. } => self.session.state.lock().client_info.clone(),
            ClientLink::Retry { envelope, .. } => envelope.client_info.clone(),
        }
    }

    /// The capabilities the client declared: in `initialize`, or in the
    /// 2026-07-28 era in this request's `_meta` (never earlier requests').
    pub fn client_capabilities(&self) -> ClientCapabilities {
        match &self.link {
            ClientLink::Connection { .. } => self.session.state.lock().client_capabilities.clone(),
            ClientLink::Retry { envelope, .. } => envelope.client_capabilities.clone(),
        }
    }

    /// `true` when this request's client renders MCP Apps views: it
    /// declared the extension `io.modelcontextprotocol/ui` with
    /// `text/html;profile=mcp-app` among its `mimeTypes` (in `initialize`
    /// in 2025-11-25, in this request's `_meta` in 2026-07-28). A tool may
    /// shape its `content` for a text-only host when it is `false`; its
    /// `structuredContent` is what a view reads. `false` when the
    /// capabilities are unknown (a 2025-11-25 stateless HTTP POST: no
    /// `initialize` reaches it).
    ///
    /// Spec: MCP Apps "Client<>Server Capability Negotiation".
    pub fn supports_ui(&self) -> bool {
        self.client_capabilities().supports_ui()
    }

    /// `true` if the client declared `elicitation.url` (in `initialize`, or
    /// in the 2026-07-28 era in this request's `_meta`): it can take a
    /// URL-mode elicitation. A tool's
    /// [`ErrorKind::UrlElicitationRequired`](crate::ErrorKind::UrlElicitationRequired) reaches only such a client,
    /// as `-32042` in the 2025-11-25 era; any other gets an `isError`
    /// result carrying the URLs (so does every client in 2026-07-28,
    /// which has no `-32042`). Check it to choose another way to ask.
    ///
    /// Spec: client/elicitation (2025-11-25), "URL Elicitation Required Error".
    pub fn supports_url_elicitation(&self) -> bool {
        match &self.link {
            ClientLink::Connection { .. } => {
                let state = self.session.state.lock();
                state.client_capabilities.supports_elicitation_url()
            }
            ClientLink::Retry { envelope, .. } => {
                envelope.client_capabilities.supports_elicitation_url()
            }
        }
    }

    /// The protocol version of this request: the negotiated one (e.g.
    /// `2025-11-25`) or this request's (`2026-07-28`).
    pub fn protocol_version(&self) -> String {
        match &self.link {
            ClientLink::Connection { .. } => self.session.protocol_version(),
            ClientLink::Retry { envelope, .. } => envelope.version.clone(),
        }
    }
}
