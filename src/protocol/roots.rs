//! Spec: client/roots (2025-11-25).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::JsonObject;

/// A root the client exposes: `{"uri": "file://…", "name"?, "_meta"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Root {
    /// A root with a URI (`file://…`) and no name.
    pub fn new(uri: impl Into<String>) -> Root {
        Root {
            uri: uri.into(),
            name: None,
            meta: None,
        }
    }

    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Root {
        self.name = Some(name.into());
        self
    }
}

/// Result of `roots/list`: `{"roots"}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ListRootsResult {
    /// The result listing these roots.
    pub fn new(roots: Vec<Root>) -> ListRootsResult {
        ListRootsResult { roots, meta: None }
    }
}
