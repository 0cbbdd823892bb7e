//! One connection: read a request, decide its answer (`route.rs`), write
//! it (`answer.rs`), until the client or the server ends the connection.

use std::io::BufReader;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use super::answer::{self, Answer, Peer};
use super::gate::{admit, Admission};
use super::route::route;
use super::wire::{self, Head, Limits, ReadError, Timed};
use super::Shared;
use crate::jsonrpc::ErrorObject;
use crate::server::OpenMark;

/// Serves one connection until it ends. Reads and writes go through the
/// one socket (`&TcpStream` is both `Read` and `Write`), so a connection
/// holds one file descriptor.
pub(crate) fn serve_connection(shared: &Arc<Shared>, stream: &TcpStream) {
    // A peer that stops reading cannot hold this thread past the limit.
    let _ = stream.set_write_timeout(Some(shared.config.write_timeout));
    let config = &shared.config;
    // 2 KiB: most heads fit, and an idle connection holds little.
    let mut reader =
        BufReader::with_capacity(2048, Timed::new(stream, config.connection_idle_timeout));
    let limits = Limits {
        max_body: config.max_body_bytes,
        head_timeout: config.request_head_timeout,
        body_timeout: config.request_body_timeout,
    };
    let mut out = stream;
    let _open = shared.server.metrics.connection();
    // The first request's whole head must come within its deadline.
    let mut first_by = Some(Instant::now() + config.first_request_timeout);
    reader.get_mut().deadline(config.first_request_timeout);
    loop {
        if shared.stopping() {
            return;
        }
        let head = wire::read_head(&mut reader, &limits);
        let first = first_by.take();
        let (answer, peer, unread) = match head {
            Ok(head) => decide(shared, &mut reader, &limits, head),
            // Nothing came before the first request's deadline.
            Err(ReadError::Closed) if first.map_or(false, |by| Instant::now() >= by) => (
                unreadable(shared, ReadError::TimedOut),
                Peer::closing(),
                None,
            ),
            Err(ReadError::Closed) => return,
            Err(ReadError::Io(e)) => {
                log::debug!("connection dropped inside a request: {}", e);
                return;
            }
            // The request cannot be read to its end: answer and close.
            Err(error) => (unreadable(shared, error), Peer::closing(), None),
        };
        let _stream = counted(shared, &answer);
        // A stream that turns into one JSON error response (2026-07-28)
        // has its status only then.
        let metrics = &shared.server.metrics;
        let on_status = |status: u16| metrics.http_refusal(status);
        if answer::write(answer, &mut out, peer, &shared.config, on_status).is_err() {
            return;
        }
        // A request answered from its head: its body comes after the
        // answer, read into nothing, or the connection closes.
        let kept = match unread {
            Some(head) if peer.keep_alive => head.discard_body(&mut reader, &limits),
            Some(_) => {
                wire::linger(&mut reader);
                false
            }
            None => peer.keep_alive,
        };
        if !kept {
            return;
        }
    }
}

/// Counts `answer` in the metrics: a whole one's error status (400 or
/// more) now, a stream as open until the mark drops (and its status once
/// written: a stream may turn into one JSON error response).
fn counted(shared: &Shared, answer: &Answer) -> Option<OpenMark> {
    let metrics = &shared.server.metrics;
    match answer {
        Answer::Whole(response) => {
            if response.status >= 400 {
                metrics.http_refusal(response.status);
            }
            None
        }
        Answer::Stream(_) => Some(metrics.stream()),
    }
}

/// The answer to a request whose head was read: the head's own decision
/// (`gate.rs`), whose body is left unread and returned, else the body and
/// the routing (`route.rs`).
fn decide(
    shared: &Arc<Shared>,
    reader: &mut BufReader<Timed<'_>>,
    limits: &Limits,
    head: Head,
) -> (Answer, Peer, Option<Head>) {
    let keep_alive = head.request.keep_alive && !shared.stopping();
    let chunked = !head.request.http10;
    match admit(shared, &head.request) {
        // Answered at once (a refusal does not wait for the body, nor hold
        // it in memory): the connection stays only if the body is small.
        Admission::Answer(answer) => {
            let keep_alive = keep_alive && head.drains_cheaply();
            let peer = Peer {
                keep_alive,
                chunked,
            };
            (answer, peer, Some(head))
        }
        Admission::Pass(principal) => match head.read_body(reader, limits) {
            Ok(request) => {
                let peer = Peer {
                    keep_alive,
                    chunked,
                };
                (route(shared, &request, principal), peer, None)
            }
            Err(ReadError::Io(e)) => {
                log::debug!("connection dropped inside a request body: {}", e);
                (Answer::status(400), Peer::closing(), None)
            }
            Err(error) => (unreadable(shared, error), Peer::closing(), None),
        },
    }
}

/// The answer to a request that cannot be read: 400 for framing two
/// parsers could read differently, 431 for a head too large, 413 for a
/// body too large (DESIGN.md §6).
pub(super) fn unreadable(shared: &Shared, error: ReadError) -> Answer {
    match error {
        ReadError::HeadTooLarge => Answer::status(431),
        ReadError::TimedOut => {
            shared.refusals.refused("a request not sent in time (408)");
            Answer::status(408)
        }
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
