//! The Redis keys of one task, and how long its record is kept.

use std::time::{Duration, SystemTime};

use redis::ScriptInvocation;

use super::record::epoch_ms;
use crate::TaskRecord;

/// The eight keys every script takes (`scripts.rs`), and the arguments
/// that say which of them count the task.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    /// `<prefix>task:<id>`, and `<prefix>lease:<id>`.
    pub(crate) record: String,
    pub(crate) lease: String,
    /// `<prefix>count`, `<prefix>share:<share>`, `<prefix>peer:<peer>`,
    /// `<prefix>anonymous`.
    counts: [String; 4],
    /// `<prefix>owner:<owner>`: the owner's listing; and
    /// `<prefix>expiry:<owner>`: its members by expiry.
    pub(crate) owner: String,
    owner_expiry: String,
    /// `"SPA"`, each `1` when the share, the peer, the anonymous set
    /// counts the task.
    flags: String,
    /// The task's member in the listing.
    member: String,
    id: String,
}

impl Keys {
    pub(crate) fn of(prefix: &str, record: &TaskRecord) -> Keys {
        let bit = |on: bool| if on { '1' } else { '0' };
        let flags = [
            bit(!record.share.is_empty()),
            bit(!record.peer.is_empty()),
            bit(record.owner.is_empty()),
        ]
        .iter()
        .collect();
        Keys {
            record: record_key(prefix, &record.task_id),
            lease: lease_key(prefix, &record.task_id),
            counts: [
                format!("{}count", prefix),
                format!("{}share:{}", prefix, record.share),
                format!("{}peer:{}", prefix, record.peer),
                format!("{}anonymous", prefix),
            ],
            owner: owner_key(prefix, &record.owner),
            owner_expiry: format!("{}expiry:{}", prefix, record.owner),
            flags,
            member: member(record),
            id: record.task_id.clone(),
        }
    }

    /// A script call with the eight keys and the six common arguments
    /// (`value`: the record's JSON, `px`: its key's expiry in ms, `lease`:
    /// ms, 0 for none).
    pub(crate) fn invoke<'a>(
        &self,
        script: &'a redis::Script,
        value: &str,
        px: u64,
        lease: u64,
    ) -> ScriptInvocation<'a> {
        let mut call = script.prepare_invoke();
        call.key(&self.record).key(&self.lease);
        for key in &self.counts {
            call.key(key);
        }
        call.key(&self.owner)
            .key(&self.owner_expiry)
            .arg(epoch_ms(SystemTime::now()))
            .arg(&self.id)
            .arg(value)
            .arg(px.max(1))
            .arg(&self.flags)
            .arg(&self.member)
            .arg(lease);
        call
    }
}

pub(crate) fn record_key(prefix: &str, id: &str) -> String {
    format!("{}task:{}", prefix, id)
}

pub(crate) fn lease_key(prefix: &str, id: &str) -> String {
    format!("{}lease:{}", prefix, id)
}

pub(crate) fn owner_key(prefix: &str, owner: &str) -> String {
    format!("{}owner:{}", prefix, owner)
}

/// The record's member in its owner's listing: `<created ms, 16 digits>:<id>`,
/// so that the lexical order is the order of creation.
fn member(record: &TaskRecord) -> String {
    format!("{:016}:{}", epoch_ms(record.created_at), record.task_id)
}

/// The id in a listing member; `None` when `member` is not one (a cursor
/// the store did not give out).
pub(crate) fn member_id(member: &str) -> Option<&str> {
    let (time, id) = (member.get(..16)?, member.get(16..)?);
    let id = id.strip_prefix(':')?;
    if time.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty() {
        Some(id)
    } else {
        None
    }
}

/// How long the record's key lives from now (ms): until `created_at +
/// ttl`; a running task at least `2 × lease` (its lease renewals extend
/// it while they go on); a task that ended past its TTL, `ttl` more.
pub(crate) fn expiry_ms(record: &TaskRecord, lease: Duration) -> u64 {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let deadline = epoch_ms(record.created_at).saturating_add(ms(record.ttl));
    let left = deadline.saturating_sub(epoch_ms(SystemTime::now()));
    if !record.status.is_terminal() {
        left.max(ms(lease).saturating_mul(2)).max(1)
    } else if left > 0 {
        left
    } else {
        ms(record.ttl).max(1)
    }
}
