//! A blocking MCP client: [`Client`], over stdio, Streamable HTTP, or any
//! reader and writer, in both eras.
//!
//! The client negotiates the era when it connects (`connect.rs`), then
//! every typed method is one request through the [`Link`] of its
//! transport. In 2026-07-28 each request carries the `_meta` envelope and
//! an `input_required` answer is retried here, with the program's closures
//! answering the input requests (`rounds.rs`), so calling code is the same
//! in both eras.

mod builder;
mod calls;
mod connect;
mod duplex;
mod http;
mod http_sse;
mod inbox;
mod link;
mod listen;
pub mod oauth;
mod options;
mod params;
mod recover;
mod rounds;
mod sse;
mod stdio;
mod tasks;
#[cfg(feature = "tls")]
mod tls;
mod wire;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use builder::ClientBuilder;
pub use listen::{Subscription, SubscriptionFilter};
pub use options::{CallOptions, CancelToken};
pub use stdio::StderrMode;

use self::http::HttpLink;
use self::inbox::Inbox;
use self::link::{Link, Outgoing, Wait};
use self::stdio::ChildProcess;
use crate::error::{to_json, Error, ErrorKind};
use crate::jsonrpc::{JsonObject, RequestId};
use crate::protocol::{
    meta, methods, Era, Implementation, ListToolsResult, LoggingLevel, ServerCapabilities,
};

/// A connection to one MCP server.
///
/// Blocking and safe to share between threads (`&Client` is enough: wrap
/// it in an `Arc`); calls from several threads run concurrently. Made by
/// [`Client::builder`]; dropping it closes the connection (a 2025-11-25
/// HTTP session is ended with `DELETE`, a stdio child is ended).
///
/// Every method returns the server's JSON-RPC error as
/// [`ErrorKind::Peer`], a timeout as [`ErrorKind::Timeout`], a
/// misbehaving server as [`ErrorKind::Protocol`], and a lost connection
/// as [`ErrorKind::Io`] or [`ErrorKind::Closed`].
pub struct Client {
    link: Arc<dyn Link>,
    inbox: Arc<Inbox>,
    info: Implementation,
    capabilities: crate::protocol::ClientCapabilities,
    /// The envelope's constant part, serialized once: capabilities and
    /// client info (META-1).
    envelope_json: (Value, Value),
    request_timeout: Duration,
    next_id: AtomicI64,
    server: connect::Negotiated,
    log_level: Mutex<Option<LoggingLevel>>,
    child: Option<Arc<ChildProcess>>,
    http: Option<Arc<HttpLink>>,
    params: Arc<params::ParamHeaders>,
    reinitialize: bool,
    reinitializing: Mutex<()>,
    /// Sessions so far; a GET stream waits on it for the next one.
    epoch: Arc<recover::SessionEpoch>,
    /// What the session holds that a new session is told again.
    session: recover::SessionState,
    /// The GET stream opened on connecting (2025-11-25 HTTP).
    background: Mutex<Option<Subscription>>,
    closed: AtomicBool,
    /// Each listed tool's `execution.taskSupport` (`tasks.rs`).
    task_support: tasks::Known,
}

impl Client {
    /// Starts building a client named `name` at `version` (its
    /// `clientInfo`).
    pub fn builder(name: &str, version: &str) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    fn start(
        builder: ClientBuilder,
        link: Arc<dyn Link>,
        inbox: Arc<Inbox>,
        child: Option<Arc<ChildProcess>>,
        http: Option<Arc<HttpLink>>,
        params: Arc<params::ParamHeaders>,
    ) -> Result<Client, Error> {
        let capabilities = builder.handlers.capabilities();
        let envelope_json = match to_json("the client's capabilities", &capabilities)
            .and_then(|caps| Ok((caps, to_json("the client's info", &builder.info)?)))
        {
            Ok(json) => json,
            Err(e) => {
                link.close();
                return Err(e);
            }
        };
        let mut client = Client {
            capabilities,
            envelope_json,
            link,
            inbox,
            info: builder.info.clone(),
            request_timeout: builder.request_timeout,
            next_id: AtomicI64::new(1),
            server: connect::Negotiated::default(),
            log_level: Mutex::new(None),
            child,
            http,
            params,
            reinitialize: builder.reinitialize,
            reinitializing: Mutex::new(()),
            epoch: Arc::new(recover::SessionEpoch::default()),
            session: recover::SessionState::default(),
            background: Mutex::new(None),
            closed: AtomicBool::new(false),
            task_support: tasks::Known::default(),
        };
        match connect::negotiate(&client, builder.era, builder.probe_timeout) {
            Ok(server) => {
                client.link.settle(server.era, &server.protocol_version);
                client.inbox.settle(server.era);
                client.server = server;
                if builder.handlers.answers_anything() {
                    client.open_get_stream();
                }
                Ok(client)
            }
            Err(e) => {
                client.close_link();
                Err(e)
            }
        }
    }

    /// The era settled on when connecting.
    pub fn era(&self) -> Era {
        self.server.era
    }

    /// The protocol version in use: the one `initialize` negotiated, or
    /// `2026-07-28`.
    pub fn protocol_version(&self) -> &str {
        &self.server.protocol_version
    }

    /// Who the server says it is (`serverInfo`; in 2026-07-28 the
    /// `_meta["io.modelcontextprotocol/serverInfo"]` of `server/discover`,
    /// which a server may leave out).
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server.server_info.as_ref()
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.server.capabilities
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.server.instructions.as_deref()
    }

    /// The session id a 2025-11-25 HTTP server gave (`Mcp-Session-Id`).
    pub fn session_id(&self) -> Option<String> {
        self.http.as_ref().and_then(|h| h.session_id())
    }

    /// The stdio child's process id, while it runs.
    pub fn server_pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    /// The stdio child's stderr so far (the last 64 KiB), with
    /// [`StderrMode::Capture`]; empty otherwise.
    pub fn stderr(&self) -> Vec<u8> {
        self.child
            .as_ref()
            .map_or_else(Vec::new, |c| c.stderr.lock().clone())
    }

    fn new_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends `method` with `params` (an object, or `Value::Null` for none)
    /// and returns its result as JSON: for methods without a typed call,
    /// and for a program that forwards requests as they came (a proxy).
    /// In 2026-07-28 the envelope is added and `input_required` rounds are
    /// answered as for the typed calls; over HTTP the `Mcp-Name` header
    /// mirrors the params' `name` (`tools/call`, `prompts/get`), `uri`
    /// (`resources/read`) or `taskId` (`tasks/get`, `tasks/update`,
    /// `tasks/cancel`), a `tools/list` result teaches the client the tools'
    /// `Mcp-Param-*` headers, and a `tools/call` the server wants such
    /// headers for is retried once after listing, as [`call_tool`](Self::call_tool) does
    /// (HTTP-4, HTTP-6). The result is returned as the server sent it.
    ///
    /// # Errors
    ///
    /// See [`Client`]. `params` that are neither an object nor `null` are
    /// [`ErrorKind::InvalidParams`].
    pub fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.request_with(method, params, &CallOptions::new())
    }

    /// [`request`](Self::request) with a timeout, a cancel token or a
    /// progress callback.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub fn request_with(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let params = match params {
            Value::Object(object) => object,
            Value::Null => JsonObject::new(),
            _ => {
                return Err(Error::invalid_params(
                    "request params must be a JSON object",
                ))
            }
        };
        let name = mirrored_name(method, &params);
        let result = match (method, name) {
            (methods::TOOLS_CALL, Some(name)) => self.call_tool_once(&name, params, options)?,
            (_, name) => self.send(method, params, name, options)?,
        };
        if method == methods::TOOLS_LIST && self.server.era == Era::V2026_07_28 {
            if let Ok(page) = serde_json::from_value::<ListToolsResult>(result.clone()) {
                self.params.admit(page.tools);
            }
        }
        Ok(result)
    }

    /// One request in the era in use: the envelope and retries of
    /// 2026-07-28, or a plain request.
    fn send(
        &self,
        method: &str,
        mut params: JsonObject,
        name: Option<String>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorKind::Closed));
        }
        let wait = self.wait_for(options);
        let _progress = options.progress.clone().map(|progress| {
            let token = RequestId::String(format!(
                "progress-{}",
                self.next_id.fetch_add(1, Ordering::Relaxed)
            ));
            meta_of(&mut params).insert("progressToken".into(), token.to_value());
            self.inbox.watch_progress(token, progress)
        });
        match self.server.era {
            Era::V2026_07_28 => rounds::run(self, method, params, name, &wait),
            _ => self.send_2025(method, params, name, options, &wait),
        }
    }

    /// A 2025-11-25 request; a `404` on the session starts a new one and,
    /// when [`recover::may_retry`] allows, sends the request again there.
    fn send_2025(
        &self,
        method: &str,
        params: JsonObject,
        name: Option<String>,
        options: &CallOptions,
        wait: &Wait<'_>,
    ) -> Result<Value, Error> {
        let mut out = Outgoing {
            id: self.new_id(),
            method: method.to_string(),
            params: Value::Object(params),
            name,
        };
        let session = self.epoch.current();
        if self.reinitialize && self.session.lost.load(Ordering::SeqCst) {
            self.new_session(session, wait)?;
        }
        match self.link.request(&out, wait) {
            Err(e) if matches!(e.kind(), ErrorKind::SessionExpired) && self.reinitialize => {
                self.new_session(session, wait)?;
                if !recover::may_retry(method, options) {
                    return Err(e);
                }
                out.id = self.new_id();
                self.link.request(&out, wait)
            }
            other => other,
        }
    }

    /// How long a request with `options` may wait.
    fn wait_for<'a>(&self, options: &'a CallOptions) -> Wait<'a> {
        let timeout = options.timeout.unwrap_or(self.request_timeout);
        Wait {
            deadline: Instant::now() + timeout,
            timeout,
            cancel: options.cancel.as_ref(),
        }
    }

    /// A typed request: `params` serialized, the result parsed as `R`.
    fn typed<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        name: Option<String>,
        options: &CallOptions,
    ) -> Result<R, Error> {
        let params = match params {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        };
        let result = self.send(method, params, name, options)?;
        serde_json::from_value(result).map_err(|e| {
            Error::new(ErrorKind::Protocol(format!(
                "the {} result has the wrong shape: {}",
                method, e
            )))
        })
    }

    /// Sends a notification (no answer). In 2026-07-28 the server drops
    /// every client notification but `notifications/cancelled` (MOD-1).
    ///
    /// # Errors
    ///
    /// Writing failed, or an HTTP server refused it.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.link.notify(method, params)
    }

    /// 2025-11-25 HTTP: the session's GET stream, opened at once as the
    /// official SDKs' clients do, for the requests and notifications a
    /// server sends outside any call; a server without one (`405`) is
    /// fine.
    fn open_get_stream(&self) {
        if self.http.is_none() || self.server.era == Era::V2026_07_28 {
            return;
        }
        match self.listen_2025() {
            Ok(subscription) => *self.background.lock() = Some(subscription),
            Err(e) => log::debug!("no GET stream: {}", e),
        }
    }

    fn close_link(&self) {
        drop(self.background.lock().take());
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.link.close();
        }
    }

    /// Closes the connection: ends a 2025-11-25 HTTP session (`DELETE`),
    /// ends a stdio child (its stdin closed, killed after 2 s), and fails
    /// every call still waiting with [`ErrorKind::Closed`] or
    /// [`ErrorKind::Protocol`]. Dropping the client does the same.
    pub fn close(self) {
        self.close_link();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.close_link();
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("era", &self.server.era)
            .field("protocol_version", &self.server.protocol_version)
            .field("server_info", &self.server.server_info)
            .finish_non_exhaustive()
    }
}

/// The params field that a request's `Mcp-Name` header mirrors on
/// 2026-07-28 HTTP (HTTP-6), as the server's method table names it.
fn mirrored_name(method: &str, params: &JsonObject) -> Option<String> {
    let field = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => "name",
        methods::RESOURCES_READ => "uri",
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => "taskId",
        _ => return None,
    };
    params
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The `_meta` object of `params`, made if missing.
fn meta_of(params: &mut JsonObject) -> &mut JsonObject {
    let slot = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if !slot.is_object() {
        *slot = Value::Object(JsonObject::new());
    }
    match slot {
        Value::Object(object) => object,
        _ => unreachable!("made an object just above"),
    }
}

/// The 2026-07-28 envelope keys the client sets on each request (META-1).
pub(crate) fn envelope(client: &Client, params: &mut JsonObject) {
    let (caps, info) = client.envelope_json.clone();
    let level = *client.log_level.lock();
    let meta = meta_of(params);
    meta.insert(
        meta::PROTOCOL_VERSION.into(),
        Value::from(crate::protocol::versions::V2026_07_28),
    );
    // A request that names its own capabilities keeps them: a task call
    // adds the tasks extension (SEP-2663), which is declared per request.
    meta.entry(meta::CLIENT_CAPABILITIES).or_insert(caps);
    meta.insert(meta::CLIENT_INFO.into(), info);
    // A level that cannot be serialized (a bug, logged) is left out.
    if let Some(Ok(level)) = level.map(|level| to_json("the log level", &level)) {
        meta.insert(meta::LOG_LEVEL.into(), level);
    }
}
