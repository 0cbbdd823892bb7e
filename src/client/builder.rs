//! `ClientBuilder`: who the client is, what it answers, its timeouts and
//! limits, and the three ways to connect.

use std::fmt;
use std::io::{BufRead, Write};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::duplex::{Duplex, DuplexLimits};
use super::http::{Credentials, FixedToken, HttpLink, HttpSettings, TokenFn};
use super::http_sse;
use super::inbox::{Handlers, Inbox};
use super::oauth::{Fetcher, OAuth, Provider};
use super::params::ParamHeaders;
use super::stdio::{ChildProcess, StderrMode, StdioSettings};
use super::Client;
use crate::error::Error;
use crate::jsonrpc::{JsonObject, Notification};
use crate::protocol::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Era,
    Implementation, ListRootsResult, Root,
};

/// How the client authorizes its HTTP requests.
#[derive(Clone)]
pub(crate) enum Auth {
    /// [`ClientBuilder::bearer_token`].
    Token(Arc<TokenFn>),
    /// [`ClientBuilder::oauth`].
    OAuth(Box<OAuth>),
}

/// Builds a [`Client`]: `Client::builder(name, version)`, then settings,
/// then one of the `connect_*` methods.
///
/// ```no_run
/// use std::process::Command;
/// use tiny_mcp::{Client, ElicitResult};
///
/// let mut server = Command::new("my-mcp-server");
/// server.arg("--stdio");
/// let client = Client::builder("my-tool", "1.0.0")
///     .on_elicitation(|_request| Ok(ElicitResult::decline()))
///     .connect_stdio(server)?;
/// for tool in client.list_tools()? {
///     println!("{}", tool.name);
/// }
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
pub struct ClientBuilder {
    pub(crate) info: Implementation,
    pub(crate) handlers: Handlers,
    pub(crate) era: Option<Era>,
    pub(crate) request_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) max_message_bytes: usize,
    pub(crate) max_pending: usize,
    pub(crate) stderr: StderrMode,
    pub(crate) auth: Option<Auth>,
    pub(crate) tls_roots: Vec<Vec<u8>>,
    pub(crate) reinitialize: bool,
    pub(crate) http_sse: bool,
    pub(crate) max_idle_resumes: usize,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) probe_timeout: Duration,
    /// [`header`](Self::header)'s, in the order given.
    pub(crate) headers: Vec<(String, String)>,
}

impl ClientBuilder {
    pub(crate) fn new(name: &str, version: &str) -> ClientBuilder {
        ClientBuilder {
            info: Implementation::new(name, version),
            handlers: Handlers::default(),
            era: None,
            request_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            max_message_bytes: 16 * 1024 * 1024,
            max_pending: 1024,
            stderr: StderrMode::Inherit,
            auth: None,
            tls_roots: Vec::new(),
            reinitialize: true,
            http_sse: true,
            max_idle_resumes: 5,
            shutdown_timeout: Duration::from_secs(2),
            probe_timeout: Duration::from_secs(2),
            headers: Vec::new(),
        }
    }

    /// Who the client is, beyond name and version (`title`, `icons`, …):
    /// `clientInfo` of `initialize`, and of every 2026-07-28 request.
    pub fn client_info(mut self, info: Implementation) -> ClientBuilder {
        self.info = info;
        self
    }

    /// Speaks only `era`. By default the client tries 2026-07-28 first
    /// (`server/discover`) and falls back to the 2025-11-25 `initialize`
    /// handshake when the server does not serve it (basic/versioning,
    /// VER-3, DISC-3).
    pub fn era(mut self, era: Era) -> ClientBuilder {
        self.era = Some(era);
        self
    }

    /// How long the 2026-07-28 probe (`server/discover`) waits for its
    /// answer before the client falls back to `initialize`: a 2025-era
    /// server may never answer an unknown method, answer it late (the late
    /// answer is ignored), or exit on it (a stdio server is then started
    /// again, once). Not used when [`era`](Self::era) pins an era (a
    /// pinned 2026-07-28 waits the request timeout). A
    /// 2026-07-28 server slower than this to answer is spoken to in
    /// 2025-11-25 if it also serves that, and fails to connect if not:
    /// raise it for servers slow to start. At most the
    /// [`request_timeout`](Self::request_timeout). Default: 2 s.
    ///
    /// Spec: basic/versioning (2026-07-28), DISC-3.
    pub fn probe_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.probe_timeout = timeout;
        self
    }

    /// How long a request may wait for its answer unless its
    /// [`CallOptions`](crate::CallOptions) say otherwise. Default: 60 s.
    pub fn request_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.request_timeout = timeout;
        self
    }

    /// How long connecting to an HTTP server may take. Default: 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.connect_timeout = timeout;
        self
    }

    /// The largest message (a stdio line, a JSON body, one SSE event) the
    /// client accepts, in bytes; a larger one is dropped (stdio) or fails
    /// its call with [`ErrorKind::Protocol`](crate::ErrorKind::Protocol)
    /// or `Io` (HTTP). Default: 16 MiB.
    pub fn max_message_bytes(mut self, bytes: usize) -> ClientBuilder {
        self.max_message_bytes = bytes.max(1024);
        self
    }

    /// How many requests may wait for answers at once on a stdio or I/O
    /// connection; one more fails at once. Default: 1024.
    pub fn max_pending(mut self, requests: usize) -> ClientBuilder {
        self.max_pending = requests.max(1);
        self
    }

    /// What happens to a stdio server's stderr. Default:
    /// [`StderrMode::Inherit`].
    pub fn stderr(mut self, mode: StderrMode) -> ClientBuilder {
        self.stderr = mode;
        self
    }

    /// How long closing waits for a stdio server at each step of its
    /// shutdown: after closing its stdin, then after `SIGTERM`, before
    /// `SIGKILL` (on Unix, to its whole process group; elsewhere the child
    /// is killed after the first wait). So a close takes at most about
    /// twice this. Default: 2 s.
    ///
    /// Spec: basic/lifecycle "Shutdown", stdio (2025-11-25).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.shutdown_timeout = timeout;
        self
    }

    /// Sends `Authorization: Bearer <token>` on every HTTP request, the
    /// token asked of `token` each time (so a refreshed one is used at
    /// once); `None` sends none (basic/authorization "Access Token Usage").
    /// A `401` or `403` comes back as
    /// [`ErrorKind::Http`](crate::ErrorKind::Http) with the server's
    /// [`BearerChallenge`](crate::BearerChallenge).
    pub fn bearer_token(
        mut self,
        token: impl Fn() -> Option<String> + Send + Sync + 'static,
    ) -> ClientBuilder {
        self.auth = Some(Auth::Token(Arc::new(token)));
        self
    }

    /// Sends `name: value` on every HTTP request to the server (each
    /// POST, GET and DELETE, on both HTTP transports): a gateway's API key,
    /// a tenant, a routing header. Never sent to an authorization server.
    /// Repeatable; the headers go out in the order given. An
    /// `Authorization` header is left out when
    /// [`bearer_token`](Self::bearer_token) or [`oauth`](Self::oauth)
    /// sends one.
    ///
    /// # Errors
    ///
    /// [`connect_http`](Self::connect_http) returns
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for a
    /// name that is not an HTTP token (RFC 9110 §5.1), a value with a
    /// control character (a line break would start another header), or a
    /// header the transport sets itself: `Host`, `Content-Type`,
    /// `Content-Length`, `Transfer-Encoding`, `Connection`, `Accept`,
    /// `Last-Event-ID`, `Mcp-Session-Id`, `MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> ClientBuilder {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Whether [`header`](Self::header) would take `name: value`: a
    /// program that reads headers from its user (a command line) can say
    /// so before connecting.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams), as
    /// [`header`](Self::header) lists; the message names the header, never
    /// the value.
    pub fn check_header(name: &str, value: &str) -> Result<(), Error> {
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(Error::invalid_params(format!(
                "the header name {:?} is not an HTTP token",
                name
            )));
        }
        if TRANSPORT_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(Error::invalid_params(format!(
                "the header {} is the transport's own and cannot be set",
                name
            )));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            // The value is not echoed: it may be a key.
            return Err(Error::invalid_params(format!(
                "the value of the header {} has a control character",
                name
            )));
        }
        Ok(())
    }

    /// Logs in with OAuth when an HTTP server asks for it (a `401`), and
    /// sends the token it gets on every request: discovery, registration,
    /// the user's login through the [`UserAgent`](crate::oauth::UserAgent),
    /// refresh and step-up, as [`oauth`](crate::oauth) describes. Replaces
    /// [`bearer_token`](Self::bearer_token). A login that fails ends the
    /// request with [`ErrorKind::Authorization`](crate::ErrorKind::Authorization),
    /// naming the step; `connect_http` returns it when the server wants a
    /// login at once.
    ///
    /// Spec: basic/authorization (2025-11-25, 2026-07-28).
    pub fn oauth(mut self, oauth: OAuth) -> ClientBuilder {
        self.auth = Some(Auth::OAuth(Box::new(oauth)));
        self
    }

    /// When a 2025-11-25 HTTP server ends the session (`404` on its id:
    /// a restart, its idle timeout, another instance behind a load
    /// balancer), starts a new one with `initialize` and sends the request
    /// again, once: requests that only read (lists, `resources/read`,
    /// `prompts/get`, `ping`, completions), the log level and
    /// subscriptions, and `tools/call` unless its
    /// [`CallOptions::retry_on_new_session`](crate::CallOptions::retry_on_new_session)
    /// is off. Other requests (the tasks methods, which name the old
    /// session's tasks; methods the client does not know) return
    /// [`ErrorKind::SessionExpired`](crate::ErrorKind::SessionExpired)
    /// once the new session is made. The new session is told the log level
    /// and the subscriptions the old one held, and GET streams reopen on
    /// it. With `false`, every request that meets the `404` returns
    /// `SessionExpired` and the client stays without a session.
    /// Default: on.
    ///
    /// Spec: basic/transports "Session Management" (2025-11-25): the
    /// client MUST start a new session.
    pub fn reinitialize_on_expiry(mut self, on: bool) -> ClientBuilder {
        self.reinitialize = on;
        self
    }

    /// When the POST of `initialize` to a [`connect_http`](Self::connect_http)
    /// URL gets `400`, `404` or `405`, tries the HTTP+SSE transport of
    /// 2024-11-05 there: a GET event stream whose `endpoint` event names
    /// the URI, on the same origin, each message is POSTed to. `false`
    /// returns the POST's error instead. Never with
    /// [`era`](Self::era)`(Era::V2026_07_28)`. Default: on.
    ///
    /// Spec: basic/transports (2025-11-25), "Backwards Compatibility".
    pub fn http_sse_fallback(mut self, on: bool) -> ClientBuilder {
        self.http_sse = on;
        self
    }

    /// Also trusts the certificates in `pem` (PEM text, one or more
    /// `CERTIFICATE` blocks) for `https://` servers, besides Mozilla's
    /// roots: for a private certificate authority or a self-signed test
    /// server. Feature `tls`; without it `https://` URLs are refused.
    pub fn tls_root_certificates(mut self, pem: impl Into<Vec<u8>>) -> ClientBuilder {
        self.tls_roots.push(pem.into());
        self
    }

    /// Answers `sampling/createMessage` (client/sampling), and declares
    /// the `sampling` capability. The same closure answers a 2026-07-28
    /// `input_required` sampling request.
    pub fn on_sampling(
        mut self,
        f: impl Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, Error>
            + Send
            + Sync
            + 'static,
    ) -> ClientBuilder {
        self.handlers.sampling = Some(Arc::new(f));
        self
    }

    /// Answers `elicitation/create`, form and URL mode (client/elicitation),
    /// and declares `elicitation: {form, url}`; also for 2026-07-28
    /// `input_required` rounds.
    pub fn on_elicitation(
        mut self,
        f: impl Fn(ElicitRequestParams) -> Result<ElicitResult, Error> + Send + Sync + 'static,
    ) -> ClientBuilder {
        self.handlers.elicitation = Some(Arc::new(f));
        self
    }

    /// Answers `roots/list` with these roots (client/roots) and declares
    /// `roots`.
    pub fn roots(self, roots: Vec<Root>) -> ClientBuilder {
        self.on_roots(move || Ok(ListRootsResult::new(roots.clone())))
    }

    /// Answers `roots/list` with what `f` returns each time.
    pub fn on_roots(
        mut self,
        f: impl Fn() -> Result<ListRootsResult, Error> + Send + Sync + 'static,
    ) -> ClientBuilder {
        self.handlers.roots = Some(Arc::new(f));
        self
    }

    /// Declares the MCP Apps extension (`io.modelcontextprotocol/ui`) with
    /// the view types the program renders, usually
    /// `[tiny_mcp::UI_MIME_TYPE]` (`text/html;profile=mcp-app`): servers
    /// may then list tools with views and shape results for them. The
    /// program is the host: it reads a tool's view with
    /// [`Tool::ui`](crate::Tool::ui) and
    /// [`Client::read_resource`](crate::Client::read_resource)
    /// ([`ResourceContents::ui`](crate::ResourceContents::ui) for its
    /// sandbox), leaves tools that are not
    /// [`Tool::is_visible_to_model`](crate::Tool::is_visible_to_model)
    /// out of its model's list, and forwards its views' calls with
    /// [`Client::call_tool`](crate::Client::call_tool). The client calls
    /// whatever tool it is asked to: refusing a view's call of a tool whose
    /// visibility leaves out `"app"` ([`ToolUiMeta::is_visible_to`](crate::ToolUiMeta::is_visible_to))
    /// is the program's check. Whether the server has views at all:
    /// `client.server_capabilities().declares_extension(tiny_mcp::extensions::UI)`.
    ///
    /// Spec: MCP Apps "Client (Host) Capabilities" (2026-01-26).
    pub fn ui_extension<S: Into<String>>(
        self,
        mime_types: impl IntoIterator<Item = S>,
    ) -> ClientBuilder {
        let types: Vec<Value> = mime_types
            .into_iter()
            .map(|t| Value::from(t.into()))
            .collect();
        let mut settings = JsonObject::new();
        settings.insert("mimeTypes".into(), Value::Array(types));
        self.extension(crate::protocol::extensions::UI, settings)
    }

    /// Declares the extension `id` (e.g. `io.modelcontextprotocol/ui`)
    /// with its `settings` object under `capabilities.extensions`, in
    /// `initialize` and in every 2026-07-28 request's `_meta`; a second
    /// declaration of `id` replaces the first.
    pub fn extension(mut self, id: &str, settings: JsonObject) -> ClientBuilder {
        self.handlers
            .extensions
            .insert(id.into(), Value::Object(settings));
        self
    }

    /// Called with every notification from the server except progress
    /// (which goes to its call's [`CallOptions::on_progress`](crate::CallOptions::on_progress)):
    /// `notifications/message`, `…/list_changed`, `notifications/resources/updated`,
    /// and anything else. It runs on the thread that reads the server's
    /// messages: keep it short, or hand the notification to a channel.
    pub fn on_notification(
        mut self,
        f: impl Fn(&Notification) + Send + Sync + 'static,
    ) -> ClientBuilder {
        self.handlers.notification = Some(Arc::new(f));
        self
    }

    fn limits(&self) -> DuplexLimits {
        DuplexLimits {
            max_message_bytes: self.max_message_bytes,
            max_pending: self.max_pending,
        }
    }

    /// Starts `command` as the server and connects over its stdin and
    /// stdout (basic/transports "stdio"). Closing or dropping the client
    /// ends the server as basic/lifecycle "Shutdown" says: its stdin is
    /// closed; if it still runs after
    /// [`shutdown_timeout`](Self::shutdown_timeout) (2 s) it gets
    /// `SIGTERM`, and `SIGKILL` after as long again. On Unix the signals
    /// go to everything the server started too (a shell's, `npx`'s or
    /// `uvx`'s children): built with Rust 1.64 or later the child leads a
    /// process group of its own (so it does not get a terminal's Ctrl-C;
    /// the client ends it), with Rust 1.63 its descendants are found in
    /// `/proc` (Linux only). Elsewhere the child is killed.
    ///
    /// # Errors
    ///
    /// The command cannot start, or connecting fails (see
    /// [`connect_io`](Self::connect_io)).
    pub fn connect_stdio(self, command: Command) -> Result<Client, Error> {
        let inbox = Arc::new(Inbox::new(self.handlers.clone()));
        let settings = StdioSettings {
            stderr: self.stderr,
            limits: self.limits(),
            shutdown_timeout: self.shutdown_timeout,
        };
        let child = Arc::new(ChildProcess::start(command, settings, Arc::clone(&inbox))?);
        Client::start(
            self,
            child.clone(),
            inbox,
            Some(child),
            None,
            Arc::default(),
        )
    }

    /// Connects over a reader and a writer of newline-delimited JSON-RPC:
    /// the mirror of [`Server::serve_io`](crate::Server::serve_io).
    /// Closing the client drops the writer, which is end of input for the
    /// server; for a socket whose reading half the client still holds,
    /// shut the socket down yourself to end the server's side.
    ///
    /// # Errors
    ///
    /// The negotiation fails: the server's error, a timeout, or the input
    /// ended.
    pub fn connect_io(
        self,
        reader: impl BufRead + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Result<Client, Error> {
        let inbox = Arc::new(Inbox::new(self.handlers.clone()));
        let duplex = Duplex::start(
            Box::new(reader),
            Box::new(writer),
            Arc::clone(&inbox),
            self.limits(),
            Box::new(|| "the server closed the connection".to_string()),
        )?;
        Client::start(self, Arc::new(duplex), inbox, None, None, Arc::default())
    }

    /// Connects to a Streamable HTTP endpoint, `http://host:port/path`, or
    /// `https://…` with the `tls` feature (rustls; the server's certificate
    /// must chain to Mozilla's roots or to one given to
    /// [`tls_root_certificates`](Self::tls_root_certificates), for the
    /// URL's host) (basic/transports "Streamable HTTP"). A server that
    /// refuses the POST of `initialize` with `400`, `404` or `405` is then
    /// tried with the HTTP+SSE transport of 2024-11-05 on the same URL
    /// (see [`http_sse_fallback`](Self::http_sse_fallback)).
    ///
    /// # Errors
    ///
    /// The URL is not `http://`, the server cannot be reached, or the
    /// negotiation fails; a server that speaks neither transport gets an
    /// [`ErrorKind::Protocol`](crate::ErrorKind::Protocol) that names both
    /// attempts.
    pub fn connect_http(self, url: &str) -> Result<Client, Error> {
        let fallback = match self.http_sse && self.era != Some(Era::V2026_07_28) {
            true => Some(self.copy()),
            false => None,
        };
        match (self.connect_streamable(url), fallback) {
            (Err(e), Some(builder)) if http_sse::refused_post(&e) => {
                builder.connect_http_sse(url, &e)
            }
            (connected, _) => connected,
        }
    }

    fn connect_streamable(self, url: &str) -> Result<Client, Error> {
        let inbox = Arc::new(Inbox::new(self.handlers.clone()));
        let params = Arc::new(ParamHeaders::default());
        let settings = self.http_settings(url, Arc::clone(&params))?;
        let link = Arc::new(HttpLink::new(url, Arc::clone(&inbox), settings)?);
        Client::start(self, link.clone(), inbox, None, Some(link), params)
    }

    /// The 2024-11-05 HTTP+SSE transport, after the POST of `initialize`
    /// got `refused`; it carries only the `initialize` era.
    fn connect_http_sse(mut self, url: &str, refused: &Error) -> Result<Client, Error> {
        let inbox = Arc::new(Inbox::new(self.handlers.clone()));
        let settings = self.http_settings(url, Arc::default())?;
        let duplex = http_sse::connect(
            url,
            refused,
            &settings,
            self.request_timeout,
            Arc::clone(&inbox),
            self.limits(),
        )?;
        self.era = Some(Era::V2025_11_25);
        Client::start(self, Arc::new(duplex), inbox, None, None, Arc::default())
    }

    // The URL decides TLS, which only the `tls` feature has.
    #[cfg_attr(not(feature = "tls"), allow(unused_variables))]
    fn http_settings(&self, url: &str, params: Arc<ParamHeaders>) -> Result<HttpSettings, Error> {
        Ok(HttpSettings {
            connect_timeout: self.connect_timeout,
            max_message_bytes: self.max_message_bytes,
            credentials: self.credentials(url)?,
            max_idle_resumes: self.max_idle_resumes,
            params,
            headers: checked_headers(&self.headers, self.auth.is_some())?,
            #[cfg(feature = "tls")]
            tls: match url.starts_with("https://") {
                true => Some(Arc::new(super::tls::Tls::new(&self.tls_roots)?)),
                false => None,
            },
        })
    }

    /// What sends the token and answers a refusal: the program's token,
    /// or an OAuth login bound to `url`.
    fn credentials(&self, url: &str) -> Result<Option<Arc<dyn Credentials>>, Error> {
        Ok(match &self.auth {
            None => None,
            Some(Auth::Token(token)) => {
                let token = Arc::clone(token);
                Some(Arc::new(FixedToken(Box::new(move || token()))))
            }
            Some(Auth::OAuth(oauth)) => {
                let fetcher = Fetcher {
                    connect_timeout: self.connect_timeout,
                    timeout: oauth.request_timeout,
                    max_bytes: oauth.max_response_bytes,
                    #[cfg(feature = "tls")]
                    tls: Some(Arc::new(super::tls::Tls::new(&self.tls_roots)?)),
                };
                Some(Arc::new(Provider::new((**oauth).clone(), url, fetcher)))
            }
        })
    }

    /// The same settings, for a second attempt at connecting.
    fn copy(&self) -> ClientBuilder {
        ClientBuilder {
            info: self.info.clone(),
            handlers: self.handlers.clone(),
            auth: self.auth.clone(),
            tls_roots: self.tls_roots.clone(),
            headers: self.headers.clone(),
            ..*self
        }
    }

    /// How many reconnections in a row may bring a resumed 2025-11-25
    /// event stream nothing new before its call fails with
    /// [`ErrorKind::Protocol`](crate::ErrorKind::Protocol). A stream that
    /// ends before its answer is resumed with `Last-Event-ID` after the
    /// server's `retry:` (at most 5 s), for as long as each reconnection
    /// brings a new event id, within the call's timeout: a server may
    /// close the stream after every event to make the client poll.
    /// Default: 5. Spec: basic/transports "Resumability and Redelivery"
    /// (2025-11-25).
    pub fn max_idle_resumes(mut self, reconnections: usize) -> ClientBuilder {
        self.max_idle_resumes = reconnections;
        self
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("era", &self.era)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

/// The headers the transport writes itself, which
/// [`ClientBuilder::header`] may not set (lower case).
const TRANSPORT_HEADERS: [&str; 11] = [
    "host",
    "content-type",
    "content-length",
    "transfer-encoding",
    "connection",
    "accept",
    "last-event-id",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
];

/// The program's headers as sent: each checked, `Authorization` left out
/// when the client sends a token of its own.
fn checked_headers(
    headers: &[(String, String)],
    has_auth: bool,
) -> Result<Vec<(String, String)>, Error> {
    let mut sent = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        ClientBuilder::check_header(name, value)?;
        if has_auth && name.eq_ignore_ascii_case("authorization") {
            log::warn!("the Authorization header is left out: the client sends its own token");
            continue;
        }
        sent.push((name.clone(), value.trim().to_string()));
    }
    Ok(sent)
}
