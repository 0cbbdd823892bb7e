//! 2026-07-28 clients of a 2025-era stdio server: the proxy holds the
//! 2025-11-25 session with the common child, and answers each request of
//! the new era there.
//!
//! `server/discover` is answered from the child's `initialize` result (the
//! library adds `resultType` and the server info). Every other request is
//! forwarded without the envelope's `_meta` keys, which a 2025-era server
//! does not know. A request the child makes during such a call (an
//! elicitation) cannot reach a 2026-07-28 client, which is asked for input
//! only by an `input_required` result: the child gets an error for it.

use serde_json::Value;
use tiny_mcp::{Error, RequestContext, SessionHandle};

use super::child::Child;

/// Forwards one 2026-07-28 request to the common child.
pub(crate) fn forward(
    child: &Child,
    session: &SessionHandle,
    ctx: &RequestContext,
    params: Option<Value>,
) -> Result<Value, Error> {
    if ctx.method() == tiny_mcp::methods::SERVER_DISCOVER {
        return discover(child);
    }
    child.forward(session.key(), ctx, params.map(without_envelope))
}

/// DISC-1: the versions, and the child's capabilities and instructions.
fn discover(child: &Child) -> Result<Value, Error> {
    let initialized = child.initialize_result("")?;
    let mut result = serde_json::json!({
        "supportedVersions": [tiny_mcp::versions::V2026_07_28],
        "capabilities": serde_json::to_value(&initialized.capabilities)?,
    });
    if let Some(instructions) = initialized.instructions {
        result["instructions"] = Value::from(instructions);
    }
    Ok(result)
}

/// The params without the 2026-07-28 envelope's `_meta` entries
/// (`io.modelcontextprotocol/…`); a `_meta` left empty is dropped.
fn without_envelope(mut params: Value) -> Value {
    if let Some(object) = params.as_object_mut() {
        let emptied = match object.get_mut("_meta").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
                meta.is_empty()
            }
            None => false,
        };
        if emptied {
            object.remove("_meta");
        }
    }
    params
}
