//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! The calling thread owns stdin and reads one line at a time; one writer
//! thread owns stdout and writes whole lines; handlers run on workers
//! (DESIGN.md, "threads"). Spec: basic/transports "stdio" (2025-11-25),
//! STDIO-1 to STDIO-3.

use std::io::{self, BufRead, Write};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::Receiver;

use super::pool::WorkerPool;
use super::{ChannelSink, Sink};
use crate::jsonrpc::{ErrorObject, Message, Response};
use crate::session::Session;
use crate::{Error, Server};

/// How many messages may wait for the writer before senders block.
const WRITE_QUEUE: usize = 4096;

impl Server {
    /// Serves MCP on stdin and stdout until stdin closes.
    ///
    /// Reads newline-delimited JSON-RPC messages on the calling thread.
    /// A line longer than [`max_message_bytes`](crate::ServerBuilder::max_message_bytes)
    /// is discarded up to its newline and answered with `-32600`; invalid
    /// UTF-8 or JSON on a line is answered with `-32700`; serving goes on
    /// in both cases. At end of input, running handlers get a grace period
    /// ([`end_of_input_grace`](crate::ServerBuilder::end_of_input_grace),
    /// 1 s by default) to finish and answer; those still running are then
    /// cancelled (flag set, calls to the client failed, no answer written)
    /// and joined, queued output is written, and the call returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if reading stdin fails, or
    /// if the writer thread cannot be started.
    pub fn serve_stdio(&self) -> Result<(), Error> {
        let stdin = io::stdin();
        let reader = stdin.lock();
        self.serve_io(reader, io::stdout())
    }

    /// Serves MCP on any reader and writer, as [`serve_stdio`](Self::serve_stdio)
    /// does on stdin and stdout.
    ///
    /// # Errors
    ///
    /// As [`serve_stdio`](Self::serve_stdio).
    pub fn serve_io<R, W>(&self, mut reader: R, writer: W) -> Result<(), Error>
    where
        R: BufRead,
        W: Write + Send + 'static,
    {
        let (sender, receiver) = crossbeam_channel::bounded(WRITE_QUEUE);
        let writer_thread = thread::Builder::new()
            .name("tiny-mcp-stdio-writer".into())
            .spawn(move || write_loop(receiver, writer))?;
        let sink: Arc<dyn Sink> = Arc::new(ChannelSink(sender));
        let session = Session::new(&self.inner, None, Some(Arc::clone(&sink)));
        let pool = WorkerPool::new("tiny-mcp-worker", self.inner.config.max_workers);
        let max = self.inner.config.max_line_bytes;
        let mut line = Vec::with_capacity(4096);
        let outcome = loop {
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
        log::info!(
            "stdin closed; cancelling {} running request(s)",
            session.in_flight.len()
        );
        // Handlers get a grace period to answer (a client that pipes a few
        // lines in and closes stdin still reads stdout); then the rest are
        // cancelled: flag set, calls to the client failed, no answer.
        let grace = self.inner.config.end_of_input_grace;
        if !session.in_flight.wait_empty(grace) {
            log::info!(
                "cancelling {} request(s) still running",
                session.in_flight.len()
            );
        }
        session.cancel_all("the client closed the connection");
        pool.join();
        drop(session);
        drop(sink);
        if writer_thread.join().is_err() {
            log::error!("the stdio writer thread panicked");
        }
        outcome
    }
}

fn handle_line(line: &[u8], session: &Arc<Session>, sink: &Arc<dyn Sink>, pool: &WorkerPool) {
    let trimmed = trim(line);
    if trimmed.is_empty() {
        return;
    }
    match Message::parse(trimmed) {
        Ok(message) => {
            if let Some(job) = session.receive(message, sink) {
                pool.execute(move || job.run());
            }
        }
        Err(e) => {
            log::warn!("bad message from the client: {}", e.error);
            if let Some(response) = e.response() {
                sink.send(Message::Response(response));
            }
        }
    }
}

fn trim(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., last] = line {
        if last.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    while let [first, rest @ ..] = line {
        if first.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    line
}

/// Writes each message as one line; flushes when the queue runs dry.
fn write_loop<W: Write>(receiver: Receiver<Message>, writer: W) {
    let mut out = io::BufWriter::with_capacity(64 * 1024, writer);
    let mut broken = false;
    for message in receiver.iter() {
        if broken {
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
            broken = true;
        }
    }
    let _ = out.flush();
}

enum Line {
    Complete,
    TooLong,
    End,
}

/// Reads up to the next `\n` into `buf` (without it), keeping at most
/// `max` bytes; a longer line is consumed and reported as `TooLong`.
fn read_line<R: BufRead>(reader: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::End
            } else {
                Line::Complete
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let used = newline.map_or(available.len(), |i| i + 1);
        reader.consume(used);
        if newline.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, &'static str>> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut buf, max).unwrap() {
                Line::Complete => out.push(Ok(buf.clone())),
                Line::TooLong => out.push(Err("too long")),
                Line::End => return out,
            }
        }
    }

    // STDIO-1: lines are split on \n; an over-long line is skipped whole.
    #[test]
    fn capped_lines() {
        let got = lines(b"ab\n0123456789\ncd\nlast", 5);
        assert_eq!(
            got,
            vec![
                Ok(b"ab".to_vec()),
                Err("too long"),
                Ok(b"cd".to_vec()),
                Ok(b"last".to_vec())
            ]
        );
        assert_eq!(lines(b"0123456789", 5), vec![Err("too long")]);
    }

    #[test]
    fn trims_whitespace_and_cr() {
        assert_eq!(trim(b"  {}\r"), b"{}");
        assert_eq!(trim(b" \t "), b"");
    }
}
