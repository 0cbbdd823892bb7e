//! One connection: read a request, decide its answer (`route.rs`), write
//! it (`answer.rs`), until the client or the server ends the connection.

use std::io::BufReader;
use std::net::TcpStream;
use std::sync::Arc;

use super::answer::{self, Answer, Peer};
use super::gate::{admit, Admission};
use super::route::route;
use super::wire::{self, Head, Limits, ReadError, Timed};
use super::Shared;
use crate::jsonrpc::ErrorObject;

/// Serves one connection until it ends. Reads and writes go through the
/// one socket (`&TcpStream` is both `Read` and `Write`), so a connection
/// holds one file descriptor.
pub(crate) fn serve_connection(shared: &Arc<Shared>, stream: &TcpStream) {
    // A peer that stops reading cannot hold this thread past the limit.
    let _ = stream.set_write_timeout(Some(shared.config.write_timeout));
    let config = &shared.config;
    let mut reader = BufReader::new(Timed::new(stream, config.connection_idle_timeout));
    let limits = Limits {
        max_body: config.max_body_bytes,
        head_timeout: config.request_head_timeout,
        body_timeout: config.request_body_timeout,
    };
    let mut out = stream;
    loop {
        if shared.stopping() {
            return;
        }
        let (answer, peer) = match wire::read_head(&mut reader, &limits) {
            Ok(head) => decide(shared, &mut reader, &limits, head),
            Err(ReadError::Closed) => return,
            Err(ReadError::Io(e)) => {
                log::debug!("connection dropped inside a request: {}", e);
                return;
            }
            // The request cannot be read to its end: answer and close.
            Err(error) => (unreadable(shared, error), Peer::closing()),
        };
        match answer::write(answer, &mut out, peer, &shared.config) {
            Ok(()) if peer.keep_alive => continue,
            _ => return,
        }
    }
}

/// The answer to a request whose head was read: the head's own decision
/// (`gate.rs`), else the body and the routing (`route.rs`).
fn decide(
    shared: &Arc<Shared>,
    reader: &mut BufReader<Timed<'_>>,
    limits: &Limits,
    head: Head,
) -> (Answer, Peer) {
    let keep_alive = head.request.keep_alive && !shared.stopping();
    let chunked = !head.request.http10;
    match admit(shared, &head.request) {
        Admission::Answer(answer) => {
            // The body is skipped so that the connection carries the next
            // request; one that cannot be skipped closes it.
            let keep_alive = keep_alive && head.skip_body(reader, limits);
            (
                answer,
                Peer {
                    keep_alive,
                    chunked,
                },
            )
        }
        Admission::Pass(principal) => match head.read_body(reader, limits) {
            Ok(request) => (
                route(shared, &request, principal),
                Peer {
                    keep_alive,
                    chunked,
                },
            ),
            Err(ReadError::Io(e)) => {
                log::debug!("connection dropped inside a request body: {}", e);
                (Answer::status(400), Peer::closing())
            }
            Err(error) => (unreadable(shared, error), Peer::closing()),
        },
    }
}

/// The answer to a request that cannot be read: 400 for framing two
/// parsers could read differently, 431 for a head too large, 413 for a
/// body too large (DESIGN.md §6).
fn unreadable(shared: &Shared, error: ReadError) -> Answer {
    match error {
        ReadError::HeadTooLarge => Answer::status(431),
        ReadError::TimedOut => Answer::status(408),
        ReadError::BodyTooLarge => {
            let error = ErrorObject::invalid_request(format!(
                "request body too large: the limit is {} bytes",
                shared.config.max_body_bytes
            ));
            Answer::error(413, None, error)
        }
        ReadError::Malformed(why) => Answer::error(400, None, ErrorObject::invalid_request(why)),
        ReadError::Closed | ReadError::Io(_) => Answer::status(400),
    }
}
