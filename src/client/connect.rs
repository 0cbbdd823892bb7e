//! Settling the era when connecting: `server/discover` first, the
//! `initialize` handshake when the server does not serve 2026-07-28
//! (basic/versioning; VER-3, DISC-3, ERA-5; basic/lifecycle
//! "Initialization", 2025-11-25).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{envelope, CallOptions, Client, Wait};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::JsonObject;
use crate::protocol::{
    meta, methods, notifications, versions, Era, Implementation, InitializeResult,
    ServerCapabilities,
};

/// What connecting settled on.
#[derive(Debug, Clone)]
pub(crate) struct Negotiated {
    pub(crate) era: Era,
    pub(crate) protocol_version: String,
    pub(crate) server_info: Option<Implementation>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

impl Default for Negotiated {
    /// Before negotiation: requests go out without an envelope.
    fn default() -> Negotiated {
        Negotiated {
            era: Era::V2025_11_25,
            protocol_version: versions::LATEST.to_string(),
            server_info: None,
            capabilities: ServerCapabilities::default(),
            instructions: None,
        }
    }
}

/// Settles the era: `pinned`, or 2026-07-28 when the server serves it and
/// 2025-11-25 otherwise. Unpinned, the `server/discover` probe waits at
/// most `probe_timeout` (or the request timeout, when shorter): an old
/// server may never answer it.
pub(crate) fn negotiate(
    client: &Client,
    pinned: Option<Era>,
    probe_timeout: Duration,
) -> Result<Negotiated, Error> {
    if pinned == Some(Era::V2025_11_25) {
        return initialize(client);
    }
    let probe_timeout = match pinned {
        None => probe_timeout.min(client.request_timeout),
        Some(_) => client.request_timeout,
    };
    let first = discover(client, probe_timeout);
    let outcome = match &first {
        // VER-2: -32022 lists what the server serves; one that this client
        // speaks is asked again, once.
        Err(e) if offers_2026(e) => discover(client, probe_timeout),
        _ => first,
    };
    match outcome {
        Ok(Some(negotiated)) => Ok(negotiated),
        Ok(None) if pinned.is_none() => initialize(client),
        Ok(None) => Err(Error::msg(
            "the server does not serve 2026-07-28 (server/discover lists no 2026-07-28 version)",
        )),
        Err(e) if pinned.is_none() && falls_back(&e) => {
            log::debug!("server/discover failed ({}); trying initialize", e);
            restart_if_exited(client)?;
            initialize(client)
        }
        Err(e) => Err(e),
    }
}

/// `-32022` (UnsupportedProtocolVersion) whose `data.supported` lists a
/// version this client speaks in 2026-07-28.
fn offers_2026(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Peer(error)
            if error.code == crate::jsonrpc::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map_or(false, |list| {
                    list.iter()
                        .any(|v| v.as_str().and_then(Era::of) == Some(Era::V2026_07_28))
                })
        }
        _ => false,
    }
}

/// A failed probe that says "not a 2026-07-28 server": an error answer,
/// an HTTP status other than 401 and 403 (a 2025-era HTTP server may
/// answer an unknown method with a 4xx or a 5xx that is not JSON-RPC), a
/// stdio server that exited on it, or no answer within the probe's
/// deadline (a 2025-era stdio server may ignore unknown methods). As
/// opposed to one that says nothing could be asked: no connection, no
/// authorization (401, 403).
fn falls_back(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Peer(_)
        | ErrorKind::Protocol(_)
        | ErrorKind::SessionExpired
        | ErrorKind::Timeout { .. } => true,
        ErrorKind::Http { status, .. } => !matches!(status, 401 | 403),
        _ => false,
    }
}

/// A stdio server that exited on the probe (some 2025-era servers exit on
/// an unknown method) is started again, once, for `initialize`.
fn restart_if_exited(client: &Client) -> Result<(), Error> {
    match &client.child {
        Some(child) if child.exited() => {
            log::info!("the server exited on server/discover; starting it again for initialize");
            child.restart()
        }
        _ => Ok(()),
    }
}

/// `server/discover` (DISC-1), waiting at most `timeout`: `Some` when its
/// `supportedVersions` lists 2026-07-28.
fn discover(client: &Client, timeout: Duration) -> Result<Option<Negotiated>, Error> {
    let mut params = JsonObject::new();
    envelope(client, &mut params);
    let out = super::Outgoing {
        id: client.new_id(),
        method: methods::SERVER_DISCOVER.to_string(),
        params: Value::Object(params),
        name: None,
    };
    let wait = Wait {
        deadline: Instant::now() + timeout,
        timeout,
        cancel: None,
    };
    let result = client.link.request_uncancelled(&out, &wait)?;
    let supported = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map_or(false, |list| {
            list.iter()
                .any(|v| v.as_str() == Some(versions::V2026_07_28))
        });
    if !supported {
        return Ok(None);
    }
    let capabilities = match result.get("capabilities") {
        Some(caps) => serde_json::from_value(caps.clone()).map_err(|e| {
            Error::new(ErrorKind::Protocol(format!(
                "server/discover capabilities: {}",
                e
            )))
        })?,
        None => ServerCapabilities::default(),
    };
    let server_info = result
        .pointer(&format!("/_meta/{}", meta::SERVER_INFO.replace('/', "~1")))
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    Ok(Some(Negotiated {
        era: Era::V2026_07_28,
        protocol_version: versions::V2026_07_28.to_string(),
        server_info,
        capabilities,
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(String::from),
    }))
}

/// `initialize`, then `notifications/initialized` (LC-1 to LC-4): the
/// server's version must be one the client speaks.
pub(crate) fn initialize(client: &Client) -> Result<Negotiated, Error> {
    let options = CallOptions::new();
    initialize_within(client, &client.wait_for(&options))
}

/// [`initialize`] within `wait` (a renewal, within the call that needed
/// it).
pub(crate) fn initialize_within(client: &Client, wait: &Wait<'_>) -> Result<Negotiated, Error> {
    let params = serde_json::json!({
        "protocolVersion": versions::LATEST,
        "capabilities": client.capabilities,
        "clientInfo": client.info,
    });
    let out = super::Outgoing {
        id: client.new_id(),
        method: methods::INITIALIZE.to_string(),
        params,
        name: None,
    };
    let result = client.link.request_uncancelled(&out, wait)?;
    let result: InitializeResult = serde_json::from_value(result).map_err(|e| {
        Error::new(ErrorKind::Protocol(format!(
            "the initialize result has the wrong shape: {}",
            e
        )))
    })?;
    if !versions::is_supported(&result.protocol_version) {
        return Err(Error::new(ErrorKind::Protocol(format!(
            "the server chose protocol version {:?}, which this client does not speak",
            result.protocol_version
        ))));
    }
    client
        .link
        .settle(Era::V2025_11_25, &result.protocol_version);
    client.link.notify(notifications::INITIALIZED, None)?;
    Ok(Negotiated {
        era: Era::V2025_11_25,
        protocol_version: result.protocol_version,
        server_info: Some(result.server_info),
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}
