//! [`RedisTaskStore`]: tasks kept in Redis, where every instance reads
//! them (DESIGN.md §30).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::endpoint::Endpoint;
use super::keys::Keys;
use super::pool::Pool;
use super::scripts::Scripts;
use crate::error::Error;
use crate::{ServerHandle, TaskCommand, TaskRecord, TaskStore};

/// A [`TaskStore`] on Redis (or Valkey), feature `redis`: the tasks of
/// several instances of one server in one place, so that `tasks/get`,
/// `tasks/result` and `tasks/list` answer on any instance, and
/// `tasks/update` and `tasks/cancel` received by any instance reach the
/// one whose handler runs the task (DESIGN.md §21, §30).
///
/// - **Records**: one key per task, `<prefix>task:<taskId>`, whose value
///   is the record as JSON, bounded in bytes
///   ([`with_max_record_bytes`](Self::with_max_record_bytes)); a record
///   over the bound, or nested too deeply to be read back (over 128
///   levels), is kept `failed` with a `-32603` error saying so. The
///   key expires at the task's TTL from its creation; a running task's
///   key lives on while its instance renews its lease, and a task that
///   ended past its TTL is kept one TTL more.
/// - **Status moves** are compare-and-set (a Lua script): `update` reads
///   the record, applies the change, and writes it only if no one wrote
///   in between, else reads again and retries; a final status is never
///   left (`TaskRecord::move_to`). The change may therefore run more than
///   once, each time on the latest record.
/// - **Bounds** like [`MemoryTaskStore`](crate::MemoryTaskStore)'s, checked
///   atomically at insert: tasks in total, per share, per peer, for the
///   anonymous owner (each counted until its record's key expires).
/// - **Leases**: the instance that runs a task renews `<prefix>lease:<id>`
///   every third of the lease; when a record names another instance whose
///   lease has run out, the instance that reads it (`get`, `list`,
///   `update`) moves it to `failed` (`-32603`, "the instance that ran this
///   task stopped").
/// - **Commands**: [`forward`](TaskStore::forward) publishes the command
///   on `<prefix>instance:<instanceId>`, where the owner's reader thread
///   applies it and answers on a reply list, awaited at most
///   [`with_forward_timeout`](Self::with_forward_timeout).
///
/// One store serves one server: [`attach`](TaskStore::attach) (when the
/// server is built) starts its two threads (leases, commands) for that
/// server's instance id, and waits until the command thread subscribed,
/// at most 4 s when Redis does not answer (the thread then keeps trying,
/// with back-off from 100 ms to 5 s). Clones share its connections and
/// its instance. Not for Redis Cluster (the
/// scripts touch keys of several slots). A Redis error answers `None`
/// from `get` and `update` (logged at `warn`), `Err` from `try_get`
/// (the `tasks/*` methods then answer `-32603`, not "unknown task"),
/// `insert`, `list` and `forward`; never a panic.
///
/// ```no_run
/// use std::time::Duration;
/// use tiny_mcp::{RedisTaskStore, Server};
///
/// let store = RedisTaskStore::new("redis://:secret@127.0.0.1:6379/2")?
///     .with_prefix("weather:")
///     .with_lease(Duration::from_secs(10));
/// let server = Server::builder("weather", "1.0.0").task_store(store).build();
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    pub(crate) settings: Settings,
    pub(crate) state: Arc<State>,
}

/// The builder settings (see the `with_*` methods for their defaults).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) prefix: String,
    pub(crate) max_tasks: usize,
    pub(crate) max_per_owner: usize,
    pub(crate) max_per_peer: usize,
    pub(crate) max_anonymous: usize,
    pub(crate) max_record_bytes: usize,
    pub(crate) lease: Duration,
    pub(crate) forward_timeout: Duration,
}

/// What clones share.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) pool: Pool,
    /// The attached server's instance id, once attached.
    pub(crate) instance: Mutex<Option<String>>,
    /// The running tasks whose lease this instance renews, by id.
    pub(crate) held: Mutex<HashMap<String, Keys>>,
    pub(crate) scripts: Scripts,
}

impl RedisTaskStore {
    /// A store on the Redis of `url`: `redis://[[user]:password@]host[:port][/db]`,
    /// or `rediss://` with the `tls` feature. Connects on first use, each
    /// connection within 2 s, and each command's reply within 2 s.
    ///
    /// Defaults: key prefix `tiny-mcp:`; 10,000 tasks, 100 per share, 1,000
    /// per peer, 1,000 for the anonymous owner (as [`TaskLimits`](crate::TaskLimits));
    /// 4 MiB + 64 KiB per record; a 10 s lease; forwarded commands answered
    /// within 5 s; 8 idle connections kept.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for a
    /// URL that is not a Redis URL (not repeated: it may hold a password),
    /// or `rediss://` without the `tls` feature.
    pub fn new(url: &str) -> Result<RedisTaskStore, Error> {
        let endpoint = Endpoint::open(url)?;
        Ok(RedisTaskStore {
            settings: Settings {
                prefix: "tiny-mcp:".to_string(),
                max_tasks: 10_000,
                max_per_owner: 100,
                max_per_peer: 1_000,
                max_anonymous: 1_000,
                max_record_bytes: (4 << 20) + (64 << 10),
                lease: Duration::from_secs(10),
                forward_timeout: Duration::from_secs(5),
            },
            state: Arc::new(State {
                pool: Pool::new(endpoint, 8),
                instance: Mutex::new(None),
                held: Mutex::new(HashMap::new()),
                scripts: Scripts::new(),
            }),
        })
    }

    /// Sets the prefix of every key and channel (default `tiny-mcp:`):
    /// servers that share a Redis but not their tasks take different ones.
    pub fn with_prefix(mut self, prefix: &str) -> RedisTaskStore {
        self.settings.prefix = prefix.to_string();
        self
    }

    /// Sets the bound on tasks kept in total, by every instance on this
    /// prefix (default 10,000); past it `insert` fails.
    pub fn with_max_tasks(mut self, max: usize) -> RedisTaskStore {
        self.settings.max_tasks = max;
        self
    }

    /// Sets the bound on tasks kept per share ([`TaskRecord::share`]: the
    /// owner, or for the anonymous owner the peer address; default 100).
    pub fn with_max_per_owner(mut self, max: usize) -> RedisTaskStore {
        self.settings.max_per_owner = max;
        self
    }

    /// Sets the bound on tasks of the callers without a principal of one
    /// peer address ([`TaskRecord::peer`]; default 1,000).
    pub fn with_max_per_peer(mut self, max: usize) -> RedisTaskStore {
        self.settings.max_per_peer = max.max(1);
        self
    }

    /// Sets the allowance of the anonymous owner (`""`) in total
    /// (default 1,000).
    pub fn with_max_anonymous(mut self, max: usize) -> RedisTaskStore {
        self.settings.max_anonymous = max;
        self
    }

    /// Sets the bound on one record's JSON, in bytes (default 4 MiB +
    /// 64 KiB: the server's 4 MiB result bound and the rest of the
    /// record). A record over it is kept `failed`, its result, error and
    /// input requests dropped, with a `-32603` error naming both sizes.
    pub fn with_max_record_bytes(mut self, max: usize) -> RedisTaskStore {
        self.settings.max_record_bytes = max;
        self
    }

    /// Sets the lease of a running task (default 10 s, at least 30 ms),
    /// renewed every third of it: once its instance stopped renewing it
    /// for this long, another instance marks the task `failed`.
    pub fn with_lease(mut self, lease: Duration) -> RedisTaskStore {
        self.settings.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// Sets how long [`forward`](TaskStore::forward) waits for the
    /// instance that runs the task to answer (default 5 s, at least
    /// 10 ms).
    pub fn with_forward_timeout(mut self, timeout: Duration) -> RedisTaskStore {
        self.settings.forward_timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// Sets how many idle connections are kept open between calls
    /// (default 8; a call that finds none opens one). The lease and
    /// command threads hold one each besides.
    pub fn with_pool_size(mut self, size: usize) -> RedisTaskStore {
        let state = Arc::get_mut(&mut self.state);
        match state {
            Some(state) => state.pool.max = size,
            None => log::warn!("RedisTaskStore::with_pool_size on a store already cloned: ignored"),
        }
        self
    }

    pub(crate) fn instance(&self) -> Option<String> {
        self.state.instance.lock().clone()
    }

    pub(crate) fn keys(&self, record: &TaskRecord) -> Keys {
        Keys::of(&self.settings.prefix, record)
    }
}

impl TaskStore for RedisTaskStore {
    fn insert(&self, record: TaskRecord) -> Result<(), Error> {
        self.insert_record(record)
    }

    fn get(&self, task_id: &str) -> Option<TaskRecord> {
        self.read(task_id).unwrap_or_else(|e| {
            log::warn!("task {}: {}", task_id, e);
            None
        })
    }

    fn try_get(&self, task_id: &str) -> Result<Option<TaskRecord>, Error> {
        self.read(task_id)
    }

    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord> {
        let outcome = match self.read(task_id) {
            Ok(None) => return None,
            Ok(Some(_)) => self.compare_and_set(task_id, change, false),
            Err(e) => Err(e),
        };
        outcome.unwrap_or_else(|e| {
            log::warn!("task {}: {}", task_id, e);
            None
        })
    }

    fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, Option<String>), Error> {
        self.page(owner, cursor, limit)
    }

    fn attach(&self, server: &ServerHandle) {
        super::lease::attach(self, server);
    }

    fn forward(&self, record: &TaskRecord, command: &TaskCommand) -> Result<bool, Error> {
        super::relay::forward(self, record, command)
    }
}
