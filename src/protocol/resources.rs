//! Spec: server/resources (2025-11-25).

use serde::{Deserialize, Serialize};

use super::{Annotations, Icon, ResourceContents};
use crate::jsonrpc::JsonObject;

/// A resource, as listed by `resources/list` or sent as a `resource_link`.
///
/// Shape: `{"uri", "name", "title"?, "description"?, "mimeType"?, "size"?,
/// "icons"?, "annotations"?, "_meta"?}`; `size` is in bytes before base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// The URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }

    /// Sets `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Resource {
        self.title = Some(title.into());
        self
    }

    /// Sets `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Resource {
        self.description = Some(description.into());
        self
    }

    /// Sets `mimeType`.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Resource {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets `size` (bytes).
    pub fn with_size(mut self, size: u64) -> Resource {
        self.size = Some(size);
        self
    }
}

/// A family of resources named by an RFC 6570 URI template.
///
/// Shape: `{"uriTemplate", "name", "title"?, "description"?, "mimeType"?,
/// "icons"?, "annotations"?, "_meta"?}`. Level-1 variables (`{id}`) match
/// one path segment; `{+path}` matches the rest, slashes included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// E.g. `test://template/{id}/data`.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }

    /// Sets `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> ResourceTemplate {
        self.title = Some(title.into());
        self
    }

    /// Sets `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> ResourceTemplate {
        self.description = Some(description.into());
        self
    }

    /// Sets `mimeType`.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> ResourceTemplate {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Params of `resources/read`, `resources/subscribe` and
/// `resources/unsubscribe`: `{"uri"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceRequestParams {
    /// The resource's URI.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `resources/read`: `{"contents"}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// One or more contents (a directory may give several).
    pub contents: Vec<ResourceContents>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ReadResourceResult {
    /// A result with these contents.
    pub fn new(contents: Vec<ResourceContents>) -> ReadResourceResult {
        ReadResourceResult {
            contents,
            meta: None,
        }
    }

    /// One text contents of `uri`, without a `mimeType`: the server's
    /// `resources/read` answer gives it the `mimeType` registered with the
    /// [`Resource`] or [`ResourceTemplate`] that matched, else
    /// `text/plain`. Use [`ResourceContents::text`] to name another.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> ReadResourceResult {
        let contents = ResourceContents::Text {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        };
        ReadResourceResult::new(vec![contents])
    }
}

/// Result of `resources/list`: `{"resources", "nextCursor"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourcesResult {
    /// One page of resources.
    pub resources: Vec<Resource>,
    /// Where the next page starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Result of `resources/templates/list`: `{"resourceTemplates", "nextCursor"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourceTemplatesResult {
    /// One page of templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Where the next page starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
