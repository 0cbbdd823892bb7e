//! The worker pool's shares (DESIGN.md §26): how many workers one caller,
//! and one peer address, may hold at once, and the queue of work waiting
//! beyond a share, served a caller at a time in turn.
//!
//! A pure book-keeping structure: the pool asks it whether a job may start
//! ([`ShareBook::admit`]) and tells it when one ended
//! ([`ShareBook::release`]), which hands back the waiting jobs that now
//! fit. It holds no thread and does no I/O.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use crate::server::{CallerKey, Config, Job};

/// The shares, as numbers of workers: each at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WorkerShares {
    /// Most workers one caller holds at once.
    pub(crate) per_caller: usize,
    /// Most workers the callers of one peer address hold together.
    pub(crate) per_peer: usize,
}

impl WorkerShares {
    /// The shares a server's settings name, or their defaults: a quarter
    /// of the workers per caller, half per peer.
    pub(crate) fn of(config: &Config) -> WorkerShares {
        let max = config.max_workers.max(1);
        WorkerShares {
            per_caller: config.max_workers_per_caller.unwrap_or(max / 4).max(1),
            per_peer: config.max_workers_per_peer.unwrap_or(max / 2).max(1),
        }
    }
}

/// Who a job is counted against: its caller and, when per-peer shares
/// are on, its peer address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShareKey {
    pub(crate) caller: CallerKey,
    pub(crate) peer: Option<IpAddr>,
}

impl ShareKey {
    /// The caller and peer of `job`.
    pub(crate) fn of(job: &Job) -> ShareKey {
        ShareKey {
            caller: job.caller_key(),
            peer: job.peer(),
        }
    }

    /// `Nobody` is not one caller but everyone nothing is known of: no
    /// per-caller share applies to it (the per-peer share still does).
    fn counts_caller(&self) -> bool {
        self.caller != CallerKey::Nobody
    }
}

/// Running counts and waiting work. `T` is the job.
pub(crate) struct ShareBook<T> {
    shares: WorkerShares,
    running: HashMap<CallerKey, usize>,
    peers: HashMap<IpAddr, usize>,
    /// Jobs beyond their caller's share, per caller, in arrival order.
    waiting: HashMap<CallerKey, VecDeque<(ShareKey, T)>>,
    /// The callers with waiting jobs, in the order they are served.
    turns: VecDeque<CallerKey>,
    /// How many jobs wait in all.
    waiting_count: usize,
}

impl<T> ShareBook<T> {
    pub(crate) fn new(shares: WorkerShares) -> ShareBook<T> {
        ShareBook {
            shares,
            running: HashMap::new(),
            peers: HashMap::new(),
            waiting: HashMap::new(),
            turns: VecDeque::new(),
            waiting_count: 0,
        }
    }

    /// `Some(job)` when it may start now (and is counted as running);
    /// `None` when it waits for its caller's or its peer's share. A job
    /// waits too while older jobs of its caller wait, so that a caller's
    /// work starts in the order it came.
    pub(crate) fn admit(&mut self, key: ShareKey, job: T) -> Option<T> {
        if !self.waiting.contains_key(&key.caller) && self.fits(&key) {
            self.take(&key);
            return Some(job);
        }
        let queue = self.waiting.entry(key.caller.clone()).or_default();
        if queue.is_empty() {
            self.turns.push_back(key.caller.clone());
        }
        queue.push_back((key, job));
        self.waiting_count += 1;
        None
    }

    /// Counts the end of a job admitted under `key`, and returns the
    /// waiting jobs that fit now, each counted as running: one pass over
    /// the waiting callers in turn, at most one job each, so that a caller
    /// with many waiting jobs does not go before one with a single job.
    pub(crate) fn release(&mut self, key: &ShareKey) -> Vec<T> {
        self.give_back(key);
        let mut started = Vec::new();
        for _ in 0..self.turns.len() {
            let caller = match self.turns.pop_front() {
                Some(caller) => caller,
                None => break,
            };
            let fits = match self.waiting.get(&caller).and_then(VecDeque::front) {
                Some((key, _)) => self.fits(key),
                None => false,
            };
            if !fits {
                self.turns.push_back(caller);
                continue;
            }
            if let Some((key, job)) = self.pop_waiting(&caller) {
                self.take(&key);
                started.push(job);
            }
            if self.waiting.contains_key(&caller) {
                self.turns.push_back(caller);
            }
        }
        started
    }

    /// How many jobs wait beyond their shares.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting_count
    }

    /// Empties the queues (the pool is shutting down): the jobs are
    /// returned to be dropped outside the pool's lock.
    pub(crate) fn drain(&mut self) -> Vec<T> {
        self.turns.clear();
        self.waiting_count = 0;
        self.waiting
            .drain()
            .flat_map(|(_, queue)| queue.into_iter().map(|(_, job)| job))
            .collect()
    }

    fn fits(&self, key: &ShareKey) -> bool {
        let caller_ok = !key.counts_caller()
            || self.running.get(&key.caller).copied().unwrap_or(0) < self.shares.per_caller;
        let peer_ok = match key.peer {
            Some(peer) => self.peers.get(&peer).copied().unwrap_or(0) < self.shares.per_peer,
            None => true,
        };
        caller_ok && peer_ok
    }

    fn take(&mut self, key: &ShareKey) {
        if key.counts_caller() {
            *self.running.entry(key.caller.clone()).or_insert(0) += 1;
        }
        if let Some(peer) = key.peer {
            *self.peers.entry(peer).or_insert(0) += 1;
        }
    }

    fn give_back(&mut self, key: &ShareKey) {
        if key.counts_caller() {
            decrement(&mut self.running, &key.caller);
        }
        if let Some(peer) = key.peer {
            decrement(&mut self.peers, &peer);
        }
    }

    fn pop_waiting(&mut self, caller: &CallerKey) -> Option<(ShareKey, T)> {
        let queue = self.waiting.get_mut(caller)?;
        let next = queue.pop_front();
        if queue.is_empty() {
            self.waiting.remove(caller);
        }
        if next.is_some() {
            self.waiting_count -= 1;
        }
        next
    }
}

/// Lowers a count, forgetting it at zero (the maps hold only callers and
/// peers with running work).
fn decrement<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(session: u64, peer: &str) -> ShareKey {
        ShareKey {
            caller: CallerKey::Session(session),
            peer: peer.parse().ok(),
        }
    }

    fn book(per_caller: usize, per_peer: usize) -> ShareBook<u32> {
        ShareBook::new(WorkerShares {
            per_caller,
            per_peer,
        })
    }

    // Issue 27 item 1: a caller beyond its share waits; its end lets the
    // next of its jobs start, in order.
    #[test]
    fn a_caller_waits_beyond_its_share() {
        let mut book = book(2, 100);
        let a = key(1, "10.0.0.1");
        assert_eq!(book.admit(a.clone(), 1), Some(1));
        assert_eq!(book.admit(a.clone(), 2), Some(2));
        assert_eq!(book.admit(a.clone(), 3), None);
        assert_eq!(book.admit(a.clone(), 4), None);
        assert_eq!(book.waiting(), 2);
        let b = key(2, "10.0.0.1");
        assert_eq!(book.admit(b, 10), Some(10), "another caller is not held");
        assert_eq!(book.release(&a), vec![3]);
        assert_eq!(book.release(&a), vec![4]);
        assert!(book.release(&a).is_empty());
        assert_eq!(book.waiting(), 0);
    }

    // Issue 27 item 1: the callers of one peer share its part; another
    // peer keeps its own.
    #[test]
    fn a_peer_waits_beyond_its_share() {
        let mut book = book(10, 2);
        assert_eq!(book.admit(key(1, "10.0.0.1"), 1), Some(1));
        assert_eq!(book.admit(key(2, "10.0.0.1"), 2), Some(2));
        assert_eq!(book.admit(key(3, "10.0.0.1"), 3), None);
        assert_eq!(book.admit(key(4, "10.0.0.2"), 4), Some(4));
        assert_eq!(book.release(&key(1, "10.0.0.1")), vec![3]);
    }

    // Waiting callers are served in turn, one job each per pass: a caller
    // with many waiting jobs does not go first again and again.
    #[test]
    fn waiting_callers_take_turns() {
        let mut book = book(1, 2);
        let heavy = key(1, "10.0.0.1");
        let light = key(2, "10.0.0.1");
        assert_eq!(book.admit(heavy.clone(), 1), Some(1));
        assert_eq!(book.admit(light.clone(), 20), Some(20));
        for job in 2..6 {
            assert_eq!(book.admit(heavy.clone(), job), None);
        }
        assert_eq!(book.admit(light.clone(), 21), None);
        // The light caller's job ends first: its own next starts, the
        // heavy caller's share is still full.
        assert_eq!(book.release(&light), vec![21]);
        assert_eq!(book.release(&heavy), vec![2]);
        assert_eq!(book.release(&heavy), vec![3]);
        assert_eq!(book.drain().len(), 2);
        assert_eq!(book.waiting(), 0);
    }

    // `Nobody` (per-peer shares off, no principal, no session) is many
    // clients the server cannot tell apart: no per-caller share.
    #[test]
    fn nobody_has_no_caller_share() {
        let mut book = book(1, 1);
        let nobody = ShareKey {
            caller: CallerKey::Nobody,
            peer: None,
        };
        for job in 0..5 {
            assert_eq!(book.admit(nobody.clone(), job), Some(job));
        }
    }
}
