//! One request on the wire: a pooled keep-alive connection or a fresh
//! one, a pooled connection found closed replaced once, the redirects
//! followed, and the socket shut down when the call is cancelled.

use std::io;
use std::net::Shutdown;

use super::redirect;
use super::{HttpLink, MAX_IDLE};
use crate::client::link::Wait;
use crate::client::options::CancelGuard;
use crate::client::wire::{Body, Conn, Endpoint, Framing, Head, Transport};
use crate::error::Error;

/// The largest redirect body read away to keep its connection.
const DISCARDED_BYTES: usize = 64 * 1024;

impl HttpLink {
    fn connect(&self) -> Result<Conn, Error> {
        let socket = self
            .endpoint
            .connect(self.settings.connect_timeout)
            .map_err(|e| {
                // An Io error, as every lost connection is, saying where.
                let what = format!(
                    "cannot connect to {}:{}: {}",
                    self.endpoint.host, self.endpoint.port, e
                );
                Error::from(std::io::Error::new(e.kind(), what))
            })?;
        self.secure(socket).map(Conn::new)
    }

    /// The socket as is for `http://`, under TLS for `https://`.
    fn secure(&self, socket: std::net::TcpStream) -> Result<Transport, Error> {
        if !self.endpoint.tls {
            return Ok(Transport::plain(socket));
        }
        #[cfg(feature = "tls")]
        {
            let tls = self
                .settings
                .tls
                .as_ref()
                .ok_or_else(|| Error::msg("no TLS configuration"))?;
            Ok(Transport::tls(tls.wrap(&self.endpoint.host, socket)?))
        }
        #[cfg(not(feature = "tls"))]
        {
            drop(socket);
            Err(Error::msg(format!(
                "https://{}: https:// needs tiny-mcp's `tls` feature",
                self.endpoint.authority
            )))
        }
    }

    /// Sends one request and reads the head of its answer, following the
    /// redirects [`redirect::next_hop`] allows. After a chain of `308`s
    /// only, later requests go to where it ended (RFC 9110 §15.4.9: the
    /// target moved for good); a `307` is asked again each time.
    pub(super) fn send<N: AsRef<str>>(
        &self,
        verb: &str,
        headers: &[(N, String)],
        body: Option<&[u8]>,
        wait: &Wait<'_>,
    ) -> Result<(Conn, Head, CancelGuard), Error> {
        let mut target = self.target();
        let mut permanent = true;
        let mut hops = 0;
        loop {
            let request = Request {
                verb,
                target: &target,
                headers,
                extra: &self.settings.headers,
                body,
            };
            let (conn, head, guard) = self.send_once(&request, wait)?;
            let next = match redirect::next_hop(&target, &head, hops)? {
                Some(next) => next,
                None => {
                    if hops > 0 && permanent {
                        *self.moved.lock() = Some(target);
                    }
                    return Ok((conn, head, guard));
                }
            };
            log::debug!(
                "{} {} redirected ({}) to {}",
                verb,
                target.path,
                head.status,
                next.path
            );
            drop(guard);
            self.discard(conn, &head);
            permanent &= head.status == 308;
            target = next;
            hops += 1;
        }
    }

    /// Where requests go: the endpoint, or where a `308` moved it.
    fn target(&self) -> Endpoint {
        match &*self.moved.lock() {
            Some(moved) => moved.clone(),
            None => self.endpoint.clone(),
        }
    }

    /// Reads a redirect's small body away, so that the connection can
    /// carry the next hop; a body of unknown or large size closes it.
    fn discard(&self, mut conn: Conn, head: &Head) {
        let small = match head.framing() {
            Framing::Length(n) => n <= DISCARDED_BYTES as u64,
            Framing::Chunked => true,
            Framing::UntilClose => false,
        };
        if !small || !head.keeps_alive() {
            return;
        }
        let mut body = Body::new(&mut conn, head.framing());
        if body.read_all(DISCARDED_BYTES).is_ok() && body.finished() {
            self.keep(conn);
        }
    }

    /// `request` on a pooled connection when there is one, else on a
    /// fresh one.
    ///
    /// A pooled connection the server closed while it sat idle (a restart,
    /// its own idle timeout) may show it only once the request is written
    /// on it: when not one byte of an answer came back (the end of the
    /// stream or a reset before the first byte), the request is sent once
    /// more on a fresh connection (RFC 9112 §9.3.1). A fresh connection
    /// failing that way is the request's own failure, as is any failure
    /// after the first byte of the answer. A server that read the request
    /// and then closed without a byte of answer (a crash) gets it twice.
    fn send_once<N: AsRef<str>>(
        &self,
        request: &Request<'_, N>,
        wait: &Wait<'_>,
    ) -> Result<(Conn, Head, CancelGuard), Error> {
        let pooled = self.pooled();
        let from_pool = pooled.is_some();
        let conn = match pooled {
            Some(conn) => conn,
            None => self.connect()?,
        };
        match request.on(conn, wait) {
            Ok(sent) => Ok(sent),
            Err((e, true)) if from_pool && !is_cancelled(wait) => {
                log::debug!(
                    "a pooled connection was closed by the server ({}): sending again",
                    e
                );
                request.on(self.connect()?, wait).map_err(|(e, _)| e)
            }
            Err((e, _)) => Err(e),
        }
    }

    /// An idle connection from the pool, those the server closed
    /// meanwhile dropped.
    fn pooled(&self) -> Option<Conn> {
        loop {
            match self.idle.lock().pop() {
                Some(conn) if conn.closed_by_peer() => continue,
                other => return other,
            }
        }
    }

    pub(super) fn keep(&self, mut conn: Conn) {
        conn.set_deadline(None);
        conn.reader.get_mut().idle_since = Some(std::time::Instant::now());
        let mut idle = self.idle.lock();
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// One request as written: verb, target, headers and body.
struct Request<'a, N> {
    verb: &'a str,
    target: &'a Endpoint,
    headers: &'a [(N, String)],
    /// The program's own headers (`ClientBuilder::header`).
    extra: &'a [(String, String)],
    body: Option<&'a [u8]>,
}

impl<N: AsRef<str>> Request<'_, N> {
    /// Writes the request on `conn` and reads the answer's head. On
    /// failure, also whether the server hung up before a byte of the
    /// answer (the connection may have been closed before the request
    /// reached the server).
    fn on(
        &self,
        mut conn: Conn,
        wait: &Wait<'_>,
    ) -> Result<(Conn, Head, CancelGuard), (Error, bool)> {
        conn.set_deadline(Some(wait.deadline));
        let guard = watch(&mut conn, wait).map_err(|e| (e, false))?;
        let before = conn.received();
        let sent = conn
            .send(self.verb, self.target, self.headers, self.extra, self.body)
            .and_then(|()| conn.head());
        match sent {
            Ok(head) => Ok((conn, head, guard)),
            Err(e) => {
                let silent = conn.received() == before && is_hang_up(&e);
                Err((e.into(), silent))
            }
        }
    }
}

/// The server closed or reset the connection.
fn is_hang_up(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

fn is_cancelled(wait: &Wait<'_>) -> bool {
    wait.cancel.map_or(false, |t| t.is_cancelled())
}

/// Shuts the connection's socket down when the call's token is cancelled,
/// from the moment the request is written (CANCEL-2: closing the stream
/// is the cancel of 2026-07-28), until the guard drops.
fn watch(conn: &mut Conn, wait: &Wait<'_>) -> Result<CancelGuard, Error> {
    match wait.cancel {
        Some(token) => {
            let socket = conn.shutter()?;
            Ok(token.on_cancel(move || {
                let _ = socket.shutdown(Shutdown::Both);
            }))
        }
        None => Ok(CancelGuard::none()),
    }
}
