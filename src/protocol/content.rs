//! Spec: server/tools "Tool Result" content blocks and resource contents
//! (2025-11-25).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::JsonObject;

/// Who a message or a piece of content is for: `"user"` or `"assistant"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human.
    User,
    /// The model.
    Assistant,
}

/// Hints about content: `{"audience"?, "priority"?, "lastModified"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who should see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// One block of content in a tool result or a prompt message.
///
/// Shape: an object tagged by `type`: `text`, `image`, `audio`,
/// `resource_link` or `resource`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `{"type":"text","text"}`
    Text(TextContent),
    /// `{"type":"image","data","mimeType"}` with base64 `data`.
    Image(ImageContent),
    /// `{"type":"audio","data","mimeType"}` with base64 `data`.
    Audio(ImageContent),
    /// `{"type":"resource_link","uri","name",…}`
    ResourceLink(super::Resource),
    /// `{"type":"resource","resource":{…}}`
    Resource(EmbeddedResource),
}

/// Read as a JSON object, then as the variant its `type` names, with the
/// messages of serde's internally tagged enums ("missing field `type`",
/// "unknown variant …"): the derived reading is several KB of code more.
impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        const TYPES: &[&str] = &["text", "image", "audio", "resource_link", "resource"];
        let object = JsonObject::deserialize(deserializer)?;
        let kind = match object.get("type") {
            Some(serde_json::Value::String(kind)) => kind.clone(),
            Some(_) => return Err(D::Error::custom("`type` must be a string")),
            None => return Err(D::Error::missing_field("type")),
        };
        let body = serde_json::Value::Object(object);
        let block = match kind.as_str() {
            "text" => serde_json::from_value(body).map(ContentBlock::Text),
            "image" => serde_json::from_value(body).map(ContentBlock::Image),
            "audio" => serde_json::from_value(body).map(ContentBlock::Audio),
            "resource_link" => serde_json::from_value(body).map(ContentBlock::ResourceLink),
            "resource" => serde_json::from_value(body).map(ContentBlock::Resource),
            other => return Err(D::Error::unknown_variant(other, TYPES)),
        };
        block.map_err(D::Error::custom)
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An image block from base64 data and a MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 data and a MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Audio(ImageContent::new(data, mime_type))
    }

    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> ContentBlock {
        ContentBlock::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }

    /// A resource link block.
    pub fn resource_link(resource: super::Resource) -> ContentBlock {
        ContentBlock::ResourceLink(resource)
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// `{"text", "annotations"?, "_meta"?}`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Image or audio: `{"data", "mimeType", "annotations"?, "_meta"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// E.g. `image/png` or `audio/wav`.
    pub mime_type: String,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ImageContent {
    /// Base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> ImageContent {
        ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// `{"resource": TextResourceContents | BlobResourceContents, …}`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The contents of a resource: text or base64 blob.
///
/// Shape: `{"uri", "mimeType"?, "text"}` or `{"uri", "mimeType"?, "blob"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// `TextResourceContents`
    #[serde(rename_all = "camelCase")]
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// `BlobResourceContents`
    #[serde(rename_all = "camelCase")]
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64-encoded bytes.
        blob: String,
        /// Metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
}

/// Read as serde reads an untagged enum, text first, then blob, with its
/// message when neither fits; from a plain `Value`, not serde's buffered
/// content, whose readers (with `ElicitRequestParams`'s, read the same
/// way) were 12 KB of the static `mcp`.
impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Text {
            uri: String,
            #[serde(default)]
            mime_type: Option<String>,
            text: String,
            #[serde(rename = "_meta", default)]
            meta: Option<JsonObject>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Blob {
            uri: String,
            #[serde(default)]
            mime_type: Option<String>,
            blob: String,
            #[serde(rename = "_meta", default)]
            meta: Option<JsonObject>,
        }
        let value = serde_json::Value::deserialize(deserializer)?;
        // Struct variants of an untagged enum are read from maps only.
        if value.is_object() {
            if let Ok(t) = Text::deserialize(&value) {
                return Ok(ResourceContents::Text {
                    uri: t.uri,
                    mime_type: t.mime_type,
                    text: t.text,
                    meta: t.meta,
                });
            }
            if let Ok(b) = Blob::deserialize(&value) {
                return Ok(ResourceContents::Blob {
                    uri: b.uri,
                    mime_type: b.mime_type,
                    blob: b.blob,
                    meta: b.meta,
                });
            }
        }
        Err(serde::de::Error::custom(
            "data did not match any variant of untagged enum ResourceContents",
        ))
    }
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> ResourceContents {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        }
    }

    /// `uri`, of either kind of contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// `mimeType`, of either kind of contents.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                mime_type.as_deref()
            }
        }
    }

    /// `text` of text contents; `None` for a blob.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { text, .. } => Some(text),
            ResourceContents::Blob { .. } => None,
        }
    }

    /// `_meta`, of either kind of contents.
    pub fn meta(&self) -> Option<&JsonObject> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => {
                meta.as_ref()
            }
        }
    }

    /// Binary contents, `blob` already base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> ResourceContents {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: blob.into(),
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: serde_json::Value) -> Result<ContentBlock, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    // server/tools "Tool Result": a content block is an object tagged by
    // `type`; each variant reads its own members (others are ignored),
    // and the refusals keep the messages of serde's tagged enums.
    #[test]
    fn content_blocks_read_by_type() {
        let text = read(json!({"type": "text", "text": "hi", "extra": 1}));
        assert_eq!(text, Ok(ContentBlock::text("hi")));
        let image = read(json!({"type": "image", "data": "AA==", "mimeType": "image/png"}));
        assert_eq!(image, Ok(ContentBlock::image("AA==", "image/png")));
        let audio = read(json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}));
        assert_eq!(audio, Ok(ContentBlock::audio("AA==", "audio/wav")));
        let link = read(json!({"type": "resource_link", "uri": "test://a", "name": "a"}));
        assert!(
            matches!(link, Ok(ContentBlock::ResourceLink(_))),
            "{:?}",
            link
        );
        let embedded = json!({"type": "resource",
            "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "t"}});
        let embedded = read(embedded);
        assert!(
            matches!(embedded, Ok(ContentBlock::Resource(_))),
            "{:?}",
            embedded
        );
        assert_eq!(
            read(json!({"type": "text"})).unwrap_err(),
            "missing field `text`"
        );
        assert_eq!(
            read(json!({"text": "hi"})).unwrap_err(),
            "missing field `type`"
        );
        let unknown = read(json!({"type": "video", "data": ""})).unwrap_err();
        assert!(
            unknown.starts_with("unknown variant `video`"),
            "{}",
            unknown
        );
        let written = serde_json::to_value(ContentBlock::text("hi")).unwrap();
        assert_eq!(written, json!({"type": "text", "text": "hi"}));
    }

    /// The derived reader the hand-written one replaced.
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Derived {
        #[serde(rename_all = "camelCase")]
        Text {
            uri: String,
            #[serde(default)]
            mime_type: Option<String>,
            text: String,
            #[serde(rename = "_meta", default)]
            meta: Option<JsonObject>,
        },
        #[serde(rename_all = "camelCase")]
        Blob {
            uri: String,
            #[serde(default)]
            mime_type: Option<String>,
            blob: String,
            #[serde(rename = "_meta", default)]
            meta: Option<JsonObject>,
        },
    }

    // Resource contents read as the derived untagged reader read them.
    #[test]
    fn resource_contents_read_as_derived() {
        let cases = [
            json!({"uri": "a", "text": "t"}),
            json!({"uri": "a", "mimeType": "text/plain", "text": "t", "_meta": {"k": 1}}),
            json!({"uri": "a", "blob": "AAAA", "mimeType": null}),
            json!({"uri": "a", "text": "t", "blob": "AAAA"}),
            json!({"uri": "a", "text": 3, "blob": "AAAA"}),
            json!({"uri": "a"}),
            json!({"text": "t"}),
            json!(["a", null, "t"]),
            json!("a"),
            serde_json::Value::Null,
        ];
        for case in cases.iter() {
            let ours = serde_json::from_value::<ResourceContents>(case.clone());
            let derived = serde_json::from_value::<Derived>(case.clone());
            match (ours, derived) {
                (Ok(ours), Ok(derived)) => {
                    let ours = serde_json::to_value(ours).unwrap();
                    let derived = match derived {
                        Derived::Text {
                            uri,
                            mime_type,
                            text,
                            meta,
                        } => ResourceContents::Text {
                            uri,
                            mime_type,
                            text,
                            meta,
                        },
                        Derived::Blob {
                            uri,
                            mime_type,
                            blob,
                            meta,
                        } => ResourceContents::Blob {
                            uri,
                            mime_type,
                            blob,
                            meta,
                        },
                    };
                    assert_eq!(ours, serde_json::to_value(derived).unwrap(), "{}", case);
                }
                (Err(ours), Err(derived)) => {
                    let derived = derived.to_string().replace("Derived", "ResourceContents");
                    assert_eq!(ours.to_string(), derived, "{}", case)
                }
                (ours, derived) => panic!("{}: {:?} vs {:?}", case, ours, derived),
            }
        }
    }
}
