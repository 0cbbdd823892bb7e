//! The context's cancellation methods: the flag, read or waited on. A
//! wait ends at once when the request is cancelled, by whatever sets its
//! [`CancellationFlag`].

use std::time::{Duration, Instant};

use super::RequestContext;
use crate::error::Error;
use crate::server::cancel::CancellationFlag;

/// How often [`RequestContext::wait_for`] asks its condition.
const CONDITION_EVERY: Duration = Duration::from_millis(10);

impl RequestContext {
    /// `true` once the request was cancelled. Poll it in long loops, or
    /// wait with [`sleep`](Self::sleep) and [`wait_for`](Self::wait_for),
    /// which a cancel ends at once.
    pub fn is_cancelled(&self) -> bool {
        self.flag.is_cancelled()
    }

    /// `Err(Cancelled)` once the request was cancelled; use with `?`, and
    /// right before anything that cannot be undone.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) with the
    /// canceller's reason.
    pub fn check_cancelled(&self) -> Result<(), Error> {
        if self.flag.is_cancelled() {
            Err(Error::cancelled(self.flag.reason()))
        } else {
            Ok(())
        }
    }

    /// Sleeps for `duration`, unless the request is cancelled first: then
    /// it returns at once, woken by the cancel (not by polling). Use it
    /// instead of `std::thread::sleep`, which a cancel cannot end, for a
    /// pause between the steps of a long job or before a retry.
    ///
    /// Whatever cancels the request ends the sleep: `notifications/cancelled`
    /// (2025-11-25), the client closing the request's HTTP response stream
    /// (2026-07-28), `tasks/cancel`, the session's end, the server's
    /// shutdown. A `duration` of zero only checks the flag.
    ///
    /// Served single-threaded (WASI, or
    /// [`max_workers(0)`](crate::ServerBuilder::max_workers); DESIGN.md
    /// §31), nothing reads the input while the handler sleeps: a
    /// `notifications/cancelled` sent meanwhile is read after the
    /// handler returns, and the sleep lasts its `duration`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) with the
    /// canceller's reason, as [`check_cancelled`](Self::check_cancelled)
    /// returns it, when the request is or becomes cancelled before
    /// `duration` has passed.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
    ///
    /// let server = Server::builder("poller", "1")
    ///     .tool(Tool::without_arguments("wait_for_job"),
    ///         |ctx: &RequestContext, _: JsonObject| {
    ///             for _attempt in 0..30 {
    ///                 // Ask the job's service here; if it is not done yet:
    ///                 ctx.sleep(Duration::from_secs(2))?; // a cancel ends it
    ///             }
    ///             Ok(CallToolResult::error("the job is still running"))
    ///         })
    ///     .build();
    /// # drop(server);
    /// ```
    ///
    /// Spec: basic/utilities/cancellation (2025-11-25).
    pub fn sleep(&self, duration: Duration) -> Result<(), Error> {
        if self.flag.wait_timeout(duration) {
            Err(Error::cancelled(self.flag.reason()))
        } else {
            Ok(())
        }
    }

    /// Waits until `ready` returns `true`, at most `timeout`, unless the
    /// request is cancelled first. `Ok(true)`: `ready` said so;
    /// `Ok(false)`: `timeout` passed first.
    ///
    /// `ready` runs on the handler's thread: first at once, then every
    /// 10 ms, and a last time when `timeout` passes; keep it cheap (load an
    /// atomic, `try_recv` a channel). A cancel does not wait for the next
    /// 10 ms: it wakes the wait at once, as for [`sleep`](Self::sleep).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) with the
    /// canceller's reason when the request is or becomes cancelled before
    /// `ready` returns `true` (the flag is checked before each call of
    /// `ready`).
    ///
    /// Spec: basic/utilities/cancellation (2025-11-25).
    pub fn wait_for(
        &self,
        timeout: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> Result<bool, Error> {
        // `None`: too far for the clock, so no end but the condition's
        // or a cancel's.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            self.check_cancelled()?;
            if ready() {
                return Ok(true);
            }
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => CONDITION_EVERY,
            };
            if left == Duration::from_secs(0) {
                return Ok(false);
            }
            self.flag.wait_timeout(left.min(CONDITION_EVERY));
        }
    }

    /// A clone of this request's cancellation flag, to hand to other
    /// threads (they can poll it or wait on it,
    /// [`CancellationFlag::wait_timeout`]).
    pub fn cancellation_flag(&self) -> CancellationFlag {
        self.flag.clone()
    }
}
