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

use super::TaskRun;
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

/// The tasks running on this instance, by id, and how many per share.
#[derive(Default)]
pub(crate) struct Runs {
    by_id: HashMap<String, Arc<TaskRun>>,
    per_share: HashMap<String, usize>,
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

    /// Takes a running slot for `run`: at most `max` in total and
    /// `per_share` for its share (a share of `""` is not told apart).
    pub(crate) fn claim(
        &mut self,
        run: Arc<TaskRun>,
        max: usize,
        per_share: usize,
    ) -> Result<(), Error> {
        if self.by_id.len() >= max {
            return Err(Error::msg(format!(
                "{} tasks are running, the limit; retry later",
                max
            )));
        }
        if !run.share.is_empty() {
            let per_share = per_share.max(1);
            let count = self.per_share.entry(run.share.clone()).or_insert(0);
            if *count >= per_share {
                return Err(Error::msg(format!(
                    "{} of this client's tasks are running, its limit \
                     (max_running_per_owner); retry when one ends",
                    per_share
                )));
            }
            *count += 1;
        }
        self.by_id.insert(run.id.clone(), run);
        Ok(())
    }

    /// Gives back the slot of task `id`, if it holds one.
    pub(crate) fn release(&mut self, id: &str) {
        let run = match self.by_id.remove(id) {
            Some(run) => run,
            None => return,
        };
        if let Some(count) = self.per_share.get_mut(&run.share) {
            *count -= 1;
            if *count == 0 {
                self.per_share.remove(&run.share);
            }
        }
    }
}
