//! How a handler waits for what only its client can send: the answer to
//! a request it sent (2025-11-25 `elicitation/create`, `sampling/createMessage`,
//! `roots/list`), or a task's `tasks/update` (2026-07-28).
//!
//! With threads, another thread reads the connection and hands the answer
//! over (a channel, a condition variable). Single-threaded serving
//! (DESIGN.md §31: a target without threads, such as `wasm32-wasip1`, or
//! [`max_workers(0)`](crate::ServerBuilder::max_workers)) runs the handler
//! on the thread that reads, so that thread reads on while it waits: the
//! transport registers an [`InputPump`] for the time it serves, and the
//! waits here pump it, one message at a time, until the answer is in.
//! What the pump reads is dispatched at once when it answers inline (an
//! answer to us, a cancel, `ping`, `tasks/update`); a request that runs a
//! handler is queued until the running one returns.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

/// `true` on targets whose programs cannot start threads (WebAssembly
/// without the `atomics` feature: `wasm32-wasip1`, `wasm32-wasip2`,
/// `wasm32-unknown-unknown`). There every connection is served
/// single-threaded, and HTTP serving reports an error.
pub(crate) const NO_THREADS: bool =
    cfg!(all(target_family = "wasm", not(target_feature = "atomics")));

/// A connection's input, read one message at a time by a handler's wait
/// on the thread that serves it.
pub(crate) trait InputPump {
    /// Reads and dispatches the next message. `false` when nothing more
    /// can be read: the input ended or failed, the output broke, the
    /// server closed.
    fn pump(&self) -> bool;

    /// `false` when this input cannot be read during a handler at all.
    fn readable(&self) -> bool {
        true
    }
}

thread_local! {
    /// The pump of the connection this thread serves single-threaded.
    static PUMP: RefCell<Option<Rc<dyn InputPump>>> = RefCell::new(None);
}

/// Keeps a pump registered on this thread; dropping it restores what was
/// there before (none, unless a handler serves a connection of its own).
pub(crate) struct Pumping {
    previous: Option<Rc<dyn InputPump>>,
}

impl Pumping {
    /// Registers `pump` on this thread until the guard drops.
    pub(crate) fn start(pump: Rc<dyn InputPump>) -> Pumping {
        let previous = PUMP.with(|slot| slot.borrow_mut().replace(pump));
        Pumping { previous }
    }
}

impl Drop for Pumping {
    fn drop(&mut self) {
        let previous = self.previous.take();
        PUMP.with(|slot| *slot.borrow_mut() = previous);
    }
}

/// `true` when this thread serves a connection single-threaded: its
/// waits must pump the input ([`pump_input`]).
#[cfg(feature = "tasks")]
pub(crate) fn pumps_here() -> bool {
    PUMP.with(|slot| slot.borrow().is_some())
}

/// `Err` when this thread serves single-threaded an input it cannot read
/// during a handler (`serve_io`): a request to the client could never be
/// answered, so it is not sent.
///
/// # Errors
///
/// [`ErrorKind::Message`](crate::ErrorKind::Message) naming `method`.
pub(crate) fn check_answerable(method: &str) -> Result<(), crate::Error> {
    let readable = PUMP.with(|slot| slot.borrow().as_ref().map_or(true, |pump| pump.readable()));
    if readable {
        return Ok(());
    }
    Err(crate::Error::msg(format!(
        "{} cannot be answered: this connection is served single-threaded by serve_io, \
         whose input cannot be read during a handler; serve with serve_stdio",
        method
    )))
}

/// Reads one more message of the connection this thread serves
/// single-threaded: `None` when the thread serves none (others read),
/// `Some(false)` when nothing more can be read.
pub(crate) fn pump_input() -> Option<bool> {
    // Cloned out first: the pump may run code that registers another.
    let pump = PUMP.with(|slot| slot.borrow().clone());
    pump.map(|pump| pump.pump())
}

/// Waits at most `timeout` for a value on `receiver`: on the channel, or
/// by pumping this thread's input when it serves single-threaded (then
/// the time is checked between messages: a read that blocks is not cut).
///
/// # Errors
///
/// `Timeout`; `Disconnected` when the sender went or the input ended.
pub(crate) fn await_answer<T>(
    receiver: &Receiver<T>,
    timeout: Duration,
) -> Result<T, RecvTimeoutError> {
    let deadline = Instant::now().checked_add(timeout);
    loop {
        match receiver.try_recv() {
            Ok(value) => return Ok(value),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        if deadline.map_or(false, |deadline| Instant::now() >= deadline) {
            return Err(RecvTimeoutError::Timeout);
        }
        match pump_input() {
            None => return receiver.recv_timeout(timeout),
            Some(true) => {}
            Some(false) => {
                // Answered by the last message, or never.
                return receiver
                    .try_recv()
                    .map_err(|_| RecvTimeoutError::Disconnected);
            }
        }
    }
}
