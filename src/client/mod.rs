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
mod challenge;
mod connect;
mod duplex;
mod http;
mod inbox;
mod link;
mod listen;
mod options;
mod params;
mod rounds;
mod stdio;
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
pub use challenge::BearerChallenge;
pub use listen::{Subscription, SubscriptionFilter};
pub use options::{CallOptions, CancelToken};
pub use stdio::StderrMode;

use self::http::HttpLink;
use self::inbox::Inbox;
use self::link::{Link, Outgoing, Wait};
use self::stdio::ChildProcess;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{JsonObject, RequestId};
use crate::protocol::{
    meta, methods, CallToolResult, CompleteResult, Era, GetPromptResult, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, Prompt, ReadResourceResult, Reference, Resource, ResourceTemplate,
    ServerCapabilities, Tool,
};

/// Pages a `list_*` call follows at most before it fails.
const MAX_PAGES: usize = 1000;

/// A connection to one MCP server.
///
/// Blocking and safe to share between threads (`&Client` is enough: wrap
/// it in an `Arc`); calls from several threads run concurrently. Made by
/// [`Client::builder`]; dropping it closes the connection (a 2025-11-25
/// HTTP session is ended with `DELETE`, a stdio child is ended).
///
/// Every method returns the server's JSON-RPC error as
/// [`ErrorKind::Server`], a timeout as [`ErrorKind::Timeout`], a
/// misbehaving server as [`ErrorKind::Protocol`], and a lost connection
/// as [`ErrorKind::Io`] or [`ErrorKind::Closed`].
pub struct Client {
    link: Arc<dyn Link>,
    inbox: Arc<Inbox>,
    info: Implementation,
    capabilities: crate::protocol::ClientCapabilities,
    request_timeout: Duration,
    next_id: AtomicI64,
    server: connect::Negotiated,
    log_level: Mutex<Option<LoggingLevel>>,
    child: Option<Arc<ChildProcess>>,
    http: Option<Arc<HttpLink>>,
    params: Arc<params::ParamHeaders>,
    reinitialize: bool,
    reinitializing: Mutex<()>,
    /// The GET stream opened on connecting (2025-11-25 HTTP).
    background: Mutex<Option<Subscription>>,
    closed: AtomicBool,
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
        let mut client = Client {
            capabilities: builder.handlers.capabilities(),
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
            background: Mutex::new(None),
            closed: AtomicBool::new(false),
        };
        match connect::negotiate(&client, builder.era) {
            Ok(server) => {
                client.link.settle(server.era, &server.protocol_version);
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
    /// and returns its result as JSON: for methods without a typed call.
    /// In 2026-07-28 the envelope is added and `input_required` rounds are
    /// answered as for the typed calls.
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
        self.send(method, params, None, options)
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
            _ => {
                let mut out = Outgoing {
                    id: self.new_id(),
                    method: method.to_string(),
                    params: Value::Object(params),
                    name,
                };
                match self.link.request(&out, &wait) {
                    Err(e)
                        if matches!(e.kind(), ErrorKind::SessionExpired) && self.reinitialize =>
                    {
                        self.new_session()?;
                        out.id = self.new_id();
                        self.link.request(&out, &wait)
                    }
                    other => other,
                }
            }
        }
    }

    /// A new 2025-11-25 session after the server ended the old one
    /// (`ClientBuilder::reinitialize_on_expiry`).
    fn new_session(&self) -> Result<(), Error> {
        let _one_at_a_time = self.reinitializing.lock();
        if let Some(http) = &self.http {
            http.forget_session();
        }
        connect::initialize(self).map(|_| ())
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

    /// Checks that the server answers: `ping` in 2025-11-25;
    /// `server/discover` in 2026-07-28, which has no `ping` (REM-1).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn ping(&self) -> Result<(), Error> {
        let method = match self.server.era {
            Era::V2026_07_28 => methods::SERVER_DISCOVER,
            _ => methods::PING,
        };
        self.send(method, JsonObject::new(), None, &CallOptions::new())
            .map(|_| ())
    }

    /// Every tool, following `nextCursor` (server/tools "Listing Tools").
    ///
    /// # Errors
    ///
    /// See [`Client`]; a server that repeats a cursor or sends more than
    /// 1000 pages is [`ErrorKind::Protocol`].
    pub fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.all_pages(|cursor| {
            self.list_tools_page(cursor)
                .map(|p| (p.tools, p.next_cursor))
        })
    }

    /// One page of tools, from `cursor` (`None`: the first). In 2026-07-28
    /// a tool whose `x-mcp-header` annotations are invalid is left out
    /// (MHTTP-15), with a warning in the log.
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        let mut page: ListToolsResult = self.page(methods::TOOLS_LIST, cursor)?;
        if self.server.era == Era::V2026_07_28 {
            page.tools = self.params.admit(std::mem::take(&mut page.tools));
        }
        Ok(page)
    }

    /// Calls a tool with `arguments` (a JSON object, or `Value::Null`).
    /// A tool's own failure is a result with `is_error: Some(true)`, not an
    /// `Err` (server/tools "Error Handling").
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, &CallOptions::new())
    }

    /// [`call_tool`](Self::call_tool) with a timeout, a cancel token or a
    /// progress callback.
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = serde_json::json!({ "name": name });
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        let first = self.typed(
            methods::TOOLS_CALL,
            params.clone(),
            Some(name.to_string()),
            options,
        );
        match first {
            // HTTP-4: a server that wants Mcp-Param-* headers for a tool this
            // client has not listed yet says so with -32020; list, then retry
            // once with the headers.
            Err(e) if self.needs_param_headers(&e, name) => {
                self.list_tools()?;
                self.typed(methods::TOOLS_CALL, params, Some(name.to_string()), options)
            }
            other => other,
        }
    }

    /// A 2026-07-28 HTTP header mismatch (`-32020`) on a tool no list has
    /// named yet.
    fn needs_param_headers(&self, e: &Error, name: &str) -> bool {
        let mismatch = matches!(e.kind(), ErrorKind::Server(o) if o.code == crate::jsonrpc::ErrorCode::HEADER_MISMATCH);
        mismatch
            && self.http.is_some()
            && self.server.era == Era::V2026_07_28
            && !self.params.knows(name)
    }

    /// Every resource, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.all_pages(|cursor| {
            self.list_resources_page(cursor)
                .map(|p| (p.resources, p.next_cursor))
        })
    }

    /// One page of resources, from `cursor` (`None`: the first).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_resources_page(&self, cursor: Option<&str>) -> Result<ListResourcesResult, Error> {
        self.page(methods::RESOURCES_LIST, cursor)
    }

    /// Every resource template, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.all_pages(|cursor| {
            self.list_resource_templates_page(cursor)
                .map(|p| (p.resource_templates, p.next_cursor))
        })
    }

    /// One page of resource templates, from `cursor` (`None`: the first).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.page(methods::RESOURCES_TEMPLATES_LIST, cursor)
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// See [`Client`]; an unknown URI is the server's `-32002` (2025-11-25)
    /// or `-32602` (2026-07-28).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let params = serde_json::json!({ "uri": uri });
        self.typed(
            methods::RESOURCES_READ,
            params,
            Some(uri.to_string()),
            &CallOptions::new(),
        )
    }

    /// Subscribes to updates of a resource (2025-11-25; they arrive as
    /// `notifications/resources/updated` at
    /// [`on_notification`](ClientBuilder::on_notification)).
    ///
    /// # Errors
    ///
    /// See [`Client`]. In 2026-07-28, which replaced it with
    /// `subscriptions/listen` (REM-1), [`ErrorKind::Message`].
    pub fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.legacy_only(methods::RESOURCES_SUBSCRIBE)?;
        self.send(
            methods::RESOURCES_SUBSCRIBE,
            uri_params(uri),
            None,
            &CallOptions::new(),
        )
        .map(|_| ())
    }

    /// Ends a subscription made with [`subscribe`](Self::subscribe).
    ///
    /// # Errors
    ///
    /// As [`subscribe`](Self::subscribe).
    pub fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.legacy_only(methods::RESOURCES_UNSUBSCRIBE)?;
        self.send(
            methods::RESOURCES_UNSUBSCRIBE,
            uri_params(uri),
            None,
            &CallOptions::new(),
        )
        .map(|_| ())
    }

    /// Every prompt, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.all_pages(|cursor| {
            self.list_prompts_page(cursor)
                .map(|p| (p.prompts, p.next_cursor))
        })
    }

    /// One page of prompts, from `cursor` (`None`: the first).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_prompts_page(&self, cursor: Option<&str>) -> Result<ListPromptsResult, Error> {
        self.page(methods::PROMPTS_LIST, cursor)
    }

    /// Gets a prompt with its arguments (string values).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn get_prompt(
        &self,
        name: &str,
        arguments: &[(&str, &str)],
    ) -> Result<GetPromptResult, Error> {
        let args: JsonObject = arguments
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect();
        let params = serde_json::json!({ "name": name, "arguments": args });
        self.typed(
            methods::PROMPTS_GET,
            params,
            Some(name.to_string()),
            &CallOptions::new(),
        )
    }

    /// Asks for completions of argument `argument` of a prompt or resource
    /// template, given the text typed so far (server/utilities/completion).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        let params = serde_json::json!({
            "ref": reference,
            "argument": { "name": argument, "value": value },
        });
        self.typed(
            methods::COMPLETION_COMPLETE,
            params,
            None,
            &CallOptions::new(),
        )
    }

    /// Sets the level of `notifications/message` the server sends:
    /// `logging/setLevel` in 2025-11-25. In 2026-07-28, which removed it,
    /// the level is sent with every later request instead
    /// (`_meta["io.modelcontextprotocol/logLevel"]`, LOG-1).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.server.era == Era::V2026_07_28 {
            *self.log_level.lock() = Some(level);
            return Ok(());
        }
        let params = serde_json::json!({ "level": level });
        self.typed::<Value>(
            methods::LOGGING_SET_LEVEL,
            params,
            None,
            &CallOptions::new(),
        )
        .map(|_| ())
    }

    fn legacy_only(&self, method: &str) -> Result<(), Error> {
        match self.server.era {
            Era::V2026_07_28 => Err(Error::msg(format!(
                "{} does not exist in 2026-07-28 (use subscriptions/listen)",
                method
            ))),
            _ => Ok(()),
        }
    }

    /// One page of a list method.
    fn page<R: DeserializeOwned>(&self, method: &str, cursor: Option<&str>) -> Result<R, Error> {
        let params = match cursor {
            Some(cursor) => serde_json::json!({ "cursor": cursor }),
            None => Value::Object(JsonObject::new()),
        };
        self.typed(method, params, None, &CallOptions::new())
    }

    /// Follows cursors until the last page.
    fn all_pages<T>(
        &self,
        mut page: impl FnMut(Option<&str>) -> Result<(Vec<T>, Option<String>), Error>,
    ) -> Result<Vec<T>, Error> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let (items, next) = page(cursor.as_deref())?;
            all.extend(items);
            match next {
                None => return Ok(all),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Error::new(ErrorKind::Protocol(format!(
                        "the server repeated the cursor {:?}",
                        next
                    ))))
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(Error::new(ErrorKind::Protocol(format!(
            "more than {} pages",
            MAX_PAGES
        ))))
    }

    /// 2025-11-25 HTTP: the session's GET stream, opened at once as the
    /// official SDKs' clients do, for the requests and notifications a
    /// server sends outside any call; a server without one (`405`) is
    /// fine.
    fn open_get_stream(&self) {
        if self.http.is_none() || self.server.era == Era::V2026_07_28 {
            return;
        }
        match self.listen_legacy() {
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

fn uri_params(uri: &str) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("uri".into(), Value::from(uri));
    params
}

/// The 2026-07-28 envelope keys the client sets on each request (META-1).
pub(crate) fn envelope(client: &Client, params: &mut JsonObject) {
    let caps = serde_json::to_value(&client.capabilities)
        .unwrap_or_else(|_| Value::Object(JsonObject::new()));
    let info = serde_json::to_value(&client.info).unwrap_or(Value::Null);
    let level = *client.log_level.lock();
    let meta = meta_of(params);
    meta.insert(
        meta::PROTOCOL_VERSION.into(),
        Value::from(crate::protocol::versions::V2026_07_28),
    );
    meta.insert(meta::CLIENT_CAPABILITIES.into(), caps);
    meta.insert(meta::CLIENT_INFO.into(), info);
    if let Some(level) = level {
        meta.insert(
            meta::LOG_LEVEL.into(),
            serde_json::to_value(level).unwrap_or(Value::Null),
        );
    }
}
