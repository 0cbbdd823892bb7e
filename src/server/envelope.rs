//! The 2026-07-28 era's envelope and result decoration: reading the
//! per-request `_meta` once, checking its version, and the one function
//! that decorates every 2026-07-28 result.
//!
//! A 2026-07-28 request names its version and the client's capabilities in
//! `params._meta` (META-1); nothing is remembered between requests
//! (GEN-4). Every result carries `resultType` (RES-1) and the server's
//! identity (RES-3); cacheable ones carry `ttlMs` and `cacheScope`
//! (CACHE-1).

use std::time::Duration;

use serde_json::Value;

use crate::error::to_json;
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonObject, Request};
use crate::protocol::{meta, methods, ClientCapabilities, Era, Implementation, LoggingLevel};

/// Who may reuse a cached result: `"public"` or `"private"` (CACHE-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client may reuse it.
    Public,
    /// Only the requesting user.
    Private,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// The `_meta` envelope of a 2026-07-28 request, read once per request
/// and carried to the handler's context.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    /// The whole `params._meta` (for `RequestContext::meta`).
    pub(crate) meta: JsonObject,
    pub(crate) version: String,
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Implementation>,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// ERA-1: a request other than `initialize` whose `_meta` names a protocol
/// version claims the 2026-07-28 era.
pub(crate) fn is_claim(request: &Request) -> bool {
    request.method != methods::INITIALIZE
        && request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(meta::PROTOCOL_VERSION))
            .is_some()
}

/// META-2, META-3, LOG-2: reads the envelope; `-32602` naming what is
/// missing or malformed. The version is not checked here (see
/// [`check_version`]).
pub(crate) fn read_envelope(params: Option<&Value>) -> Result<Envelope, ErrorObject> {
    let meta_object = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let meta_object = match meta_object {
        Some(m) => m,
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "missing params._meta with {} and {}",
                meta::PROTOCOL_VERSION,
                meta::CLIENT_CAPABILITIES
            )))
        }
    };
    let mut missing = Vec::new();
    let version = match meta_object.get(meta::PROTOCOL_VERSION) {
        Some(Value::String(v)) => Some(v.clone()),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "{} must be a string",
                meta::PROTOCOL_VERSION
            )))
        }
        None => {
            missing.push(meta::PROTOCOL_VERSION);
            None
        }
    };
    let capabilities = match meta_object.get(meta::CLIENT_CAPABILITIES) {
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "{} must be an object",
                meta::CLIENT_CAPABILITIES
            )))
        }
        None => {
            missing.push(meta::CLIENT_CAPABILITIES);
            None
        }
    };
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "missing required _meta field(s): {}",
            missing.join(", ")
        )));
    }
    let client_capabilities = serde_json::from_value(capabilities.unwrap_or(Value::Null))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid clientCapabilities: {}", e)))?;
    let client_info = meta_object
        .get(meta::CLIENT_INFO)
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    let log_level = match meta_object.get(meta::LOG_LEVEL) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_str()
                .and_then(|s| s.parse::<LoggingLevel>().ok())
                .ok_or_else(|| {
                    ErrorObject::invalid_params(format!("unknown {}: {}", meta::LOG_LEVEL, v))
                })?,
        ),
    };
    Ok(Envelope {
        meta: meta_object.clone(),
        version: version.unwrap_or_default(),
        client_capabilities,
        client_info,
        log_level,
    })
}

/// VER-2: `-32022` with `{supported, requested}` for a version not served.
pub(crate) fn check_version(version: &str) -> Result<(), ErrorObject> {
    if Era::of(version) == Some(Era::V2026_07_28) {
        Ok(())
    } else {
        Err(unsupported_version(version))
    }
}

/// The `-32022` error for `requested`.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(serde_json::json!({
        "supported": Era::V2026_07_28.versions(),
        "requested": requested,
    }))
}

/// Cache hints for cacheable results, set on the builder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheHints {
    pub(crate) ttl: Duration,
    pub(crate) scope: CacheScope,
}

impl Default for CacheHints {
    fn default() -> Self {
        CacheHints {
            ttl: Duration::from_millis(0),
            scope: CacheScope::Private,
        }
    }
}

/// The one decoration of 2026-07-28 results (RES-1, RES-3, CACHE-1): adds
/// `resultType: "complete"` unless the result names its type (as
/// `input_required` does), the server's identity in
/// `_meta["io.modelcontextprotocol/serverInfo"]` unless the handler set it,
/// and, when `cache` is given, `ttlMs` and `cacheScope`. Every 2026-07-28
/// result goes through it: inline answers, handler results,
/// `input_required`, and the closing result of a listen stream.
pub(crate) fn decorate(
    mut result: Value,
    server_info: &Implementation,
    cache: Option<CacheHints>,
) -> Value {
    if let Value::Object(object) = &mut result {
        object
            .entry("resultType")
            .or_insert_with(|| Value::from("complete"));
        if let Some(cache) = cache {
            object.insert("ttlMs".into(), Value::from(cache.ttl.as_millis() as u64));
            object.insert("cacheScope".into(), Value::from(cache.scope.as_str()));
        }
        stamp(object, server_info);
    }
    result
}

/// RES-3: `_meta["io.modelcontextprotocol/serverInfo"]`, unless the handler
/// set it.
fn stamp(object: &mut JsonObject, server_info: &Implementation) {
    let meta_value = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta_object) = meta_value {
        stamp_meta(meta_object, server_info);
    }
}

/// RES-3 on a result's `_meta` object itself.
/// A `serverInfo` that cannot be serialized (a bug, logged) is left out.
pub(crate) fn stamp_meta(meta_object: &mut JsonObject, server_info: &Implementation) {
    if !meta_object.contains_key(meta::SERVER_INFO) {
        if let Ok(info) = to_json("the server's info", server_info) {
            meta_object.insert(meta::SERVER_INFO.into(), info);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // META-2: a missing envelope field is -32602 naming it.
    #[test]
    fn envelope_fields() {
        let err = read_envelope(Some(&json!({}))).unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
        let err = read_envelope(Some(&json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28"
        }})))
        .unwrap_err();
        assert!(
            err.message.contains("clientCapabilities"),
            "{}",
            err.message
        );
        let ok = read_envelope(Some(&json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "io.modelcontextprotocol/logLevel": "warning"
        }})))
        .unwrap();
        assert!(ok.client_capabilities.supports_sampling());
        assert_eq!(ok.log_level, Some(LoggingLevel::Warning));
        // LOG-2: an unknown level is -32602.
        assert!(read_envelope(Some(&json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "loud"
        }})))
        .is_err());
        // META-3: a non-string version is -32602, not -32022.
        let err = read_envelope(Some(&json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": 5,
            "io.modelcontextprotocol/clientCapabilities": {}
        }})))
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    }

    // VER-2: -32022 carries supported and requested.
    #[test]
    fn unsupported_version_shape() {
        let err = check_version("2099-01-01").unwrap_err();
        assert_eq!(err.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        let data = err.data.unwrap();
        assert_eq!(data["supported"], json!(["2026-07-28"]));
        assert_eq!(data["requested"], "2099-01-01");
    }

    // RES-1, RES-3, CACHE-1.
    #[test]
    fn results_are_decorated() {
        let info = Implementation::new("s", "1");
        let out = decorate(json!({"tools": []}), &info, Some(CacheHints::default()));
        assert_eq!(out["resultType"], "complete");
        assert_eq!(out["ttlMs"], 0);
        assert_eq!(out["cacheScope"], "private");
        assert_eq!(out["_meta"][meta::SERVER_INFO]["name"], "s");
    }
}
