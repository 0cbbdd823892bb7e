//! The client over one newline-delimited JSON-RPC stream pair: a child's
//! stdio, or any `BufRead + Write` (basic/transports "stdio").
//!
//! One reader thread owns the input: it hands each response to the call
//! waiting for its id, each notification to the inbox, and each server
//! request to a short-lived thread that answers it (at most
//! [`MAX_SERVER_REQUESTS`] at once). One writer thread owns the output and
//! writes whole lines from a bounded queue, so a server that stops reading
//! never blocks a caller past its deadline. Calls wait on their own
//! channel, so calls from several threads run concurrently.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select, Receiver, Sender};
use parking_lot::Mutex;
use serde_json::Value;

use super::inbox::Inbox;
use super::link::{Link, Outgoing, Wait};
use super::options::CancelGuard;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{Message, RequestId, Response};
use crate::lines::{read_line, trim, Line};
use crate::protocol::{notifications, Era};

/// Lines waiting for the writer thread at most.
pub(crate) const WRITE_QUEUE: usize = 1024;
/// How long a notification or an answer to the server waits for room.
const NOTIFY_WAIT: Duration = Duration::from_secs(10);

/// Server requests answered at once; more are refused with `-32603`.
pub(crate) const MAX_SERVER_REQUESTS: usize = 16;

type Answer = Result<Value, Error>;

/// What ending a call early (its timeout, its cancel token) tells the
/// server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnGiveUp {
    /// `notifications/cancelled` (basic/utilities/cancellation).
    Cancel,
    /// Nothing: the request is abandoned, and an answer that still comes
    /// finds nobody waiting (`initialize` MUST NOT be cancelled).
    Abandon,
}

/// Limits of a duplex link.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DuplexLimits {
    pub(crate) max_message_bytes: usize,
    pub(crate) max_pending: usize,
}

/// What the reader and the callers share.
struct Shared {
    /// Lines for the writer thread; `None` once closed.
    writer: Mutex<Option<Sender<Vec<u8>>>>,
    pending: Mutex<HashMap<RequestId, Sender<Answer>>>,
    /// Why the input ended, once it has.
    ended: Mutex<Option<String>>,
    inbox: Arc<Inbox>,
    limits: DuplexLimits,
    answering: AtomicUsize,
}

/// A duplex link; see the module docs.
pub(crate) struct Duplex {
    shared: Arc<Shared>,
    reader: Mutex<Option<thread::JoinHandle<()>>>,
}

impl Duplex {
    /// Starts the reader thread on `reader`; `ended` describes end of
    /// input for the error of the calls still waiting (e.g. the child's
    /// exit status).
    pub(crate) fn start(
        reader: Box<dyn BufRead + Send>,
        writer: Box<dyn Write + Send>,
        inbox: Arc<Inbox>,
        limits: DuplexLimits,
        ended: Box<dyn FnOnce() -> String + Send>,
    ) -> Result<Duplex, Error> {
        let shared = Arc::new(Shared {
            writer: Mutex::new(Some(start_writer(writer)?)),
            pending: Mutex::new(HashMap::new()),
            ended: Mutex::new(None),
            inbox,
            limits,
            answering: AtomicUsize::new(0),
        });
        let for_reader = Arc::clone(&shared);
        let handle = thread::Builder::new()
            .name("tiny-mcp-client-reader".into())
            .spawn(move || {
                let reason = read_loop(&for_reader, reader);
                let reason = match reason {
                    Some(reason) => reason,
                    None => ended(),
                };
                fail_all(&for_reader, &reason);
            })?;
        Ok(Duplex {
            shared,
            reader: Mutex::new(Some(handle)),
        })
    }

    fn write(&self, message: &Message, deadline: Option<Instant>) -> Result<(), Error> {
        write_message(&self.shared, message, deadline)
    }

    fn forget(&self, id: &RequestId) {
        self.shared.pending.lock().remove(id);
    }

    /// Tells the server to stop working on `id` (basic/utilities/cancellation;
    /// CANCEL-1 in 2026-07-28).
    fn send_cancel(&self, id: &RequestId, reason: &str) {
        let params = serde_json::json!({ "requestId": id, "reason": reason });
        // Never waits: a server that does not read gets no cancel.
        let _ = self.write(
            &Message::notification(notifications::CANCELLED, Some(params)),
            None,
        );
    }

    fn wait(
        &self,
        out: &Outgoing,
        rx: Receiver<Answer>,
        wait: &Wait<'_>,
        give_up: OnGiveUp,
    ) -> Answer {
        let (cancel_tx, cancel_rx) = bounded::<()>(1);
        let _guard = match wait.cancel {
            Some(token) => token.on_cancel(move || {
                let _ = cancel_tx.try_send(());
            }),
            None => CancelGuard::none(),
        };
        select! {
            recv(rx) -> answer => answer.unwrap_or_else(|_| Err(self.closed_error())),
            recv(cancel_rx) -> _ => {
                self.give_up(&out.id, give_up, "cancelled by the client");
                Err(Error::cancelled(None))
            }
            default(wait.remaining()) => {
                self.give_up(&out.id, give_up, "timed out");
                Err(wait.timed_out(&out.method))
            }
        }
    }

    /// Stops waiting for `id`, telling the server unless the request is
    /// abandoned.
    fn give_up(&self, id: &RequestId, give_up: OnGiveUp, reason: &str) {
        self.forget(id);
        if give_up == OnGiveUp::Cancel {
            self.send_cancel(id, reason);
        }
    }

    /// Sends `out` and waits for its answer; `give_up` says what a
    /// timeout or a cancel tells the server.
    fn call(&self, out: &Outgoing, wait: &Wait<'_>, give_up: OnGiveUp) -> Answer {
        if wait.cancel.map_or(false, |t| t.is_cancelled()) {
            return Err(Error::cancelled(None));
        }
        let (tx, rx) = bounded(1);
        {
            if let Some(reason) = &*self.shared.ended.lock() {
                return Err(Error::new(ErrorKind::Protocol(reason.clone())));
            }
            let mut pending = self.shared.pending.lock();
            if pending.len() >= self.shared.limits.max_pending {
                return Err(Error::msg(format!(
                    "{} requests are already waiting for the server (max_pending)",
                    pending.len()
                )));
            }
            pending.insert(out.id.clone(), tx);
        }
        let message =
            Message::request(out.id.clone(), out.method.clone(), Some(out.params.clone()));
        if let Err(e) = self.write(&message, Some(wait.deadline)) {
            self.forget(&out.id);
            return Err(if wait.remaining().is_zero() {
                wait.timed_out(&out.method)
            } else {
                e
            });
        }
        self.wait(out, rx, wait, give_up)
    }

    fn closed_error(&self) -> Error {
        match &*self.shared.ended.lock() {
            Some(reason) => Error::new(ErrorKind::Protocol(reason.clone())),
            None => Error::new(ErrorKind::Closed),
        }
    }
}

impl Link for Duplex {
    fn request(&self, out: &Outgoing, wait: &Wait<'_>) -> Answer {
        self.call(out, wait, OnGiveUp::Cancel)
    }

    fn request_uncancelled(&self, out: &Outgoing, wait: &Wait<'_>) -> Answer {
        self.call(out, wait, OnGiveUp::Abandon)
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        let deadline = Instant::now() + NOTIFY_WAIT;
        self.write(&Message::notification(method, params), Some(deadline))
    }

    fn settle(&self, _era: Era, _version: &str) {}

    fn close(&self) {
        // Closing our output is end of input for the server (STDIO-4): the
        // writer thread writes what is queued and drops the writer.
        drop(self.shared.writer.lock().take());
        fail_all(&self.shared, "the client closed the connection");
        // Not joined: a reader whose input never ends (a socket whose other
        // half is still open, a grandchild holding the pipe) would hold
        // close forever. It ends with its input, and holds nothing of ours
        // but the shared state.
        drop(self.reader.lock().take());
    }
}

/// Queues `message` for the writer thread, waiting for room until
/// `deadline` (`None`: not at all). A server that stops reading fills the
/// queue; nothing here ever blocks on its pipe.
fn write_message(
    shared: &Shared,
    message: &Message,
    deadline: Option<Instant>,
) -> Result<(), Error> {
    let mut line = Vec::with_capacity(256);
    message.write_to(&mut line)?;
    line.push(b'\n');
    let sender = match &*shared.writer.lock() {
        Some(sender) => sender.clone(),
        None => return Err(Error::new(ErrorKind::Closed)),
    };
    let sent = match deadline {
        Some(deadline) => sender
            .send_timeout(line, deadline.saturating_duration_since(Instant::now()))
            .map_err(|e| e.is_disconnected()),
        None => sender.try_send(line).map_err(|e| e.is_disconnected()),
    };
    match sent {
        Ok(()) => Ok(()),
        Err(true) => Err(Error::new(ErrorKind::Protocol(
            "writing to the server failed".into(),
        ))),
        Err(false) => Err(Error::new(ErrorKind::Protocol(format!(
            "the server is not reading: {} messages wait to be written",
            WRITE_QUEUE
        )))),
    }
}

/// The one thread that writes to the server, whole lines, flushing when
/// the queue runs dry; it ends (dropping the writer, which closes it) when
/// the queue is closed or a write fails.
fn start_writer(mut writer: Box<dyn Write + Send>) -> Result<Sender<Vec<u8>>, Error> {
    let (lines, queued) = bounded::<Vec<u8>>(WRITE_QUEUE);
    thread::Builder::new()
        .name("tiny-mcp-client-writer".into())
        .spawn(move || {
            for line in queued.iter() {
                if writer.write_all(&line).is_err() {
                    return;
                }
                if queued.is_empty() && writer.flush().is_err() {
                    return;
                }
            }
            let _ = writer.flush();
        })?;
    Ok(lines)
}

/// Fails every waiting call; later calls fail at once.
fn fail_all(shared: &Shared, reason: &str) {
    shared
        .ended
        .lock()
        .get_or_insert_with(|| reason.to_string());
    let waiting: Vec<_> = shared.pending.lock().drain().collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(Error::new(ErrorKind::Protocol(reason.to_string()))));
    }
}

/// Reads until end of input; `Some(reason)` when reading failed.
fn read_loop(shared: &Arc<Shared>, mut reader: Box<dyn BufRead + Send>) -> Option<String> {
    let mut line = Vec::new();
    loop {
        match read_line(&mut reader, &mut line, shared.limits.max_message_bytes) {
            Ok(Line::Complete) => {
                let text = trim(&line);
                if !text.is_empty() {
                    received(shared, text);
                }
            }
            Ok(Line::TooLong) => log::warn!(
                "the server sent a line over {} bytes (max_message_bytes); dropped",
                shared.limits.max_message_bytes
            ),
            Ok(Line::End) => return None,
            Err(e) => return Some(format!("reading from the server failed: {}", e)),
        }
    }
}

fn received(shared: &Arc<Shared>, text: &[u8]) {
    match Message::parse(text) {
        Ok(Message::Response(response)) => answered(shared, response),
        Ok(Message::Notification(notification)) => shared.inbox.notification(&notification),
        Ok(Message::Request(request)) => {
            if shared.answering.fetch_add(1, Ordering::SeqCst) >= MAX_SERVER_REQUESTS {
                shared.answering.fetch_sub(1, Ordering::SeqCst);
                let busy = Response::error(
                    Some(request.id),
                    crate::jsonrpc::ErrorObject::internal(
                        "the client is answering too many requests",
                    ),
                );
                let _ = write_message(shared, &busy.into(), None);
                return;
            }
            let for_thread = Arc::clone(shared);
            let raw = text.to_vec();
            let spawned = thread::Builder::new()
                .name("tiny-mcp-client-answer".into())
                .spawn(move || {
                    let response = for_thread.inbox.request(request, &raw);
                    let deadline = Instant::now() + NOTIFY_WAIT;
                    let _ = write_message(&for_thread, &response.into(), Some(deadline));
                    for_thread.answering.fetch_sub(1, Ordering::SeqCst);
                });
            if let Err(e) = spawned {
                shared.answering.fetch_sub(1, Ordering::SeqCst);
                log::warn!("cannot start a thread to answer the server: {}", e);
            }
        }
        Err(e) => log::warn!(
            "the server sent a line that is not JSON-RPC: {}",
            e.error.message
        ),
    }
}

fn answered(shared: &Shared, response: Response) {
    let waiting = match &response.id {
        Some(id) => shared.pending.lock().remove(id),
        None => None,
    };
    match waiting {
        Some(tx) => {
            let answer = response.outcome.map_err(|e| Error::new(ErrorKind::Peer(e)));
            let _ = tx.send(answer);
        }
        None => log::warn!(
            "the server answered a request nobody waits for (id {:?})",
            response.id
        ),
    }
}
