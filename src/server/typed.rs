//! Typed tools ([`ServerBuilder::typed_tool`](crate::ServerBuilder::typed_tool)):
//! arguments into a `serde` type, the result out of one, and naming the
//! argument serde refused.

use std::any::Any;

use serde::Serialize;
use serde_json::Value;

use super::context::RequestContext;
use super::handler::ToolHandler;
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::protocol::CallToolResult;

/// A tool handler from a closure over typed arguments and results, as
/// [`ServerBuilder::typed_tool`](crate::ServerBuilder::typed_tool) makes
/// one: for tools added while serving
/// ([`ServerHandle::edit`](crate::ServerHandle::edit), then
/// [`ServerEdit::add_tool`](crate::ServerEdit::add_tool)). The same rules
/// apply to the arguments and the result.
///
/// ```
/// use serde::Deserialize;
/// use tiny_mcp::{typed, RequestContext, Server, Tool};
///
/// #[derive(Deserialize)]
/// struct Name { name: String }
///
/// let server = Server::builder("later", "1").offer_tools().build();
/// let schema = serde_json::json!({"type": "object", "required": ["name"],
///     "properties": {"name": {"type": "string"}}});
/// server.handle().edit(|edit| {
///     edit.add_tool(Tool::new("greet", schema),
///         typed(|_: &RequestContext, args: Name| Ok(format!("Hello, {}!", args.name))))
/// });
/// ```
pub fn typed<A, R, F>(handler: F) -> impl ToolHandler
where
    A: serde::de::DeserializeOwned + 'static,
    R: Serialize + 'static,
    F: Fn(&RequestContext, A) -> Result<R, Error> + Send + Sync + 'static,
{
    Typed {
        handler,
        types: std::marker::PhantomData,
    }
}

/// A tool handler whose arguments are a `serde` type and whose result is
/// another: see [`ServerBuilder::typed_tool`](crate::ServerBuilder::typed_tool).
pub(crate) struct Typed<A, R, F> {
    pub(crate) handler: F,
    pub(crate) types: std::marker::PhantomData<fn(A) -> R>,
}

impl<A, R, F> ToolHandler for Typed<A, R, F>
where
    A: serde::de::DeserializeOwned + 'static,
    R: serde::Serialize + 'static,
    F: Fn(&RequestContext, A) -> Result<R, Error> + Send + Sync + 'static,
{
    fn call(&self, ctx: &RequestContext, arguments: JsonObject) -> Result<CallToolResult, Error> {
        let arguments = Value::Object(arguments);
        let typed = A::deserialize(&arguments).or_else(|e| match &arguments {
            // `()` (and any type that takes nothing) for a call without
            // arguments, which arrive as `{}`.
            Value::Object(o) if o.is_empty() => A::deserialize(&Value::Null).map_err(|_| e),
            _ => Err(e),
        });
        let arguments: A = match typed {
            Ok(typed) => typed,
            Err(e) => {
                let retry = |v: &serde_json::Value| A::deserialize(v).err().map(|e| e.to_string());
                let complaint = e.to_string();
                let message = match culprit(arguments, &complaint, &retry) {
                    Some(name) => {
                        format!("invalid arguments: {} (argument \"{}\")", complaint, name)
                    }
                    None => format!("invalid arguments: {}", complaint),
                };
                return Ok(CallToolResult::error(message));
            }
        };
        tool_result((self.handler)(ctx, arguments)?)
    }
}

/// A typed tool's result: a [`CallToolResult`] as it is, a `String` or
/// `&'static str` as text, a value that serializes to an object as
/// `structuredContent` plus its JSON as text (TOOL-5), anything else as its
/// JSON text (`structuredContent` is an object in the 2025-11-25 schema).
fn tool_result<R: Serialize + 'static>(result: R) -> Result<CallToolResult, Error> {
    let mut slot = Some(result);
    let any = &mut slot as &mut dyn Any;
    if let Some(whole) = any.downcast_mut::<Option<CallToolResult>>() {
        return Ok(whole.take().unwrap_or_default());
    }
    if let Some(text) = any.downcast_mut::<Option<String>>() {
        return Ok(CallToolResult::text(text.take().unwrap_or_default()));
    }
    if let Some(text) = any.downcast_mut::<Option<&'static str>>() {
        return Ok(CallToolResult::text(text.take().unwrap_or_default()));
    }
    let value = serde_json::to_value(&slot)?;
    Ok(if value.is_object() {
        CallToolResult::structured(value)
    } else {
        CallToolResult::text(value.to_string())
    })
}

/// The one top-level argument whose absence changes serde's complaint:
/// serde names a missing or unknown field, not a field whose value it
/// refused (``invalid value: integer `-3`, expected u32``). The schema
/// checks, which run first, name the field when the schema says enough
/// (as a generated one does). Each try deserializes again, so only
/// objects of up to 16 arguments are tried; entries are moved, never
/// cloned, and keep their order.
fn culprit(
    arguments: serde_json::Value,
    complaint: &str,
    retry: &dyn Fn(&serde_json::Value) -> Option<String>,
) -> Option<String> {
    const MAX_TRIES: usize = 16;
    let object = match arguments {
        serde_json::Value::Object(object) if object.len() <= MAX_TRIES => object,
        _ => return None,
    };
    if complaint.contains("field `") {
        return None;
    }
    let mut entries: Vec<(String, serde_json::Value)> = object.into_iter().collect();
    let mut found = None;
    for i in 0..entries.len() {
        let left_out = entries.remove(i);
        let without = serde_json::Value::Object(entries.drain(..).collect());
        let changed = retry(&without).as_deref() != Some(complaint);
        if let serde_json::Value::Object(object) = without {
            entries = object.into_iter().collect();
        }
        let name = left_out.0.clone();
        entries.insert(i, left_out);
        match (changed, &found) {
            (true, None) => found = Some(name),
            // Two arguments change it: which one serde meant is unclear.
            (true, Some(_)) => return None,
            (false, _) => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::culprit;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // Only deserialized.
    struct Search {
        query: String,
        limit: u32,
        page: Option<u32>,
    }

    fn named(arguments: Value) -> Option<String> {
        let retry = |v: &Value| {
            serde::Deserialize::deserialize(v)
                .map(|_: Search| ())
                .err()
                .map(|e| e.to_string())
        };
        let complaint = retry(&arguments).unwrap_or_default();
        culprit(arguments, &complaint, &retry)
    }

    // TOOL-6: serde's complaint about a value names the argument it was in.
    #[test]
    fn the_refused_argument_is_named() {
        let wrong_limit = json!({"query": "q", "limit": -3, "page": 2});
        assert_eq!(named(wrong_limit).as_deref(), Some("limit"));
        let wrong_page = json!({"query": "q", "limit": 3, "page": "two"});
        assert_eq!(named(wrong_page).as_deref(), Some("page"));
        // Both wrong: serde stops at the first, in the object's order.
        assert_eq!(
            named(json!({"query": 1, "limit": -3})).as_deref(),
            Some("limit")
        );
        // serde names a missing field itself.
        assert_eq!(named(json!({"query": "q"})), None);
        assert_eq!(named(json!([1])), None);
    }
}
