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
mod builder;
mod conn;
mod era;
mod gate;
mod hangup;
mod head;
mod logged;
mod media;
#[cfg(feature = "tiny_http")]
mod mount;
mod peers;
mod per_request;
mod route;
mod running;
mod sessions;
mod sse;
mod wire;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::pool::WorkerPool;
use super::shares::WorkerShares;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::RequestId;
use crate::server::session::{Closing, Session};
use crate::server::Server;
use crate::server::ServerInner;
pub use auth::{ProtectedResource, TokenError, TokenVerifier};
pub(crate) use builder::HttpConfig;
pub use builder::HttpServerBuilder;
pub use head::{HttpRefusal, HttpRequestHead};
#[cfg(feature = "tiny_http")]
pub use mount::TinyHttpMount;
use peers::PeerSource;
pub use running::HttpServer;
pub(crate) use sessions::{HttpSession, Lookup};
#[cfg(feature = "fuzzing")]
pub(crate) use wire::read_one;

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
    /// Open connections per socket peer address, when that cap is on.
    per_peer: Mutex<HashMap<IpAddr, usize>>,
    /// Refusals at a limit, logged once per interval (DESIGN.md §26).
    pub(crate) refusals: logged::RefusalLog,
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
            pool: WorkerPool::new(
                "tiny-mcp-http-worker",
                inner.config.max_workers,
                Some(WorkerShares::of(&inner.config)),
                &inner.metrics.workers,
            ),
            server: inner,
            config,
            local_addr,
            loopback: local_addr.ip().is_loopback(),
            stopping: AtomicBool::new(false),
            sessions: Mutex::new(sessions::SessionTable::default()),
            sockets: Mutex::new(HashMap::new()),
            per_peer: Mutex::new(HashMap::new()),
            refusals: logged::RefusalLog::default(),
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

/// Binds `addr` and starts serving `server` with `config` on background
/// threads ([`HttpServerBuilder::serve`]).
pub(super) fn start(
    server: Server,
    config: HttpConfig,
    addr: impl ToSocketAddrs,
) -> Result<HttpServer, Error> {
    if let Some(protected) = &config.guards.protected {
        protected.check()?;
    }
    let listener = TcpListener::bind(addr)?;
    let local_addr = listener.local_addr()?;
    let shared = Arc::new(Shared::new(&server, config, local_addr));
    let acceptor_shared = Arc::clone(&shared);
    let acceptor = thread::Builder::new()
        .name("tiny-mcp-http-acceptor".into())
        .spawn(move || accept_loop(&acceptor_shared, listener))?;
    // Server::close stops accepting; `join` then cleans up.
    let closing = Arc::downgrade(&shared);
    let close_key = server.inner.on_close(Box::new(move || {
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
            refuse(shared, &stream, "too many connections");
            continue;
        }
        let peer = match counted_peer(shared, &stream) {
            Ok(peer) => peer,
            Err(()) => {
                refuse(shared, &stream, "too many connections from one address");
                continue;
            }
        };
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
                let _closing = ClosedOnDrop(&conn_shared, key, peer);
                conn::serve_connection(&conn_shared, &stream);
            });
        match spawned {
            Ok(handle) => {
                shared.connections.lock().insert(key, handle);
            }
            Err(e) => {
                shared.sockets.lock().remove(&key);
                uncount_peer(shared, peer);
                log::error!("cannot start a connection thread: {}", e);
            }
        }
    }
}

/// Answers a connection refused at a limit with 503, and closes it.
fn refuse(shared: &Shared, stream: &TcpStream, why: &'static str) {
    shared.refusals.refused(why);
    let refusal = answer::Answer::status(503);
    let _ = answer::write(
        refusal,
        &mut &*stream,
        answer::Peer::closing(),
        &shared.config,
        |_| {},
    );
}

/// Counts a new connection against its socket peer's cap
/// (`max_connections_per_peer`): the address counted, `None` when the cap
/// is off (per-peer shares off, or read from a proxy's header), `Err` when
/// the peer is at it.
fn counted_peer(shared: &Shared, stream: &TcpStream) -> Result<Option<IpAddr>, ()> {
    if !matches!(shared.config.peers, PeerSource::Socket) {
        return Ok(None);
    }
    let ip = match stream.peer_addr() {
        Ok(addr) => addr.ip(),
        Err(_) => return Ok(None),
    };
    let mut per_peer = shared.per_peer.lock();
    let open = per_peer.entry(ip).or_insert(0);
    if *open >= shared.config.max_connections_per_peer {
        return Err(());
    }
    *open += 1;
    Ok(Some(ip))
}

/// A counted connection ended: its peer holds one fewer (never below 0).
fn uncount_peer(shared: &Shared, peer: Option<IpAddr>) {
    let ip = match peer {
        Some(ip) => ip,
        None => return,
    };
    let mut per_peer = shared.per_peer.lock();
    if let Some(open) = per_peer.get_mut(&ip) {
        *open = open.saturating_sub(1);
        if *open == 0 {
            per_peer.remove(&ip);
        }
    }
}

/// Closes connection `key`'s socket now, not when the acceptor next reaps,
/// and frees its place among `max_connections` and its peer's cap.
struct ClosedOnDrop<'a>(&'a Shared, u64, Option<IpAddr>);

impl Drop for ClosedOnDrop<'_> {
    fn drop(&mut self) {
        let ClosedOnDrop(shared, key, peer) = *self;
        uncount_peer(shared, peer);
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
