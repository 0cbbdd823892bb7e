//! Cancellation flags and the table of in-flight requests.
//!
//! The table decides who writes last (DESIGN.md §3):
//! finishing a request and cancelling it both remove its entry under the
//! table's lock, and only the one that removed it acts. So a response is
//! never written after a cancel won, and a late or repeated cancel is a
//! silent no-op (CAN-1, CAN-2, CAN-3).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::sink::Sink;
use crate::jsonrpc::RequestId;

/// A flag that says a request was cancelled; cheap to clone and to poll,
/// and a wait that it ends ([`wait_timeout`](Self::wait_timeout)).
///
/// Set by `notifications/cancelled`, the client closing its HTTP request,
/// `tasks/cancel`, end of input, HTTP session `DELETE` and server
/// shutdown. Handlers poll it through
/// [`RequestContext::is_cancelled`](crate::RequestContext::is_cancelled)
/// and wait on it through
/// [`RequestContext::sleep`](crate::RequestContext::sleep).
#[derive(Clone, Default)]
pub struct CancellationFlag(Arc<FlagInner>);

#[derive(Default)]
struct FlagInner {
    cancelled: AtomicBool,
    /// The reason; the waiters of `set` hold this lock while they check
    /// `cancelled`, so that the cancel's signal cannot fall between their
    /// check and their wait.
    reason: Mutex<Option<String>>,
    /// Signalled once, when the flag is set.
    set: Condvar,
}

impl CancellationFlag {
    /// A flag that is not set.
    pub fn new() -> CancellationFlag {
        CancellationFlag::default()
    }

    /// Sets the flag; the first reason given is kept. Wakes the threads
    /// blocked in [`wait_timeout`](Self::wait_timeout).
    pub fn cancel(&self, reason: Option<String>) {
        // The reason is written under the lock before the flag is set, so
        // whoever sees the flag finds the reason (the first cancel's).
        let mut slot = self.0.reason.lock();
        if !self.0.cancelled.load(Ordering::Acquire) {
            *slot = reason;
            self.0.cancelled.store(true, Ordering::Release);
            self.0.set.notify_all();
        }
    }

    /// `true` once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// Blocks until the flag is set or `timeout` passes, whichever comes
    /// first; returns [`is_cancelled`](Self::is_cancelled). A set flag
    /// wakes the wait at once (no polling); an already set one returns at
    /// once. A `timeout` too large for the clock waits for the cancel only.
    ///
    /// On a target without threads (`wasm32-wasip1`) nothing can set the
    /// flag during the wait: it sleeps for `timeout`.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        if crate::server::waiting::NO_THREADS {
            // parking_lot cannot park there; std's sleep can.
            if !self.is_cancelled() {
                std::thread::sleep(timeout);
            }
            return self.is_cancelled();
        }
        let deadline = Instant::now().checked_add(timeout);
        let mut slot = self.0.reason.lock();
        while !self.is_cancelled() {
            match deadline {
                Some(deadline) => {
                    if self.0.set.wait_until(&mut slot, deadline).timed_out() {
                        break;
                    }
                }
                None => self.0.set.wait(&mut slot),
            }
        }
        self.is_cancelled()
    }

    /// The reason given with the cancel, if any.
    pub fn reason(&self) -> Option<String> {
        self.0.reason.lock().clone()
    }
}

impl std::fmt::Debug for CancellationFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancellationFlag")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// One request that is being handled.
pub(crate) struct InFlight {
    pub(crate) flag: CancellationFlag,
    /// Ids of our requests to the client that this request waits on.
    pub(crate) nested: Vec<RequestId>,
    /// Where messages related to this request go.
    pub(crate) sink: Arc<dyn Sink>,
}

/// Why a request could not be entered in the table.
#[derive(Debug, PartialEq)]
pub(crate) enum BeginError {
    /// A request with this id is still running (BASE-2).
    Duplicate,
    /// The table is at its limit.
    Full,
}

/// The in-flight requests of one session, keyed by request id.
pub(crate) struct InFlightTable {
    map: Mutex<HashMap<RequestId, InFlight>>,
    /// Signalled when the table becomes empty.
    emptied: Condvar,
    limit: usize,
}

impl InFlightTable {
    pub(crate) fn new(limit: usize) -> InFlightTable {
        InFlightTable {
            map: Mutex::new(HashMap::new()),
            emptied: Condvar::new(),
            limit,
        }
    }

    /// Enters a request; returns its cancellation flag.
    pub(crate) fn begin(
        &self,
        id: &RequestId,
        sink: Arc<dyn Sink>,
    ) -> Result<CancellationFlag, BeginError> {
        let mut map = self.map.lock();
        if map.contains_key(id) {
            return Err(BeginError::Duplicate);
        }
        if map.len() >= self.limit {
            return Err(BeginError::Full);
        }
        let flag = CancellationFlag::new();
        map.insert(
            id.clone(),
            InFlight {
                flag: flag.clone(),
                nested: Vec::new(),
                sink,
            },
        );
        Ok(flag)
    }

    /// Takes the entry to write its response; `None` if a cancel won.
    pub(crate) fn finish(&self, id: &RequestId) -> Option<InFlight> {
        self.take(id)
    }

    /// Removes an entry, signalling when the table becomes empty.
    fn take(&self, id: &RequestId) -> Option<InFlight> {
        let mut map = self.map.lock();
        let entry = map.remove(id);
        if map.is_empty() {
            self.emptied.notify_all();
        }
        entry
    }

    /// Waits until no request is in flight, at most `timeout`; `true` if
    /// the table emptied.
    pub(crate) fn wait_empty(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut map = self.map.lock();
        while !map.is_empty() {
            if self.emptied.wait_until(&mut map, deadline).timed_out() {
                return map.is_empty();
            }
        }
        true
    }

    /// Takes the entry and sets its flag; `None` for unknown or finished ids.
    pub(crate) fn cancel(&self, id: &RequestId, reason: Option<String>) -> Option<InFlight> {
        let entry = self.take(id)?;
        entry.flag.cancel(reason);
        Some(entry)
    }

    /// Takes and cancels every entry (end of input, shutdown) but `spare`
    /// (the request whose handler is ending the server, which still
    /// answers).
    pub(crate) fn cancel_all_but(&self, reason: &str, spare: Option<&RequestId>) -> Vec<InFlight> {
        let (ids, entries): (Vec<RequestId>, Vec<InFlight>) = {
            let mut map = self.map.lock();
            let ids: Vec<RequestId> = map
                .keys()
                .filter(|id| Some(*id) != spare)
                .cloned()
                .collect();
            let entries = ids.iter().filter_map(|id| map.remove(id)).collect();
            (ids, entries)
        };
        if !ids.is_empty() {
            // Which requests were still running, so that a handler that
            // ignores its cancellation can be found in the log.
            let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
            log::info!("cancelling request(s) {} ({})", ids.join(", "), reason);
        }
        for entry in &entries {
            entry.flag.cancel(Some(reason.to_string()));
        }
        entries
    }

    /// Records that request `id` waits on our request `nested`; `false` if
    /// `id` is no longer in flight (it was cancelled).
    pub(crate) fn add_nested(&self, id: &RequestId, nested: RequestId) -> bool {
        match self.map.lock().get_mut(id) {
            Some(entry) => {
                entry.nested.push(nested);
                true
            }
            None => false,
        }
    }

    /// Forgets a nested request that got its answer.
    pub(crate) fn remove_nested(&self, id: &RequestId, nested: &RequestId) {
        if let Some(entry) = self.map.lock().get_mut(id) {
            entry.nested.retain(|n| n != nested);
        }
    }

    /// `true` while request `id` is in flight.
    pub(crate) fn contains(&self, id: &RequestId) -> bool {
        self.map.lock().contains_key(id)
    }

    /// How many requests are in flight.
    pub(crate) fn len(&self) -> usize {
        self.map.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Message;

    struct NullSink;
    impl Sink for NullSink {
        fn send(&self, _: Message) -> bool {
            true
        }
    }

    fn sink() -> Arc<dyn Sink> {
        Arc::new(NullSink)
    }

    // CAN-3: whichever of response and cancel comes first wins.
    #[test]
    fn response_and_cancel_race_has_one_winner() {
        let table = InFlightTable::new(8);
        let id = RequestId::Number(1);
        let flag = table.begin(&id, sink()).unwrap();
        assert!(table.cancel(&id, Some("user".into())).is_some());
        assert!(flag.is_cancelled());
        assert_eq!(flag.reason().as_deref(), Some("user"));
        assert!(table.finish(&id).is_none(), "the response must lose");

        let id = RequestId::Number(2);
        let flag = table.begin(&id, sink()).unwrap();
        assert!(table.finish(&id).is_some());
        assert!(
            table.cancel(&id, None).is_none(),
            "a late cancel is ignored"
        );
        assert!(!flag.is_cancelled());
    }

    // CAN-1: a wait on the flag ends when the flag is set from another
    // thread, not when its time passes; an unset flag's wait times out.
    #[test]
    fn a_cancel_wakes_the_waiters() {
        let flag = CancellationFlag::new();
        assert!(!flag.wait_timeout(Duration::from_millis(1)));
        let waiter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                let start = Instant::now();
                (flag.wait_timeout(Duration::from_secs(60)), start.elapsed())
            })
        };
        flag.cancel(Some("stop".into()));
        let (cancelled, waited) = waiter.join().expect("the waiter panicked");
        assert!(cancelled);
        assert!(waited < Duration::from_secs(30), "woken after {:?}", waited);
        assert!(flag.wait_timeout(Duration::from_secs(60)), "set stays set");
        assert_eq!(flag.reason().as_deref(), Some("stop"));
    }

    // BASE-2: an id still in flight cannot be reused.
    #[test]
    fn duplicate_and_full() {
        let table = InFlightTable::new(1);
        table.begin(&RequestId::Number(1), sink()).unwrap();
        assert_eq!(
            table.begin(&RequestId::Number(1), sink()).unwrap_err(),
            BeginError::Duplicate
        );
        assert_eq!(
            table.begin(&RequestId::Number(2), sink()).unwrap_err(),
            BeginError::Full
        );
    }

    #[test]
    fn nested_ids_follow_their_parent() {
        let table = InFlightTable::new(8);
        let id = RequestId::from("a");
        table.begin(&id, sink()).unwrap();
        assert!(table.add_nested(&id, RequestId::Number(10)));
        let entry = table.cancel(&id, None).unwrap();
        assert_eq!(entry.nested, vec![RequestId::Number(10)]);
        assert!(!table.add_nested(&id, RequestId::Number(11)));
    }
}
