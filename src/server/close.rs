//! Closing a server: the transports serving it are told to stop (each
//! registered how, as a closer), and its handlers are dropped.
//!
//! The core never imports a transport (DESIGN.md §11): a transport that
//! starts serving hands the server a closure that stops it
//! ([`ServerInner::on_close`]) and takes it back when it stops on its own
//! ([`ServerInner::forget_closer`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;

use super::inner::ServerInner;
use super::registry::Registry;
use super::Server;

/// What a transport runs when the server closes: it must return at once
/// (signal the serving thread, wake an acceptor), never join.
pub(crate) type Closer = Box<dyn Fn() + Send + Sync>;

/// Whether the server is closed, and the closers of the transports
/// serving it now.
#[derive(Default)]
pub(crate) struct Closing {
    closed: AtomicBool,
    closers: Mutex<Vec<(u64, Closer)>>,
    next_key: AtomicU64,
}

impl Closing {
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

impl ServerInner {
    /// Registers what stops a transport; it runs at once when the server
    /// is already closed. Returns the key to forget it by.
    pub(crate) fn on_close(&self, closer: Closer) -> u64 {
        let key = self.closing.next_key.fetch_add(1, Ordering::Relaxed);
        let mut closers = self.closing.closers.lock();
        if self.closing.is_closed() {
            drop(closers);
            closer();
        } else {
            closers.push((key, closer));
        }
        key
    }

    /// Forgets a closer: its transport stopped on its own.
    pub(crate) fn forget_closer(&self, key: u64) {
        self.closing.closers.lock().retain(|(k, _)| *k != key);
    }

    /// Closes the server once: stops every transport, ends listen
    /// streams, and drops the handlers (outside the lock: a handler's
    /// `Drop` may do anything).
    pub(crate) fn close(&self) {
        let closers = {
            let mut closers = self.closing.closers.lock();
            if self.closing.closed.swap(true, Ordering::AcqRel) {
                return;
            }
            std::mem::take(&mut *closers)
        };
        log::info!("closing server {}", self.info.name);
        for (_, closer) in closers.iter() {
            closer();
        }
        self.listen.close_all(&self.info);
        self.tasks.cancel_where(None, "the server is closing");
        let handlers = std::mem::take(&mut *self.registry.write());
        drop::<Registry>(handlers);
    }
}

impl Server {
    /// Closes the server; see [`ServerHandle::close`](crate::ServerHandle::close).
    ///
    /// Each transport serving it stops as it would at its end:
    /// [`serve_stdio`](Self::serve_stdio) stops reading and returns after
    /// running requests got their grace
    /// ([`end_of_input_grace`](crate::ServerBuilder::end_of_input_grace))
    /// and queued output is written (a quick tool's call that its stdin
    /// thread is running gets the same grace and answers; a stdin thread
    /// blocked in its read stays blocked and drops the next line it gets,
    /// so a program that reads stdin again after a close loses that line);
    /// [`serve_io`](Self::serve_io) does the same once its reader returns
    /// (at once when the close comes while it handles a line; else with
    /// its next line or end of input: it cannot interrupt a blocked read,
    /// and on a server closed already that first line is not answered);
    /// served single-threaded (DESIGN.md §31), `serve_stdio` behaves as
    /// `serve_io` does: it returns with the next line, unanswered, or at
    /// end of input, and a handler running then finishes first; an
    /// [`HttpServer`](crate::HttpServer)
    /// stops accepting, and its [`join`](crate::HttpServer::join) returns
    /// after the clean-up of [`shutdown`](crate::HttpServer::shutdown).
    /// Returns at once, also when called from a handler (whose request
    /// still answers). Not from inside [`ServerHandle::edit`](crate::ServerHandle::edit),
    /// whose lock it would wait for. Edits after the close are dropped:
    /// a closed server holds no handlers.
    ///
    /// ```no_run
    /// use tiny_mcp::Server;
    ///
    /// let server = Server::builder("s", "1").build();
    /// let handle = server.handle();
    /// std::thread::spawn(move || {
    ///     // ... on a signal, a command, a deadline:
    ///     handle.close();
    /// });
    /// server.serve_stdio()?; // returns once closed
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    pub fn close(&self) {
        self.inner.close();
    }

    /// `true` once the server was closed.
    pub fn is_closed(&self) -> bool {
        self.inner.closing.is_closed()
    }
}
