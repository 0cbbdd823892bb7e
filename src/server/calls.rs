//! The worker rows of the method table (`Runs::Worker`):
//! `tools/call`, `prompts/get` and `resources/read`, each calling the
//! program's handler, and the TOOL-6 rule for a tool's failure.

use std::collections::BTreeMap;

use serde_json::Value;

use super::context::RequestContext;
use super::inline::parse_params;
use super::registry::{Resolved, ToolEntry};
use super::reply::{failure, to_value, Failure, Reply};
use super::tasks::{self, TaskSlot};
use super::validate::Schema;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::ErrorObject;
use crate::protocol::{
    CallToolRequestParams, CallToolResult, ContentBlock, Era, GetPromptRequestParams,
    ReadResourceRequestParams, ResourceContents,
};

/// `tools/call` (TOOL-3..6): the arguments are checked against the top
/// level of `inputSchema` before the handler runs.
pub(crate) fn call_tool(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params = call_params(params)?;
    let entry = ctx.session.server.registry.read().tool(&params.name);
    let entry = entry
        .ok_or_else(|| ErrorObject::invalid_params(format!("unknown tool: {}", params.name)))?;
    // Only a tool the registry found becomes a label (DESIGN.md §29).
    let label = ctx.session.server.metrics.tool(&params.name);
    ctx.tool_label.set(label);
    let arguments = params.arguments.unwrap_or_default();
    let slot = tasks::plan(ctx, &entry.tool, params.task.as_ref())?;
    let eager = matches!(slot, TaskSlot::Possible { eager: true, .. });
    *ctx.task.lock() = slot;
    if eager {
        tasks::start(ctx).map_err(|e| Failure::Rpc(e.to_wire(ctx.era())))?;
    }
    let result = match entry.input.check_arguments(&arguments) {
        Err(problem) => CallToolResult::error(format!(
            "invalid arguments for tool {}: {}",
            params.name, problem
        )),
        Ok(()) => match entry.handler.call(ctx, arguments) {
            Ok(result) => kept_promise(&entry, result),
            Err(e) => tool_error(ctx, e)?,
        },
    };
    Ok(Reply::tool(result))
}

/// `tools/call`'s params. The usual shape (a string `name`, `arguments`
/// and `_meta` objects or absent, no `task`) is taken apart by hand, so
/// that the arguments move into the handler's map as they were read;
/// anything else is read as every method's params are ([`parse_params`]),
/// with its messages. Other members are ignored, as there.
fn call_params(params: Option<Value>) -> Result<CallToolRequestParams, ErrorObject> {
    let object = match params {
        Some(Value::Object(object)) if is_plain_call(&object) => object,
        params => return parse_params(params),
    };
    let mut call = CallToolRequestParams {
        name: String::new(),
        arguments: None,
        task: None,
        meta: None,
    };
    for (key, value) in object {
        match (key.as_str(), value) {
            ("name", Value::String(name)) => call.name = name,
            ("arguments", Value::Object(map)) => call.arguments = Some(map),
            ("_meta", Value::Object(map)) => call.meta = Some(map),
            _ => {}
        }
    }
    Ok(call)
}

/// See [`call_params`]: one look at each member.
fn is_plain_call(object: &crate::jsonrpc::JsonObject) -> bool {
    let mut named = false;
    for (key, value) in object {
        match (key.as_str(), value) {
            ("name", Value::String(_)) => named = true,
            ("name", _) | ("task", _) => return false,
            ("arguments" | "_meta", Value::Object(_)) => {}
            ("arguments" | "_meta", _) => return false,
            _ => {}
        }
    }
    named
}

/// A tool that declares an `outputSchema` must return `structuredContent`
/// that conforms to it (server/tools "Output Schema": servers MUST provide
/// structured results that conform); a result that does not is replaced
/// by an `isError` result saying why, and logged, rather than passed on
/// to a client that would reject it, unless leaving out its refused
/// `null` members makes it conform ([`without_refused_nulls`]). Failed
/// results (`isError`) pass.
fn kept_promise(entry: &ToolEntry, mut result: CallToolResult) -> CallToolResult {
    let tool = &entry.tool;
    let schema = match &entry.output {
        Some(schema) if result.is_error != Some(true) => schema,
        _ => return result,
    };
    let problem = match &result.structured_content {
        None => "declares an outputSchema but returned no structuredContent".to_string(),
        Some(value) => match schema.check_output(value) {
            Ok(()) => return result,
            Err(_) if without_refused_nulls(schema, &mut result) => return result,
            Err(problem) => format!(
                "returned structuredContent that breaks its outputSchema: {}",
                problem
            ),
        },
    };
    log::warn!("tool {} {}", tool.name, problem);
    CallToolResult::error(format!("tool {} {}", tool.name, problem))
}

/// A typed tool's `Option` field that is `None` serializes as `null`,
/// which an outputSchema property of `"type": "string"` refuses: such
/// top-level members, of properties the schema declares but neither
/// requires nor lets be `null`, are left out of `structuredContent`, and
/// of the text block that repeats it (TOOL-5), when the result then
/// conforms. `false`, the result untouched, when it still would not.
fn without_refused_nulls(schema: &Schema, result: &mut CallToolResult) -> bool {
    let mut object = match &result.structured_content {
        Some(Value::Object(object)) => object.clone(),
        _ => return false,
    };
    if !schema.drop_refused_nulls(&mut object) {
        return false;
    }
    let kept = Value::Object(object);
    if schema.check_output(&kept).is_err() {
        return false;
    }
    let repeated = result.structured_content.as_ref().map(Value::to_string);
    for block in &mut result.content {
        if let ContentBlock::Text(block) = block {
            if Some(&block.text) == repeated.as_ref() {
                block.text = kept.to_string();
            }
        }
    }
    result.structured_content = Some(kept);
    true
}

/// `prompts/get` (PRM-3): required arguments are checked first.
pub(crate) fn get_prompt(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params: GetPromptRequestParams = parse_params(params)?;
    let entry = ctx.session.server.registry.read().prompt(&params.name);
    let entry = entry
        .ok_or_else(|| ErrorObject::invalid_params(format!("unknown prompt: {}", params.name)))?;
    let arguments: BTreeMap<String, String> = params.arguments.unwrap_or_default();
    for argument in entry.prompt.arguments.iter().flatten() {
        if argument.required == Some(true) && !arguments.contains_key(&argument.name) {
            return Err(ErrorObject::invalid_params(format!(
                "missing required argument {} for prompt {}",
                argument.name, params.name
            ))
            .into());
        }
    }
    let result = entry
        .handler
        .get(ctx, arguments)
        .map_err(|e| failure(ctx, e))?;
    Ok(Reply::Value(to_value(result)?))
}

/// `resources/read` (RES-4): a fixed resource, else the first provider
/// that knows the URI, else the first template that matches; none is
/// `-32002` (`-32602` in 2026-07-28). Contents of the URI read that carry
/// no `mimeType` get the one registered with the resource or template
/// ([`typed_contents`]).
pub(crate) fn read_resource(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params: ReadResourceRequestParams = parse_params(params)?;
    let uri = params.uri.as_str();
    let (resolved, providers) = {
        let registry = ctx.session.server.registry.read();
        (registry.resolve(uri), registry.providers.clone())
    };
    let (result, registered) = match resolved {
        Some(Resolved::Resource(entry)) => (
            entry.handler.read(ctx, uri),
            entry.resource.mime_type.clone(),
        ),
        other => match providers.iter().find_map(|p| p.read(ctx, uri)) {
            Some(result) => (result, None),
            None => match other {
                Some(Resolved::Template(entry, vars)) => (
                    entry.handler.read(ctx, uri, &vars),
                    entry.template.mime_type.clone(),
                ),
                _ => (Err(Error::resource_not_found(uri)), None),
            },
        },
    };
    let mut result = result.map_err(|e| failure(ctx, e))?;
    typed_contents(&mut result.contents, uri, registered);
    Ok(Reply::Value(to_value(result)?))
}

/// Gives the contents of `uri` that carry no `mimeType` (as
/// [`ReadResourceResult::text`](crate::ReadResourceResult::text) makes
/// them) the type `registered` with the resource or template read, else,
/// for text, `text/plain`. Contents of other URIs (a directory's entries)
/// and those the handler typed are left as they are.
fn typed_contents(contents: &mut [ResourceContents], uri: &str, registered: Option<String>) {
    for part in contents {
        let (of, mime_type, fallback) = match part {
            ResourceContents::Text { uri, mime_type, .. } => (uri, mime_type, Some("text/plain")),
            ResourceContents::Blob { uri, mime_type, .. } => (uri, mime_type, None),
        };
        if of.as_str() == uri && mime_type.is_none() {
            *mime_type = registered.clone().or_else(|| fallback.map(str::to_string));
        }
    }
}

/// TOOL-6: a tool's failure is a result with `isError: true`, except the
/// errors that must reach the client otherwise: JSON-RPC errors the handler
/// chose, `-32042` in the 2025-11-25 era to a client that declared
/// `elicitation.url` (ELIC-1: any other gets the result, its text naming
/// the URLs), and in the 2026-07-28 era `input_required` and `-32021`.
fn tool_error(ctx: &RequestContext, error: Error) -> Result<CallToolResult, Failure> {
    let v2026 = ctx.era() == Era::V2026_07_28;
    match error.kind() {
        ErrorKind::Rpc(_) => Err(failure(ctx, error)),
        ErrorKind::UrlElicitationRequired(_) if !v2026 && ctx.supports_url_elicitation() => {
            Err(failure(ctx, error))
        }
        ErrorKind::InputRequired | ErrorKind::CapabilityMissing { .. } if v2026 => {
            Err(failure(ctx, error))
        }
        _ => Ok(CallToolResult::error(error.wire_message())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // TOOL-3: `tools/call`'s params read by hand agree with the general
    // reading, in the usual shape and in every unusual one (a `task`, a
    // null or misshapen member, a missing or non-string name).
    #[test]
    fn call_params_agree_with_the_general_reading() {
        let shapes = [
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            json!({"name": "echo", "arguments": {"a": 1}, "_meta": {"progressToken": 3}, "x": 1}),
            json!({"name": "echo"}),
            json!({"name": "echo", "arguments": null}),
            json!({"name": "echo", "_meta": null}),
            json!({"name": "echo", "task": {"ttl": 1000}}),
            json!({"name": "echo", "arguments": [1]}),
            json!({"name": 7}),
            json!({"arguments": {}}),
            json!([1]),
        ];
        for shape in shapes {
            let general = parse_params::<CallToolRequestParams>(Some(shape.clone()));
            let by_hand = call_params(Some(shape.clone()));
            assert_eq!(by_hand, general, "{}", shape);
        }
        assert!(call_params(None).is_err(), "a name is required");
    }
}
