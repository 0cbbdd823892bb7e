//! The Streamable HTTP transport, both eras: one endpoint for POST, GET
//! and DELETE, thread per connection.
//!
//! One acceptor thread accepts connections and starts a named thread for
//! each (`conn.rs`); that thread reads a request (`wire.rs`), decides its
//! answer (`route.rs`, and `per_request.rs` for 2026-07-28), and writes it
//! (`answer.rs`): nothing else touches its socket. Handlers run on the
//! worker pool, as on stdio; their messages reach the connection thread
//! through the stream's queue, an unbounded channel whose length `push`
//! checks against `stream_queue_len` (see `sse.rs`). Sessions and their streams live in shared maps
//! behind `parking_lot` mutexes, never held across I/O or a handler call.
//! Lock order: the session map, then one session's stream map, then one
//! stream's state.
//!
//! Why our own accept loop instead of tiny_http: see DESIGN.md §1.
//!
//! Spec: basic/transports "Streamable HTTP" (2025-11-25), HTTP-1 to HTTP-21,
//! SEC-1, SEC-2.

mod answer;
mod auth;
mod conn;
mod era;
mod gate;
mod head;
mod media;
#[cfg(feature = "tiny_http")]
mod mount;
mod per_request;
mod route;
mod running;
mod sessions;
mod sse;
mod wire;

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::pool::WorkerPool;
use crate::jsonrpc::RequestId;
use crate::server::session::{Closing, Session};
use crate::server::ServerInner;
use crate::{Error, ErrorKind, Server};
pub use auth::{ProtectedResource, TokenError, TokenVerifier};
pub use head::{HttpRefusal, HttpRequestHead};
#[cfg(feature = "tiny_http")]
pub use mount::TinyHttpMount;
pub use running::HttpServer;
pub(crate) use sessions::{HttpSession, Lookup};
#[cfg(feature = "fuzzing")]
pub(crate) use wire::read_one;

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
    pub(crate) write_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) request_head_timeout: Duration,
    pub(crate) request_body_timeout: Duration,
    pub(crate) max_retained_bytes_per_session: usize,
    pub(crate) max_retained_bytes: usize,
    pub(crate) max_sessions_per_principal: usize,
    pub(crate) max_sessions_per_peer: Option<usize>,
    pub(crate) session_id_prefix: String,
    pub(crate) response_headers: Vec<(String, String)>,
    /// Authorization and the pre-request hooks (`gate.rs`).
    pub(crate) guards: gate::Guards,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            endpoint: "/mcp".into(),
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
            write_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(1),
            request_head_timeout: Duration::from_secs(30),
            request_body_timeout: Duration::from_secs(60),
            max_retained_bytes_per_session: 16 * 1024 * 1024,
            max_retained_bytes: 256 * 1024 * 1024,
            max_sessions_per_principal: 100,
            max_sessions_per_peer: None,
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
    /// streams. Defaults to 256 MiB.
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
    /// [`ProtectedResource`] cannot work (see [`protect`](Self::protect)).
    pub fn serve(self, addr: impl ToSocketAddrs) -> Result<HttpServer, Error> {
        if let Some(protected) = &self.config.guards.protected {
            protected.check()?;
        }
        let listener = TcpListener::bind(addr)?;
        let local_addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(&self.server, self.config, local_addr));
        let acceptor_shared = Arc::clone(&shared);
        let acceptor = thread::Builder::new()
            .name("tiny-mcp-http-acceptor".into())
            .spawn(move || accept_loop(&acceptor_shared, listener))?;
        // Server::close stops accepting; `join` then cleans up.
        let closing = Arc::downgrade(&shared);
        let close_key = self.server.inner.on_close(Box::new(move || {
            if let Some(shared) = closing.upgrade() {
                if shared.pool.is_current_worker() {
                    // Closed by a handler: its request still answers.
                    *shared.spared.lock() = crate::server::current_request();
                }
                shared.stop();
            }
        }));
        log::info!(
            "serving MCP on http://{}{}",
            local_addr,
            shared.config.endpoint
        );
        Ok(HttpServer {
            shared,
            close_key,
            acceptor: Mutex::new(Some(acceptor)),
            finished: Mutex::new(None),
        })
    }
}

/// State shared by the acceptor and the connection threads.
pub(crate) struct Shared {
    pub(crate) server: Arc<ServerInner>,
    pub(crate) config: HttpConfig,
    pub(crate) pool: WorkerPool,
    pub(crate) local_addr: SocketAddr,
    pub(crate) loopback: bool,
    pub(crate) stopping: AtomicBool,
    sessions: Mutex<sessions::SessionTable>,
    /// A clone of each open connection's socket, to unblock it at shutdown;
    /// the connection removes its own when it ends.
    sockets: Mutex<HashMap<u64, Arc<TcpStream>>>,
    /// Bytes held in the replay buffers of all sessions' streams.
    pub(crate) retained: Arc<AtomicUsize>,
    /// Signalled when a connection removes its socket.
    socket_closed: Condvar,
    connections: Mutex<HashMap<u64, JoinHandle<()>>>,
    next_connection: AtomicU64,
    /// The per-request sessions that hold a `subscriptions/listen` stream
    /// open, by session key, so that shutdown ends them (LISTEN-11).
    pub(crate) listening: Mutex<HashMap<u64, Arc<Session>>>,
    /// The request whose handler stopped the server, as (session key, id):
    /// shutdown spares it so that it still answers.
    spared: Mutex<Option<(u64, RequestId)>>,
}

impl Shared {
    fn new(server: &Server, config: HttpConfig, local_addr: SocketAddr) -> Shared {
        let inner = Arc::clone(&server.inner);
        Shared {
            pool: WorkerPool::new("tiny-mcp-http-worker", inner.config.max_workers),
            server: inner,
            config,
            local_addr,
            loopback: local_addr.ip().is_loopback(),
            stopping: AtomicBool::new(false),
            sessions: Mutex::new(sessions::SessionTable::default()),
            sockets: Mutex::new(HashMap::new()),
            retained: Arc::new(AtomicUsize::new(0)),
            socket_closed: Condvar::new(),
            connections: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(1),
            listening: Mutex::new(HashMap::new()),
            spared: Mutex::new(None),
        }
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Ends every session and listen stream and unblocks the connection
    /// threads waiting for a request; writers that are ending a stream
    /// still get to finish it.
    fn close_sessions(&self) {
        let sessions: Vec<Arc<HttpSession>> =
            self.sessions.lock().map.drain().map(|(_, s)| s).collect();
        let spared = self.spared.lock().clone();
        for session in &sessions {
            let spare = spared
                .as_ref()
                .filter(|(key, _)| *key == session.core.key())
                .map(|(_, id)| id);
            session.close_sparing("the server is shutting down", Closing::ServerEnds, spare);
        }
        // LISTEN-11: listen streams end with their result.
        let listening: Vec<Arc<Session>> = self.listening.lock().values().cloned().collect();
        for session in listening {
            session.close("the server is shutting down", Closing::ServerEnds);
        }
        for socket in self.sockets.lock().values() {
            let _ = socket.shutdown(Shutdown::Read);
        }
    }

    /// Gives connections the shutdown grace to finish what they write, then
    /// closes the sockets of those still open (a client that stopped
    /// reading leaves its writer blocked until then).
    fn close_sockets_after_grace(&self) {
        let deadline = Instant::now() + self.config.shutdown_grace;
        let mut sockets = self.sockets.lock();
        while !sockets.is_empty() {
            if self
                .socket_closed
                .wait_until(&mut sockets, deadline)
                .timed_out()
            {
                break;
            }
        }
        for socket in sockets.values() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// Shutdown's clean-up: ends every session and listen stream, unblocks
    /// and joins the connection threads (but the caller's own), and joins
    /// the workers. Returns the name of a thread that panicked.
    fn close_everything(&self) -> Result<(), String> {
        self.close_sessions();
        self.close_sockets_after_grace();
        let connections: Vec<JoinHandle<()>> =
            self.connections.lock().drain().map(|(_, c)| c).collect();
        let me = thread::current().id();
        let mut outcome = Ok(());
        for handle in connections {
            if handle.thread().id() == me {
                continue;
            }
            let name = handle.thread().name().unwrap_or("connection").to_string();
            if handle.join().is_err() {
                log::error!("an HTTP connection thread panicked");
                outcome = Err(name);
            }
        }
        match self
            .pool
            .join_within(Some(self.server.config.handler_exit_timeout))
        {
            Err(e) => match e.kind() {
                ErrorKind::ThreadPanicked(name) => Err(name.clone()),
                _ => Err(e.to_string()),
            },
            Ok(()) => outcome,
        }
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: TcpListener) {
    let mut backoff = Backoff::default();
    for stream in listener.incoming() {
        if shared.stopping() {
            break;
        }
        let stream = match stream {
            Ok(s) => {
                backoff.recovered();
                s
            }
            Err(e) => {
                backoff.failed(&e);
                continue;
            }
        };
        reap_finished(shared);
        if shared.sockets.lock().len() >= shared.config.max_connections {
            log::warn!("too many connections; refusing one");
            let refusal = answer::Answer::status(503);
            let _ = answer::write(
                refusal,
                &mut &stream,
                answer::Peer::closing(),
                &shared.config,
            );
            continue;
        }
        let _ = stream.set_nodelay(true);
        let key = shared.next_connection.fetch_add(1, Ordering::Relaxed);
        // One descriptor per connection: the connection thread and
        // shutdown share the socket.
        let stream = Arc::new(stream);
        shared.sockets.lock().insert(key, Arc::clone(&stream));
        let conn_shared = Arc::clone(shared);
        let spawned = thread::Builder::new()
            .name(format!("tiny-mcp-http-conn-{}", key))
            .stack_size(256 * 1024)
            .spawn(move || {
                // Closes the socket when the connection ends, also by a
                // panic (a hook's): its slot must not stay counted.
                let _closing = ClosedOnDrop(&conn_shared, key);
                conn::serve_connection(&conn_shared, &stream);
            });
        match spawned {
            Ok(handle) => {
                shared.connections.lock().insert(key, handle);
            }
            Err(e) => {
                shared.sockets.lock().remove(&key);
                log::error!("cannot start a connection thread: {}", e);
            }
        }
    }
}

/// Closes connection `key`'s socket now, not when the acceptor next reaps,
/// and frees its place among `max_connections`.
struct ClosedOnDrop<'a>(&'a Shared, u64);

impl Drop for ClosedOnDrop<'_> {
    fn drop(&mut self) {
        let ClosedOnDrop(shared, key) = *self;
        if let Some(socket) = shared.sockets.lock().remove(&key) {
            let _ = socket.shutdown(Shutdown::Both);
        }
        shared.socket_closed.notify_all();
    }
}

/// The acceptor's pause after `accept()` fails for lack of descriptors or
/// memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): it grows from 10 ms to 1 s,
/// and each episode is logged once, so that exhaustion neither spins a core
/// nor floods the log; serving resumes with the first accepted connection.
#[derive(Debug, Default)]
struct Backoff {
    pause: Option<Duration>,
}

impl Backoff {
    fn failed(&mut self, error: &io::Error) {
        // EMFILE, ENFILE, ENOBUFS, ENOMEM on Linux and the BSDs.
        let exhausted = matches!(
            error.raw_os_error(),
            Some(24) | Some(23) | Some(105) | Some(12) | Some(55)
        );
        if !exhausted {
            log::warn!("accept failed: {}", error);
            return;
        }
        let pause = match self.pause {
            None => {
                log::warn!("accept failed: {}; pausing until connections close", error);
                Duration::from_millis(10)
            }
            Some(pause) => (pause * 2).min(Duration::from_secs(1)),
        };
        self.pause = Some(pause);
        thread::sleep(pause);
    }

    fn recovered(&mut self) {
        if self.pause.take().is_some() {
            log::warn!("accepting connections again");
        }
    }
}

/// Joins the threads of connections that have closed.
fn reap_finished(shared: &Shared) {
    let finished: Vec<JoinHandle<()>> = {
        let mut connections = shared.connections.lock();
        let keys: Vec<u64> = connections
            .iter()
            .filter(|(_, h)| h.is_finished())
            .map(|(k, _)| *k)
            .collect();
        keys.into_iter()
            .filter_map(|k| connections.remove(&k))
            .collect()
    };
    for handle in finished {
        if handle.join().is_err() {
            log::error!("an HTTP connection thread panicked");
        }
    }
}
