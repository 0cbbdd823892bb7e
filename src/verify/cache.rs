//! The introspection answers kept: keyed by the SHA-256 of the token
//! (never the token), bounded in entries and in time.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;

use crate::server::Principal;
use crate::transport::http::TokenError;

/// An answer: the principal, or the refusal.
pub(crate) type Answer = Result<Principal, TokenError>;

/// At most `capacity` answers, each until its own instant.
pub(crate) struct AnswerCache {
    capacity: usize,
    entries: Mutex<HashMap<[u8; 32], (Instant, Answer)>>,
}

impl AnswerCache {
    pub(crate) fn new(capacity: usize) -> AnswerCache {
        AnswerCache {
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
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
    pub(crate) fn put(&self, key: [u8; 32], until: Instant, answer: Answer) {
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
