//! [`HttpServer`]: a running Streamable HTTP server, and how it stops
//! (its own [`shutdown`](HttpServer::shutdown), or the server's close).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use super::Shared;
use crate::error::{Error, ErrorKind};
use crate::server::current_request;

/// A running Streamable HTTP server.
///
/// [`shutdown`](Self::shutdown) stops it; [`join`](Self::join) waits until
/// it has stopped. Dropping it shuts it down.
#[must_use = "the server shuts down when this handle is dropped; call `join()` to serve until shutdown"]
pub struct HttpServer {
    pub(super) shared: Arc<Shared>,
    /// The closer registered with the server ([`Server::close`](crate::Server::close)).
    pub(super) close_key: u64,
    pub(super) acceptor: Mutex<Option<JoinHandle<()>>>,
    /// Set once the clean-up ran: what it found.
    pub(super) finished: Mutex<Option<Result<(), String>>>,
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("local_addr", &self.shared.local_addr)
            .finish()
    }
}

impl HttpServer {
    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.local_addr
    }

    /// Ends the sessions idle for longer than
    /// [`session_idle_timeout`](crate::HttpServerBuilder::session_idle_timeout)
    /// (and holding no request or open stream), and those a program ended
    /// ([`SessionHandle::end`](crate::SessionHandle::end)) once their
    /// requests are done; returns how many. Sessions are otherwise ended
    /// when a request names them or the table needs room, so a program
    /// that holds something per session (an [`Upstream`](crate::Upstream)'s
    /// child process) calls this now and then to let go of what idle
    /// clients left behind.
    pub fn end_idle_sessions(&self) -> usize {
        self.shared.end_idle_sessions()
    }

    /// Stops the server: stops accepting, cancels running handlers, ends
    /// open streams, closes connections, and joins every thread. Returns
    /// when all of that is done; calling it again does nothing. It may be
    /// called from a handler (a tool that stops the server): the calling
    /// worker is then left to finish on its own. Call [`join`](Self::join)
    /// afterwards to learn whether any of the server's threads failed.
    pub fn shutdown(&self) {
        self.shared.stop();
        let _ = self.join();
    }

    /// Waits until the server has been shut down (by [`shutdown`](Self::shutdown)
    /// on another thread), then finishes the clean-up.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ThreadPanicked`](crate::ErrorKind::ThreadPanicked) when
    /// one of the server's threads (the acceptor, a connection, a worker
    /// outside a handler) panicked: a bug of ours, reported here rather
    /// than only logged. Every later call returns the same.
    pub fn join(&self) -> Result<(), Error> {
        let acceptor = self.acceptor.lock().take();
        let mut failure = None;
        if let Some(acceptor) = acceptor {
            if acceptor.join().is_err() {
                log::error!("the HTTP acceptor thread panicked");
                failure = Some("tiny-mcp-http-acceptor".to_string());
            }
        }
        if self.shared.pool.is_current_worker() {
            // Called from a handler: its request is spared and still
            // answers; the connections and workers finish on their own once
            // it returns (one of them waits for its response), and a later
            // `join` elsewhere completes the clean-up.
            *self.shared.spared.lock() = current_request();
            self.shared.close_sessions();
            return Ok(());
        }
        let mut finished = self.finished.lock();
        if finished.is_none() {
            self.shared.server.forget_closer(self.close_key);
            let cleaned = self.shared.close_everything();
            *finished = Some(match (failure, cleaned) {
                (Some(name), _) => Err(name),
                (None, Err(e)) => Err(e),
                (None, Ok(())) => Ok(()),
            });
        }
        match finished.as_ref() {
            Some(Err(name)) => Err(Error::new(ErrorKind::ThreadPanicked(name.clone()))),
            _ => Ok(()),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Shared {
    /// Stops accepting (once): marks the server stopping and wakes the
    /// acceptor blocked in `accept()`. Returns at once.
    pub(super) fn stop(&self) {
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        log::info!("shutting down http://{}", self.local_addr);
        let wake = match self.local_addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => {
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), self.local_addr.port())
            }
            _ => self.local_addr,
        };
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
    }
}
