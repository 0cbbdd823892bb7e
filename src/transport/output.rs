//! The output of a stdio connection: whole lines written, one message at a
//! time, by whichever thread has a message (DESIGN.md §4).
//!
//! There is no writer thread to wake: a worker that finishes a request
//! writes its answer itself, under the output's lock, and flushes. The
//! reading thread defers its flushes instead (answers it gives inline,
//! quick tools): it flushes when it has no complete line left to read,
//! just before a read that may block, so that a pipelining client gets its
//! answers in few writes. A message is serialized before the lock is
//! taken; the lock is held only to copy it into the buffer and write.

use std::cell::{Cell, RefCell};
use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::jsonrpc::Message;

/// Buffered bytes before a write goes to the writer anyway.
const BUFFER_BYTES: usize = 64 * 1024;
/// Deferred bytes (the reader at work) that are flushed anyway: a
/// pipelining client gets its first answers while the reader still works,
/// in writes no more frequent than a hand-written server's (DESIGN.md §7).
const FLUSH_AT: usize = 8 * 1024;

thread_local! {
    /// Set on a connection's reading thread while it reads: its messages
    /// wait for its next flush.
    static DEFERS: Cell<bool> = const { Cell::new(false) };
    /// Each thread's scratch buffer for serializing a message.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The writer, and what went wrong with it.
pub(crate) struct Output {
    state: Mutex<State>,
    /// Set at the first failed write: nothing more can be answered.
    broken: Arc<AtomicBool>,
    /// The reading thread is at work (not about to block in a read): it
    /// flushes before its next read that may block, so the messages of
    /// other threads may wait for that flush too.
    reading: AtomicBool,
    /// Signalled (under `idle_lock`) when `reading` is cleared. A lock of
    /// its own, never held across a write: a close waiting for the reading
    /// thread is not held up by a stalled stdout.
    idle_lock: Mutex<()>,
    idled: Condvar,
}

struct State {
    out: BufWriter<Box<dyn Write + Send>>,
    /// The first write error, reported when serving ends.
    failed: Option<io::Error>,
}

impl Output {
    pub(crate) fn new(writer: impl Write + Send + 'static) -> Output {
        let writer: Box<dyn Write + Send> = Box::new(writer);
        Output {
            state: Mutex::new(State {
                out: BufWriter::with_capacity(BUFFER_BYTES, writer),
                failed: None,
            }),
            broken: Arc::new(AtomicBool::new(false)),
            reading: AtomicBool::new(false),
            idle_lock: Mutex::new(()),
            idled: Condvar::new(),
        }
    }

    /// The reading thread got input and works on it: messages wait for its
    /// flush ([`idle`](Self::idle)).
    pub(crate) fn busy(&self) {
        self.reading.store(true, Ordering::SeqCst);
    }

    /// Waits, at most `timeout`, while the reading thread works on a line
    /// it read (from `busy` to the next `idle`); `false` if it still does.
    pub(crate) fn wait_not_busy(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut idle = self.idle_lock.lock();
        while self.reading.load(Ordering::SeqCst) {
            if self.idled.wait_until(&mut idle, deadline).timed_out() {
                return !self.reading.load(Ordering::SeqCst);
            }
        }
        true
    }

    /// The reading thread is about to wait for input: everything buffered
    /// goes out now, and from now on each message at once. (Cleared
    /// before the flush: a message added meanwhile is either in this
    /// flush or flushed by its sender.)
    pub(crate) fn idle(&self) {
        {
            // Under the lock a waiter checks `reading` with.
            let _idle = self.idle_lock.lock();
            self.reading.store(false, Ordering::SeqCst);
            self.idled.notify_all();
        }
        self.flush();
    }

    /// `true` once a write failed.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// Writes `message` as one line, and flushes unless the calling thread
    /// is a reading thread that defers. `false` once the output is broken.
    pub(crate) fn send(&self, message: &Message) -> bool {
        self.send_with(|line| message.write_to(line))
    }

    /// Writes the line that `write` puts in a buffer (its newline added),
    /// as [`send`](Self::send) does.
    pub(crate) fn send_with(&self, write: impl Fn(&mut Vec<u8>) -> io::Result<()>) -> bool {
        SCRATCH.with(|scratch| {
            let mut line = match scratch.try_borrow_mut() {
                Ok(line) => line,
                // Re-entered (cannot happen: serializing calls no sink).
                Err(_) => return self.write_line(&line_of(&write)),
            };
            line.clear();
            // Writing to a Vec cannot fail.
            let _ = write(&mut line);
            line.push(b'\n');
            let sent = self.write_line(&line);
            if line.capacity() > BUFFER_BYTES {
                // A large message: do not keep its buffer for the thread.
                *line = Vec::new();
            }
            sent
        })
    }

    /// Writes `line`, and flushes unless the reading thread will: it is
    /// the caller, or it is at work ([`busy`](Self::busy)).
    fn write_line(&self, line: &[u8]) -> bool {
        let mut state = self.state.lock();
        if state.failed.is_some() {
            return false;
        }
        let out = &mut state.out;
        let reading = &self.reading;
        let written = guarded(|| {
            out.write_all(line)?;
            // Read after the line is in the buffer (see `idle`).
            let deferred = DEFERS.with(Cell::get) || reading.load(Ordering::SeqCst);
            if !deferred || out.buffer().len() >= FLUSH_AT {
                out.flush()?;
            }
            Ok(())
        });
        match written {
            Ok(()) => true,
            Err(e) => {
                log::warn!("cannot write to stdout: {}; dropping further output", e);
                self.broken.store(true, Ordering::Release);
                state.failed = Some(e);
                false
            }
        }
    }

    /// Writes what is buffered.
    pub(crate) fn flush(&self) {
        let mut state = self.state.lock();
        if state.failed.is_none() {
            let out = &mut state.out;
            if let Err(e) = guarded(|| out.flush()) {
                log::warn!("cannot write to stdout: {}; dropping further output", e);
                self.broken.store(true, Ordering::Release);
                state.failed = Some(e);
            }
        }
    }

    /// Flushes, and says how writing went: the first error, if any.
    pub(crate) fn finish(&self) -> io::Result<()> {
        self.flush();
        match self.state.lock().failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Runs a write; a writer that panics (a program's `serve_io` writer) is
/// a failed write, not a panic of the thread that wrote, which may be the
/// program's own (`serve_io` reads on it).
fn guarded(write: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(write))
        .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::Other, "the writer panicked")))
}

fn line_of(write: impl Fn(&mut Vec<u8>) -> io::Result<()>) -> Vec<u8> {
    let mut line = Vec::with_capacity(256);
    let _ = write(&mut line);
    line.push(b'\n');
    line
}

/// Marks the calling thread as the reading thread of `output` for as long
/// as the guard lives: its messages are flushed by [`Output::idle`], not
/// at once. When it goes (reading stopped), `output` is idle again.
pub(crate) struct Deferring<'a>(&'a Output);

impl Deferring<'_> {
    pub(crate) fn start(output: &Output) -> Deferring<'_> {
        DEFERS.with(|d| d.set(true));
        Deferring(output)
    }
}

impl Drop for Deferring<'_> {
    fn drop(&mut self) {
        DEFERS.with(|d| d.set(false));
        self.0.idle();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A writer shared with the test (the stdio transport's tests too).
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    // STDIO-2: one message per line; a reading thread's messages wait for
    // its flush, any other thread's go out at once.
    #[test]
    fn lines_go_out_whole_and_readers_defer() {
        let written = Shared::default();
        let output = Output::new(written.clone());
        let ping = Message::notification("ping", None);
        assert!(output.send(&ping));
        let one = written.0.lock().len();
        assert!(one > 0, "a worker's message waited");
        let deferring = Deferring::start(&output);
        assert!(output.send(&ping));
        assert_eq!(
            written.0.lock().len(),
            one,
            "a reader's message went out at once"
        );
        output.idle();
        assert_eq!(written.0.lock().len(), 2 * one);
        // While the reader is at work, other threads' messages wait too.
        output.busy();
        std::thread::scope(|s| {
            s.spawn(|| assert!(output.send(&ping)));
        });
        assert_eq!(
            written.0.lock().len(),
            2 * one,
            "a worker's message went out"
        );
        drop(deferring);
        assert_eq!(
            written.0.lock().len(),
            3 * one,
            "the reader's end did not flush"
        );
        let text = String::from_utf8(written.0.lock().clone()).unwrap();
        assert!(
            text.lines()
                .all(|l| l == r#"{"jsonrpc":"2.0","method":"ping"}"#),
            "{}",
            text
        );
        assert!(output.finish().is_ok());
    }

    // A reader at work defers its answers only until FLUSH_AT bytes wait:
    // then they go out, and the next ones wait again.
    #[test]
    fn deferred_answers_go_out_once_flush_at_bytes_wait() {
        let written = Shared::default();
        let output = Output::new(written.clone());
        let _deferring = Deferring::start(&output);
        output.busy();
        let ping = Message::notification("ping", None);
        let line = ping.to_json_string().len() + 1;
        let before_flush = (FLUSH_AT + line - 1) / line - 1;
        for _ in 0..before_flush {
            assert!(output.send(&ping));
        }
        assert_eq!(
            written.0.lock().len(),
            0,
            "went out before FLUSH_AT bytes waited"
        );
        assert!(output.send(&ping));
        assert_eq!(written.0.lock().len(), (before_flush + 1) * line);
        assert!(output.send(&ping));
        assert_eq!(written.0.lock().len(), (before_flush + 1) * line);
    }

    /// A writer that fails.
    struct Failing;

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::BrokenPipe, "gone"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::new(io::ErrorKind::BrokenPipe, "gone"))
        }
    }

    // A failed write breaks the output once; the error is reported at the end.
    #[test]
    fn a_failed_write_breaks_the_output() {
        let output = Output::new(Failing);
        assert!(!output.send(&Message::notification("ping", None)));
        assert!(output.is_broken());
        assert!(!output.send(&Message::notification("ping", None)));
        assert_eq!(
            output.finish().unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
    }
}
