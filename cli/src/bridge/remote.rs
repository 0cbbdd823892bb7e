//! The remote side of `mcp bridge`: a [`Client`] of the Streamable HTTP
//! server, made when the local client initializes, in the local client's
//! name and with its capabilities. The crate's client does the rest: the
//! era the server speaks, the login and its refresh, a new session when
//! the server forgets one (with the same `initialize`), the 2024-11-05
//! HTTP+SSE transport of old servers.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CancelToken, Client, Era, Error, ErrorKind, ErrorObject, Implementation,
    ListRootsResult, LoggingLevel, Subscription, SubscriptionFilter,
};

use super::local::Local;
use super::Options;

/// See the module docs.
pub struct Remote {
    client: Client,
    /// The 2026-07-28 subscription that carries change notifications,
    /// with the resources it names; remade when they change.
    listening: Mutex<(BTreeSet<String>, Option<Subscription>)>,
}

impl Remote {
    /// Connects to `options.url` for a local client that sent `initialize`
    /// with `init` (none: a client that did not, which gets no
    /// server-to-client requests).
    ///
    /// # Errors
    ///
    /// What [`ClientBuilder::connect_http`](tiny_mcp::ClientBuilder::connect_http)
    /// returns: the server cannot be reached, refused, or the login failed.
    pub fn connect(
        options: &Options,
        init: Option<&Value>,
        local: &Arc<Local>,
    ) -> Result<Remote, Error> {
        let info = init
            .and_then(|init| init.get("clientInfo"))
            .and_then(|info| serde_json::from_value::<Implementation>(info.clone()).ok())
            .unwrap_or_else(|| Implementation::new("mcp bridge", env!("CARGO_PKG_VERSION")));
        let declared = |name: &str| {
            init.and_then(|init| init.get("capabilities"))
                .and_then(|caps| caps.get(name))
                .map_or(false, Value::is_object)
        };
        let mut builder = Client::builder(&info.name, &info.version)
            .client_info(info.clone())
            .request_timeout(options.timeout);
        if let Some(era) = options.era {
            builder = builder.era(era);
        }
        for (name, value) in &options.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let to_local = Arc::clone(local);
        builder = builder.on_notification(move |n| forward_notification(&to_local, n));
        let timeout = options.timeout;
        if declared("sampling") {
            let local = Arc::clone(local);
            builder =
                builder.on_sampling(move |p| ask(&local, "sampling/createMessage", &p, timeout));
        }
        if declared("elicitation") {
            let local = Arc::clone(local);
            builder =
                builder.on_elicitation(move |p| ask(&local, "elicitation/create", &p, timeout));
        }
        if declared("roots") {
            let local = Arc::clone(local);
            builder = builder.on_roots(move || -> Result<ListRootsResult, Error> {
                ask(&local, "roots/list", &json!({}), timeout)
            });
        }
        let builder = match &options.token {
            Some(token) => {
                let token = token.clone();
                builder.bearer_token(move || Some(token.clone()))
            }
            // `--header "Authorization: …"`: sent as given, no login.
            None if options.authorization_header() => builder,
            None => builder.oauth(options.login.oauth()),
        };
        let client = builder.connect_http(&options.url)?;
        Ok(Remote {
            client,
            listening: Mutex::new((BTreeSet::new(), None)),
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Ends the listen stream, then the connection.
    pub fn close(self) {
        let listening = self
            .listening
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        drop(listening);
        self.client.close();
    }

    /// The `initialize` result the local client gets: the remote server's
    /// capabilities, identity and instructions, at the version the local
    /// client asked for when it is one of the `initialize` era's.
    pub fn initialize_result(&self, asked: Option<&str>) -> Value {
        let version = match asked {
            Some(v) if ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"].contains(&v) => v,
            _ => "2025-11-25",
        };
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.client.server_capabilities(),
            "serverInfo": self.client.server_info(),
        });
        if let Some(instructions) = self.client.instructions() {
            result["instructions"] = Value::from(instructions);
        }
        result
    }

    /// Forwards one request of the local client's and returns the remote
    /// server's answer. A `progressToken` of the local client's is
    /// replaced by one of the bridge's, and the server's progress is sent
    /// back under the local one (basic/utilities/progress).
    pub fn forward(
        &self,
        method: &str,
        params: Option<Value>,
        token: &CancelToken,
        local: &Arc<Local>,
    ) -> Result<Value, ErrorObject> {
        let mut params = params.unwrap_or(Value::Null);
        let mut options = CallOptions::new().cancel_token(token.clone());
        if let Some(progress) = take_progress_token(&mut params) {
            let local = Arc::clone(local);
            options = options.on_progress(move |p| {
                let mut params = serde_json::to_value(p).unwrap_or_else(|_| json!({}));
                params["progressToken"] = progress.clone();
                local.notify("notifications/progress", Some(params));
            });
        }
        let outcome = match method {
            "ping" => self.client.ping().map(|()| json!({})),
            "logging/setLevel" => self.set_level(&params),
            "resources/subscribe" | "resources/unsubscribe" if self.v2026() => {
                self.subscription(method, &params)
            }
            _ => self.client.request_with(method, params, &options),
        };
        let legacy = self.v2026();
        outcome
            .map(|result| {
                if legacy {
                    as_legacy_result(result)
                } else {
                    result
                }
            })
            .map_err(|e| wire_error(&e))
    }

    fn v2026(&self) -> bool {
        self.client.era() == Era::V2026_07_28
    }

    /// `logging/setLevel`: in 2026-07-28 the level goes with each request
    /// instead (the client does that).
    fn set_level(&self, params: &Value) -> Result<Value, Error> {
        let level: LoggingLevel = serde_json::from_value(params["level"].clone())
            .map_err(|e| Error::invalid_params(format!("level: {}", e)))?;
        self.client.set_logging_level(level).map(|()| json!({}))
    }

    /// The change notifications a 2026-07-28 server sends only on a
    /// `subscriptions/listen` stream: its list changes, as its
    /// capabilities offer them, and the resources the local client
    /// subscribed to. 2025-11-25 servers use the session's GET stream,
    /// which the client opens itself. Waits for the server's
    /// acknowledgement (LISTEN-3): called on a thread of its own after
    /// connecting.
    pub fn listen_for_changes(&self) {
        if !self.v2026() {
            return;
        }
        let caps = serde_json::to_value(self.client.server_capabilities()).unwrap_or(Value::Null);
        let offers = |what: &str| caps[what]["listChanged"] == Value::Bool(true);
        let mut filter = SubscriptionFilter::new();
        if offers("tools") {
            filter = filter.tools_list_changed();
        }
        if offers("prompts") {
            filter = filter.prompts_list_changed();
        }
        if offers("resources") {
            filter = filter.resources_list_changed();
        }
        let mut listening = self.listening.lock().unwrap_or_else(|e| e.into_inner());
        for uri in &listening.0 {
            filter = filter.resource(uri.clone());
        }
        let nothing = ["tools", "prompts", "resources"].iter().all(|w| !offers(w));
        if nothing && listening.0.is_empty() {
            listening.1 = None;
            return;
        }
        // The old stream ends once the new one is acknowledged.
        match self.client.listen(&filter) {
            Ok(subscription) => listening.1 = Some(subscription),
            Err(e) => note!("mcp bridge: no change notifications from the server: {}", e),
        }
    }

    /// `resources/subscribe` and `resources/unsubscribe` to a 2026-07-28
    /// server: the listen stream is remade with the resources named.
    fn subscription(&self, method: &str, params: &Value) -> Result<Value, Error> {
        let uri = params["uri"]
            .as_str()
            .ok_or_else(|| Error::invalid_params("uri: a string is required"))?
            .to_string();
        {
            let mut listening = self.listening.lock().unwrap_or_else(|e| e.into_inner());
            match method {
                "resources/subscribe" => listening.0.insert(uri),
                _ => listening.0.remove(&uri),
            };
        }
        self.listen_for_changes();
        Ok(json!({}))
    }
}

/// A 2026-07-28 result as the local client's era has it (RES-2: legacy
/// results carry no `resultType`, `ttlMs`, `cacheScope` or serverInfo
/// stamp; some clients validate empty results strictly). A `resultType`
/// other than `complete` stays: it means something.
fn as_legacy_result(mut result: Value) -> Value {
    if let Some(object) = result.as_object_mut() {
        if object.get("resultType").and_then(Value::as_str) == Some("complete") {
            object.remove("resultType");
        }
        object.remove("ttlMs");
        object.remove("cacheScope");
        let meta = object.get_mut("_meta").and_then(Value::as_object_mut);
        if let Some(meta) = meta {
            meta.remove("io.modelcontextprotocol/serverInfo");
            if meta.is_empty() {
                object.remove("_meta");
            }
        }
    }
    result
}

/// Takes the local client's `_meta.progressToken` out of `params`.
fn take_progress_token(params: &mut Value) -> Option<Value> {
    params
        .get_mut("_meta")
        .and_then(Value::as_object_mut)
        .and_then(|meta| meta.remove("progressToken"))
}

/// A notification of the remote server's, sent on to the local client.
/// Progress has gone to its call already; a cancellation names a request
/// of the server's whose id the local client never saw, and is dropped.
fn forward_notification(local: &Local, notification: &tiny_mcp::Notification) {
    if notification.method == "notifications/cancelled" {
        return;
    }
    local.notify(&notification.method, notification.params.clone());
}

/// A request of the remote server's (sampling, elicitation, roots) put to
/// the local client, and its answer read as `R`.
fn ask<P: Serialize, R: DeserializeOwned>(
    local: &Local,
    method: &str,
    params: &P,
    timeout: std::time::Duration,
) -> Result<R, Error> {
    let params = serde_json::to_value(params)?;
    let answer = local.ask(method, params, timeout)?;
    serde_json::from_value(answer).map_err(|e| {
        Error::new(ErrorKind::Protocol(format!(
            "the local client's {} answer has the wrong shape: {}",
            method, e
        )))
    })
}

/// The JSON-RPC error the local client gets: the remote server's own, as
/// it sent it, or one that says what went wrong on the way.
pub fn wire_error(e: &Error) -> ErrorObject {
    match e.kind() {
        ErrorKind::Peer(error) | ErrorKind::Rpc(error) => error.clone(),
        ErrorKind::InvalidParams(_) => e.to_error_object(),
        _ => ErrorObject::internal(format!("mcp bridge: {}", e)),
    }
}
