//! The default `requestState` codec: states kept in server memory, with a
//! share of the store for each caller (DESIGN.md §26).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;

use super::RequestStateCodec;
use crate::error::to_json_bytes;
use crate::error::Error;

/// The default [`RequestStateCodec`]: states stay in server memory, and the
/// client holds only a random key (a UUID v4, 122 random bits).
///
/// Entries expire after a time to live (default 10 minutes) and the store
/// holds at most a number of entries (default 10,000) and of bytes (default
/// 64 MiB). Each caller (the principal, else the session, else the peer
/// address; DESIGN.md §26) holds at most a share of it: by default a tenth
/// of the entries and a quarter of the bytes. A caller at its share makes
/// room by dropping its own oldest states, never another caller's; only
/// when the whole store is full (ten callers at their shares) do the
/// oldest states of anyone go. Callers nothing tells apart (no principal,
/// no session, per-peer shares off) share one share. A retry must reach
/// the same process.
///
/// On a busy server, prefer `SealedStateCodec` (feature `sealed-state`):
/// it keeps nothing on the server, so no caller can crowd another out,
/// and it is unaffected by these shares.
pub struct ServerStateStore {
    entries: Mutex<Entries>,
    ttl: Duration,
    max_entries: usize,
    max_bytes: usize,
    per_caller_entries: Option<usize>,
    per_caller_bytes: Option<usize>,
}

/// The stored states, with their serialized sizes added up.
#[derive(Default)]
struct Entries {
    /// Key to (stored at, size in bytes, caller, state).
    map: HashMap<String, (Instant, usize, String, Value)>,
    /// The keys in the order they were stored, which is the order they
    /// expire in: the oldest go first in O(1), never by a scan. Keys whose
    /// entry went already are skipped, and dropped in bulk when they
    /// outnumber the live ones.
    order: VecDeque<String>,
    bytes: usize,
    /// Each caller's share: its keys, oldest first, and what it holds.
    callers: HashMap<String, Share>,
}

/// What one caller holds.
#[derive(Default)]
struct Share {
    order: VecDeque<String>,
    count: usize,
    bytes: usize,
}

impl fmt::Debug for ServerStateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.entries.lock();
        f.debug_struct("ServerStateStore")
            .field("entries", &entries.map.len())
            .field("bytes", &entries.bytes)
            .field("callers", &entries.callers.len())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl ServerStateStore {
    /// A store whose entries live `ttl` and that holds at most
    /// `max_entries`, and at most 64 MiB of states (see
    /// [`with_max_bytes`](Self::with_max_bytes)).
    pub fn new(ttl: Duration, max_entries: usize) -> ServerStateStore {
        ServerStateStore {
            entries: Mutex::new(Entries::default()),
            ttl,
            max_entries: max_entries.max(1),
            max_bytes: 64 * 1024 * 1024,
            per_caller_entries: None,
            per_caller_bytes: None,
        }
    }

    /// Bounds the states held by their size as JSON, in bytes: past it the
    /// oldest go first. A peer controls what a state holds (its answers,
    /// the request's arguments), so the count alone bounds nothing.
    /// Defaults to 64 MiB.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> ServerStateStore {
        self.max_bytes = max_bytes;
        self
    }

    /// Bounds the states one caller holds, in entries: past it the
    /// caller's own oldest go. Defaults to a tenth of the store's entries
    /// (1,000 of 10,000), at least 1.
    pub fn with_max_entries_per_caller(mut self, max_entries: usize) -> ServerStateStore {
        self.per_caller_entries = Some(max_entries.max(1));
        self
    }

    /// Bounds the states one caller holds by their size as JSON, in bytes:
    /// past it the caller's own oldest go, and a single state larger than
    /// it is refused (the request then fails with `-32603`, "cannot encode
    /// requestState"). Defaults to a quarter of
    /// [`with_max_bytes`](Self::with_max_bytes) (16 MiB of 64 MiB).
    pub fn with_max_bytes_per_caller(mut self, max_bytes: usize) -> ServerStateStore {
        self.per_caller_bytes = Some(max_bytes);
        self
    }

    fn share_entries(&self) -> usize {
        self.per_caller_entries
            .unwrap_or_else(|| (self.max_entries / 10).max(1))
    }

    fn share_bytes(&self) -> usize {
        self.per_caller_bytes
            .unwrap_or(self.max_bytes / 4)
            .min(self.max_bytes)
    }
}

impl Default for ServerStateStore {
    fn default() -> Self {
        ServerStateStore::new(Duration::from_secs(600), 10_000)
    }
}

impl Entries {
    /// Drops expired entries, then the caller's own oldest until `size`
    /// more bytes and one more entry fit its share, then the oldest of
    /// anyone until they fit the store. Amortized O(1) per stored state.
    fn make_room(&mut self, caller: &str, size: usize, store: &ServerStateStore, now: Instant) {
        loop {
            let expired = match self.order.front().and_then(|k| self.map.get(k)) {
                Some((at, _, _, _)) => now.duration_since(*at) >= store.ttl,
                // A key whose entry is gone already: drop it.
                None => !self.order.is_empty(),
            };
            if !expired {
                break;
            }
            if let Some(key) = self.order.pop_front() {
                self.remove(&key);
            }
        }
        while let Some(share) = self.callers.get_mut(caller) {
            if share.count < store.share_entries() && share.bytes + size <= store.share_bytes() {
                break;
            }
            match share.order.pop_front() {
                Some(key) => self.remove(&key),
                None => break,
            }
        }
        while self.map.len() >= store.max_entries || self.bytes + size > store.max_bytes {
            match self.order.pop_front() {
                Some(key) => self.remove(&key),
                None => break,
            }
        }
    }

    /// Forgets the entry under `key`, if there is one, from the totals and
    /// its caller's share.
    fn remove(&mut self, key: &str) {
        let (_, size, caller, _) = match self.map.remove(key) {
            Some(entry) => entry,
            None => return,
        };
        self.bytes -= size;
        if let Some(share) = self.callers.get_mut(&caller) {
            share.count -= 1;
            share.bytes -= size;
            if share.count == 0 {
                self.callers.remove(&caller);
            } else if share.order.len() > 2 * share.count + 16 {
                let map = &self.map;
                share.order.retain(|k| map.contains_key(k));
            }
        }
        if self.order.len() > 2 * self.map.len() + 16 {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
    }

    fn insert(&mut self, caller: &str, key: &str, size: usize, state: &Value, now: Instant) {
        self.bytes += size;
        self.order.push_back(key.to_string());
        let share = self.callers.entry(caller.to_string()).or_default();
        share.order.push_back(key.to_string());
        share.count += 1;
        share.bytes += size;
        let entry = (now, size, caller.to_string(), state.clone());
        self.map.insert(key.to_string(), entry);
    }
}

impl RequestStateCodec for ServerStateStore {
    /// Stores `state` for a caller nothing tells apart from others.
    fn encode(&self, state: &Value) -> Result<String, Error> {
        self.encode_for("", state)
    }

    fn decode(&self, token: &str) -> Result<Value, Error> {
        let entries = self.entries.lock();
        match entries.map.get(token) {
            Some((at, _, _, state)) if at.elapsed() < self.ttl => Ok(state.clone()),
            Some(_) => Err(Error::invalid_params("requestState expired")),
            None => Err(Error::invalid_params("unknown or tampered requestState")),
        }
    }

    fn encode_for(&self, caller: &str, state: &Value) -> Result<String, Error> {
        let size = to_json_bytes("the request's state", state)?.len();
        if size > self.share_bytes() {
            return Err(Error::msg(format!(
                "the request's state is {} bytes; the store holds at most {} per caller",
                size,
                self.share_bytes()
            )));
        }
        let key = uuid::Uuid::new_v4().simple().to_string();
        let now = Instant::now();
        let mut entries = self.entries.lock();
        entries.make_room(caller, size, self, now);
        entries.insert(caller, &key, size, state, now);
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // MRTR-5: the default codec rejects keys it did not mint.
    #[test]
    fn store_round_trip_and_tamper() {
        let store = ServerStateStore::default();
        let token = store.encode(&serde_json::json!({"a": 1})).unwrap();
        assert_eq!(store.decode(&token).unwrap()["a"], 1);
        let mut tampered = token.clone();
        tampered.push('x');
        assert!(store.decode(&tampered).is_err());
        assert!(store.decode("").is_err());
    }

    #[test]
    fn store_expires_and_is_bounded() {
        let store = ServerStateStore::new(Duration::from_secs(0), 2);
        let token = store.encode(&Value::Null).unwrap();
        assert!(store.decode(&token).is_err(), "a zero ttl expires at once");
        let store = ServerStateStore::new(Duration::from_secs(60), 2);
        let first = store.encode(&Value::from(1)).unwrap();
        store.encode(&Value::from(2)).unwrap();
        store.encode(&Value::from(3)).unwrap();
        assert!(
            store.decode(&first).is_err(),
            "the oldest entry was dropped"
        );
    }

    // Limits: a peer cannot grow the store past its byte bound.
    #[test]
    fn store_is_bounded_in_bytes() {
        let store = ServerStateStore::new(Duration::from_secs(60), 100)
            .with_max_bytes(100)
            .with_max_bytes_per_caller(100);
        let big = Value::from("x".repeat(60));
        let first = store.encode(&big).unwrap();
        let second = store.encode(&big).unwrap();
        assert!(store.decode(&first).is_err(), "the oldest made room");
        assert!(store.decode(&second).is_ok());
        assert!(store.encode(&Value::from("y".repeat(200))).is_err());
    }

    // DESIGN.md §26: a caller at its share drops its own oldest states,
    // never another caller's, and stale keys do not pile up.
    #[test]
    fn a_caller_evicts_only_its_own_states() {
        let store = ServerStateStore::new(Duration::from_secs(60), 100);
        let quiet = store.encode_for("quiet", &Value::from(1)).unwrap();
        let mut first = None;
        for n in 0..5_000 {
            let token = store.encode_for("busy", &Value::from(n)).unwrap();
            first.get_or_insert(token);
        }
        assert_eq!(store.decode(&quiet).unwrap(), 1);
        assert!(store.decode(&first.unwrap_or_default()).is_err());
        let entries = store.entries.lock();
        assert_eq!(entries.map.len(), 11, "10 for busy, 1 for quiet");
        assert!(entries.order.len() <= 2 * 11 + 17);
        let share_len = entries.callers.get("busy").map_or(0, |s| s.order.len());
        assert!(share_len <= 2 * 10 + 17);
        drop(entries);
        assert!(store.encode_for("quiet", &Value::from(2)).is_ok());
    }
}
