//! What a caller can add to one request: a timeout, a cancel token, a
//! progress callback; for a tool call, whether to run it as a task and a
//! callback for the task's status.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::protocol::{ProgressNotificationParams, Task};

type OnCancel = Box<dyn FnOnce() + Send>;

/// Cancels a client request from another thread.
///
/// Clone it, pass one copy in [`CallOptions::cancel_token`], and call
/// [`cancel`](Self::cancel) on another: the call returns
/// [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) at once
/// ([`Error::is_cancelled`](crate::Error::is_cancelled) tells). In
/// 2025-11-25, and in 2026-07-28 on stdio, the client sends
/// `notifications/cancelled` for the request (basic/utilities/cancellation);
/// in 2026-07-28 over HTTP it closes the request's connection, which is how
/// that era cancels (CANCEL-2). A token cancelled before the call starts
/// cancels it before anything is sent. One token may serve several calls.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<TokenInner>,
}

#[derive(Default)]
struct TokenInner {
    cancelled: AtomicBool,
    next: AtomicU64,
    waiters: Mutex<Vec<(u64, OnCancel)>>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels every call that holds this token, now and later.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let waiters = std::mem::take(&mut *self.inner.waiters.lock());
        for (_, wake) in waiters {
            wake();
        }
    }

    /// `true` once [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Runs `wake` when the token is cancelled (at once if it already is),
    /// until the returned guard is dropped.
    pub(crate) fn on_cancel(&self, wake: impl FnOnce() + Send + 'static) -> CancelGuard {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        self.inner.waiters.lock().push((id, Box::new(wake)));
        if self.is_cancelled() {
            let waiters = std::mem::take(&mut *self.inner.waiters.lock());
            for (_, wake) in waiters {
                wake();
            }
        }
        CancelGuard {
            token: Some(self.clone()),
            id,
        }
    }
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Unregisters a wake-up when the call it belongs to ends.
pub(crate) struct CancelGuard {
    token: Option<CancelToken>,
    id: u64,
}

impl CancelGuard {
    /// A guard for a call without a token.
    pub(crate) fn none() -> CancelGuard {
        CancelGuard { token: None, id: 0 }
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(token) = &self.token {
            token.inner.waiters.lock().retain(|(id, _)| *id != self.id);
        }
    }
}

/// A progress callback: called on the thread that reads the server's
/// messages, once per `notifications/progress` of its call.
pub type ProgressFn = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// A task status callback: called on the calling thread each time the
/// task's status or status message changes.
pub(crate) type TaskStatusFn = Arc<dyn Fn(&Task) + Send + Sync>;

/// Settings of one request: [`Client::call_tool_with`](crate::Client::call_tool_with)
/// and [`Client::request_with`](crate::Client::request_with).
///
/// ```
/// use std::time::Duration;
/// use tiny_mcp::{CallOptions, CancelToken};
///
/// let token = CancelToken::new();
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .cancel_token(token.clone())
///     .on_progress(|p| eprintln!("{} of {:?}", p.progress, p.total));
/// # drop(options);
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<CancelToken>,
    pub(crate) progress: Option<ProgressFn>,
    /// Set by `retry_on_new_session(false)`.
    pub(crate) no_retry_on_new_session: bool,
    pub(crate) task: bool,
    pub(crate) task_ttl: Option<Duration>,
    pub(crate) task_status: Option<TaskStatusFn>,
}

impl CallOptions {
    /// No timeout of its own (the client's
    /// [`request_timeout`](crate::ClientBuilder::request_timeout) applies),
    /// no token, no progress callback.
    pub fn new() -> CallOptions {
        CallOptions::default()
    }

    /// How long this call may take, every round of a 2026-07-28
    /// `input_required` exchange included. On expiry the call is
    /// cancelled (as by a [`CancelToken`]) and returns
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout).
    pub fn timeout(mut self, timeout: Duration) -> CallOptions {
        self.timeout = Some(timeout);
        self
    }

    /// Cancels the call when `token` is cancelled.
    pub fn cancel_token(mut self, token: CancelToken) -> CallOptions {
        self.cancel = Some(token);
        self
    }

    /// Whether a `tools/call` that met the end of its 2025-11-25 HTTP
    /// session (`404` on `Mcp-Session-Id`) is sent again on the new
    /// session the client starts. Default: `true`, as for the requests
    /// that only read. Turn it off for a tool whose call must not run
    /// twice: the server may have run it before it forgot the session.
    /// The call then fails with
    /// [`ErrorKind::SessionExpired`](crate::ErrorKind::SessionExpired),
    /// and the next one goes to the new session.
    ///
    /// Spec: basic/transports "Session Management" (2025-11-25).
    pub fn retry_on_new_session(mut self, on: bool) -> CallOptions {
        self.no_retry_on_new_session = !on;
        self
    }

    /// Asks for progress (the client puts a `progressToken` of its own in
    /// the request's `_meta`) and calls `progress` for each
    /// `notifications/progress` the server sends for it
    /// (basic/utilities/progress). It runs on the thread that reads the
    /// server's messages: keep it short.
    pub fn on_progress(
        mut self,
        progress: impl Fn(&ProgressNotificationParams) + Send + Sync + 'static,
    ) -> CallOptions {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Whether a tool call asks to run as a task when the tool allows it
    /// and the server offers tasks. Defaults to `false`: a call is a task
    /// only when the tool requires it, which the client does by itself.
    /// In 2025-11-25 the tool's `execution.taskSupport` must be `optional`
    /// (the client lists the tools once if it has not seen this one); in
    /// 2026-07-28, where tools do not say, the request declares the tasks
    /// extension and the server decides (a tool that never runs as a task
    /// answers plainly). The call waits for the task as it would for a
    /// plain answer (polling `tasks/get` at the server's interval, within
    /// 50 ms and 5 s) and returns its result; the timeout bounds the
    /// whole, and a cancel or a timeout cancels the task (`tasks/cancel`,
    /// whose answer is awaited at most 5 s). Other requests ignore it.
    ///
    /// Spec: basic/utilities/tasks (2025-11-25, `params.task`); SEP-2663
    /// (2026-07-28, the `io.modelcontextprotocol/tasks` extension declared
    /// in the request's capabilities).
    pub fn task(mut self, task: bool) -> CallOptions {
        self.task = task;
        self
    }

    /// How long the server should keep the task of this call once asked
    /// for (`params.task.ttl`, sent in milliseconds; the server may
    /// shorten it). Defaults to none: the server's own. 2025-11-25 only:
    /// the 2026-07-28 extension has no way to ask, and it is not sent.
    ///
    /// Spec: basic/utilities/tasks (2025-11-25) `TaskMetadata`.
    pub fn task_ttl(mut self, ttl: Duration) -> CallOptions {
        self.task_ttl = Some(ttl);
        self
    }

    /// Calls `status` with the task each time its status or status message
    /// changes while a tool call runs as a task: first with the task the
    /// server made (`working`), last with its terminal status. It runs on
    /// the calling thread, between polls: keep it short.
    ///
    /// Spec: basic/utilities/tasks (2025-11-25) "Task Status"; SEP-2663.
    pub fn on_task_status(mut self, status: impl Fn(&Task) + Send + Sync + 'static) -> CallOptions {
        self.task_status = Some(Arc::new(status));
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("cancel", &self.cancel)
            .field("progress", &self.progress.is_some())
            .field("retry_on_new_session", &!self.no_retry_on_new_session)
            .field("task", &self.task)
            .field("task_ttl", &self.task_ttl)
            .field("task_status", &self.task_status.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn cancel_wakes_registered_calls_once_and_late_ones_at_once() {
        let token = CancelToken::new();
        let woken = Arc::new(AtomicUsize::new(0));
        let w = Arc::clone(&woken);
        let _guard = token.on_cancel(move || {
            w.fetch_add(1, Ordering::SeqCst);
        });
        token.cancel();
        token.cancel();
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        let w = Arc::clone(&woken);
        let _late = token.on_cancel(move || {
            w.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(woken.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_dropped_guard_is_not_woken() {
        let token = CancelToken::new();
        let woken = Arc::new(AtomicBool::new(false));
        let w = Arc::clone(&woken);
        drop(token.on_cancel(move || w.store(true, Ordering::SeqCst)));
        token.cancel();
        assert!(!woken.load(Ordering::SeqCst));
    }
}
