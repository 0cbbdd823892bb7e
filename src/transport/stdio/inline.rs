//! Single-threaded stdio serving (DESIGN.md §31): on a target without
//! threads (`wasm32-wasip1`, `wasm32-wasip2`), with
//! [`max_workers(0)`](crate::ServerBuilder::max_workers), or when the
//! platform refuses to start a thread.
//!
//! The calling thread reads a line, dispatches it, and runs the handler
//! it asks for, then reads the next: one request at a time, in order.
//! Every message is flushed as it is written (progress and logs arrive as
//! they come). A handler that waits for the client (an answer to its
//! request, 2025-11-25; a task's `tasks/update`, 2026-07-28) reads on
//! through this connection's [`InputPump`]: what it reads is dispatched
//! at once when it answers inline, and requests that run handlers queue
//! until the running one returns (at most `max_in_flight` of them, and
//! `max_queued_bytes` of their lines). A cancel reaches the queued ones
//! (they never run and are not answered); a running handler's cancel is
//! read only while it waits for its client. Spec: basic/transports
//! "stdio", basic/utilities/cancellation (2025-11-25).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{close_session, ended_by, handle_line, too_long, StdoutSink};
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::lines::{read_line, Line};
use crate::server::session::Session;
use crate::server::waiting::{InputPump, Pumping};
use crate::server::{Job, Server, Sink};
use crate::transport::output::Output;

/// Serves `reader`, whose lines a waiting handler reads on (stdin).
pub(super) fn serve_pumped<R, W>(server: &Server, reader: R, writer: W) -> Result<(), Error>
where
    R: BufRead + 'static,
    W: Write + Send + 'static,
{
    let connection = Rc::new(Inline::open(server, reader, writer));
    let pump: Rc<dyn InputPump> = Rc::clone(&connection) as Rc<dyn InputPump>;
    let _pumping = Pumping::start(pump);
    connection.serve(server)
}

/// Stdin as a blocking reader: a runtime may hand a WASI program a
/// non-blocking stdin (Node's `node:wasi` does, on a pipe), whose read
/// says `WouldBlock` while no input is there. Such a read is tried again
/// after a pause that grows from 1 ms to [`MOST_IDLE_PAUSE`], so that an
/// idle server does not spin.
pub(super) struct BlockingStdin<R>(pub(super) R);

/// The longest pause between two reads of a stdin that would block.
const MOST_IDLE_PAUSE: Duration = Duration::from_millis(20);

impl<R: io::Read> io::Read for BlockingStdin<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut pause = Duration::from_millis(1);
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(MOST_IDLE_PAUSE);
                }
                other => return other,
            }
        }
    }
}

/// Serves `reader`, which a waiting handler cannot read: it may borrow,
/// and the pump must outlive the call (`serve_io`). A handler's request
/// to the client fails at once, unsent (`waiting::check_answerable`).
pub(super) fn serve_unpumped<R, W>(server: &Server, reader: R, writer: W) -> Result<(), Error>
where
    R: BufRead,
    W: Write + Send + 'static,
{
    let connection = Inline::open(server, reader, writer);
    let _pumping = Pumping::start(Rc::new(Unreadable));
    connection.serve(server)
}

/// The pump of `serve_unpumped`: reads nothing.
struct Unreadable;

impl InputPump for Unreadable {
    fn pump(&self) -> bool {
        false
    }

    fn readable(&self) -> bool {
        false
    }
}

/// One connection served on the calling thread.
struct Inline<R> {
    session: Arc<Session>,
    sink: Arc<dyn Sink>,
    output: Arc<Output>,
    reader: RefCell<R>,
    /// Requests read while a handler ran, in order, with their sizes;
    /// each is in the session's in-flight table, so at most
    /// `max_in_flight` wait, and at most `max_queued` bytes of them.
    queue: RefCell<VecDeque<(Job, usize)>>,
    queued_bytes: Cell<usize>,
    max_queued: usize,
    max_line: usize,
    /// The line buffer, kept between reads (never read re-entrantly: a
    /// handler that pumps runs only after the read that queued it).
    line: RefCell<Vec<u8>>,
    grace: Duration,
    /// Set when the server is closed: read no further.
    stopped: Arc<AtomicBool>,
    /// When the input ended (or failed): queued requests still start
    /// within the grace period after it.
    ended: Cell<Option<Instant>>,
    failure: RefCell<Option<io::Error>>,
}

impl<R: BufRead> Inline<R> {
    fn open<W: Write + Send + 'static>(server: &Server, reader: R, writer: W) -> Inline<R> {
        let output = Arc::new(Output::new(writer));
        let sink: Arc<dyn Sink> = Arc::new(StdoutSink(Arc::clone(&output)));
        let config = &server.inner.config;
        Inline {
            session: Session::connection(&server.inner, Arc::clone(&sink)),
            sink,
            output,
            reader: RefCell::new(reader),
            queue: RefCell::new(VecDeque::new()),
            queued_bytes: Cell::new(0),
            max_queued: config.max_queued_bytes,
            max_line: config.max_line_bytes,
            line: RefCell::new(Vec::with_capacity(4096)),
            grace: config.end_of_input_grace,
            stopped: Arc::new(AtomicBool::new(false)),
            ended: Cell::new(None),
            failure: RefCell::new(None),
        }
    }

    /// Reads and runs until the input ends, the output breaks or the
    /// server closes; then closes the session and writes what is left.
    fn serve(&self, server: &Server) -> Result<(), Error> {
        let stopped = Arc::clone(&self.stopped);
        let key = server.inner.on_close(Box::new(move || {
            stopped.store(true, Ordering::SeqCst);
        }));
        while self.read_one() {
            self.run_queued();
        }
        self.run_queued();
        server.inner.forget_closer(key);
        let closed = self.stopped.load(Ordering::SeqCst);
        log::info!("{}", ended_by(closed));
        // Queued requests not started (a close, or past the grace) are
        // cancelled with the session: no answer, as on the threaded path.
        close_session(&self.session, closed);
        self.queue.borrow_mut().clear();
        let written = self.output.finish().map_err(Error::from);
        match self.failure.borrow_mut().take() {
            Some(e) => Err(Error::from(e)),
            None => written,
        }
    }

    /// Runs the queued requests in order, each to its end, unless the
    /// server closed or the grace after the input's end is spent.
    fn run_queued(&self) {
        loop {
            if self.stopped.load(Ordering::SeqCst) || self.output.is_broken() {
                return;
            }
            if let Some(at) = self.ended.get() {
                if at.elapsed() > self.grace {
                    return;
                }
            }
            // Not borrowed while it runs: its handler may read on.
            let job = self.queue.borrow_mut().pop_front();
            match job {
                Some((job, size)) => {
                    self.queued_bytes.set(self.queued_bytes.get() - size);
                    job.run();
                }
                None => return,
            }
        }
    }

    /// Reads one line and dispatches it: answered at once, or queued when
    /// it runs a handler. `false` when nothing more can be read.
    fn read_one(&self) -> bool {
        if self.ended.get().is_some()
            || self.stopped.load(Ordering::SeqCst)
            || self.output.is_broken()
        {
            return false;
        }
        let mut line = self.line.take();
        let read = read_line(&mut *self.reader.borrow_mut(), &mut line, self.max_line);
        if self.stopped.load(Ordering::SeqCst) {
            // Closed (by another thread) while the read blocked: the line
            // is not acted on, as on the threaded path.
            return false;
        }
        match read {
            Ok(Line::Complete) => handle_line(&line, &self.session, &self.sink, |job| {
                self.schedule(job, line.len())
            }),
            Ok(Line::TooLong) => too_long(&self.sink, self.max_line),
            Ok(Line::End) => self.ended.set(Some(Instant::now())),
            Err(e) => {
                self.ended.set(Some(Instant::now()));
                *self.failure.borrow_mut() = Some(e);
            }
        }
        *self.line.borrow_mut() = line;
        self.ended.get().is_none()
    }
}

impl<R> Inline<R> {
    /// Queues a request whose handler must run, unless the queue's bytes
    /// are spent; a quick tool's call runs at once, as on the threaded
    /// path: it cannot wait for the client, and it is not in the
    /// in-flight table, which bounds the queue's length.
    fn schedule(&self, job: Job, size: usize) {
        if job.is_quick() {
            return job.run();
        }
        let queued = self.queued_bytes.get();
        let mut queue = self.queue.borrow_mut();
        if !queue.is_empty() && queued + size > self.max_queued {
            drop(queue);
            log::warn!(
                "refused a request: {} bytes of requests already queued",
                queued
            );
            let message = format!(
                "too many requests queued: {} bytes wait behind a running handler (the limit is {})",
                queued, self.max_queued
            );
            return job.refuse(ErrorObject::internal(message));
        }
        self.queued_bytes.set(queued + size);
        queue.push_back((job, size));
    }
}

impl<R: BufRead> InputPump for Inline<R> {
    fn pump(&self) -> bool {
        self.read_one()
    }
}

#[cfg(test)]
mod tests;
