//! The answers the verifiers keep (introspection answers, accepted JWTs):
//! keyed by the SHA-256 of the token (never the token), bounded in entries
//! and in time, and never kept past the token's expiry.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;

use crate::server::Principal;
use crate::transport::http::TokenError;

/// An answer: the principal, or the refusal.
pub(crate) type Answer = Result<Principal, TokenError>;

/// At most `capacity` answers, each for `keep_for` at most.
pub(crate) struct AnswerCache {
    capacity: usize,
    keep_for: Duration,
    entries: Mutex<HashMap<[u8; 32], (Instant, Answer)>>,
}

impl AnswerCache {
    pub(crate) fn new(capacity: usize, keep_for: Duration) -> AnswerCache {
        AnswerCache {
            capacity,
            keep_for,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Keeps `answer` for `keep_for`, and not past `expires` (the token's
    /// expiry, when known).
    pub(crate) fn keep(&self, key: [u8; 32], expires: Option<SystemTime>, answer: Answer) {
        let now = Instant::now();
        let mut until = now.checked_add(self.keep_for).unwrap_or(now);
        if let Some(expires) = expires {
            let left = expires
                .duration_since(SystemTime::now())
                .unwrap_or_default();
            until = until.min(now.checked_add(left).unwrap_or(now));
        }
        self.put(key, until, answer);
    }

    /// The answer kept for the token of `key`, if it has not run out.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Answer> {
        let mut entries = self.entries.lock();
        match entries.get(key) {
            Some((until, answer)) if *until > Instant::now() => Some(answer.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `answer` until `until`. When full, the entries that ran out
    /// go first, then the one that would run out soonest.
    fn put(&self, key: [u8; 32], until: Instant, answer: Answer) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            let now = Instant::now();
            entries.retain(|_, (at, _)| *at > now);
            if entries.len() >= self.capacity {
                let soonest = entries
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(k, _)| *k);
                if let Some(soonest) = soonest {
                    entries.remove(&soonest);
                }
            }
        }
        entries.insert(key, (until, answer));
    }
}
