//! Where tasks are kept: the [`TaskStore`] port and its in-memory default.
//!
//! The store holds what a client can ask about a task (status, times, the
//! outstanding input requests, the final result or error); the running
//! handler itself stays on the instance that runs it (`tasks/mod.rs`). A
//! deployment of several instances shares a store (a database, Redis) so
//! that `tasks/get` answers on any of them; `tasks/update` and
//! `tasks/cancel` reach the running handler only on its own instance, which
//! is why clients send `Mcp-Name: <taskId>` for a load balancer to route on
//! (SEP-2663, "Streamable HTTP: Routing Headers").

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use serde_json::Value;

use super::command::TaskCommand;
use super::share::lower;
use crate::error::to_json_bytes;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, JsonObject};
use crate::protocol::{Era, TaskStatus};

/// One task as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The id the server minted: a random UUID (TASK-3).
    pub task_id: String,
    /// Who may see it (TASK-10): the principal under a token verifier
    /// (its issuer, subject and client id together), else the 2025-11-25
    /// session or the connection, else empty (anyone who holds the
    /// unguessable id). An opaque key: compare it, do not parse it; it
    /// separates its parts with NUL characters, so a store that keeps it
    /// in a text column that refuses NUL must encode it.
    pub owner: String,
    /// Whom it is counted against in the per-owner bound: its `owner`,
    /// except for a task with an empty `owner`, which is counted against
    /// its caller's peer address (DESIGN.md §26); empty when nothing tells
    /// that caller apart. [`TaskRecord::new`] sets it to `owner`.
    pub share: String,
    /// The peer address of a caller without a principal, counted in the
    /// per-peer bound (however many sessions that address opens, DESIGN.md
    /// §26); empty for a principal's task, when per-peer shares are off,
    /// and on stdio. [`TaskRecord::new`] leaves it empty.
    pub peer: String,
    /// The id of the instance whose handler runs it
    /// ([`ServerHandle::instance_id`](crate::ServerHandle::instance_id)),
    /// to which [`TaskStore::forward`] carries `tasks/update` and
    /// `tasks/cancel` received elsewhere; empty when unknown.
    /// [`TaskRecord::new`] leaves it empty; the server sets it.
    pub instance: String,
    /// The era of the request that made it, which decides its wire shape.
    pub era: Era,
    /// Where it is.
    pub status: TaskStatus,
    /// A sentence about the status, for people.
    pub status_message: Option<String>,
    /// When it was made.
    pub created_at: SystemTime,
    /// When its status last changed.
    pub last_updated_at: SystemTime,
    /// How long after `created_at` it may be forgotten.
    pub ttl: Duration,
    /// How often the client should poll.
    pub poll_interval: Duration,
    /// While `input_required`: the requests waiting for an answer, by key
    /// (`{"method", "params"}` each).
    pub input_requests: JsonObject,
    /// Once `completed`: the result of the request it stands for.
    pub result: Option<Value>,
    /// Once `failed`: the JSON-RPC error.
    pub error: Option<ErrorObject>,
}

impl TaskRecord {
    /// A new `working` task.
    pub fn new(task_id: String, owner: String, era: Era, ttl: Duration) -> TaskRecord {
        let now = SystemTime::now();
        TaskRecord {
            task_id,
            share: owner.clone(),
            peer: String::new(),
            owner,
            instance: String::new(),
            era,
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl,
            poll_interval: Duration::from_secs(1),
            input_requests: JsonObject::new(),
            result: None,
            error: None,
        }
    }

    /// Moves to `status` unless the task is already terminal (TASK-4);
    /// `false` when it was.
    pub fn move_to(&mut self, status: TaskStatus, message: Option<String>) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        if status != TaskStatus::InputRequired {
            self.input_requests.clear();
        }
        self.status = status;
        self.status_message = message;
        self.last_updated_at = SystemTime::now();
        true
    }
}

/// Keeps tasks for `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`
/// and `tasks/update` (basic/utilities/tasks, 2025-11-25; SEP-2663).
///
/// Implementations are shared by every thread of the server: they lock
/// inside. A store forgets a task once its TTL has passed (a read of an
/// expired task answers `None`), and bounds what it holds; the default,
/// [`MemoryTaskStore`], is set up from the server's
/// [`TaskLimits`](crate::TaskLimits).
pub trait TaskStore: Send + Sync {
    /// Keeps a new task.
    ///
    /// # Errors
    ///
    /// When the store is full (in total, for the task's share, or for the
    /// anonymous owner's allowance).
    fn insert(&self, record: TaskRecord) -> Result<(), Error>;

    /// The task, unless it is unknown or expired.
    fn get(&self, task_id: &str) -> Option<TaskRecord>;

    /// The task as [`get`](Self::get), telling "unknown or expired"
    /// (`Ok(None)`) from "could not be read" (`Err`): the `tasks/*`
    /// methods answer the first `-32602` (TASK-8) and the second `-32603`,
    /// so that a client keeps asking (a shared store that was briefly
    /// unreachable must not make a task look gone). Default:
    /// `Ok(self.get(task_id))`.
    ///
    /// # Errors
    ///
    /// When the store could not be read (a shared store's connection).
    fn try_get(&self, task_id: &str) -> Result<Option<TaskRecord>, Error> {
        Ok(self.get(task_id))
    }

    /// Applies `change` to the task and returns it as changed; `None` when
    /// it is unknown or expired.
    ///
    /// A store shared between instances may call `change` more than once,
    /// each time on the latest record (a compare-and-set that lost to a
    /// concurrent write reads again and retries): keep it a function of
    /// the record it is given, with no effect beyond it.
    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord>;

    /// Up to `limit` of `owner`'s tasks, oldest first, from `cursor` (what
    /// an earlier call returned), and the cursor of the next page.
    ///
    /// # Errors
    ///
    /// When `cursor` is not one this store gave out (TASK-8: `-32602`).
    fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, Option<String>), Error>;

    /// Called once, when the server that keeps its tasks here is built: a
    /// store shared between instances starts what runs beside the server
    /// (renewing the leases of this instance's running tasks, reading the
    /// commands other instances forward to it and applying them with
    /// [`ServerHandle::apply_task_command`](crate::ServerHandle::apply_task_command)).
    /// Keep a [`WeakServerHandle`](crate::WeakServerHandle) (`server.downgrade()`),
    /// not the handle, and stop once it no longer upgrades or
    /// [`is_closed`](crate::ServerHandle::is_closed). The default does
    /// nothing.
    fn attach(&self, server: &crate::ServerHandle) {
        let _ = server;
    }

    /// Carries `command` to the instance that runs `record`'s handler
    /// ([`TaskRecord::instance`], not this one; the task is not terminal)
    /// and returns once that instance applied it. `Ok(false)`: this store
    /// does not carry commands (the default); the server then cancels the
    /// record alone, and answers a `tasks/update` with `-32603`, since the
    /// input cannot reach the handler.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) when
    /// that instance no longer runs the task (it just ended); any other
    /// error when it did not take the command in time or cannot be reached
    /// (the client's request then fails with `-32603`).
    fn forward(&self, record: &TaskRecord, command: &TaskCommand) -> Result<bool, Error> {
        let _ = (record, command);
        Ok(false)
    }
}

/// The default [`TaskStore`]: tasks in this process's memory, bounded in
/// number (in total, per share, and for the anonymous owner together) and
/// in bytes, forgotten when their TTL passes.
///
/// A task still running when its TTL passes is kept (and can still be
/// polled and cancelled) until it ends: only a finished task is forgotten.
/// Eviction by time is amortized O(log n): each insert first drops the
/// tasks whose TTL has passed, in expiry order. Past the byte bound, the
/// oldest finished tasks are dropped first.
#[derive(Debug)]
pub struct MemoryTaskStore {
    max_tasks: usize,
    max_per_owner: usize,
    max_per_peer: usize,
    max_anonymous: usize,
    max_bytes: usize,
    inner: Mutex<Memory>,
}

#[derive(Debug)]
struct Memory {
    tasks: HashMap<String, Kept>,
    /// (expiry, sequence) -> id, soonest first.
    expiry: BTreeMap<(Instant, u64), String>,
    /// (`epoch`, sequence) -> id, oldest first (for `list`): keyed as
    /// `expiry` is, with one instant for all, so that the two maps share
    /// one BTreeMap's code in a binary.
    order: BTreeMap<(Instant, u64), String>,
    epoch: Instant,
    /// Tasks kept per [`TaskRecord::share`] (not `""`).
    per_share: HashMap<String, usize>,
    /// Tasks kept per [`TaskRecord::peer`] (not `""`).
    per_peer: HashMap<String, usize>,
    /// Tasks kept whose owner is `""`.
    anonymous: usize,
    next: u64,
    /// The bytes of every kept task's result, error and input requests.
    bytes: usize,
}

#[derive(Debug)]
struct Kept {
    record: TaskRecord,
    expires: Instant,
    seq: u64,
    bytes: usize,
}

/// What a record weighs in the byte bound: its result, error and input
/// requests, serialized.
fn weight(record: &TaskRecord) -> usize {
    // A part that cannot be serialized (a bug of ours, logged) weighs nothing.
    let len = |bytes: Result<Vec<u8>, Error>| bytes.map_or(0, |b| b.len());
    let result = record.result.as_ref();
    let error = record.error.as_ref();
    result.map_or(0, |r| len(to_json_bytes("a task's result", r)))
        + error.map_or(0, |e| len(to_json_bytes("a task's error", e)))
        + if record.input_requests.is_empty() {
            0
        } else {
            len(to_json_bytes(
                "a task's input requests",
                &record.input_requests,
            ))
        }
}

impl MemoryTaskStore {
    /// A store of at most `max_tasks` tasks, and `max_per_owner` per share
    /// ([`TaskRecord::share`]: the owner, or for a task of the anonymous
    /// owner its peer address). The anonymous owner (`""`: 2026-07-28
    /// clients without a principal) has one allowance in total besides, a
    /// tenth of `max_tasks` unless set with
    /// [`with_max_anonymous`](Self::with_max_anonymous), so that it cannot
    /// fill the store for everyone else; results, errors and input
    /// requests together are bounded to 64 MiB unless set with
    /// [`with_max_bytes`](Self::with_max_bytes).
    pub fn new(max_tasks: usize, max_per_owner: usize) -> MemoryTaskStore {
        MemoryTaskStore {
            max_tasks,
            max_per_owner,
            max_per_peer: (max_tasks / 10).max(1),
            max_anonymous: (max_tasks / 10).max(1),
            max_bytes: 64 << 20,
            inner: Mutex::new(Memory {
                tasks: HashMap::new(),
                expiry: BTreeMap::new(),
                order: BTreeMap::new(),
                epoch: Instant::now(),
                per_share: HashMap::new(),
                per_peer: HashMap::new(),
                anonymous: 0,
                next: 0,
                bytes: 0,
            }),
        }
    }

    /// Sets the bound on the tasks of the callers without a principal of
    /// one peer address together ([`TaskRecord::peer`]; default a tenth of
    /// `max_tasks`).
    pub fn with_max_per_peer(mut self, max: usize) -> MemoryTaskStore {
        self.max_per_peer = max.max(1);
        self
    }

    /// Sets the allowance of the anonymous owner.
    pub fn with_max_anonymous(mut self, max: usize) -> MemoryTaskStore {
        self.max_anonymous = max;
        self
    }

    /// Sets the bound on the bytes of results, errors and input requests;
    /// past it the oldest finished tasks are forgotten.
    pub fn with_max_bytes(mut self, max: usize) -> MemoryTaskStore {
        self.max_bytes = max;
        self
    }

    /// How many tasks it holds now (expired ones included until evicted).
    pub fn len(&self) -> usize {
        self.inner.lock().tasks.len()
    }

    /// `true` when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Memory {
    /// Drops every finished task whose TTL has passed; one still running
    /// gets another TTL.
    fn evict_expired(&mut self, now: Instant) {
        while let Some((&(expires, seq), _)) = self.expiry.iter().next() {
            if expires > now {
                break;
            }
            let id = match self.expiry.remove(&(expires, seq)) {
                Some(id) => id,
                None => break,
            };
            match self.tasks.get_mut(&id) {
                Some(kept) if !kept.record.status.is_terminal() => {
                    kept.expires = now + kept.record.ttl.max(std::time::Duration::from_millis(1));
                    self.expiry.insert((kept.expires, seq), id);
                }
                _ => self.forget(&id),
            }
        }
    }

    /// Forgets the oldest finished tasks until the bytes fit `max`.
    fn evict_bytes(&mut self, max: usize) {
        while self.bytes > max {
            let oldest = self
                .order
                .values()
                .find(|id| {
                    self.tasks
                        .get(*id)
                        .map_or(false, |k| k.record.status.is_terminal())
                })
                .cloned();
            match oldest {
                Some(id) => self.forget(&id),
                None => break,
            }
        }
    }

    /// `Err` when `record` would pass its share's bound or the anonymous
    /// owner's.
    fn check_shares(&self, record: &TaskRecord, store: &MemoryTaskStore) -> Result<(), Error> {
        let max_per_share = store.max_per_owner;
        let max_anonymous = store.max_anonymous;
        let owned = self.per_share.get(&record.share).copied().unwrap_or(0);
        if !record.share.is_empty() && owned >= max_per_share {
            return Err(Error::msg(format!(
                "{} tasks are kept for this client, its limit \
                 (max_tasks_per_owner); wait for one to expire",
                max_per_share
            )));
        }
        let from_peer = self.per_peer.get(&record.peer).copied().unwrap_or(0);
        if !record.peer.is_empty() && from_peer >= store.max_per_peer {
            return Err(Error::msg(format!(
                "{} tasks are kept for clients at this address, their limit \
                 (max_tasks_per_peer); wait for one to expire",
                store.max_per_peer
            )));
        }
        if record.owner.is_empty() && self.anonymous >= max_anonymous {
            return Err(Error::msg(format!(
                "{} tasks are kept for clients without a session, their \
                 limit (max_anonymous_tasks); wait for one to expire",
                max_anonymous
            )));
        }
        Ok(())
    }

    fn forget(&mut self, id: &str) {
        if let Some(kept) = self.tasks.remove(id) {
            self.bytes -= kept.bytes;
            self.expiry.remove(&(kept.expires, kept.seq));
            self.order.remove(&(self.epoch, kept.seq));
            if kept.record.owner.is_empty() {
                self.anonymous -= 1;
            }
            lower(&mut self.per_share, &kept.record.share);
            lower(&mut self.per_peer, &kept.record.peer);
        }
    }

    /// The live task `id`; an expired one is dropped.
    fn live(&mut self, id: &str) -> Option<&mut Kept> {
        let expired = match self.tasks.get(id) {
            None => return None,
            Some(kept) => kept.expires <= Instant::now() && kept.record.status.is_terminal(),
        };
        if expired {
            self.forget(id);
            return None;
        }
        self.tasks.get_mut(id)
    }
}

impl TaskStore for MemoryTaskStore {
    fn insert(&self, record: TaskRecord) -> Result<(), Error> {
        let now = Instant::now();
        let mut memory = self.inner.lock();
        memory.evict_expired(now);
        if memory.tasks.len() >= self.max_tasks {
            return Err(Error::msg(format!(
                "the server holds {} tasks, its limit; retry later",
                self.max_tasks
            )));
        }
        memory.check_shares(&record, self)?;
        let seq = memory.next;
        memory.next += 1;
        let expires = now + record.ttl;
        let id = record.task_id.clone();
        if !record.share.is_empty() {
            *memory.per_share.entry(record.share.clone()).or_insert(0) += 1;
        }
        if !record.peer.is_empty() {
            *memory.per_peer.entry(record.peer.clone()).or_insert(0) += 1;
        }
        if record.owner.is_empty() {
            memory.anonymous += 1;
        }
        memory.expiry.insert((expires, seq), id.clone());
        let epoch = memory.epoch;
        memory.order.insert((epoch, seq), id.clone());
        let bytes = weight(&record);
        memory.bytes += bytes;
        memory.tasks.insert(
            id,
            Kept {
                record,
                expires,
                seq,
                bytes,
            },
        );
        memory.evict_bytes(self.max_bytes);
        Ok(())
    }

    fn get(&self, task_id: &str) -> Option<TaskRecord> {
        let mut memory = self.inner.lock();
        memory.live(task_id).map(|kept| kept.record.clone())
    }

    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord> {
        let mut memory = self.inner.lock();
        let kept = memory.live(task_id)?;
        change(&mut kept.record);
        let (before, after) = (kept.bytes, weight(&kept.record));
        kept.bytes = after;
        let record = kept.record.clone();
        memory.bytes = memory.bytes - before + after;
        memory.evict_bytes(self.max_bytes);
        Some(record)
    }

    fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, Option<String>), Error> {
        let from = match cursor {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("t:")
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| Error::invalid_params(format!("unknown cursor: {}", cursor)))?,
        };
        let mut memory = self.inner.lock();
        memory.evict_expired(Instant::now());
        let mut page = Vec::new();
        for (&(_, seq), id) in memory.order.range((memory.epoch, from)..) {
            let kept = match memory.tasks.get(id) {
                Some(kept) if kept.record.owner == owner => kept,
                _ => continue,
            };
            if page.len() == limit {
                return Ok((page, Some(format!("t:{}", seq))));
            }
            page.push(kept.record.clone());
        }
        Ok((page, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, owner: &str, ttl_ms: u64) -> TaskRecord {
        TaskRecord::new(
            id.into(),
            owner.into(),
            Era::V2026_07_28,
            Duration::from_millis(ttl_ms),
        )
    }

    // Terminal states never change (TASK-4).
    #[test]
    fn terminal_states_are_final() {
        let mut task = record("a", "", 60_000);
        assert!(task.move_to(TaskStatus::InputRequired, None));
        assert!(task.move_to(TaskStatus::Cancelled, Some("by the client".into())));
        assert!(!task.move_to(TaskStatus::Completed, None));
        assert_eq!(task.status, TaskStatus::Cancelled);
    }

    // The limits: in total, per owner, and the anonymous owner's allowance.
    #[test]
    fn bounded_in_total_per_owner_and_anonymous() {
        let store = MemoryTaskStore::new(3, 1).with_max_anonymous(2);
        store.insert(record("a", "session:1", 60_000)).unwrap();
        assert!(store.insert(record("b", "session:1", 60_000)).is_err());
        store.insert(record("c", "", 60_000)).unwrap();
        store.insert(record("d", "", 60_000)).unwrap();
        assert!(store.insert(record("e", "session:2", 60_000)).is_err());
        assert_eq!(store.len(), 3);
        let store = MemoryTaskStore::new(10, 10).with_max_anonymous(1);
        store.insert(record("a", "", 60_000)).unwrap();
        assert!(store.insert(record("b", "", 60_000)).is_err());
        store.insert(record("c", "principal:p", 60_000)).unwrap();
    }

    // Issue 27 item 3(b): a task of the anonymous owner is counted against
    // its share (its peer) and the anonymous total; one with no share
    // (nothing tells its caller apart) against the total alone.
    #[test]
    fn anonymous_tasks_counted_per_share_and_in_total() {
        let peer = |id: &str, share: &str| {
            let mut task = record(id, "", 60_000);
            task.share = share.into();
            task
        };
        let store = MemoryTaskStore::new(10, 2).with_max_anonymous(3);
        store.insert(peer("a", "peer\u{0}192.0.2.1")).unwrap();
        store.insert(peer("b", "peer\u{0}192.0.2.1")).unwrap();
        assert!(store.insert(peer("c", "peer\u{0}192.0.2.1")).is_err());
        store.insert(peer("d", "peer\u{0}192.0.2.2")).unwrap();
        assert!(store.insert(peer("e", "")).is_err(), "the total is 3");
        store.update("a", &mut |r| {
            r.move_to(TaskStatus::Completed, None);
        });
        store.insert(peer("f", "")).unwrap_err();
        let store = MemoryTaskStore::new(10, 1).with_max_anonymous(2);
        store.insert(peer("a", "")).unwrap();
        store.insert(peer("b", "")).unwrap();
        store.insert(record("c", "session\u{0}1", 60_000)).unwrap();
    }

    // Past the byte bound the oldest finished tasks go; running ones stay.
    #[test]
    fn bounded_in_bytes_oldest_finished_first() {
        let store = MemoryTaskStore::new(10, 10).with_max_bytes(100);
        store.insert(record("running", "o", 60_000)).unwrap();
        for id in ["old", "new"] {
            store.insert(record(id, "o", 60_000)).unwrap();
            store.update(id, &mut |r| {
                r.move_to(TaskStatus::Completed, None);
                r.result = Some(Value::from("x".repeat(60)));
            });
        }
        assert!(store.get("old").is_none(), "the oldest finished task stays");
        assert!(store.get("new").is_some() && store.get("running").is_some());
    }

    // A finished task is forgotten once its TTL passed, and its place is
    // free again; a running one is kept past its TTL (it can still be
    // polled and cancelled).
    #[test]
    fn expired_tasks_are_forgotten() {
        let store = MemoryTaskStore::new(1, 1);
        store.insert(record("a", "o", 0)).unwrap();
        assert!(store.get("a").is_some(), "a running task outlives its TTL");
        assert!(store.insert(record("z", "o", 60_000)).is_err());
        store.update("a", &mut |r| {
            r.move_to(TaskStatus::Cancelled, None);
        });
        // The TTL it was given again (at least 1 ms) passes: time, not
        // another thread, is what the test waits for.
        std::thread::sleep(Duration::from_millis(2));
        assert!(store.get("a").is_none());
        store.insert(record("b", "o", 60_000)).unwrap();
        assert_eq!(store.get("b").map(|r| r.task_id), Some("b".to_string()));
        assert!(store.update("a", &mut |_| {}).is_none());
    }

    // tasks/list: the owner's tasks only, in pages, oldest first; a foreign
    // cursor is an error (TASK-8).
    #[test]
    fn lists_an_owners_tasks_in_pages() {
        let store = MemoryTaskStore::new(10, 10);
        for (id, owner) in [("a", "x"), ("b", "y"), ("c", "x"), ("d", "x")] {
            store.insert(record(id, owner, 60_000)).unwrap();
        }
        let (page, next) = store.list("x", None, 2).unwrap();
        let ids: Vec<_> = page.iter().map(|r| r.task_id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        let (page, next) = store.list("x", next.as_deref(), 2).unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].task_id, "d");
        assert!(next.is_none());
        assert!(store.list("x", Some("nope"), 2).is_err());
    }
}
