//! Reading and writing records: insert with its bounds, reads that notice
//! a dead instance's tasks, compare-and-set updates, pages of a listing.

use redis::Value as Reply;

use super::keys::{expiry_ms, lease_key, member_id, owner_key, record_key};
use super::record::{cut_to_ms, decode, encode, too_large, unreadable};
use super::store::RedisTaskStore;
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::protocol::TaskStatus;
use crate::TaskRecord;

/// What a task whose instance stopped renewing its lease becomes.
pub(crate) const STOPPED: &str = "the instance that ran this task stopped";

/// Compare-and-set attempts before `update` gives up (each lost to a
/// concurrent write).
const MAX_TRIES: usize = 64;

impl RedisTaskStore {
    /// The record's JSON, or, over the bound or nested too deeply to be
    /// read back, its `failed` stand-in's.
    fn bounded(&self, mut record: TaskRecord) -> Result<(String, TaskRecord), Error> {
        cut_to_ms(&mut record);
        let value = encode(&record);
        let max = self.settings.max_record_bytes;
        let mut failed = if value.len() > max {
            log::warn!(
                "task {}: a record of {} bytes, over the limit of {}: kept failed",
                record.task_id,
                value.len(),
                max
            );
            too_large(&record, value.len(), max)
        } else if decode(value.as_bytes()).is_none() {
            // What could not be read back would be lost (`get`: `None`).
            log::warn!(
                "task {}: a record nested too deeply: kept failed",
                record.task_id
            );
            unreadable(&record)
        } else {
            return Ok((value, record));
        };
        cut_to_ms(&mut failed);
        let value = encode(&failed);
        if value.len() > max {
            return Err(Error::msg(format!(
                "task {}: even without its result the record is {} bytes, over {}",
                record.task_id,
                value.len(),
                max
            )));
        }
        Ok((value, failed))
    }

    fn lease_ms(&self, record: &TaskRecord) -> u64 {
        if record.instance.is_empty() {
            return 0;
        }
        u64::try_from(self.settings.lease.as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn insert_record(&self, record: TaskRecord) -> Result<(), Error> {
        let (value, record) = self.bounded(record)?;
        let keys = self.keys(&record);
        let px = expiry_ms(&record, self.settings.lease);
        let s = &self.settings;
        let outcome: String = self.state.pool.run("insert", None, |c| {
            keys.invoke(
                &self.state.scripts.insert,
                &value,
                px,
                self.lease_ms(&record),
            )
            .arg(s.max_tasks)
            .arg(s.max_per_owner)
            .arg(s.max_per_peer)
            .arg(s.max_anonymous)
            .invoke(c)
        })?;
        let bound = |n: usize, whom: &str, name: &str| {
            Error::msg(format!(
                "{} tasks are kept for {}, {}; wait for one to expire",
                n, whom, name
            ))
        };
        match outcome.as_str() {
            "ok" => {
                let ours = self.instance();
                if ours.as_deref() == Some(record.instance.as_str()) && !record.status.is_terminal()
                {
                    self.state.held.lock().insert(record.task_id.clone(), keys);
                }
                Ok(())
            }
            "all" => Err(Error::msg(format!(
                "the server holds {} tasks, its limit; retry later",
                s.max_tasks
            ))),
            "share" => Err(bound(
                s.max_per_owner,
                "this client",
                "its limit (max_tasks_per_owner)",
            )),
            "peer" => Err(bound(
                s.max_per_peer,
                "clients at this address",
                "their limit (max_tasks_per_peer)",
            )),
            "anon" => Err(bound(
                s.max_anonymous,
                "clients without a session",
                "their limit (max_anonymous_tasks)",
            )),
            _ => Err(Error::msg(format!(
                "task {} is kept already",
                record.task_id
            ))),
        }
    }

    /// The record, after moving it to `failed` when its instance is gone.
    pub(crate) fn read(&self, id: &str) -> Result<Option<TaskRecord>, Error> {
        let mut found = self.read_many(&[id])?;
        found.pop().unwrap_or(Ok(None))
    }

    /// The records of `ids` (in one round trip, with their leases), each
    /// after moving it to `failed` when its instance is gone; `None` for
    /// one unknown or expired, `Err` for one whose value is not a record
    /// (Redis is input: one such value must not fail the others).
    #[allow(clippy::type_complexity)]
    fn read_many(&self, ids: &[&str]) -> Result<Vec<Result<Option<TaskRecord>, Error>>, Error> {
        let prefix = &self.settings.prefix;
        let mut mget = redis::cmd("MGET");
        for id in ids {
            mget.arg(record_key(prefix, id)).arg(lease_key(prefix, id));
        }
        let values: Vec<Option<Vec<u8>>> = self.state.pool.run("get", None, |c| mget.query(c))?;
        let mut found = Vec::with_capacity(ids.len());
        for (id, pair) in ids.iter().zip(values.chunks(2)) {
            let record = match pair.first() {
                Some(Some(value)) => decode(value),
                _ => {
                    found.push(Ok(None));
                    continue;
                }
            };
            let record = match record {
                Some(record) => record,
                None => {
                    found.push(Err(Error::msg(format!("task {}: not a task record", id))));
                    continue;
                }
            };
            let leased = matches!(pair.get(1), Some(Some(_)));
            found.push(Ok(self.check_alive(record, leased)?));
        }
        Ok(found)
    }

    /// `record` as it is, or `failed` when it runs on another instance
    /// whose lease on it ran out.
    fn check_alive(&self, record: TaskRecord, leased: bool) -> Result<Option<TaskRecord>, Error> {
        // One of ours is alive while its lease is renewed (`held`): one
        // whose handler ended without its final status kept is not.
        let ours = self.instance().as_deref() == Some(record.instance.as_str())
            && self.state.held.lock().contains_key(&record.task_id);
        if leased || record.status.is_terminal() || record.instance.is_empty() || ours {
            return Ok(Some(record));
        }
        let mut stop = |r: &mut TaskRecord| {
            if r.move_to(TaskStatus::Failed, Some(STOPPED.to_string())) {
                r.error = Some(ErrorObject::internal(STOPPED));
            }
        };
        log::warn!(
            "task {}: instance {} no longer renews its lease: failed",
            record.task_id,
            record.instance
        );
        match self.compare_and_set(&record.task_id, &mut stop, true)? {
            Some(stopped) => Ok(Some(stopped)),
            // Renewed meanwhile, or gone.
            None => self.plain_read(&record.task_id),
        }
    }

    fn plain_read(&self, id: &str) -> Result<Option<TaskRecord>, Error> {
        let key = record_key(&self.settings.prefix, id);
        let value: Option<Vec<u8>> = self
            .state
            .pool
            .run("get", None, |c| redis::cmd("GET").arg(&key).query(c))?;
        Ok(value.and_then(|v| decode(&v)))
    }

    /// Applies `change` to the latest record and writes it if no one wrote
    /// in between (else again, at most [`MAX_TRIES`] times); with
    /// `unleased`, only while the record's lease is absent (`None` when it
    /// is there). `None` when the record is gone.
    pub(crate) fn compare_and_set(
        &self,
        id: &str,
        change: &mut dyn FnMut(&mut TaskRecord),
        unleased: bool,
    ) -> Result<Option<TaskRecord>, Error> {
        let key = record_key(&self.settings.prefix, id);
        for _ in 0..MAX_TRIES {
            let old: Option<Vec<u8>> = self
                .state
                .pool
                .run("update", None, |c| redis::cmd("GET").arg(&key).query(c))?;
            let old = match old {
                Some(old) => old,
                None => return Ok(None),
            };
            let mut record = decode(&old)
                .ok_or_else(|| Error::msg(format!("task {}: not a task record", id)))?;
            change(&mut record);
            let (value, record) = self.bounded(record)?;
            let keys = self.keys(&record);
            let px = expiry_ms(&record, self.settings.lease);
            let outcome: String = self.state.pool.run("update", None, |c| {
                keys.invoke(&self.state.scripts.write, &value, px, 0)
                    .arg(&old[..])
                    .arg(if unleased { "1" } else { "0" })
                    .invoke(c)
            })?;
            match outcome.as_str() {
                "ok" => {
                    if record.status.is_terminal() {
                        self.state.held.lock().remove(id);
                    }
                    return Ok(Some(record));
                }
                "retry" => continue,
                _ => return Ok(None),
            }
        }
        Err(Error::msg(format!(
            "task {}: {} concurrent writes in a row; not updated",
            id, MAX_TRIES
        )))
    }

    /// Up to `limit` of `owner`'s tasks from `cursor` (a listing member:
    /// the first task of the page), oldest first; members whose record
    /// expired are removed as they are met, so a page may hold fewer.
    pub(crate) fn page(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, Option<String>), Error> {
        let from = match cursor {
            None => "-".to_string(),
            Some(cursor) => match member_id(cursor) {
                Some(_) => format!("[{}", cursor),
                None => return Err(Error::invalid_params(format!("unknown cursor: {}", cursor))),
            },
        };
        let prefix = &self.settings.prefix;
        let listing = owner_key(prefix, owner);
        let members: Vec<String> = self.state.pool.run("list", None, |c| {
            redis::cmd("ZRANGEBYLEX")
                .arg(&listing)
                .arg(&from)
                .arg("+")
                .arg("LIMIT")
                .arg(0)
                .arg(limit.saturating_add(1))
                .query(c)
        })?;
        let next = members.get(limit).cloned();
        let members = &members[..members.len().min(limit)];
        let valid: Vec<(&str, &str)> = members
            .iter()
            .filter_map(|m| member_id(m).map(|id| (m.as_str(), id)))
            .collect();
        let ids: Vec<&str> = valid.iter().map(|&(_, id)| id).collect();
        let mut page = Vec::new();
        if ids.is_empty() {
            return Ok((page, next));
        }
        for (&(member, _), record) in valid.iter().zip(self.read_many(&ids)?) {
            match record {
                Ok(Some(record)) if record.owner == owner => page.push(record),
                Ok(Some(_)) => {}
                // Kept in the listing: another version may read it.
                Err(e) => log::warn!("tasks of a listing: {}; skipped", e),
                Ok(None) => {
                    let _: Reply = self.state.pool.run("list", None, |c| {
                        redis::cmd("ZREM").arg(&listing).arg(member).query(c)
                    })?;
                }
            }
        }
        Ok((page, next))
    }
}
