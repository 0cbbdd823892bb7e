//! The era chooser of the HTTP endpoint: which rules serve a request
//! (ERA-3, ERA-4, ERA-6, HTTP-21; DESIGN.md §8). No socket here.

use super::wire::HttpRequest;
use super::{Lookup, Shared};
use crate::jsonrpc::{ErrorCode, ErrorObject, Message};
use crate::protocol::{methods, versions, Era};
use crate::server::{envelope, Principal};

/// The paths a POST can take.
#[derive(Debug)]
pub(crate) enum Path {
    /// The 2026-07-28 rules (`per_request.rs`).
    PerRequest,
    /// A 2025-11-25 `initialize` that opens a session.
    Initialize,
    /// A 2025-11-25 request on a session (or in the stateless mode).
    Session,
    /// Refused before any MCP handling.
    Refuse(u16, ErrorObject),
}

/// The era chooser (ERA-3, ERA-4, ERA-6, HTTP-21, LC-8), in this order:
///
/// | `Mcp-Session-Id` | `MCP-Protocol-Version` | body | path |
/// | --- | --- | --- | --- |
/// | none | set, not a handshake version | `initialize` without `protocolVersion` | 2026-07-28 (`-32601`, REM-1) |
/// | names a live session | any | `initialize` | 400, already initialized |
/// | names no live session | any | `initialize` | 404 |
/// | none | any | `initialize` | the handshake |
/// | none | set, not a handshake version (unknown ones too) | anything else | 2026-07-28 |
/// | none | none | a request with a 2026-07-28 `_meta` claim | 400, `-32020` |
/// | set | 2026-07-28 | anything else | 400 (a session takes no 2026-07-28 requests) |
/// | any | set, not supported | anything else | 400 |
/// | otherwise | | | the session (or the stateless mode) |
pub(crate) fn choose_path(
    shared: &Shared,
    request: &HttpRequest,
    message: &Message,
    principal: Option<&Principal>,
) -> Path {
    let session_id = request.header("mcp-session-id");
    let version = request.header("mcp-protocol-version");
    let not_handshake = per_request_version(request);
    let body = match message {
        Message::Request(r) => Some(r),
        _ => None,
    };
    if let Some(r) = body.filter(|r| r.method == methods::INITIALIZE) {
        let handshake_shaped = r
            .params
            .as_ref()
            .and_then(|p| p.get("protocolVersion"))
            .is_some();
        return match session_id {
            None if not_handshake && !handshake_shaped => Path::PerRequest,
            None => Path::Initialize,
            Some(id) => match shared.lookup(id, principal) {
                Lookup::Found(_) => Path::Refuse(
                    400,
                    ErrorObject::invalid_request("the session is already initialized"),
                ),
                Lookup::NotFound => {
                    Path::Refuse(404, ErrorObject::invalid_request("session not found"))
                }
            },
        };
    }
    if session_id.is_none() && not_handshake {
        return Path::PerRequest;
    }
    if session_id.is_none() && version.is_none() && body.map_or(false, envelope::is_claim) {
        let error = ErrorObject::new(
            ErrorCode::HEADER_MISMATCH,
            "missing MCP-Protocol-Version header",
        );
        return Path::Refuse(400, error);
    }
    match version {
        Some(v) if Era::of(v) == Some(Era::V2026_07_28) => Path::Refuse(
            400,
            ErrorObject::invalid_request(format!(
                "this session uses the 2025-11-25 handshake era; send {} requests without Mcp-Session-Id",
                v
            )),
        ),
        Some(v) if !versions::is_supported(v) => Path::Refuse(
            400,
            ErrorObject::invalid_request(format!(
                "unsupported MCP-Protocol-Version: {} (supported: {})",
                v,
                versions::SUPPORTED.join(", ")
            )),
        ),
        _ => Path::Session,
    }
}

/// `true` when `MCP-Protocol-Version` is set to something that is not a
/// handshake version (2026-07-28, or an unknown one): the per-request era.
pub(crate) fn per_request_version(request: &HttpRequest) -> bool {
    request
        .header("mcp-protocol-version")
        .map_or(false, |v| !v.is_empty() && !versions::is_supported(v))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::transport::http::route::tests::{call_2026, http, initialize};
    use crate::transport::http::HttpConfig;

    fn shared() -> std::sync::Arc<Shared> {
        crate::transport::http::route::tests::shared(HttpConfig::default())
    }

    // ERA-3, ERA-4, ERA-6, HTTP-21: the era chooser's table, row by row.
    #[test]
    fn era_chooser_rows() {
        let shared = shared();
        let path = |headers: &[(&str, &str)], body: Value| {
            let request = http("POST", headers, Value::Null);
            let message = Message::from_value(body).unwrap();
            choose_path(&shared, &request, &message, None)
        };
        let v2026 = ("mcp-protocol-version", "2026-07-28");
        let bare_initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"});
        assert!(matches!(path(&[v2026], bare_initialize), Path::PerRequest));
        let live = ("mcp-session-id", "nope");
        assert!(matches!(path(&[live], initialize()), Path::Refuse(404, _)));
        assert!(matches!(path(&[v2026], initialize()), Path::Initialize));
        assert!(matches!(
            path(&[v2026], call_2026("echo")),
            Path::PerRequest
        ));
        let future = ("mcp-protocol-version", "2099-01-01");
        assert!(matches!(
            path(&[future], call_2026("echo")),
            Path::PerRequest
        ));
        assert!(matches!(
            path(&[], call_2026("echo")),
            Path::Refuse(400, e) if e.code == ErrorCode::HEADER_MISMATCH
        ));
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        assert!(matches!(
            path(&[live, v2026], list.clone()),
            Path::Refuse(400, _)
        ));
        assert!(matches!(
            path(&[("mcp-protocol-version", "")], list.clone()),
            Path::Refuse(400, _)
        ));
        assert!(matches!(path(&[live], list), Path::Session));
    }
}
