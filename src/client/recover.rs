//! A 2025-11-25 HTTP session that the server forgot (a restart, an idle
//! timeout, another instance behind a load balancer) is replaced: a new
//! `initialize`, then the request that met the `404` once more when that
//! is safe (2025-11-25 transports, "Session Management": "The client MUST
//! start a new session by sending a new InitializeRequest without a session
//! ID attached").
//!
//! What the old session held that the client knows of comes along: the
//! log level set with `logging/setLevel` and the resources subscribed to.
//! GET streams wait on [`SessionEpoch`] and reopen on the new session.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::link::Wait;
use super::options::{CallOptions, CancelToken};
use super::Client;
use crate::error::{Error, ErrorKind};
use crate::protocol::methods;

/// Counts the sessions this client has had, so that a thread can wait for
/// the next one (a GET stream whose session ended).
#[derive(Debug, Default)]
pub(crate) struct SessionEpoch {
    count: Mutex<u64>,
    changed: Condvar,
}

impl SessionEpoch {
    /// The current session's number.
    pub(crate) fn current(&self) -> u64 {
        *self.count.lock()
    }

    /// A new session was made: wakes every waiter.
    fn advance(&self) {
        *self.count.lock() += 1;
        self.changed.notify_all();
    }

    /// Wakes every waiter without a new session (a cancelled stream).
    pub(crate) fn wake(&self) {
        let _guard = self.count.lock();
        self.changed.notify_all();
    }

    /// Waits until the session number is past `seen`, or `timeout`
    /// passes, or [`wake`](Self::wake), or `cancel` fires (checked under
    /// the lock that `wake` takes, so a cancel just before the wait is
    /// not missed); `true` when it is past `seen`.
    pub(crate) fn wait_past(&self, seen: u64, timeout: Duration, cancel: &CancelToken) -> bool {
        let mut count = self.count.lock();
        if *count == seen && !cancel.is_cancelled() {
            let _ = self.changed.wait_for(&mut count, timeout);
        }
        *count != seen
    }
}

/// What a session held that a new one must be told again.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// URIs subscribed to with `resources/subscribe` and not unsubscribed.
    pub(crate) subscriptions: Mutex<BTreeSet<String>>,
    /// The server ended the session and the new `initialize` failed: the
    /// next request tries again before it is sent, rather than going out
    /// with no session at all.
    pub(crate) lost: AtomicBool,
}

/// Whether `method` may be sent again on a new session without asking the
/// program: requests that only read (lists, reads, `ping`, `prompts/get`,
/// completions) and those that set what a session holds (the log level,
/// subscriptions) may; `tools/call` may unless the program opted out
/// ([`CallOptions::retry_on_new_session`]). The tasks methods name tasks
/// of the old session, which the new one does not know, and a method this
/// client does not know is not guessed at: they get
/// [`ErrorKind::SessionExpired`] (after the new session is made).
pub(crate) fn may_retry(method: &str, options: &CallOptions) -> bool {
    match method {
        methods::TOOLS_CALL => !options.no_retry_on_new_session,
        methods::PING
        | methods::TOOLS_LIST
        | methods::RESOURCES_LIST
        | methods::RESOURCES_TEMPLATES_LIST
        | methods::RESOURCES_READ
        | methods::RESOURCES_SUBSCRIBE
        | methods::RESOURCES_UNSUBSCRIBE
        | methods::PROMPTS_LIST
        | methods::PROMPTS_GET
        | methods::COMPLETION_COMPLETE
        | methods::LOGGING_SET_LEVEL => true,
        _ => false,
    }
}

impl Client {
    /// A new 2025-11-25 session after the server ended session number
    /// `ended` ([`SessionEpoch::current`] when the request was sent).
    /// Several threads can meet the same `404`: the first makes the new
    /// session, the others find it made and use it.
    pub(crate) fn new_session(&self, ended: u64, wait: &Wait<'_>) -> Result<(), Error> {
        // Within the call's own deadline, the wait for another thread's
        // renewal included.
        let _one_at_a_time = match self.reinitializing.try_lock_for(wait.remaining()) {
            Some(guard) => guard,
            None => return Err(wait.timed_out(methods::INITIALIZE)),
        };
        let http = match &self.http {
            Some(http) => http,
            None => return Err(Error::new(ErrorKind::SessionExpired)),
        };
        if self.epoch.current() != ended {
            return Ok(());
        }
        http.forget_session();
        self.session.lost.store(true, Ordering::SeqCst);
        let negotiated = super::connect::initialize_within(self, wait)?;
        self.session.lost.store(false, Ordering::SeqCst);
        if negotiated.protocol_version != self.server.protocol_version {
            log::warn!(
                "the new session speaks {} where the old one spoke {}",
                negotiated.protocol_version,
                self.server.protocol_version
            );
        }
        log::info!("the server ended the session; a new one was started");
        self.epoch.advance();
        self.restore_session(wait);
        Ok(())
    }

    /// Tells the new session what the old one held, within `wait`. A
    /// failure is logged, not returned: the request that met the `404`
    /// still goes ahead.
    fn restore_session(&self, wait: &Wait<'_>) {
        let level = *self.log_level.lock();
        if let Some(level) = level {
            let params = serde_json::json!({ "level": level });
            if let Err(e) = self.raw_request(methods::LOGGING_SET_LEVEL, params, wait) {
                log::warn!("the new session refused the log level: {}", e);
            }
        }
        let uris: Vec<String> = self.session.subscriptions.lock().iter().cloned().collect();
        for uri in uris {
            let params = serde_json::json!({ "uri": uri });
            if let Err(e) = self.raw_request(methods::RESOURCES_SUBSCRIBE, params, wait) {
                log::warn!("the new session refused the subscription to {}: {}", uri, e);
            }
        }
    }

    /// One request on the link as it is, with no recovery of its own.
    fn raw_request(
        &self,
        method: &str,
        params: serde_json::Value,
        wait: &Wait<'_>,
    ) -> Result<(), Error> {
        let out = super::Outgoing {
            id: self.new_id(),
            method: method.to_string(),
            params,
            name: None,
        };
        self.link.request(&out, wait).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_retried_calls_by_choice_tasks_never() {
        // 2025-11-25 transports "Session Management": only what is safe to
        // repeat is sent again on the new session.
        let plain = CallOptions::new();
        let opted_out = CallOptions::new().retry_on_new_session(false);
        assert!(may_retry(methods::TOOLS_LIST, &plain));
        assert!(may_retry(methods::RESOURCES_READ, &opted_out));
        assert!(may_retry(methods::TOOLS_CALL, &plain));
        assert!(!may_retry(methods::TOOLS_CALL, &opted_out));
        assert!(!may_retry("tasks/result", &plain));
        assert!(!may_retry("vendor/anything", &plain));
    }

    #[test]
    fn a_waiter_sees_the_next_session() {
        let epoch = SessionEpoch::default();
        let seen = epoch.current();
        let token = CancelToken::new();
        assert!(!epoch.wait_past(seen, Duration::from_millis(1), &token));
        epoch.advance();
        assert!(epoch.wait_past(seen, Duration::from_secs(5), &token));
        token.cancel();
        assert!(!epoch.wait_past(seen + 1, Duration::from_secs(60), &token));
    }
}
