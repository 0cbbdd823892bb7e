//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! The calling thread owns stdin and reads one line at a time; one writer
//! thread owns stdout and writes whole lines; handlers run on workers
//! (DESIGN.md §4). Spec: basic/transports "stdio" (2025-11-25),
//! STDIO-1 to STDIO-3.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::Receiver;

use super::pool::WorkerPool;
use crate::jsonrpc::{ErrorObject, Message, Response};
use crate::lines::{read_line, trim, Line};
use crate::server::{Received, Sink};
use crate::session::{Closing, Session};
use crate::{Error, ErrorKind, Server};

/// How many messages may wait for the writer before senders block.
const WRITE_QUEUE: usize = 4096;

/// Serves MCP on `reader` and `writer` until end of input; see
/// [`Server::serve_io`](crate::Server::serve_io) for the contract.
pub(crate) fn serve<R, W>(server: &Server, mut reader: R, writer: W) -> Result<(), Error>
where
    R: BufRead,
    W: Write + Send + 'static,
{
    let (sender, receiver) = crossbeam_channel::bounded(WRITE_QUEUE);
    let broken = Arc::new(AtomicBool::new(false));
    let writer_broken = Arc::clone(&broken);
    let writer_thread = thread::Builder::new()
        .name("tiny-mcp-stdio-writer".into())
        .spawn(move || write_loop(receiver, writer, &writer_broken))?;
    let stop = sender.clone();
    let sink: Arc<dyn Sink> = Arc::new(StdoutSink(sender));
    let session = Session::connection(&server.inner, Arc::clone(&sink));
    let pool = WorkerPool::new("tiny-mcp-worker", server.inner.config.max_workers);
    let max = server.inner.config.max_line_bytes;
    let mut line = Vec::with_capacity(4096);
    let outcome = loop {
        if broken.load(Ordering::Acquire) {
            // The writer reports why; nothing more can be answered.
            break Ok(());
        }
        match read_line(&mut reader, &mut line, max) {
            Ok(Line::Complete) => handle_line(&line, &session, &sink, &pool),
            Ok(Line::TooLong) => {
                log::warn!("discarded a message longer than {} bytes", max);
                sink.send(Message::Response(Response::error(
                    None,
                    ErrorObject::invalid_request(format!(
                        "message too large: the limit is {} bytes",
                        max
                    )),
                )));
            }
            Ok(Line::End) => break Ok(()),
            Err(e) => break Err(Error::from(e)),
        }
    };
    end_of_input(server, &session);
    let workers = pool.join_within(Some(server.inner.config.handler_exit_timeout));
    drop(session);
    drop(sink);
    let _ = stop.send(ToWriter::Stop);
    drop(stop);
    let written = match writer_thread.join() {
        Ok(written) => written.map_err(Error::from),
        Err(_) => Err(Error::new(ErrorKind::ThreadPanicked(
            "tiny-mcp-stdio-writer".into(),
        ))),
    };
    outcome.and(written).and(workers)
}

/// End of input: handlers get a grace period to answer (a client that pipes a
/// few lines in and closes stdin still reads stdout); then the session
/// closes: the rest are cancelled (flag set, calls to the client failed,
/// no answer).
fn end_of_input(server: &Server, session: &Session) {
    let grace = server.inner.config.end_of_input_grace;
    let running = session.in_flight_count();
    if running == 0 {
        log::info!("stdin closed");
    } else {
        log::info!(
            "stdin closed; waiting up to {:?} for {} running request(s) to answer",
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
    session.close("the client closed the connection", Closing::ClientLeft);
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
