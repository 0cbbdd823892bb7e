//! MCP data types for revision 2025-11-25, one file per spec page.
//!
//! Names are the `schema.ts` interface names in Rust case; fields are
//! snake_case in Rust and camelCase on the wire. `_meta` is the field `meta`.
//! Optional fields are `Option` and skipped when `None`. Types that users
//! build have a `new` with the required fields and `with_*` for the rest.

mod apps;
mod completion;
mod content;
mod elicitation;
mod lifecycle;
mod logging;
mod progress;
mod prompts;
mod resources;
mod roots;
mod sampling;
#[cfg(feature = "schemars")]
mod schema;
mod tasks;
mod tools;

pub use apps::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use lifecycle::*;
pub use logging::*;
pub use progress::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use tasks::*;
pub use tools::*;

use serde::{Deserialize, Serialize};

use crate::jsonrpc::JsonObject;

/// The protocol era a request belongs to.
///
/// The two eras have incompatible lifecycles, and one server serves both
/// (DESIGN.md §8). Handlers rarely need to know: the blocking calls of
/// [`RequestContext`](crate::RequestContext) work in either.
///
/// Spec: basic/lifecycle (2025-11-25); basic/lifecycle and
/// basic/versioning (2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2025-11-25 and the versions it negotiates down to (2025-06-18,
    /// 2025-03-26, 2024-11-05): an `initialize` handshake opens a session,
    /// and the server may send requests to the client and wait.
    V2025_11_25,
    /// 2026-07-28: no handshake and no session; each request names its
    /// version and the client's capabilities in `_meta`, and the server
    /// asks the client for input by answering `input_required`.
    V2026_07_28,
}

impl Era {
    /// The protocol versions served in this era, newest first: for
    /// 2025-11-25, the ones `initialize` negotiates
    /// ([`versions::SUPPORTED`]); for 2026-07-28, the ones a request's
    /// `_meta` may name (what `server/discover` lists as
    /// `supportedVersions`).
    pub fn versions(self) -> &'static [&'static str] {
        match self {
            Era::V2025_11_25 => versions::SUPPORTED,
            Era::V2026_07_28 => &[versions::V2026_07_28],
        }
    }

    /// The era that serves the protocol `version`, `None` for a version
    /// neither serves (e.g. `"2026-01-01"`).
    ///
    /// ```
    /// use tiny_mcp::Era;
    ///
    /// assert_eq!(Era::of("2025-06-18"), Some(Era::V2025_11_25));
    /// assert_eq!(Era::of("2026-07-28"), Some(Era::V2026_07_28));
    /// assert_eq!(Era::of("2026-01-01"), None);
    /// ```
    pub fn of(version: &str) -> Option<Era> {
        [Era::V2025_11_25, Era::V2026_07_28]
            .into_iter()
            .find(|era| era.versions().contains(&version))
    }
}

/// Protocol version strings.
pub mod versions {
    /// The newest revision with the `initialize` handshake (the crate also
    /// serves 2026-07-28, [`V2026_07_28`]).
    pub const V2025_11_25: &str = "2025-11-25";
    /// 2025-06-18.
    pub const V2025_06_18: &str = "2025-06-18";
    /// 2025-03-26: assumed on HTTP when no version is known (HTTP-20).
    pub const V2025_03_26: &str = "2025-03-26";
    /// 2024-11-05, the first revision.
    pub const V2024_11_05: &str = "2024-11-05";
    /// The newest version `initialize` negotiates.
    pub const LATEST: &str = V2025_11_25;
    /// Every version `initialize` accepts, newest first.
    pub const SUPPORTED: &[&str] = &[V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05];

    /// `true` if `version` is one of [`SUPPORTED`].
    pub fn is_supported(version: &str) -> bool {
        SUPPORTED.contains(&version)
    }

    /// 2026-07-28: the revision without a handshake (no `initialize`,
    /// per-request `_meta`, `server/discover`, `subscriptions/listen`);
    /// see [`Era::V2026_07_28`](super::Era::V2026_07_28).
    pub const V2026_07_28: &str = "2026-07-28";
}

/// `_meta` keys of the 2026-07-28 request envelope and results.
pub mod meta {
    /// The request's protocol version (required).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities for this request (required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Who the client is (optional).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Opts the request into `notifications/message` at this level or above.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Who the server is, stamped on results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The listen request's id, stamped on every message of its stream.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// `{"taskId"}` on the messages related to a task (2025-11-25, TASK-7).
    pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
}

/// Extension identifiers (2026-07-28 `capabilities.extensions` keys).
pub mod extensions {
    /// Tasks (SEP-2663): `tools/call` may answer with a task handle.
    pub const TASKS: &str = "io.modelcontextprotocol/tasks";
    /// Skills (SEP-2640): skills served as resources.
    pub const SKILLS: &str = "io.modelcontextprotocol/skills";
    /// MCP Apps: tools with interactive views (SEP-1865, 2026-01-26),
    /// declared in both eras.
    pub const UI: &str = "io.modelcontextprotocol/ui";
}

/// Method names, spelled as the spec spells them.
pub mod methods {
    /// `initialize`
    pub const INITIALIZE: &str = "initialize";
    /// `ping`
    pub const PING: &str = "ping";
    /// `tools/list`
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call`
    pub const TOOLS_CALL: &str = "tools/call";
    /// `resources/list`
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list`
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read`
    pub const RESOURCES_READ: &str = "resources/read";
    /// `resources/subscribe`
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe`
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// `prompts/list`
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `prompts/get`
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `completion/complete`
    pub const COMPLETION_COMPLETE: &str = "completion/complete";
    /// `logging/setLevel`
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `sampling/createMessage` (server to client)
    pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
    /// `elicitation/create` (server to client)
    pub const ELICITATION_CREATE: &str = "elicitation/create";
    /// `roots/list` (server to client)
    pub const ROOTS_LIST: &str = "roots/list";
    /// `server/discover` (2026-07-28)
    pub const SERVER_DISCOVER: &str = "server/discover";
    /// `subscriptions/listen` (2026-07-28)
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// `tasks/get` (2025-11-25 tasks; the 2026-07-28 tasks extension)
    pub const TASKS_GET: &str = "tasks/get";
    /// `tasks/result` (2025-11-25 tasks only)
    pub const TASKS_RESULT: &str = "tasks/result";
    /// `tasks/list` (2025-11-25 tasks only)
    pub const TASKS_LIST: &str = "tasks/list";
    /// `tasks/cancel` (both)
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// `tasks/update` (the 2026-07-28 tasks extension only)
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// `skills/list` (the 2026-07-28 skills extension)
    pub const SKILLS_LIST: &str = "skills/list";
    /// `skills/get` (the 2026-07-28 skills extension)
    pub const SKILLS_GET: &str = "skills/get";
    /// `resources/directory/read` (the 2026-07-28 skills extension)
    pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
}

/// Notification method names.
pub mod notifications {
    /// `notifications/initialized`
    pub const INITIALIZED: &str = "notifications/initialized";
    /// `notifications/cancelled`
    pub const CANCELLED: &str = "notifications/cancelled";
    /// `notifications/progress`
    pub const PROGRESS: &str = "notifications/progress";
    /// `notifications/message`
    pub const MESSAGE: &str = "notifications/message";
    /// `notifications/tools/list_changed`
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `notifications/prompts/list_changed`
    pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// `notifications/resources/list_changed`
    pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// `notifications/resources/updated`
    pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// `notifications/roots/list_changed`
    pub const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
    /// `notifications/elicitation/complete`
    pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
    /// `notifications/subscriptions/acknowledged` (2026-07-28)
    pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
    /// `notifications/tasks/status` (2025-11-25 tasks)
    pub const TASKS_STATUS: &str = "notifications/tasks/status";
}

/// The name and version of a client or server.
///
/// Shape: `{"name", "version", "title"?, "description"?, "icons"?, "websiteUrl"?}`.
///
/// Spec: basic/lifecycle (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Implementation {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// An icon: `{"src", "mimeType"?, "sizes"?, "theme"?}`.
///
/// `src` is an `https:` or `data:` URI; `sizes` such as `"48x48"` or `"any"`;
/// `theme` is `"light"` or `"dark"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// The image URI.
    pub src: String,
    /// The MIME type, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon from a URI.
    pub fn new(src: impl Into<String>) -> Icon {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

/// Params of a paginated list request: `{"cursor"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// The opaque cursor from the previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// An empty result, `{}` (e.g. for `ping` and `logging/setLevel`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
