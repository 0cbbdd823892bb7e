//! [`HttpServerBuilder`]: every setting of the Streamable HTTP
//! transport, with its default, then [`serve`](HttpServerBuilder::serve)
//! or [`mount`](HttpServerBuilder::mount).

use std::net::ToSocketAddrs;
use std::sync::Arc;
use std::time::Duration;

use super::auth::ProtectedResource;
use super::gate;
use super::head::may_add_header;
use super::head::{HttpRefusal, HttpRequestHead};
#[cfg(feature = "tiny_http")]
use super::mount::{self, TinyHttpMount};
use super::peers::PeerSource;
use super::running::HttpServer;
use super::start;
use crate::error::Error;
use crate::server::{Principal, Server};

/// Settings of the Streamable HTTP transport; start it with
/// [`serve`](Self::serve).
///
/// Every limit has a default and a documented behaviour when reached.
///
/// # Example
///
/// ```no_run
/// use std::time::{Duration, Instant};
/// use tiny_mcp::Server;
///
/// let server = Server::builder("demo", "1.0.0").build();
/// let http = server
///     .http()
///     .endpoint("/mcp")
///     .sse_keep_alive(Duration::from_secs(15))
///     .serve("127.0.0.1:3000")?;
/// eprintln!("serving on http://{}/mcp", http.local_addr());
/// http.join()?;
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct HttpServerBuilder {
    server: Server,
    config: HttpConfig,
}

#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    pub(crate) endpoint: String,
    /// [`HttpServerBuilder::metrics_path`]; `None`: not served.
    pub(crate) metrics_path: Option<String>,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_sessions: usize,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) max_streams_per_session: usize,
    pub(crate) stream_queue_len: usize,
    pub(crate) replay_buffer_events: usize,
    pub(crate) max_retained_streams: usize,
    pub(crate) sse_keep_alive: Duration,
    pub(crate) sse_retry: Duration,
    pub(crate) stateless: bool,
    pub(crate) json_response: bool,
    pub(crate) dns_rebinding_protection: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_connections: usize,
    pub(crate) connection_idle_timeout: Duration,
    pub(crate) first_request_timeout: Duration,
    pub(crate) max_connections_per_peer: usize,
    pub(crate) write_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) request_head_timeout: Duration,
    pub(crate) request_body_timeout: Duration,
    pub(crate) max_retained_bytes_per_session: usize,
    pub(crate) max_retained_bytes: usize,
    pub(crate) max_sessions_per_principal: usize,
    pub(crate) max_sessions_per_peer: usize,
    /// Where per-peer shares read the peer address (DESIGN.md §26).
    pub(crate) peers: PeerSource,
    pub(crate) session_id_prefix: String,
    pub(crate) response_headers: Vec<(String, String)>,
    /// Authorization and the pre-request hooks (`gate.rs`).
    pub(crate) guards: gate::Guards,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            endpoint: "/mcp".into(),
            metrics_path: None,
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_streams_per_session: 64,
            stream_queue_len: 1024,
            replay_buffer_events: 128,
            max_retained_streams: 64,
            sse_keep_alive: Duration::from_secs(15),
            sse_retry: Duration::from_millis(1000),
            stateless: false,
            json_response: false,
            dns_rebinding_protection: true,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_connections: 10_000,
            connection_idle_timeout: Duration::from_secs(300),
            first_request_timeout: Duration::from_secs(10),
            max_connections_per_peer: 1_000,
            write_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(1),
            request_head_timeout: Duration::from_secs(30),
            request_body_timeout: Duration::from_secs(60),
            max_retained_bytes_per_session: 16 * 1024 * 1024,
            max_retained_bytes: 256 * 1024 * 1024,
            max_sessions_per_principal: 100,
            max_sessions_per_peer: 1_000,
            peers: PeerSource::Socket,
            session_id_prefix: String::new(),
            response_headers: Vec::new(),
            guards: gate::Guards::default(),
        }
    }
}

impl HttpServerBuilder {
    pub(crate) fn new(server: Server) -> HttpServerBuilder {
        HttpServerBuilder {
            server,
            config: HttpConfig::default(),
        }
    }

    /// The path of the MCP endpoint. Defaults to `/mcp`; other paths get 404.
    pub fn endpoint(mut self, path: impl Into<String>) -> Self {
        self.config.endpoint = path.into();
        self
    }

    /// Serves the server's [`Metrics`](crate::Metrics) at `path` (e.g.
    /// `/metrics`) in the Prometheus text format 0.0.4 (feature
    /// `metrics`). `GET` and `HEAD` answer `200` with
    /// `Content-Type: text/plain; version=0.0.4; charset=utf-8`, other
    /// methods `405`. The path passes the Host and Origin checks of the
    /// endpoint, but not its bearer-token check nor the pre-request hooks:
    /// scrapers authenticate by network placement, as Prometheus exporters
    /// do (put it behind a firewall or a proxy that checks them, or leave
    /// it off). A path equal to the endpoint is ignored. Off by default.
    #[cfg(feature = "metrics")]
    pub fn metrics_path(mut self, path: impl Into<String>) -> Self {
        self.config.metrics_path = Some(path.into());
        self
    }

    /// Largest request body, in bytes; a larger one gets 413 and the
    /// connection is closed. Defaults to 4 MiB.
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.config.max_body_bytes = n;
        self
    }

    /// Most live sessions. When full, an expired session, or one that no
    /// request used since its `initialize` and that holds no request or
    /// stream, is evicted to make room (so a client flooding `initialize`
    /// evicts its own sessions, not the ones others use); if none can go,
    /// `initialize` gets 503. Defaults to 10,000.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.config.max_sessions = n.max(1);
        self
    }

    /// A session unused for this long is ended; its id then gets 404
    /// (HTTP-18). Defaults to 30 minutes.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.session_idle_timeout = timeout;
        self
    }

    /// Most SSE streams open at once in one session (POST responses and the
    /// GET stream). Past it a request gets 429. Defaults to 64.
    pub fn max_streams_per_session(mut self, n: usize) -> Self {
        self.config.max_streams_per_session = n.max(1);
        self
    }

    /// Events queued for one stream's connection. When a slow client lets
    /// it fill, the stream's connection is closed; the events stay in the
    /// replay buffer for a resuming GET. Defaults to 1024.
    pub fn stream_queue_len(mut self, n: usize) -> Self {
        self.config.stream_queue_len = n.max(1);
        self
    }

    /// Events each stream keeps for replay after `Last-Event-ID`
    /// (HTTP-15). Older events are dropped. Defaults to 128; 0 disables
    /// resumption.
    pub fn replay_buffer_events(mut self, n: usize) -> Self {
        self.config.replay_buffer_events = n;
        self
    }

    /// Streams one session keeps for resumption after they finished
    /// (HTTP-15), live ones aside. Opening a stream past it forgets the
    /// oldest finished ones; a `Last-Event-ID` for a forgotten stream gets
    /// 400. Defaults to 64; at least 1.
    pub fn max_retained_streams(mut self, n: usize) -> Self {
        self.config.max_retained_streams = n.max(1);
        self
    }

    /// Interval of keepalive comments on idle SSE streams. Defaults to 15 s.
    pub fn sse_keep_alive(mut self, interval: Duration) -> Self {
        self.config.sse_keep_alive = interval.max(Duration::from_millis(10));
        self
    }

    /// The `retry:` sent with the priming event (2025-11-25 sessions only).
    /// Defaults to 1 s.
    pub fn sse_retry(mut self, retry: Duration) -> Self {
        self.config.sse_retry = retry;
        self
    }

    /// Serves without sessions: no `Mcp-Session-Id` is minted or needed,
    /// every POST is served on its own, GET and DELETE get 405. The server
    /// cannot send requests to the client in this mode. Defaults to off.
    pub fn stateless(mut self, on: bool) -> Self {
        self.config.stateless = on;
        self
    }

    /// Answers every request with `application/json` instead of an SSE
    /// stream. Progress and log messages of a request are then dropped,
    /// and requests to the client (`elicit`, `create_message`,
    /// `list_roots`) fail at once with
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed); so they do for a
    /// client that accepts only `application/json`. Defaults to off.
    pub fn json_response(mut self, on: bool) -> Self {
        self.config.json_response = on;
        self
    }

    /// Checks `Host` and `Origin` (403 on failure) before any MCP handling.
    /// Defaults to on: when bound to a loopback address, `Host` must be a
    /// loopback name and `Origin`, when present, a loopback origin; when
    /// bound elsewhere, `Origin`'s host must equal `Host`'s (SEC-1).
    pub fn dns_rebinding_protection(mut self, on: bool) -> Self {
        self.config.dns_rebinding_protection = on;
        self
    }

    /// Also allows these `Host` values (`name` or `name:port`).
    pub fn allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.config.allowed_hosts = hosts;
        self
    }

    /// Also allows these `Origin` values (`scheme://host[:port]`).
    pub fn allowed_origins(mut self, origins: Vec<String>) -> Self {
        self.config.allowed_origins = origins;
        self
    }

    /// Most open connections; past it new connections get 503 and are
    /// closed. Defaults to 10,000 (DESIGN.md §20: what they cost, and the
    /// descriptor limit they need).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.config.max_connections = n.max(1);
        self
    }

    /// How long a new connection has to send the whole head of its first
    /// request; past it the connection is answered 408 (Request Timeout)
    /// and closed. After the first request the keep-alive idle timeout
    /// ([`connection_idle_timeout`](Self::connection_idle_timeout)) and the
    /// head deadline ([`request_head_timeout`](Self::request_head_timeout))
    /// apply. Defaults to 10 seconds.
    pub fn first_request_timeout(mut self, timeout: Duration) -> Self {
        self.config.first_request_timeout = timeout;
        self
    }

    /// Most connections open at once from one socket peer address (the
    /// client's IP, without its port); one more is answered 503 and
    /// closed. Defaults to 1,000. Off when per-peer shares are off
    /// ([`per_peer_shares(false)`](Self::per_peer_shares)) and when a
    /// [`peer_address_header`](Self::peer_address_header) is set: the
    /// socket's peer is then the proxy, which carries every client's
    /// connections. At least 1.
    pub fn max_connections_per_peer(mut self, n: usize) -> Self {
        self.config.max_connections_per_peer = n.max(1);
        self
    }

    /// A keep-alive connection idle this long between requests is closed.
    /// Defaults to 5 minutes.
    pub fn connection_idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.connection_idle_timeout = timeout;
        self
    }

    /// Most bytes of events one session keeps for resumption in the
    /// replay buffers of its finished streams. Past it, opening a stream
    /// forgets the oldest finished ones; resuming a forgotten stream gets
    /// 400, "ended". Defaults to 16 MiB.
    pub fn max_retained_bytes_per_session(mut self, n: usize) -> Self {
        self.config.max_retained_bytes_per_session = n;
        self
    }

    /// Most bytes of events all sessions together keep for resumption.
    /// Past it, a session opening a stream forgets its own oldest finished
    /// streams. Defaults to 256 MiB. It counts the events' JSON bytes;
    /// the process may hold about 2.5 times as much (a trial filling the
    /// default reached 648 MiB resident, everything else it held
    /// included): plan memory for that (DESIGN.md §6).
    pub fn max_retained_bytes(mut self, n: usize) -> Self {
        self.config.max_retained_bytes = n;
        self
    }

    /// How long a request's head may take, from its first byte to the
    /// blank line that ends it (a peer trickling bytes is not idle). Past
    /// it the request gets 408 and the connection is closed. Defaults to
    /// 30 s (nginx's `client_header_timeout` is 60 s).
    pub fn request_head_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_head_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a request's body may take once its head was read. Past it
    /// the request gets 408 and the connection is closed. Defaults to 60 s
    /// (4 MiB at 70 KB/s).
    pub fn request_body_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_body_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long one write to a client may block (a client that stops
    /// reading a stream): past it the connection is closed, and a 2025-11-25
    /// stream stays replayable. Defaults to 30 s.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.config.write_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long [`HttpServer::shutdown`] lets connections finish writing
    /// what their streams ended with (listen results, final events) before
    /// it closes them. Defaults to 1 s.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.config.shutdown_grace = grace;
        self
    }

    /// Binds `addr` and starts serving on background threads.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if the address cannot be
    /// bound or the acceptor thread cannot start;
    /// [`ErrorKind::Message`](crate::ErrorKind::Message) if a
    /// [`ProtectedResource`] cannot work (see [`protect`](Self::protect)),
    /// or on a target without threads (`wasm32-wasip1`, `wasm32-wasip2`:
    /// serve stdio there; DESIGN.md §31).
    pub fn serve(self, addr: impl ToSocketAddrs) -> Result<HttpServer, Error> {
        if crate::server::waiting::NO_THREADS {
            return Err(Error::msg(
                "Streamable HTTP serving needs threads, which this target does not have; \
                 serve stdio (Server::serve_stdio)",
            ));
        }
        start(self.server, self.config, addr)
    }

    /// Starts every `Mcp-Session-Id` this instance mints with `prefix`
    /// (e.g. `a1.`, then a UUID v4), a routing key the operator chooses,
    /// so that a load balancer can send each 2025-11-25 request to the
    /// instance that owns its session without a shared store (an nginx
    /// `map` on the header). Another instance does not know the session and
    /// answers 404, and the client starts a new one (HTTP-18). Defaults to
    /// none.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) if
    /// `prefix` is longer than 64 bytes or holds a character outside
    /// visible ASCII (0x21 to 0x7E), which a session id may not (HTTP-16).
    pub fn session_id_prefix(mut self, prefix: impl Into<String>) -> Result<Self, Error> {
        let prefix = prefix.into();
        if prefix.len() > 64 || !prefix.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(Error::invalid_params(format!(
                "a session id prefix is at most 64 visible ASCII characters, not {:?}",
                prefix
            )));
        }
        self.config.session_id_prefix = prefix;
        Ok(self)
    }

    /// Adds header `name: value` to every response, e.g. the instance that
    /// answered behind a load balancer (`Mcp-Instance: a1`). Added in
    /// order, after the crate's own headers.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) if
    /// `name` is not an HTTP token, `value` holds a control character, or
    /// the header is one the crate sets itself (framing, `Content-Type`,
    /// `Mcp-Session-Id`, `WWW-Authenticate`).
    pub fn response_header(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, Error> {
        let (name, value) = (name.into(), value.into());
        if !may_add_header(&name, &value, &["mcp-session-id", "www-authenticate"]) {
            return Err(Error::invalid_params(format!(
                "{:?} cannot be a response header",
                name
            )));
        }
        self.config.response_headers.push((name, value));
        Ok(self)
    }

    /// Protects the endpoint as an OAuth 2.1 resource server (see
    /// [`ProtectedResource`]): every request needs a bearer token its
    /// verifier accepts, issued for its resource, with the scopes the
    /// server requires ([`ServerBuilder::require_scopes`](crate::ServerBuilder::require_scopes)
    /// and the per-item scopes); the metadata document is served; a
    /// 2025-11-25 session belongs to the principal that opened it.
    /// Handlers read the principal with
    /// [`RequestContext::principal`](crate::RequestContext::principal).
    /// The same rules apply to both eras on the endpoint.
    ///
    /// [`serve`](Self::serve) fails with a message if `resource` is not an
    /// absolute `http(s)` URL or no authorization server is named.
    ///
    /// Spec: basic/authorization (2025-11-25).
    pub fn protect(mut self, protected: ProtectedResource) -> Self {
        self.config.guards.protected = Some(Arc::new(protected));
        self
    }

    /// Most 2025-11-25 sessions one principal may hold on a protected
    /// endpoint (same subject and client id). At the limit, its
    /// `initialize` ends the principal's oldest session (whose id then
    /// gets 404), so that one caller cannot fill the session table for
    /// everyone. Defaults to 100; at least 1.
    pub fn max_sessions_per_principal(mut self, n: usize) -> Self {
        self.config.max_sessions_per_principal = n.max(1);
        self
    }

    /// Most 2025-11-25 sessions one peer address (the client's IP, without
    /// its port, or the one a [`peer_address_header`](Self::peer_address_header)
    /// names) may hold when no principal is known (an endpoint that is not
    /// protected). At the share, its `initialize` evicts the peer's own
    /// least recently used session that holds nothing (no request in
    /// flight, no open stream, no subscription; its id then gets 404), and
    /// when every one holds something it is answered 503 with the JSON-RPC
    /// error "too many sessions from this address; try again later".
    /// Defaults to 1,000 (a share at or above
    /// [`max_sessions`](Self::max_sessions) never binds). Applies only
    /// while per-peer shares are on ([`per_peer_shares`](Self::per_peer_shares)).
    /// At least 1.
    ///
    /// Spec: basic/transports, "Session Management" (2025-11-25).
    pub fn max_sessions_per_peer(mut self, n: usize) -> Self {
        self.config.max_sessions_per_peer = n.max(1);
        self
    }

    /// Turns the per-peer shares on or off (DESIGN.md §26): the part of
    /// the workers, the session table, the task store and the connections
    /// that one peer address may hold, whatever sessions or callers it
    /// opens. On by default, counted against the socket's peer address:
    /// right where clients connect directly. Behind a proxy every client
    /// has the proxy's address, so turn them off, or let the proxy name
    /// the client with [`peer_address_header`](Self::peer_address_header).
    /// The per-caller shares (a principal, a session) stay on either way.
    pub fn per_peer_shares(mut self, on: bool) -> Self {
        self.config.peers = if on {
            PeerSource::Socket
        } else {
            PeerSource::Off
        };
        self
    }

    /// Counts per-peer shares against the address a trusted proxy puts in
    /// header `name` (for example `X-Forwarded-For` or `X-Real-IP`): its
    /// last value, the last address of a comma-separated list, with or
    /// without a port. A request without a readable one counts as the
    /// socket's peer. Only name a header that the proxy in front always
    /// sets (replacing what the client sent): a client reaching the server
    /// directly could otherwise pick its own peer address.
    pub fn peer_address_header(mut self, name: &str) -> Self {
        self.config.peers = PeerSource::Header(name.to_ascii_lowercase());
        self
    }

    /// Adds a hook that sees each request's head (and its principal, when
    /// the endpoint is protected) before the body is read, and may refuse
    /// it with any status, headers and body: a rate limiter answering 429
    /// with `Retry-After`, an IP allowlist answering 403.
    ///
    /// Order: the path, Host/Origin and authorization checks come first
    /// (an unauthorized request is refused before any hook sees it), then
    /// the hooks in the order they were added; the first refusal wins.
    /// Hooks run on the connection's thread: keep them fast. The metadata
    /// document is answered before the hooks. A request refused here (or
    /// by authorization) never reaches the MCP layer, so
    /// [`ServerBuilder::on_request_finished`](crate::ServerBuilder::on_request_finished)
    /// does not report it: log refusals from the hook itself.
    ///
    /// ```no_run
    /// use tiny_mcp::{HttpRefusal, HttpRequestHead, Principal, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0").build();
    /// let http = server
    ///     .http()
    ///     .before_request(|head: &HttpRequestHead<'_>, _: Option<&Principal>| {
    ///         match head.remote_addr() {
    ///             Some(addr) if addr.ip().is_loopback() => Ok(()),
    ///             _ => Err(HttpRefusal::new(403).text("loopback only")),
    ///         }
    ///     })
    ///     .serve("127.0.0.1:3000")?;
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    pub fn before_request(
        mut self,
        hook: impl Fn(&HttpRequestHead<'_>, Option<&Principal>) -> Result<(), HttpRefusal>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.config.guards.hooks.push(Arc::new(hook));
        self
    }

    #[cfg(feature = "tiny_http")]
    /// Mounts the endpoint in `server`, a program's own tiny_http server,
    /// with these settings (feature `tiny_http`); see [`TinyHttpMount`]
    /// for what applies. The server's address plays the part of the bound
    /// address of [`serve`](Self::serve): when it is a loopback address
    /// (or a Unix socket), DNS-rebinding protection allows only loopback
    /// `Host` and `Origin` values.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Message`](crate::ErrorKind::Message) if a
    /// [`ProtectedResource`](crate::ProtectedResource) cannot work (see
    /// [`protect`](Self::protect)).
    pub fn mount(self, server: &tiny_http::Server) -> Result<TinyHttpMount, Error> {
        mount::start(self.server, self.config, server)
    }
}
