//! Whose a task is: who may see it (its owner, TASK-10) and whom it is
//! counted against (its share, DESIGN.md §26), and the running tasks of
//! this instance, counted in total and per share.
//!
//! The two keys differ only for a 2026-07-28 caller with neither a
//! principal nor a session (stateless HTTP): its task is visible to
//! whoever holds the random id, as before, but counted against its peer
//! address, so that one host's stateless traffic fills its own share of
//! the store and of the running slots, not everyone's.

use std::collections::HashMap;
use std::sync::Arc;

use super::{TaskLimits, TaskRun};
use crate::error::Error;
use crate::protocol::Era;
use crate::server::caller::{Caller, CallerKey};
use crate::server::session::Session;

/// The caller a request's tasks belong to: the principal (issuer, subject
/// and client id), else its 2025-11-25 session or connection, else its
/// peer address, else nobody known.
fn caller_key(session: &Session, caller: &Caller, era: Era) -> CallerKey {
    let lasting = if era == Era::V2025_11_25 || session.is_connection() {
        Some(session.key())
    } else {
        None
    };
    caller.key(lasting)
}

/// Who may see the tasks a request makes or names: its principal (issuer,
/// subject and client id, as sessions and `requestState` bind them), else
/// its 2025-11-25 session or connection, else (`""`) anyone with the id.
pub(crate) fn owner_of(session: &Session, caller: &Caller, era: Era) -> String {
    match caller_key(session, caller, era) {
        CallerKey::Peer(_) | CallerKey::Nobody => String::new(),
        key => key.to_string(),
    }
}

/// Whom a request's tasks are counted against: its owner, else its peer
/// address; `""` when nothing tells its caller apart (no principal, no
/// session, per-peer shares off), which only the anonymous total bounds.
pub(crate) fn share_of(session: &Session, caller: &Caller, era: Era) -> String {
    match caller_key(session, caller, era) {
        CallerKey::Nobody => String::new(),
        key => key.to_string(),
    }
}

/// The peer address a request's tasks are counted against besides its
/// share: the caller's, when it has no principal (a principal's own share
/// bounds it) and per-peer shares are on; else `""`.
pub(crate) fn peer_of(caller: &Caller) -> String {
    match (&caller.principal, caller.peer) {
        (None, Some(peer)) => peer.to_string(),
        _ => String::new(),
    }
}

/// The tasks running on this instance, by id, and how many per share and
/// per peer address.
#[derive(Default)]
pub(crate) struct Runs {
    by_id: HashMap<String, Arc<TaskRun>>,
    per_share: HashMap<String, usize>,
    per_peer: HashMap<String, usize>,
}

impl Runs {
    /// The running task `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&Arc<TaskRun>> {
        self.by_id.get(id)
    }

    /// Every running task.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<TaskRun>> {
        self.by_id.values()
    }

    /// Takes a running slot for `run`: at most `max_running` in total,
    /// `max_running_per_owner` for its share and `max_running_per_peer`
    /// for its peer (`""` is not told apart).
    pub(crate) fn claim(&mut self, run: Arc<TaskRun>, limits: &TaskLimits) -> Result<(), Error> {
        let max = limits.max_running;
        if self.by_id.len() >= max {
            return Err(Error::msg(format!(
                "{} tasks are running, the limit; retry later",
                max
            )));
        }
        let per_share = limits.max_running_per_owner.max(1);
        if count(&self.per_share, &run.share) >= per_share {
            return Err(Error::msg(format!(
                "{} of this client's tasks are running, its limit \
                 (max_running_per_owner); retry when one ends",
                per_share
            )));
        }
        let per_peer = limits.max_running_per_peer.max(1);
        if count(&self.per_peer, &run.peer) >= per_peer {
            return Err(Error::msg(format!(
                "{} tasks of clients at this address are running, their \
                 limit (max_running_per_peer); retry when one ends",
                per_peer
            )));
        }
        raise(&mut self.per_share, &run.share);
        raise(&mut self.per_peer, &run.peer);
        self.by_id.insert(run.id.clone(), run);
        Ok(())
    }

    /// Gives back the slot of task `id`, if it holds one.
    pub(crate) fn release(&mut self, id: &str) {
        let run = match self.by_id.remove(id) {
            Some(run) => run,
            None => return,
        };
        lower(&mut self.per_share, &run.share);
        lower(&mut self.per_peer, &run.peer);
    }
}

/// The count of `key`; `""` (not told apart) never counts.
fn count(counts: &HashMap<String, usize>, key: &str) -> usize {
    if key.is_empty() {
        0
    } else {
        counts.get(key).copied().unwrap_or(0)
    }
}

fn raise(counts: &mut HashMap<String, usize>, key: &str) {
    if !key.is_empty() {
        *counts.entry(key.to_string()).or_insert(0) += 1;
    }
}

/// Lowers the count of `key`, forgetting it at zero.
pub(super) fn lower(counts: &mut HashMap<String, usize>, key: &str) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}
