//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! One thread reads stdin, one line at a time (`serve_stdio`: a thread of
//! its own; `serve_io`: the caller's); handlers run on workers; whoever has
//! a message writes it to stdout as one line, one at a time
//! ([`Output`](super::output::Output), DESIGN.md §4). Spec: basic/transports "stdio" (2025-11-25),
//! STDIO-1 to STDIO-3.

use std::io::{self, BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use super::output::{Deferring, Output};
use super::pool::WorkerPool;
use crate::jsonrpc::{write_result_to, ErrorObject, Message, RequestId, Response};
use crate::lines::{read_line, trim, Line};
use crate::server::{Received, Sink, ToolAnswer};
use crate::session::{Closing, Session};
use crate::{Error, ErrorKind, Server};

/// The stdin buffer of `serve_stdio`: a pipelining client's lines are read
/// in few reads.
const STDIN_BUFFER: usize = 64 * 1024;

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
    // Nothing says whether `reader` holds another line: flush before each.
    let outcome = connection.read(reader, |_| false);
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
            let stdin = BufReader::with_capacity(STDIN_BUFFER, io::stdin());
            let outcome = reading.read(stdin, |r| r.buffer().contains(&b'\n'));
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

/// One stdio connection: its session, its output, and the workers that
/// run its handlers.
struct Connection {
    server: Server,
    session: Arc<Session>,
    sink: Arc<dyn Sink>,
    output: Arc<Output>,
    pool: WorkerPool,
    /// Set when the server is closed: read no further.
    stopped: Arc<AtomicBool>,
}

impl Connection {
    fn open<W: Write + Send + 'static>(server: &Server, writer: W) -> Result<Connection, Error> {
        let output = Arc::new(Output::new(writer));
        let sink: Arc<dyn Sink> = Arc::new(StdoutSink(Arc::clone(&output)));
        Ok(Connection {
            server: server.clone(),
            session: Session::connection(&server.inner, Arc::clone(&sink)),
            sink,
            output,
            pool: WorkerPool::new("tiny-mcp-worker", server.inner.config.max_workers),
            stopped: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Reads and dispatches lines until end of input, a failed write or
    /// the server's close. What this thread sends waits for its flush,
    /// which comes when `has_line` says no complete line is buffered (the
    /// next read may block).
    fn read<R: BufRead>(&self, mut reader: R, has_line: impl Fn(&R) -> bool) -> Result<(), Error> {
        let _deferring = Deferring::start(&self.output);
        let max = self.server.inner.config.max_line_bytes;
        let mut line = Vec::with_capacity(4096);
        loop {
            if self.output.is_broken() {
                // The output reports why; nothing more can be answered.
                return Ok(());
            }
            if !has_line(&reader) {
                self.output.idle();
            }
            let read = read_line(&mut reader, &mut line, max);
            self.output.busy();
            if self.stopped.load(Ordering::Acquire) {
                return Ok(());
            }
            match read {
                Ok(Line::Complete) => handle_line(&line, &self.session, &self.sink, &self.pool),
                Ok(Line::End) => return Ok(()),
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
                Err(e) => return Err(Error::from(e)),
            }
        }
    }

    /// Ends the connection after reading stopped: grace, cancel, join the
    /// workers, write what is buffered.
    fn finish(&self, outcome: Result<(), Error>) -> Result<(), Error> {
        let closed = self.stopped.load(Ordering::Acquire);
        end_of_input(&self.server, &self.session, closed);
        let config = &self.server.inner.config;
        let workers = self.pool.join_within(Some(config.handler_exit_timeout));
        let written = self.output.finish().map_err(Error::from);
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
            Received::Run(job) if job.is_quick() => job.run(),
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

/// The sink of the stdio connection: its output.
struct StdoutSink(Arc<Output>);

impl Sink for StdoutSink {
    fn send(&self, message: Message) -> bool {
        self.0.send(&message)
    }

    fn send_tool_result(&self, id: &RequestId, answer: &ToolAnswer<'_>) -> Option<bool> {
        Some(self.0.send_with(|line| write_result_to(line, id, answer)))
    }
}
