//! Spec: server/tools (2025-11-25).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentBlock, Icon};
use crate::jsonrpc::JsonObject;

/// A tool definition, as listed by `tools/list`.
///
/// Shape: `{"name", "title"?, "description"?, "inputSchema", "outputSchema"?,
/// "annotations"?, "icons"?, "_meta"?}`. `inputSchema` and `outputSchema`
/// are carried verbatim, so `$schema`, `$defs` and `additionalProperties`
/// survive (BASE-8, TOOL-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Unique name: 1-128 of `A-Z a-z 0-9 _ - .` (TOOL-4).
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of `arguments`; root `type: "object"`.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// How it runs: whether its calls may be tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<super::ToolExecution>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Tool {
    /// A tool with a name and an input schema.
    ///
    /// A schema that is not a JSON object is replaced by
    /// `{"type":"object"}` (TOOL-3: never `null`).
    pub fn new(name: impl Into<String>, input_schema: Value) -> Tool {
        let input_schema = match input_schema {
            Value::Object(o) => o,
            _ => {
                let mut o = JsonObject::new();
                o.insert("type".into(), Value::from("object"));
                o
            }
        };
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        }
    }

    /// A tool that takes no arguments: `inputSchema` is
    /// `{"type":"object"}` (pair it with `()` in
    /// [`typed_tool`](crate::ServerBuilder::typed_tool)).
    pub fn without_arguments(name: impl Into<String>) -> Tool {
        Tool::new(name, Value::Null)
    }

    /// Sets `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Tool {
        self.description = Some(description.into());
        self
    }

    /// Sets `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// Sets `outputSchema`; a non-object value is ignored.
    pub fn with_output_schema(mut self, schema: Value) -> Tool {
        if let Value::Object(o) = schema {
            self.output_schema = Some(o);
        }
        self
    }

    /// Sets `annotations`.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Tool {
        self.annotations = Some(annotations);
        self
    }

    /// Sets `icons`.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Tool {
        self.icons = Some(icons);
        self
    }

    /// Sets `execution.taskSupport`: whether calls may run as tasks
    /// (basic/utilities/tasks, 2025-11-25; SEP-2663). A server with such a
    /// tool declares tasks: `capabilities.tasks` in 2025-11-25 and the
    /// `io.modelcontextprotocol/tasks` extension in 2026-07-28. The field
    /// is listed in 2025-11-25 only (2026-07-28's `Tool` has none): there,
    /// a client that declares the extension on a call may get a task, and a
    /// `required` tool called without it gets `-32021`.
    pub fn with_task_support(mut self, support: super::TaskSupport) -> Tool {
        self.execution = Some(super::ToolExecution {
            task_support: Some(support),
        });
        self
    }

    /// `execution.taskSupport`, `forbidden` when absent.
    pub fn task_support(&self) -> super::TaskSupport {
        self.execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or(super::TaskSupport::Forbidden)
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: JsonObject) -> Tool {
        self.meta = Some(meta);
        self
    }
}

/// Hints about a tool's behaviour; clients must not trust them blindly.
///
/// Shape: `{"title"?, "readOnlyHint"?, "destructiveHint"?, "idempotentHint"?,
/// "openWorldHint"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// May destroy data (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Reaches outside entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Params of `tools/call`: `{"name", "arguments"?, "_meta"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// The tool's name.
    pub name: String,
    /// The arguments; absent means `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// 2025-11-25: run the call as a task (basic/utilities/tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<super::TaskMetadata>,
    /// Request metadata (`progressToken`, …).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `tools/call`:
/// `{"content", "structuredContent"?, "isError"?, "_meta"?}`.
///
/// A failure while running the tool is a result with `isError: true`, not a
/// JSON-RPC error (TOOL-6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// What the tool produced.
    pub content: Vec<ContentBlock>,
    /// Structured output conforming to the tool's `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// `true` if the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CallToolResult {
    /// A result with these content blocks.
    pub fn new(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult {
            content,
            ..CallToolResult::default()
        }
    }

    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> CallToolResult {
        CallToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> CallToolResult {
        CallToolResult {
            is_error: Some(true),
            ..CallToolResult::text(text)
        }
    }

    /// A result with `text` for people and `value` as `structuredContent`
    /// (server/tools "Structured Content"): when the JSON itself is not the
    /// best text, e.g. `"3 notes"` beside `{"count": 3}`.
    pub fn text_and_structured(text: impl Into<String>, value: Value) -> CallToolResult {
        CallToolResult {
            structured_content: Some(value),
            ..CallToolResult::text(text)
        }
    }

    /// A result carrying `structuredContent` and, as TOOL-5 recommends, the
    /// same JSON as a text block.
    pub fn structured(value: Value) -> CallToolResult {
        CallToolResult {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..CallToolResult::default()
        }
    }
}

/// Result of `tools/list`: `{"tools", "nextCursor"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult {
    /// One page of tools.
    pub tools: Vec<Tool>,
    /// Where the next page starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
