//! The serving methods of [`Server`]: thin calls into the transports.
//!
//! They live here, beside `server/`, so that the core never imports a
//! transport (DESIGN.md §11, "Code map"); [`Server`]'s docs list them.

use std::io::{self, BufRead, Write};
use std::net::ToSocketAddrs;

use crate::error::Error;
use crate::server::Server;
use crate::transport::http::{HttpServer, HttpServerBuilder};
use crate::transport::memory::MemoryClient;
use crate::transport::stdio;

impl Server {
    /// Serves MCP on stdin and stdout until stdin closes.
    ///
    /// Reads newline-delimited JSON-RPC messages on the calling thread.
    /// A line longer than [`max_message_bytes`](crate::ServerBuilder::max_message_bytes)
    /// is discarded up to its newline and answered with `-32600`; invalid
    /// UTF-8 or JSON on a line is answered with `-32700`; serving goes on
    /// in both cases. At end of input, running handlers get a grace period
    /// ([`end_of_input_grace`](crate::ServerBuilder::end_of_input_grace),
    /// 1 s by default) to finish and answer; those still running are then
    /// cancelled (flag set, calls to the client failed, no answer written)
    /// and joined, queued output is written, and the call returns. When
    /// writing to stdout fails, serving stops at the next message.
    ///
    /// **Single-threaded** on a target without threads (`wasm32-wasip1`,
    /// `wasm32-wasip2`), with
    /// [`max_workers(0)`](crate::ServerBuilder::max_workers), or when the
    /// platform refuses to start a thread: stdin is read on the calling
    /// thread, and each request's handler runs there to its end before the
    /// next line is read, in order. A handler that asks the client
    /// (`elicit`, `create_message`, `list_roots`) or a task that waits for
    /// `tasks/update` reads stdin on while it waits: answers and cheap
    /// requests (`ping`, `tasks/get`) are handled at once, other requests
    /// are queued until it returns. A cancel reaches a queued request (it
    /// never runs) but does not interrupt a running handler: it sees the
    /// flag when it next looks (DESIGN.md §31).
    ///
    /// Spec: basic/transports "stdio" (2025-11-25).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if reading stdin or writing
    /// stdout fails (also when a `serve_io` writer panics), or if a thread
    /// cannot be started;
    /// [`ErrorKind::ThreadPanicked`](crate::ErrorKind::ThreadPanicked) if
    /// one of the crate's threads panicked.
    pub fn serve_stdio(&self) -> Result<(), Error> {
        stdio::serve_stdin(self, io::stdout())
    }

    /// Serves MCP on any reader and writer, as [`serve_stdio`](Self::serve_stdio)
    /// does on stdin and stdout.
    ///
    /// # Errors
    ///
    /// As [`serve_stdio`](Self::serve_stdio): the writer's error is
    /// returned once `writer` failed.
    ///
    /// Served single-threaded as `serve_stdio` is, but `reader` may borrow
    /// and cannot be read during a handler: there a handler's request to
    /// the client fails at once (unsent) instead of waiting; use
    /// `serve_stdio` for a server that asks its client.
    pub fn serve_io<R, W>(&self, reader: R, writer: W) -> Result<(), Error>
    where
        R: BufRead,
        W: Write + Send + 'static,
    {
        stdio::serve(self, reader, writer)
    }

    /// Settings for serving over Streamable HTTP; see [`HttpServerBuilder`].
    pub fn http(&self) -> HttpServerBuilder {
        HttpServerBuilder::new(self.clone())
    }

    /// Serves over Streamable HTTP on `addr` with the default settings.
    /// Returns once the socket is bound; the server runs on its own threads.
    ///
    /// # Errors
    ///
    /// As [`HttpServerBuilder::serve`].
    pub fn serve_http(&self, addr: impl ToSocketAddrs) -> Result<HttpServer, Error> {
        self.http().serve(addr)
    }

    /// Connects an in-memory client: a fresh session, as if a new stdio
    /// client had started. For tests of a server's handlers.
    pub fn connect_memory(&self) -> MemoryClient {
        MemoryClient::connect(self)
    }
}
