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
use std::time::{Duration, Instant};

mod inline;

use super::output::{Deferring, Output};
use super::pool::WorkerPool;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{write_result_or_error, ErrorObject, Message, RequestId, Response};
use crate::lines::{read_line, trim, Line};
use crate::server::session::{Closing, Session};
use crate::server::waiting::NO_THREADS;
use crate::server::Server;
use crate::server::{dispatch, Caller, Job, Received, Sink, ToolAnswer};

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
    if single_threaded(server) {
        return inline::serve_unpumped(server, reader, writer);
    }
    let connection = Connection::open(server, writer)?;
    let stopped = Arc::clone(&connection.stopped);
    let key = server.inner.on_close(Box::new(move || {
        stopped.store(true, Ordering::SeqCst);
    }));
    // Nothing says whether `reader` holds another line: flush before each.
    let outcome = connection.read(reader, |_| false);
    server.inner.forget_closer(key);
    connection.finish(outcome, server.inner.config.end_of_input_grace)
}

/// Serves MCP on stdin and `writer`: as [`serve`], with stdin read on a
/// thread of its own, so that closing the server returns at once even
/// while a read blocks (that thread is then left blocked in it, and ends
/// at the next line or end of input without acting on it). A line that
/// thread is working on when the server closes (a quick call) is finished
/// and answered first, within `end_of_input_grace`.
pub(crate) fn serve_stdin<W>(server: &Server, writer: W) -> Result<(), Error>
where
    W: Write + Send + 'static,
{
    if single_threaded(server) || !threads_start() {
        let stdin = BufReader::with_capacity(STDIN_BUFFER, inline::BlockingStdin(io::stdin()));
        return inline::serve_pumped(server, stdin, writer);
    }
    serve_threaded(server, io::stdin(), writer)
}

/// `true` when this connection is served on the calling thread alone: on
/// a target without threads, or with `max_workers(0)` (DESIGN.md §31).
fn single_threaded(server: &Server) -> bool {
    NO_THREADS || server.inner.config.max_workers == 0
}

/// Whether the platform starts a thread now; when it refuses, stdio is
/// served single-threaded instead of failing.
fn threads_start() -> bool {
    match thread::Builder::new()
        .name("tiny-mcp-probe".into())
        .spawn(|| ())
    {
        Ok(started) => started.join().is_ok(),
        Err(e) => {
            log::warn!(
                "cannot start a thread ({}): serving stdio on this thread, one request at a time",
                e
            );
            false
        }
    }
}

/// [`serve_stdin`] with `input` for stdin.
fn serve_threaded<I, W>(server: &Server, input: I, writer: W) -> Result<(), Error>
where
    I: io::Read + Send + 'static,
    W: Write + Send + 'static,
{
    let connection = Arc::new(Connection::open(server, writer)?);
    let (done, read_ended) = crossbeam_channel::bounded::<Result<(), Error>>(1);
    let (close, closed) = crossbeam_channel::bounded::<()>(1);
    let stopped = Arc::clone(&connection.stopped);
    let key = server.inner.on_close(Box::new(move || {
        stopped.store(true, Ordering::SeqCst);
        let _ = close.try_send(());
    }));
    let reading = Arc::clone(&connection);
    let spawned = thread::Builder::new()
        .name("tiny-mcp-stdin".into())
        .spawn(move || {
            let stdin = BufReader::with_capacity(STDIN_BUFFER, input);
            let outcome = reading.read(stdin, |r| r.buffer().contains(&b'\n'));
            let _ = done.send(outcome);
        });
    let grace = server.inner.config.end_of_input_grace;
    let (outcome, spent) = match spawned {
        Ok(_) => crossbeam_channel::select! {
            recv(read_ended) -> ended => (ended.unwrap_or_else(|_| {
                // The reader's sender went without a word: it panicked.
                Err(Error::new(ErrorKind::ThreadPanicked("tiny-mcp-stdin".into())))
            }), Duration::ZERO),
            recv(closed) -> _ => (Ok(()), connection.await_line(grace)),
        },
        Err(e) => (Err(Error::from(e)), Duration::ZERO),
    };
    server.inner.forget_closer(key);
    // One grace in all: what the reading thread's line took of it is gone.
    connection.finish(outcome, grace.saturating_sub(spent))
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
            pool: WorkerPool::new(
                "tiny-mcp-worker",
                server.inner.config.max_workers,
                None,
                &server.inner.metrics.workers,
            ),
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
            if self.stopped.load(Ordering::SeqCst) {
                // Closed while the last line was handled: its answer is
                // buffered; do not wait for more input.
                return Ok(());
            }
            if !has_line(&reader) {
                self.output.idle();
            }
            let read = read_line(&mut reader, &mut line, max);
            self.output.busy();
            // After `busy` (both SeqCst): a close either is seen here, or
            // sees this thread busy and waits for its line (`await_line`).
            if self.stopped.load(Ordering::SeqCst) {
                return Ok(());
            }
            match read {
                Ok(Line::Complete) => handle_line(&line, &self.session, &self.sink, |job| {
                    // Refused only once the server stops reading this input.
                    let _ = self.pool.schedule(job);
                }),
                Ok(Line::End) => return Ok(()),
                Ok(Line::TooLong) => too_long(&self.sink, max),
                Err(e) => return Err(Error::from(e)),
            }
        }
    }

    /// After a close: when the reading thread is working on a line (a
    /// quick call runs on it, maybe the one that closed), waits up to
    /// `grace` for it to end, so that the line's answer is written; a
    /// reading thread that waits for input is left waiting. The time it
    /// waited.
    fn await_line(&self, grace: Duration) -> Duration {
        let started = Instant::now();
        if !self.output.wait_not_busy(grace) {
            log::info!(
                "the call on the reading thread is still running after {:?}",
                grace
            );
        }
        started.elapsed()
    }

    /// Ends the connection after reading stopped: `grace` for the running
    /// handlers, cancel, join the workers, write what is buffered.
    fn finish(&self, outcome: Result<(), Error>, grace: Duration) -> Result<(), Error> {
        let closed = self.stopped.load(Ordering::SeqCst);
        end_of_input(&self.session, closed, grace);
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
fn end_of_input(session: &Session, closed: bool, grace: Duration) {
    let running = session.in_flight_count();
    let what = ended_by(closed);
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
    close_session(session, closed);
}

/// What ended the reading, for the log: the server's close or stdin's end.
fn ended_by(closed: bool) -> &'static str {
    if closed {
        "the server was closed"
    } else {
        "stdin closed"
    }
}

/// Closes the session once reading ended, by the server's close or the
/// input's end: what still runs or waits is cancelled (flag set, calls to
/// the client failed, no answer).
fn close_session(session: &Session, closed: bool) {
    if closed {
        session.close("the server was closed", Closing::ServerEnds);
    } else {
        session.close("the client closed the connection", Closing::ClientLeft);
    }
}

/// Dispatches one line; a request whose handler must run goes to
/// `schedule` (the workers, or the single-threaded queue).
fn handle_line(
    line: &[u8],
    session: &Arc<Session>,
    sink: &Arc<dyn Sink>,
    schedule: impl FnOnce(Job),
) {
    let trimmed = trim(line);
    if trimmed.is_empty() {
        return;
    }
    match Message::parse(trimmed) {
        Ok(message) => match dispatch::receive(session, message, sink, Caller::default()) {
            Received::Answered(response) => {
                sink.send(Message::Response(response));
            }
            Received::Run(job) => schedule(job),
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

/// Answers a line longer than `max` bytes, which was discarded.
fn too_long(sink: &Arc<dyn Sink>, max: usize) {
    log::warn!("discarded a message longer than {} bytes", max);
    sink.send(Message::Response(Response::error(
        None,
        ErrorObject::invalid_request(format!("message too large: the limit is {} bytes", max)),
    )));
}

/// The sink of the stdio connection: its output.
struct StdoutSink(Arc<Output>);

impl Sink for StdoutSink {
    fn send(&self, message: Message) -> bool {
        self.0.send(&message)
    }

    fn send_tool_result(&self, id: &RequestId, answer: &ToolAnswer<'_>) -> Option<bool> {
        Some(self.0.send_with(|line| {
            write_result_or_error(line, id, answer);
            Ok(())
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use crossbeam_channel::{unbounded, Receiver};
    use serde_json::json;

    use super::super::output::tests::Shared;
    use super::*;
    use crate::{CallToolResult, JsonObject, RequestContext, Tool};

    const WAIT: Duration = Duration::from_secs(10);

    /// Input that blocks, as an open stdin does, until its sender goes
    /// (also the single-threaded tests' input, `inline/tests.rs`).
    pub(super) struct OpenInput(pub(super) Receiver<Vec<u8>>, pub(super) Vec<u8>);

    /// `OpenInput` that says when the reading thread lets go of it.
    struct Watched(OpenInput, crossbeam_channel::Sender<()>);

    impl Read for Watched {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.0.read(buf)
        }
    }

    impl Drop for Watched {
        fn drop(&mut self) {
            let _ = self.1.send(());
        }
    }

    impl Read for OpenInput {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.1.is_empty() {
                self.1 = self.0.recv().unwrap_or_default();
            }
            let n = buf.len().min(self.1.len());
            buf[..n].copy_from_slice(&self.1[..n]);
            self.1.drain(..n);
            Ok(n)
        }
    }

    fn line(value: serde_json::Value) -> Vec<u8> {
        let mut line = value.to_string().into_bytes();
        line.push(b'\n');
        line
    }

    // Server::close: serving returns once running requests got their grace
    // and their output is written, "also when called from a handler (whose
    // request still answers)". A quick tool's call runs on the thread that
    // reads stdin: the close waits for it, stdin left open, and its answer
    // is written before serving returns.
    #[test]
    fn a_quick_call_that_closes_the_server_is_answered() {
        let (started_tx, started_rx) = unbounded::<()>();
        let (release_tx, release_rx) = unbounded::<()>();
        let server = Server::builder("close", "1")
            .end_of_input_grace(Duration::from_secs(60))
            .quick_tool(
                Tool::new("stop", json!({"type": "object"})),
                move |ctx: &RequestContext, _: JsonObject| {
                    ctx.server().close();
                    let _ = started_tx.send(());
                    let _ = release_rx.recv_timeout(WAIT);
                    Ok(CallToolResult::text("bye"))
                },
            )
            .build();
        let (input, lines) = unbounded();
        let written = Shared::default();
        let (served_tx, served) = unbounded();
        let (serving, output) = (server.clone(), written.clone());
        thread::spawn(move || {
            let input = OpenInput(lines, Vec::new());
            let _ = served_tx.send(serve_threaded(&serving, input, output));
        });
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}});
        let _ = input.send(line(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        ));
        let _ = input.send(line(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ));
        let call = json!({"name": "stop", "arguments": {}});
        let _ = input.send(line(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
        ));
        started_rx.recv_timeout(WAIT).expect("the quick tool ran");
        // Serving must not return while the call runs (it did: the close
        // did not wait for the reading thread).
        let early = served.recv_timeout(Duration::from_millis(200));
        assert!(
            early.is_err(),
            "serving returned during the call: {:?}",
            early
        );
        release_tx.send(()).expect("the tool waits for its release");
        let outcome = served.recv_timeout(WAIT).expect("serving returned");
        assert!(outcome.is_ok(), "{:?}", outcome);
        let text = String::from_utf8(written.0.lock().clone()).expect("UTF-8 output");
        let answer = text.lines().find(|l| l.contains(r#""id":2"#));
        assert!(answer.map_or(false, |l| l.contains("bye")), "{}", text);
        drop(input);
    }

    // After the quick call that closed the server, the reading thread ends
    // instead of waiting for more input on the open stdin (it looks for the
    // close before each read), and a line after that call is not acted on.
    #[test]
    fn the_reading_thread_ends_after_the_call_that_closed() {
        let (marked_tx, marked) = unbounded::<()>();
        let server = Server::builder("close", "1")
            .quick_tool(
                Tool::new("stop", json!({"type": "object"})),
                |ctx: &RequestContext, _: JsonObject| {
                    ctx.server().close();
                    Ok(CallToolResult::text("bye"))
                },
            )
            .quick_tool(
                Tool::new("mark", json!({"type": "object"})),
                move |_: &RequestContext, _: JsonObject| {
                    let _ = marked_tx.send(());
                    Ok(CallToolResult::text("marked"))
                },
            )
            .build();
        let (input, lines) = unbounded();
        let (dropped_tx, dropped) = unbounded();
        let written = Shared::default();
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}});
        let mut chunk =
            line(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}));
        chunk.extend(line(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ));
        let _ = input.send(chunk);
        let stop = json!({"name": "stop", "arguments": {}});
        let _ = input.send(line(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": stop}),
        ));
        let watched = Watched(OpenInput(lines, Vec::new()), dropped_tx);
        let outcome = serve_threaded(&server, watched, written.clone());
        assert!(outcome.is_ok(), "{:?}", outcome);
        let text = String::from_utf8(written.0.lock().clone()).expect("UTF-8 output");
        assert!(text.contains("bye"), "{}", text);
        dropped
            .recv_timeout(WAIT)
            .expect("the reading thread let go of its input");
        let mark = json!({"name": "mark", "arguments": {}});
        let late = input.send(line(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": mark}),
        ));
        assert!(late.is_err(), "the input was still read");
        assert!(marked.try_recv().is_err(), "a line after the close ran");
    }
}
