//! The lease thread: this instance renews the lease of each running task
//! it inserted, every third of the lease, so that other instances know it
//! still runs them (DESIGN.md §30).

use std::thread;

use super::store::RedisTaskStore;
use crate::{ServerHandle, WeakServerHandle};

/// [`TaskStore::attach`](crate::TaskStore::attach): remembers the
/// server's instance id, starts the lease thread and the command reader.
pub(crate) fn attach(store: &RedisTaskStore, server: &ServerHandle) {
    let id = server.instance_id().to_string();
    {
        let mut instance = store.state.instance.lock();
        if instance.is_some() {
            log::warn!("a RedisTaskStore serves one server: attached again, ignored");
            return;
        }
        *instance = Some(id.clone());
    }
    let weak = server.downgrade();
    let leases = store.clone();
    let lease_server = weak.clone();
    let spawned = thread::Builder::new()
        .name("tiny-mcp-redis-leases".into())
        .spawn(move || renew_leases(&leases, &lease_server));
    if let Err(e) = spawned {
        log::error!("cannot start the task lease thread: {}", e);
    }
    super::relay::start(store, weak, id);
}

/// Renews every held lease, then sleeps a third of the lease; stops once
/// the server is gone or closed.
fn renew_leases(store: &RedisTaskStore, server: &WeakServerHandle) {
    let every = store.settings.lease / 3;
    loop {
        match server.upgrade() {
            Some(server) => forget_ended(store, &server),
            None => return,
        }
        renew_once(store);
        thread::sleep(every);
    }
}

/// Stops renewing the lease of each task whose handler no longer runs
/// here: its final status was not written (Redis refused the write, or
/// was away), and the record would otherwise stay `working` for as long
/// as this instance lives. Once its lease ran out, the next read moves it
/// to `failed` (`access::check_alive`).
fn forget_ended(store: &RedisTaskStore, server: &ServerHandle) {
    let held: Vec<String> = store.state.held.lock().keys().cloned().collect();
    let ended: Vec<String> = held
        .into_iter()
        .filter(|id| !server.runs_task(id))
        .collect();
    if ended.is_empty() {
        return;
    }
    let mut held = store.state.held.lock();
    for id in ended {
        log::warn!(
            "task {}: its handler ended here without its final status kept; \
             its lease is no longer renewed",
            id
        );
        held.remove(&id);
    }
}

/// One round of renewals; a task gone or final, or whose keys a script
/// cannot use (another type), leaves the held set. A connection error ends
/// the round (logged): the next one tries again.
pub(crate) fn renew_once(store: &RedisTaskStore) {
    let held: Vec<_> = store
        .state
        .held
        .lock()
        .iter()
        .map(|(id, keys)| (id.clone(), keys.clone()))
        .collect();
    if held.is_empty() {
        return;
    }
    let lease = u64::try_from(store.settings.lease.as_millis()).unwrap_or(u64::MAX);
    let outcome = store.state.pool.run("renew a lease", None, |c| {
        let mut done = Vec::new();
        for (id, keys) in &held {
            let kept: redis::RedisResult<i64> = keys
                .invoke(
                    &store.state.scripts.renew,
                    "",
                    lease.saturating_mul(2),
                    lease,
                )
                .invoke(c);
            match kept {
                Ok(0) => done.push(id.clone()),
                Ok(_) => {}
                // This task's keys only (one of another type: a peer's, or
                // another program's on this prefix): the others go on.
                Err(e) if e.code() == Some("WRONGTYPE") => {
                    log::warn!("task {}: its lease cannot be renewed ({}); dropped", id, e);
                    done.push(id.clone());
                }
                // The connection, or Redis as a whole (OOM, an ACL): the
                // next round tries them all again.
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    });
    match outcome {
        Ok(done) => {
            let mut held = store.state.held.lock();
            for id in done {
                held.remove(&id);
            }
        }
        Err(e) => log::warn!("task leases: {}", e),
    }
}
