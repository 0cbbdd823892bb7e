//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! The calling thread owns stdin and reads one line at a time; one writer
//! thread owns stdout and writes whole lines; handlers run on workers
//! (DESIGN.md §4). Spec: basic/transports "stdio" (2025-11-25),
//! STDIO-1 to STDIO-3.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crossbeam_channel::Receiver;
use parking_lot::Mutex;

use super::pool::WorkerPool;
use crate::jsonrpc::{ErrorObject, Message, Response};
use crate::lines::{read_line, trim, Line};
use crate::server::{Received, Sink};
use crate::session::{Closing, Session};
use crate::{Error, ErrorKind, Server};

/// How many messages may wait for the writer before senders block.
const WRITE_QUEUE: usize = 4096;

/// Serves MCP on `reader` and `writer` until end of input or until the
/// server is closed (noticed once `reader` returns); see
/// [`Server::serve_io`](crate::Server::serve_io) for the contract.
pub(crate) fn serve<R, W>(server: &Server, reader: R, writer: W) -> Result<(), Error>
where
    R: BufRead,
    W: Write + Send + 'static,
{
    let connection = Connection::open(server, writer)?;
    let stopped = Arc::clone(&connection.stopped);
    let key = server.inner.on_close(Box::new(move || {
        stopped.store(true, Ordering::Release);
    }));
    let outcome = connection.read(reader);
    server.inner.forget_closer(key);
    connection.finish(outcome)
}

/// Serves MCP on stdin and `writer`: as [`serve`], with stdin read on a
/// thread of its own, so that closing the server returns at once even
/// while a read blocks (that thread is then left blocked in it, and ends
/// at the next line or end of input without acting on it).
pub(crate) fn serve_stdin<W>(server: &Server, writer: W) -> Result<(), Error>
where
    W: Write + Send + 'static,
{
    let connection = Arc::new(Connection::open(server, writer)?);
    let (done, read_ended) = crossbeam_channel::bounded::<Result<(), Error>>(1);
    let (close, closed) = crossbeam_channel::bounded::<()>(1);
    let stopped = Arc::clone(&connection.stopped);
    let key = server.inner.on_close(Box::new(move || {
        stopped.store(true, Ordering::Release);
        let _ = close.try_send(());
    }));
    let reading = Arc::clone(&connection);
    let spawned = thread::Builder::new()
        .name("tiny-mcp-stdin".into())
        .spawn(move || {
            let outcome = reading.read(io::stdin().lock());
            let _ = done.send(outcome);
        });
    let outcome = match spawned {
        Ok(_) => crossbeam_channel::select! {
            recv(read_ended) -> ended => ended.unwrap_or_else(|_| {
                // The reader's sender went without a word: it panicked.
                Err(Error::new(ErrorKind::ThreadPanicked("tiny-mcp-stdin".into())))
            }),
            recv(closed) -> _ => Ok(()),
        },
        Err(e) => Err(Error::from(e)),
    };
    server.inner.forget_closer(key);
    connection.finish(outcome)
}

/// One stdio connection: its session, the writer thread that owns the
/// output, and the workers that run its handlers.
struct Connection {
    server: Server,
    session: Arc<Session>,
    sink: Arc<dyn Sink>,
    pool: WorkerPool,
    /// Set by the writer when a write failed: nothing more can be answered.
    broken: Arc<AtomicBool>,
    /// Set when the server is closed: read no further.
    stopped: Arc<AtomicBool>,
    stop: crossbeam_channel::Sender<ToWriter>,
    writer_thread: Mutex<Option<JoinHandle<io::Result<()>>>>,
}

impl Connection {
    fn open<W: Write + Send + 'static>(server: &Server, writer: W) -> Result<Connection, Error> {
        let (sender, receiver) = crossbeam_channel::bounded(WRITE_QUEUE);
        let broken = Arc::new(AtomicBool::new(false));
        let writer_broken = Arc::clone(&broken);
        let writer_thread = thread::Builder::new()
            .name("tiny-mcp-stdio-writer".into())
            .spawn(move || write_loop(receiver, writer, &writer_broken))?;
        let stop = sender.clone();
        let sink: Arc<dyn Sink> = Arc::new(StdoutSink(sender));
        Ok(Connection {
            server: server.clone(),
            session: Session::connection(&server.inner, Arc::clone(&sink)),
            sink,
            pool: WorkerPool::new("tiny-mcp-worker", server.inner.config.max_workers),
            broken,
            stopped: Arc::new(AtomicBool::new(false)),
            stop,
            writer_thread: Mutex::new(Some(writer_thread)),
        })
    }

    /// Reads and dispatches lines until end of input, a failed write or
    /// the server's close.
    fn read<R: BufRead>(&self, mut reader: R) -> Result<(), Error> {
        let max = self.server.inner.config.max_line_bytes;
        let mut line = Vec::with_capacity(4096);
        loop {
            if self.broken.load(Ordering::Acquire) {
                // The writer reports why; nothing more can be answered.
                return Ok(());
            }
            let read = read_line(&mut reader, &mut line, max);
            if self.stopped.load(Ordering::Acquire) {
                return Ok(());
            }
            match read {
                Ok(Line::Complete) => handle_line(&line, &self.session, &self.sink, &self.pool),
                Ok(Line::TooLong) => {
                    log::warn!("discarded a message longer than {} bytes", max);
                    self.sink.send(Message::Response(Response::error(
                        None,
                        ErrorObject::invalid_request(format!(
                            "message too large: the limit is {} bytes",
                            max
                        )),
                    )));
                }
                Ok(Line::End) => return Ok(()),
                Err(e) => return Err(Error::from(e)),
            }
        }
    }

    /// Ends the connection after reading stopped: grace, cancel, join the
    /// workers, write what is queued, join the writer.
    fn finish(&self, outcome: Result<(), Error>) -> Result<(), Error> {
        let closed = self.stopped.load(Ordering::Acquire);
        end_of_input(&self.server, &self.session, closed);
        let config = &self.server.inner.config;
        let workers = self.pool.join_within(Some(config.handler_exit_timeout));
        let _ = self.stop.send(ToWriter::Stop);
        let writer_thread = self.writer_thread.lock().take();
        let written = match writer_thread.map(JoinHandle::join) {
            Some(Ok(written)) => written.map_err(Error::from),
            Some(Err(_)) => Err(Error::new(ErrorKind::ThreadPanicked(
                "tiny-mcp-stdio-writer".into(),
            ))),
            None => Ok(()),
        };
        outcome.and(written).and(workers)
    }
}

/// End of input (or the server's close): handlers get a grace period to
/// answer (a client that pipes a few lines in and closes stdin still reads
/// stdout); then the session closes: the rest are cancelled (flag set,
/// calls to the client failed, no answer).
fn end_of_input(server: &Server, session: &Session, closed: bool) {
    let grace = server.inner.config.end_of_input_grace;
    let running = session.in_flight_count();
    let what = if closed {
        "the server was closed"
    } else {
        "stdin closed"
    };
    if running == 0 {
        log::info!("{}", what);
    } else {
        log::info!(
            "{}; waiting up to {:?} for {} running request(s) to answer",
            what,
            grace,
            running
        );
    }
    if !session.wait_idle(grace) {
        log::info!(
            "cancelling {} request(s) still running after {:?}",
            session.in_flight_count(),
            grace
        );
    }
    if closed {
        session.close("the server was closed", Closing::ServerEnds);
    } else {
        session.close("the client closed the connection", Closing::ClientLeft);
    }
}

fn handle_line(line: &[u8], session: &Arc<Session>, sink: &Arc<dyn Sink>, pool: &WorkerPool) {
    let trimmed = trim(line);
    if trimmed.is_empty() {
        return;
    }
    match Message::parse(trimmed) {
        Ok(message) => match session.receive(message, sink) {
            Received::Answered(response) => {
                sink.send(Message::Response(response));
            }
            Received::Run(job) => {
                pool.execute(move || job.run());
            }
            Received::Listening(_) | Received::Consumed => {}
        },
        Err(e) => {
            log::warn!("bad message from the client: {}", e.error);
            if let Some(response) = e.response() {
                sink.send(Message::Response(response));
            }
        }
    }
}

/// Writes each message as one line; flushes when the queue runs dry.
/// Returns the first write error (and sets `broken`), after draining the
/// queue so that senders never block.
fn write_loop<W: Write>(
    receiver: Receiver<ToWriter>,
    writer: W,
    broken: &AtomicBool,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, writer);
    let mut failure = None;
    for item in receiver.iter() {
        let message = match item {
            ToWriter::Message(message) => message,
            ToWriter::Stop => break,
        };
        if failure.is_some() {
            continue; // Keep draining so that senders never block.
        }
        let written = message
            .write_to(&mut out)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| {
                if receiver.is_empty() {
                    out.flush()
                } else {
                    Ok(())
                }
            });
        if let Err(e) = written {
            log::warn!("cannot write to stdout: {}; dropping further output", e);
            broken.store(true, Ordering::Release);
            failure = Some(e);
        }
    }
    match failure {
        Some(e) => Err(e),
        None => out.flush(),
    }
}

/// What the writer thread is given.
enum ToWriter {
    /// One message, written as one line.
    Message(Message),
    /// Serving ended: write what came before, then stop. Disconnection
    /// alone cannot say so while a handler that ignored its cancellation
    /// still holds a sender.
    Stop,
}

/// The sink of the stdio connection: the writer thread's queue.
struct StdoutSink(crossbeam_channel::Sender<ToWriter>);

impl Sink for StdoutSink {
    fn send(&self, message: Message) -> bool {
        self.0.send(ToWriter::Message(message)).is_ok()
    }
}
