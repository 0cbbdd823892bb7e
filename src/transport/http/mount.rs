//! The tiny_http adapter (feature `tiny_http`): the MCP endpoint mounted
//! in a program's own `tiny_http::Server` (DESIGN.md §13).
//!
//! A tiny_http request goes through the same steps as one read by our own
//! acceptor: its head is written out again as bytes and checked by
//! `wire.rs` (limits, parse, body framing), decided on by `gate::admit`,
//! its body read within the limit, and its answer decided by
//! `route::route`. A whole answer goes out through tiny_http's
//! `Request::respond`, which writes it before tiny_http reads whatever
//! body was left unread. An event stream goes out through `answer::write`
//! on the request's raw writer (`Request::into_writer`): our own response
//! head and chunked SSE events, each batch flushed through tiny_http's
//! buffer to the socket, so events arrive one by one.
//!
//! Sessions, streams, the worker pool and shutdown are those of
//! [`Shared`], as with our own acceptor; only the connections are
//! tiny_http's.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::answer::{self, Answer, Out, Peer};
use super::conn::unreadable;
use super::gate::{admit, Admission};
use super::route::route;
use super::wire::{self, HttpRequest, HttpResponse, ReadError};
use super::{HttpConfig, Shared};
use crate::error::{Error, ErrorKind};
use crate::server::{current_request, Server};

/// The MCP endpoint mounted in a program's own [`tiny_http::Server`]
/// (feature `tiny_http`): the program keeps its server, its pages and its
/// loop, and hands the endpoint's requests to [`handle`](Self::handle).
/// Built by [`HttpServerBuilder::mount`](crate::HttpServerBuilder::mount) from the same settings as
/// [`HttpServerBuilder::serve`](crate::HttpServerBuilder::serve).
///
/// Requests are answered as by [`HttpServer`](crate::HttpServer): 2025-11-25
/// sessions (`Mcp-Session-Id`, the GET stream, `DELETE`, resumption with
/// `Last-Event-ID`), 2026-07-28 requests (`MCP-Protocol-Version:
/// 2026-07-28`), DNS-rebinding protection, authorization and the
/// pre-request hooks. Answers that are event streams (`text/event-stream`)
/// send each event as it is produced.
///
/// # Threads
///
/// [`handle`](Self::handle) answers on the calling thread and returns
/// when the answer is complete, and an SSE answer is complete only when
/// its stream ends (the response to a `tools/call`, a GET stream when the
/// session ends): run it on a thread of its own per request, not on the
/// thread that takes requests from `tiny_http::Server::recv`. Handlers
/// run on the mount's worker pool, as with `serve`. Share the mount with
/// an [`Arc`]; dropping the last one shuts it down.
///
/// # What tiny_http owns
///
/// The connections are tiny_http's, so the settings about them do not
/// apply: `max_connections`, `max_connections_per_peer`,
/// `connection_idle_timeout`, `first_request_timeout`,
/// `request_head_timeout`, `request_body_timeout` and `write_timeout`
/// (tiny_http sets no timeouts; a client that stops reading holds its
/// thread), and tiny_http's own thread pool serves the connections
/// (DESIGN.md §1 describes how it can leave some unanswered under a burst).
/// The adapter cannot look at the socket, so a client that goes away is
/// noticed when a write to it fails (keepalive comments are written every
/// [`sse_keep_alive`](crate::HttpServerBuilder::sse_keep_alive)): only then is a
/// 2026-07-28 request cancelled or its listen stream ended (MHTTP-7,
/// LISTEN-10), and a new GET stream for the session gets 409 until the
/// old one is found gone. An HTTP/1.0 client that asks for keep-alive
/// gets a stream that ends only when it closes the connection.
///
/// tiny_http 0.12.0 skips a body left unread (a request refused, or one
/// whose client never sent the body it announced) by allocating a buffer
/// of the size its `Content-Length` announces, so a request announcing an
/// enormous body aborts the program when it is dropped. The mount answers
/// such a request on its endpoint 413 and leaves its connection open
/// rather than drop it (above 64 MiB announced; each holds a socket and a
/// tiny_http thread until the process ends, and is logged at `warn`). The
/// program's own handlers get no such care: in front of a tiny_http
/// server that untrusted clients reach, put a proxy that bounds request
/// bodies.
///
/// # Example
///
/// ```no_run
/// use std::sync::Arc;
/// use std::thread;
/// use tiny_mcp::Server;
///
/// let server = Server::builder("demo", "1.0.0").build();
/// let web = tiny_http::Server::http("127.0.0.1:8080")?;
/// let mcp = Arc::new(server.http().endpoint("/mcp").mount(&web)?);
/// for request in web.incoming_requests() {
///     if mcp.matches(&request) {
///         let mcp = Arc::clone(&mcp);
///         // An SSE answer holds its thread until its stream ends.
///         thread::spawn(move || mcp.handle(request));
///     } else {
///         let _ = request.respond(tiny_http::Response::from_string("hello"));
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
/// ```
///
/// Spec: basic/transports "Streamable HTTP" (2025-11-25 and 2026-07-28).
pub struct TinyHttpMount {
    shared: Arc<Shared>,
    /// The closer registered with the server ([`Server::close`](crate::Server::close)).
    close_key: u64,
    /// Set once the clean-up ran: what it found.
    finished: Mutex<Option<Result<(), String>>>,
}

impl fmt::Debug for TinyHttpMount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TinyHttpMount")
            .field("endpoint", &self.shared.config.endpoint)
            .field("local_addr", &self.shared.local_addr)
            .finish()
    }
}

/// Mounts `mcp` with `config` in `server`
/// ([`HttpServerBuilder::mount`](crate::HttpServerBuilder::mount)).
pub(super) fn start(
    mcp: Server,
    config: HttpConfig,
    server: &tiny_http::Server,
) -> Result<TinyHttpMount, Error> {
    if let Some(protected) = &config.guards.protected {
        protected.check()?;
    }
    // A Unix socket is reached from this machine only: loopback.
    let local_addr = server
        .server_addr()
        .to_ip()
        .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
    let shared = Arc::new(Shared::new(&mcp, config, local_addr));
    // Server::close ends the sessions at once; shutdown or the drop of
    // the mount then joins the workers.
    let closing = Arc::downgrade(&shared);
    let close_key = mcp.inner.on_close(Box::new(move || {
        if let Some(shared) = closing.upgrade() {
            stop(&shared);
        }
    }));
    log::info!(
        "serving MCP at {} in a tiny_http server on {}",
        shared.config.endpoint,
        local_addr
    );
    Ok(TinyHttpMount {
        shared,
        close_key,
        finished: Mutex::new(None),
    })
}

impl TinyHttpMount {
    /// `true` when `request` is for the endpoint: its path (the target
    /// without the query string) is the endpoint's, or, on a protected
    /// endpoint, one of the paths of the protected resource metadata
    /// (RFC 9728). Requests for which it is `false` are the program's;
    /// [`handle`](Self::handle) would answer them 404.
    pub fn matches(&self, request: &tiny_http::Request) -> bool {
        let config = &self.shared.config;
        let path = wire::origin_path(request.url());
        path == config.endpoint
            || config
                .guards
                .protected
                .as_ref()
                .map_or(false, |p| p.serves_metadata_at(&path, &config.endpoint))
    }

    /// Answers `request` completely, on the calling thread: reads its body
    /// (at most [`max_body_bytes`](crate::HttpServerBuilder::max_body_bytes),
    /// else 413), decides and writes the answer: a JSON response, 202,
    /// an error status, or an SSE stream written event by event until it
    /// ends. A request for another path gets 404, one after
    /// [`shutdown`](Self::shutdown) 503. A client that goes away is not an
    /// error: its stream is kept for a resume as with `serve` (HTTP-9).
    ///
    /// Spec: basic/transports "Streamable HTTP" (2025-11-25 and 2026-07-28).
    pub fn handle(&self, mut request: tiny_http::Request) {
        let shared = &self.shared;
        let common = &shared.config.response_headers;
        if shared.stopping() {
            return respond(request, HttpResponse::new(503), common);
        }
        let head = match read_head(&request, shared.config.max_body_bytes) {
            Ok(head) => head,
            Err(error) => {
                let answer = unreadable(shared, error);
                return finish_unread(shared, request, answer, Peer::closing());
            }
        };
        let peer = Peer {
            keep_alive: head.keep_alive && !shared.stopping(),
            chunked: !head.http10,
        };
        let answer = match admit(shared, &head) {
            // The body, unread, is tiny_http's to skip after the answer.
            Admission::Answer(answer) => return finish_unread(shared, request, answer, peer),
            Admission::Pass(principal) => {
                match read_body(&mut request, head, shared.config.max_body_bytes) {
                    Ok(full) => route(shared, &full, principal),
                    Err(error) => unreadable(shared, error),
                }
            }
        };
        finish(shared, request, answer, peer);
    }

    /// Stops the endpoint, as [`HttpServer::shutdown`](crate::HttpServer::shutdown)
    /// does: cancels running handlers, ends every session and open stream
    /// (each [`handle`](Self::handle) writing one then returns, once its
    /// client took the end), and joins the worker pool; later requests get
    /// 503. The tiny_http server is the program's and keeps running.
    /// Calling it again does nothing. It may be called from a handler: the
    /// clean-up then finishes when the mount is dropped.
    /// [`Server::close`](crate::Server::close) does the same but the join,
    /// which this (or the drop of the mount) then does.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ThreadPanicked`](crate::ErrorKind::ThreadPanicked)
    /// when a worker thread panicked outside a handler; every later call
    /// returns the same.
    pub fn shutdown(&self) -> Result<(), Error> {
        let shared = &self.shared;
        stop(shared);
        if shared.pool.is_current_worker() {
            // Called from a handler: the drop of the mount completes the
            // clean-up.
            return Ok(());
        }
        let mut finished = self.finished.lock();
        if finished.is_none() {
            shared.server.forget_closer(self.close_key);
            *finished = Some(shared.close_everything());
        }
        match finished.as_ref() {
            Some(Err(name)) => Err(Error::new(ErrorKind::ThreadPanicked(name.clone()))),
            _ => Ok(()),
        }
    }
}

impl Drop for TinyHttpMount {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Stops the endpoint without joining anything, so that it may run as a
/// closer: later requests get 503, sessions and listen streams end. From a
/// handler, that handler's request is spared and still answers.
fn stop(shared: &Shared) {
    if !shared.stopping.swap(true, Ordering::AcqRel) {
        log::info!("shutting down the MCP endpoint {}", shared.config.endpoint);
    }
    if shared.pool.is_current_worker() {
        *shared.spared.lock() = current_request();
    }
    shared.close_sessions();
}

/// A request's raw writer: what tiny_http writes to the connection, in a
/// buffer that each `flush` empties onto the socket.
struct RawWriter(Box<dyn Write + Send>);

impl Write for RawWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Out for RawWriter {
    /// tiny_http does not give out its socket: a client that left is
    /// noticed when a write fails.
    fn peer_closed(&self) -> bool {
        false
    }

    fn sees_peer(&self) -> bool {
        false
    }
}

/// The head tiny_http read, as bytes again, through our own checks: the
/// request line and headers as tiny_http passes them (the target as
/// sent, header values trimmed ASCII).
fn read_head(request: &tiny_http::Request, max_body: usize) -> Result<HttpRequest, ReadError> {
    let version = request.http_version();
    let mut head = format!(
        "{} {} HTTP/{}.{}\r\n",
        request.method(),
        request.url(),
        version.0,
        version.1
    )
    .into_bytes();
    for header in request.headers() {
        head.extend_from_slice(header.field.as_str().as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(header.value.as_str().as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    let mut parsed = wire::check_head(&head, max_body)?;
    parsed.remote = request.remote_addr().copied();
    Ok(parsed)
}

/// Reads the body, at most `max_body` bytes (tiny_http sends `100
/// Continue` first when the client asked for it).
fn read_body(
    request: &mut tiny_http::Request,
    mut head: HttpRequest,
    max_body: usize,
) -> Result<HttpRequest, ReadError> {
    let mut body = Vec::new();
    let limit = (max_body as u64).saturating_add(1);
    request
        .as_reader()
        .take(limit)
        .read_to_end(&mut body)
        .map_err(ReadError::Io)?;
    if body.len() > max_body {
        return Err(ReadError::BodyTooLarge);
    }
    head.body = body;
    Ok(head)
}

/// Writes `answer`: a whole response through tiny_http, a stream on the
/// request's raw writer (whose request was read whole, so tiny_http has
/// nothing left to skip before the next request on the connection).
fn finish(shared: &Shared, request: tiny_http::Request, answer: Answer, peer: Peer) {
    match answer {
        Answer::Whole(response) => respond(request, response, &shared.config.response_headers),
        stream @ Answer::Stream(_) => {
            let mut out = RawWriter(request.into_writer());
            // Statuses of a mounted endpoint are not counted (DESIGN.md §29).
            if let Err(e) = answer::write(stream, &mut out, peer, &shared.config, |_| {}) {
                log::debug!("a stream's client went away: {}", e);
            }
        }
    }
}

/// Writes `answer` to a request whose body was left unread. tiny_http
/// 0.12 skips such a body by allocating a buffer of the size its
/// `Content-Length` announces, which aborts the program when the size
/// cannot be allocated; up to [`SKIP_LIMIT_BYTES`] it is left to do so.
/// A larger one is disposed of without it: the answer goes out after an
/// interim `100` through `Request::upgrade`, with `Connection: close`,
/// and the connection is leaked (never dropped: its reader would make the
/// allocation), holding its socket and one tiny_http thread until the
/// process ends (about what an idle connection to tiny_http holds, which
/// tiny_http never times out). tiny_http offers no way to close a
/// connection from outside, so their number is counted and logged, not
/// bounded: in front of a server untrusted clients reach, put a proxy
/// that bounds request bodies.
fn finish_unread(shared: &Shared, request: tiny_http::Request, answer: Answer, peer: Peer) {
    let announced = request.body_length().unwrap_or(0);
    let response = match answer {
        Answer::Whole(response) if announced > SKIP_LIMIT_BYTES => response,
        answer => return finish(shared, request, answer, peer),
    };
    let disposed = DISPOSED.fetch_add(1, Ordering::AcqRel) + 1;
    log::warn!(
        "a request announcing a {}-byte body was refused; its connection is left open ({} so far)",
        announced,
        disposed
    );
    let interim = tiny_http::Response::empty(100);
    let mut out = RawWriter(Box::new(request.upgrade("none", interim)));
    let common = &shared.config.response_headers;
    if let Err(e) = response
        .write_to(&mut out, false, common)
        .and_then(|_| out.flush())
    {
        log::debug!("could not answer a request: {}", e);
    }
    // Dropping it would make tiny_http allocate the announced size.
    std::mem::forget(out);
}

/// The largest unread body left to tiny_http to skip: its buffer of this
/// size is zeroed memory the system maps lazily, filled only by what the
/// client really sends.
const SKIP_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// Connections leaked by [`finish_unread`] so far.
static DISPOSED: AtomicUsize = AtomicUsize::new(0);

/// A whole response through `Request::respond`, with the program's
/// headers of every response (`common`). tiny_http adds `Date`, `Server`
/// and the framing, and omits the body of an answer to `HEAD`.
fn respond(request: tiny_http::Request, response: HttpResponse, common: &[(String, String)]) {
    let HttpResponse {
        status,
        headers,
        extra,
        body,
        ..
    } = response;
    let mut reply =
        tiny_http::Response::from_data(body).with_status_code(tiny_http::StatusCode(status));
    let ours = headers.iter().map(|(name, value)| (*name, value.as_str()));
    let theirs = extra.iter().chain(common);
    let theirs = theirs.map(|(name, value)| (name.as_str(), value.as_str()));
    for (name, value) in ours.chain(theirs) {
        match tiny_http::Header::from_bytes(name, value) {
            Ok(header) => reply.add_header(header),
            Err(()) => log::warn!("tiny_http cannot send the header {:?}; dropped", name),
        }
    }
    if let Err(e) = request.respond(reply) {
        log::debug!("could not answer a request: {}", e);
    }
}

#[cfg(test)]
mod tests {
    use tiny_http::{Method, Request, TestRequest};

    use super::*;

    /// A POST of `{}` to `target` with these header lines.
    fn request(target: &str, headers: &[&str]) -> Request {
        let mut test = TestRequest::new()
            .with_method(Method::Post)
            .with_path(target)
            .with_body("{}");
        for line in headers {
            test = test.with_header(line.parse().expect("a test header line"));
        }
        test.into()
    }

    // RFC 9112 §3.2.2, HTTP-1: the head tiny_http read is read as ours:
    // the path without its query, an absolute target's authority as Host,
    // the peer's address.
    #[test]
    fn heads_are_read_as_ours() {
        let request = request("http://127.0.0.1:9/mcp?x=1", &["Host: other.example"]);
        let head = read_head(&request, 1024).expect("a good head");
        assert_eq!(head.method, "POST");
        assert_eq!(head.path, "/mcp");
        assert_eq!(head.query.as_deref(), Some("x=1"));
        assert_eq!(head.header("host"), Some("127.0.0.1:9"));
        assert_eq!(head.remote, "127.0.0.1:23456".parse().ok());
        assert!(head.keep_alive && !head.http10);
    }

    // DESIGN.md §6: framing two parsers could read differently is refused
    // as on our own acceptor, and a body over the limit from its
    // Content-Length, before it is read.
    #[test]
    fn ambiguous_or_large_heads_are_refused() {
        let two_hosts = request("/mcp", &["Host: a", "Host: b"]);
        assert!(matches!(
            read_head(&two_hosts, 1024),
            Err(ReadError::Malformed(_))
        ));
        let no_host = request("/mcp", &[]);
        assert!(matches!(
            read_head(&no_host, 1024),
            Err(ReadError::Malformed(_))
        ));
        let large = request("/mcp", &["Host: a"]);
        assert!(matches!(read_head(&large, 1), Err(ReadError::BodyTooLarge)));
    }
}
