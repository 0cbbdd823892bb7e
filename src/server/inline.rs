//! The methods answered on the reading thread (the `Runs::Inline` rows of
//! the method table): the handshake, `ping`, the list methods,
//! `logging/setLevel`, subscriptions and `server/discover`. Each is cheap
//! and never blocks.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::caller::Caller;
use super::registry::{PromptEntry, Registry, ResourceEntry, TemplateEntry, ToolEntry};
use super::reply::{to_value, Answer};
use super::scopes::ScopePolicy;
use crate::jsonrpc::{ErrorObject, JsonObject};
use crate::protocol::{
    versions, Era, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, Resource, SetLevelRequestParams,
};
use crate::server::session::Session;

/// LC-1, LC-2, LC-8: negotiate once; a second `initialize` changes nothing.
pub(crate) fn initialize(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: InitializeRequestParams = parse_params(params)?;
    let protocol_version = if versions::is_supported(&params.protocol_version) {
        params.protocol_version.clone()
    } else {
        versions::LATEST.to_string()
    };
    {
        let mut state = session.state.lock();
        if state.initialized {
            return Err(ErrorObject::invalid_request(
                "the session is already initialized",
            ));
        }
        state.initialized = true;
        state.protocol_version = protocol_version.clone();
        state.client_info = Some(params.client_info);
        state.client_capabilities = params.capabilities;
    }
    let server = &session.server;
    to_value(InitializeResult {
        protocol_version,
        capabilities: server.capabilities().for_era(Era::V2025_11_25),
        server_info: server.info.clone(),
        instructions: server.instructions.clone(),
        meta: None,
    })
}

/// PING-1: `{}`.
pub(crate) fn ping(_: &Session, _: &Caller, _: Option<Value>) -> Answer {
    Ok(empty())
}

/// DISC-1 (2026-07-28): versions, capabilities and instructions.
pub(crate) fn discover(session: &Session, _: &Caller, _: Option<Value>) -> Answer {
    let server = &session.server;
    let mut result = serde_json::json!({
        "supportedVersions": Era::V2026_07_28.versions(),
        "capabilities": server.capabilities().for_era(Era::V2026_07_28),
    });
    if let Some(instructions) = &server.instructions {
        result["instructions"] = Value::from(instructions.as_str());
    }
    Ok(result)
}

/// A 2026-07-28 `Tool` has no `execution` (2025-11-25 only): a request
/// carrying the 2026-07-28 envelope's version gets its tools without it.
/// With [`hide_ui_from_text_clients`](crate::ServerBuilder::hide_ui_from_text_clients),
/// a client that renders no MCP Apps views gets the tools without their
/// `_meta.ui`, and not the tools only views call (the extension's
/// "Graceful Degradation").
pub(crate) fn list_tools(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    let v2026 = params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .map_or(false, |m| {
            m.get(crate::protocol::meta::PROTOCOL_VERSION).is_some()
        });
    // A client nobody knows (a 2025-11-25 stateless POST) gets everything.
    let text_only = session.server.config.hide_ui_from_text_clients
        && super::apps::request_supports_ui(session, params.as_ref()) == Some(false);
    let listed = |e: &ToolEntry| !text_only || e.tool.is_visible_to_model();
    let scoped = Scoped::<ToolEntry> {
        scopes: |p| &p.tools,
        key: |e| &e.tool.name,
        listed: &listed,
    };
    let (tools, next_cursor) = list(
        session,
        caller,
        params,
        |r| &r.tools,
        scoped,
        |e| {
            let mut tool = e.tool.clone();
            if v2026 {
                tool.execution = None;
            }
            if text_only {
                tool = tool.without_ui();
            }
            tool
        },
    )?;
    to_value(ListToolsResult { tools, next_cursor })
}

pub(crate) fn list_prompts(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    let scoped = Scoped::<PromptEntry> {
        scopes: |p| &p.prompts,
        key: |e| &e.prompt.name,
        listed: &|_| true,
    };
    let (prompts, next_cursor) = list(
        session,
        caller,
        params,
        |r| &r.prompts,
        scoped,
        |e| e.prompt.clone(),
    )?;
    to_value(ListPromptsResult {
        prompts,
        next_cursor,
    })
}

/// One page of the fixed resources of `resources/list` from `cursor`
/// (`o:N`, or none); the providers' pages follow (`run.rs`).
pub(crate) fn fixed_resources(
    session: &Session,
    caller: &Caller,
    cursor: Option<String>,
) -> Result<(Vec<Resource>, Option<String>), ErrorObject> {
    let all_views = session.server.config.list_ui_resources;
    let listed = |e: &ResourceEntry| all_views || !super::apps::is_view(&e.resource);
    let scoped = Scoped::<ResourceEntry> {
        scopes: |p| &p.resources,
        key: |e| &e.resource.uri,
        listed: &listed,
    };
    list_from(
        session,
        caller,
        cursor,
        |r| &r.resources,
        scoped,
        |e| e.resource.clone(),
    )
}

pub(crate) fn list_templates(session: &Session, caller: &Caller, params: Option<Value>) -> Answer {
    let scoped = Scoped::<TemplateEntry> {
        scopes: |p| &p.templates,
        key: |e| &e.template.uri_template,
        listed: &|_| true,
    };
    let (resource_templates, next_cursor) = list(
        session,
        caller,
        params,
        |r| &r.templates,
        scoped,
        |e| e.template.clone(),
    )?;
    to_value(ListResourceTemplatesResult {
        resource_templates,
        next_cursor,
    })
}

/// LOG-2: store the level; an unknown level is `-32602`.
pub(crate) fn set_level(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: SetLevelRequestParams = parse_params(params)?;
    session.state.lock().log_level = Some(params.level);
    Ok(empty())
}

/// RES-3: remember a subscribed URI for this session, within the limit.
pub(crate) fn subscribe(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: ReadResourceRequestParams = parse_params(params)?;
    let max = session.server.config.max_subscriptions;
    let mut state = session.state.lock();
    if state.subscriptions.len() >= max && !state.subscriptions.contains(&params.uri) {
        return Err(ErrorObject::invalid_params(
            "too many resource subscriptions for this session",
        ));
    }
    state.subscriptions.insert(params.uri);
    Ok(empty())
}

/// RES-3: forget a subscribed URI.
pub(crate) fn unsubscribe(session: &Session, _: &Caller, params: Option<Value>) -> Answer {
    let params: ReadResourceRequestParams = parse_params(params)?;
    session.state.lock().subscriptions.remove(&params.uri);
    Ok(empty())
}

/// Where the scopes of a kind of item are (the policy's map, the item's
/// key in it), for lists filtered by scope.
struct Scoped<'a, E> {
    scopes: fn(&ScopePolicy) -> &HashMap<String, Vec<String>>,
    key: fn(&E) -> &String,
    /// Whether an item is listed at all (every one but the MCP Apps views
    /// a server leaves out of `resources/list`).
    listed: &'a dyn Fn(&E) -> bool,
}

/// One page of a registry list, read under the registry's lock, without
/// the items the caller's scopes do not allow when lists are filtered.
fn list<E, T>(
    session: &Session,
    caller: &Caller,
    params: Option<Value>,
    items: impl Fn(&Registry) -> &Vec<Arc<E>>,
    scoped: Scoped<'_, E>,
    map: impl Fn(&E) -> T,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let params: PaginatedRequestParams = parse_params(params)?;
    list_from(session, caller, params.cursor, items, scoped, map)
}

/// [`list`] from `cursor`.
fn list_from<E, T>(
    session: &Session,
    caller: &Caller,
    cursor: Option<String>,
    items: impl Fn(&Registry) -> &Vec<Arc<E>>,
    Scoped {
        scopes,
        key,
        listed,
    }: Scoped<'_, E>,
    map: impl Fn(&E) -> T,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let server = &session.server;
    let registry = server.registry.read();
    let all = items(&registry);
    let (policy, principal) = (&server.scopes, caller.principal.as_deref());
    let filtered = policy.filter_lists && principal.is_some();
    let shown: Cow<'_, [Arc<E>]> = if filtered || !all.iter().all(|e| listed(e)) {
        let hidden = |e: &E| filtered && policy.hides(principal, scopes(policy), key(e));
        let shown = all.iter().filter(|e| listed(e) && !hidden(e));
        Cow::Owned(shown.cloned().collect())
    } else {
        Cow::Borrowed(all)
    };
    page(&shown, cursor, server.config.page_size, |e| map(e))
}

/// One page of `items` from the opaque `cursor` (PAG-1, PAG-2).
fn page<E, T>(
    items: &[Arc<E>],
    cursor: Option<String>,
    size: usize,
    map: impl Fn(&E) -> T,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => match c.strip_prefix("o:").and_then(offset) {
            Some(n) if n <= items.len() => n,
            _ => return Err(invalid_cursor(&c)),
        },
    };
    let end = start.saturating_add(size).min(items.len());
    let next = if end < items.len() {
        Some(format!("o:{}", end))
    } else {
        None
    };
    Ok((items[start..end].iter().map(|e| map(e)).collect(), next))
}

/// An offset written by the crate: digits only (`parse` would also take a
/// sign).
pub(crate) fn offset(text: &str) -> Option<usize> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `-32602` for a cursor the crate did not make (PAG-2), quoting at most
/// its first 64 characters.
pub(crate) fn invalid_cursor(cursor: &str) -> ErrorObject {
    let shown: String = cursor.chars().take(64).collect();
    let more = if shown.len() < cursor.len() {
        "…"
    } else {
        ""
    };
    ErrorObject::invalid_params(format!("invalid cursor: {}{}", shown, more))
}

pub(crate) fn empty() -> Value {
    Value::Object(JsonObject::new())
}

/// Reads params; absent params read as `{}`. MCP params are objects:
/// anything else is `-32602` (serde would read a positional array into a
/// struct).
pub(crate) fn parse_params<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(object_params(params)?).map_err(invalid_params)
}

/// The generic reader's plain parts, once in the binary: the params as an
/// object (none as `{}`), and the `-32602` a reading error becomes.
fn object_params(params: Option<Value>) -> Result<Value, ErrorObject> {
    match params {
        None => Ok(empty()),
        Some(object @ Value::Object(_)) => Ok(object),
        Some(_) => Err(ErrorObject::invalid_params("params must be an object")),
    }
}

fn invalid_params(e: serde_json::Error) -> ErrorObject {
    ErrorObject::invalid_params(format!("invalid params: {}", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    // PAG-1, PAG-2: pages follow the cursor; a bad cursor is -32602.
    #[test]
    fn pages_and_cursors() {
        let items: Vec<Arc<u32>> = (0..5).map(Arc::new).collect();
        let (first, next) = page(&items, None, 2, |x| *x).unwrap();
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next, 2, |x| *x).unwrap();
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next, 2, |x| *x).unwrap();
        assert_eq!((last, next), (vec![4], None));
        let err = page(&items, Some("nope".into()), 2, |x| *x).unwrap_err();
        assert_eq!(err.code, crate::jsonrpc::ErrorCode::INVALID_PARAMS);
        assert!(page(&items, Some("o:9".into()), 2, |x| *x).is_err());
        assert!(page(&items, Some("o:+1".into()), 2, |x| *x).is_err());
        // A page size of usize::MAX ("no pagination") does not overflow.
        let (rest, next) = page(&items, Some("o:1".into()), usize::MAX, |x| *x).unwrap();
        assert_eq!((rest, next), (vec![1, 2, 3, 4], None));
        let long = format!("o:{}", "9".repeat(10_000));
        let message = page(&items, Some(long), 2, |x| *x).unwrap_err().message;
        assert!(message.len() < 100, "{}", message);
    }
}
