//! An elastic pool of named worker threads that run request handlers.
//!
//! A job never waits behind a busy worker: submitting reserves an idle
//! worker, or starts a new one when none is idle (up to `max_workers`).
//! This is the guarantee that a slow tool never delays other requests.
//! Workers live until the pool is joined.

use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::shares::{ShareBook, ShareKey, WorkerShares};
use crate::error::{Error, ErrorKind};
use crate::server::{Job, WorkerGauges};

type Task = Box<dyn FnOnce() + Send + 'static>;

pub(crate) struct WorkerPool {
    core: Arc<PoolCore>,
}

/// What the pool's threads and its jobs share: a job that ends hands the
/// waiting work its share let start to the pool again (`shares.rs`).
struct PoolCore {
    sender: RwLock<Option<Sender<Task>>>,
    receiver: Receiver<Task>,
    /// Workers waiting for a job minus jobs queued: a job submitted while
    /// this is not positive starts a new worker (up to `max_workers`).
    idle: Arc<AtomicIsize>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    /// Workers that have ended, and a signal for each end.
    exits: Arc<(Mutex<usize>, Condvar)>,
    max_workers: usize,
    name: String,
    /// The per-caller and per-peer shares, on a transport with many
    /// clients (HTTP); `None` on stdio and in memory (one client).
    shares: Option<Mutex<ShareBook<Job>>>,
    /// When "all workers busy" was last logged, and how many jobs queued
    /// since: logged at most once per [`BUSY_LOG_INTERVAL`].
    busy_log: Mutex<(Option<Instant>, u64)>,
    /// Workers started and busy, for the metrics.
    gauges: Arc<WorkerGauges>,
}

/// What [`PoolCore::spawn_worker`] did.
enum Spawned {
    Started,
    /// At `max_workers`, or refused while other workers run: the job
    /// waits for one of them.
    AtLimit,
    /// Refused with no worker running: nothing would ever take the job.
    Refused,
}

/// The least time between two "all workers busy" lines.
const BUSY_LOG_INTERVAL: Duration = Duration::from_secs(10);

impl WorkerPool {
    /// A pool of at most `max_workers` threads named after `name`, and
    /// `shares` of them per caller and per peer when it serves many
    /// clients (DESIGN.md §26).
    /// Its workers are counted in `gauges` (the server's metrics).
    pub(crate) fn new(
        name: &str,
        max_workers: usize,
        shares: Option<WorkerShares>,
        gauges: &Arc<WorkerGauges>,
    ) -> WorkerPool {
        // Unbounded: the number of queued jobs is bounded by the in-flight
        // limit of the sessions that submit them.
        let (sender, receiver) = crossbeam_channel::unbounded();
        WorkerPool {
            core: Arc::new(PoolCore {
                sender: RwLock::new(Some(sender)),
                receiver,
                idle: Arc::new(AtomicIsize::new(0)),
                handles: Mutex::new(Vec::new()),
                exits: Arc::new((Mutex::new(0), Condvar::new())),
                max_workers: max_workers.max(1),
                name: name.to_string(),
                shares: shares.map(|shares| Mutex::new(ShareBook::new(shares))),
                busy_log: Mutex::new((None, 0)),
                gauges: Arc::clone(gauges),
            }),
        }
    }

    /// Where a handler's run goes, the one scheduling decision every
    /// transport makes: a quick tool's call
    /// ([`ServerBuilder::quick_tool`](crate::ServerBuilder::quick_tool))
    /// runs here, on the thread that read it; any other job goes to a
    /// worker, when its caller's and its peer's shares have room, else it
    /// waits for them (DESIGN.md §26). Returns `false` when the pool
    /// refused it (it is shutting down): the job was dropped, and the
    /// transport answers for it.
    pub(crate) fn schedule(&self, job: Job) -> bool {
        if job.is_quick() {
            job.run();
            return true;
        }
        PoolCore::start(&self.core, job)
    }

    /// Runs `job` on a worker. Returns `false` (and drops the job) only if
    /// the pool was joined already or no thread could be started at all.
    #[cfg(test)]
    pub(crate) fn execute(&self, job: impl FnOnce() + Send + 'static) -> bool {
        self.core.execute(job)
    }

    /// `true` on one of this pool's worker threads (inside a handler).
    pub(crate) fn is_current_worker(&self) -> bool {
        let me = thread::current().id();
        self.core
            .handles
            .lock()
            .iter()
            .any(|h| h.thread().id() == me)
    }

    /// Stops taking jobs, lets queued jobs finish, and joins every worker
    /// but the calling thread (a handler may stop its own server).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ThreadPanicked`] naming a worker that panicked outside
    /// a handler (handler panics are caught and answered with `-32603`).
    pub(crate) fn join(&self) -> Result<(), Error> {
        self.core.join_within(None)
    }

    /// [`join`](Self::join), waiting at most `limit` for the workers to
    /// end: a worker still running a handler that ignores cancellation is
    /// then left behind (its thread detached, logged) so that shutdown
    /// returns.
    pub(crate) fn join_within(&self, limit: Option<Duration>) -> Result<(), Error> {
        self.core.join_within(limit)
    }
}

impl PoolCore {
    /// Starts `job` on a worker if its shares have room, else keeps it
    /// until a job of the same caller or peer ends.
    fn start(core: &Arc<PoolCore>, job: Job) -> bool {
        let book = match &core.shares {
            Some(book) => book,
            None => return core.execute(move || job.run()),
        };
        if core.sender.read().is_none() {
            return false;
        }
        let key = ShareKey::of(&job);
        let mut shares = book.lock();
        match shares.admit(key.clone(), job) {
            Some(job) => {
                drop(shares);
                PoolCore::run_counted(core, key, job)
            }
            None => {
                log::debug!(
                    "{}: a caller's share of the workers is full; {} request(s) wait",
                    core.name,
                    shares.waiting()
                );
                true
            }
        }
    }

    /// Runs `job` on a worker and, when it ends, gives its share back and
    /// starts the waiting jobs that fit now.
    fn run_counted(core: &Arc<PoolCore>, key: ShareKey, job: Job) -> bool {
        let release = ShareRelease {
            pool: Arc::clone(core),
            key,
        };
        core.execute(move || {
            let _release = release;
            job.run();
        })
    }

    fn execute(&self, job: impl FnOnce() + Send + 'static) -> bool {
        let guard = self.sender.read();
        let sender = match &*guard {
            Some(sender) => sender,
            None => return false,
        };
        if self.idle.fetch_sub(1, Ordering::AcqRel) <= 0 {
            match self.spawn_worker() {
                Spawned::Started => {
                    self.idle.fetch_add(1, Ordering::AcqRel);
                }
                Spawned::AtLimit => {}
                Spawned::Refused => {
                    // No worker at all, and the platform starts none: the
                    // job runs here rather than wait forever (DESIGN.md §31).
                    self.idle.fetch_add(1, Ordering::AcqRel);
                    drop(guard);
                    job();
                    return true;
                }
            }
        }
        sender.send(Box::new(job)).is_ok()
    }

    /// Starts a worker, unless at the limit or the OS refuses.
    fn spawn_worker(&self) -> Spawned {
        let mut handles = self.handles.lock();
        if handles.len() >= self.max_workers {
            drop(handles);
            self.log_busy();
            return Spawned::AtLimit;
        }
        let receiver = self.receiver.clone();
        let idle = Arc::clone(&self.idle);
        let exits = ExitSignal(Arc::clone(&self.exits));
        let gauges = Arc::clone(&self.gauges);
        let spawned = thread::Builder::new()
            .name(format!("{}-{}", self.name, handles.len()))
            .spawn(move || {
                let _alive = Counted::new(&gauges, WorkerGauges::started);
                for job in receiver.iter() {
                    let busy = Counted::new(&gauges, WorkerGauges::busy);
                    job();
                    drop(busy);
                    idle.fetch_add(1, Ordering::AcqRel);
                }
                drop(exits);
            });
        match spawned {
            Ok(handle) => {
                handles.push(handle);
                Spawned::Started
            }
            Err(e) if handles.is_empty() => {
                log::error!(
                    "{}: cannot start a worker thread ({}): running the request on the \
                     thread that received it",
                    self.name,
                    e
                );
                Spawned::Refused
            }
            Err(e) => {
                log::error!("{}: cannot start a worker thread: {}", self.name, e);
                Spawned::AtLimit
            }
        }
    }

    /// Logs that every worker is busy, at most once per interval, with the
    /// number of jobs that queued since the last line (a flood cannot fill
    /// the log).
    fn log_busy(&self) {
        let mut log = self.busy_log.lock();
        log.1 += 1;
        let due = log.0.map_or(true, |at| at.elapsed() >= BUSY_LOG_INTERVAL);
        if due {
            log::warn!(
                "{}: all {} workers busy; {} request(s) queued",
                self.name,
                self.max_workers,
                log.1
            );
            *log = (Some(Instant::now()), 0);
        }
    }

    /// Stops taking jobs (dropping those waiting for a share), lets
    /// queued jobs finish, and joins every worker but the calling thread.
    fn join_within(&self, limit: Option<Duration>) -> Result<(), Error> {
        self.sender.write().take();
        if let Some(book) = &self.shares {
            let never_started = book.lock().drain();
            drop(never_started);
        }
        let handles: Vec<JoinHandle<()>> = std::mem::take(&mut *self.handles.lock());
        let me = thread::current().id();
        let handles: Vec<JoinHandle<()>> = handles
            .into_iter()
            .filter(|h| h.thread().id() != me)
            .collect();
        let handles = match limit {
            Some(limit) => self.wait_for_exits(handles, limit),
            None => handles,
        };
        let mut outcome = Ok(());
        for handle in handles {
            let name = handle.thread().name().unwrap_or("worker").to_string();
            if handle.join().is_err() {
                log::error!("{}: a worker thread panicked", self.name);
                outcome = Err(Error::new(ErrorKind::ThreadPanicked(name)));
            }
        }
        outcome
    }

    /// Waits until every worker in `handles` has ended, at most `limit`;
    /// returns the ended ones and leaves (detaches) the rest.
    fn wait_for_exits(&self, handles: Vec<JoinHandle<()>>, limit: Duration) -> Vec<JoinHandle<()>> {
        let deadline = Instant::now() + limit;
        let (count, ended) = &*self.exits;
        let mut exited = count.lock();
        // Every worker but the caller counts its own end (a panicked one
        // too); a counted worker is about to finish and can be joined.
        while *exited < handles.len() {
            if ended.wait_until(&mut exited, deadline).timed_out() {
                break;
            }
        }
        let all_ended = *exited >= handles.len();
        drop(exited);
        if all_ended {
            return handles;
        }
        let (done, stuck): (Vec<_>, Vec<_>) = handles.into_iter().partition(|h| h.is_finished());
        if !stuck.is_empty() {
            let names: Vec<&str> = stuck.iter().filter_map(|h| h.thread().name()).collect();
            log::warn!(
                "{}: {} handler(s) ignored cancellation for {:?}; leaving their threads \
                 running: {}",
                self.name,
                stuck.len(),
                limit,
                names.join(", ")
            );
        }
        done
    }
}

/// Counts a worker's end and wakes `wait_for_exits`, also when the worker
/// panicked.
struct ExitSignal(Arc<(Mutex<usize>, Condvar)>);

impl Drop for ExitSignal {
    fn drop(&mut self) {
        let (count, ended) = &*self.0;
        *count.lock() += 1;
        ended.notify_all();
    }
}

/// One in a worker gauge (`+1` now, `-1` when dropped, also when a job
/// panics).
struct Counted<'a> {
    gauges: &'a WorkerGauges,
    add: fn(&WorkerGauges, i64),
}

impl<'a> Counted<'a> {
    fn new(gauges: &'a WorkerGauges, add: fn(&WorkerGauges, i64)) -> Counted<'a> {
        add(gauges, 1);
        Counted { gauges, add }
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        (self.add)(self.gauges, -1);
    }
}

/// Gives a job's share back when it ends (a panic in a handler is caught
/// inside the run; this runs on unwinding too), and starts what now fits.
struct ShareRelease {
    pool: Arc<PoolCore>,
    key: ShareKey,
}

impl Drop for ShareRelease {
    fn drop(&mut self) {
        let book = match &self.pool.shares {
            Some(book) => book,
            None => return,
        };
        let started = book.lock().release(&self.key);
        if self.pool.sender.read().is_none() {
            return; // shutting down: they are dropped, never started
        }
        for job in started {
            let key = ShareKey::of(&job);
            PoolCore::run_counted(&self.pool, key, job);
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // A job never waits behind a busy worker (issue: slow tool never delays others).
    #[test]
    fn a_blocked_job_does_not_delay_the_next() {
        let pool = WorkerPool::new("test-pool", 8, None, &Arc::default());
        let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        pool.execute(move || {
            let _ = release_rx.recv();
        });
        let done = done_tx.clone();
        pool.execute(move || {
            let _ = done.send(2);
        });
        assert_eq!(done_rx.recv_timeout(Duration::from_secs(5)), Ok(2));
        // An idle worker is reused rather than a new one started.
        pool.execute(move || {
            let _ = done_tx.send(3);
        });
        assert_eq!(done_rx.recv_timeout(Duration::from_secs(5)), Ok(3));
        let _ = release_tx.send(());
        assert!(pool.join().is_ok());
        assert!(!pool.execute(|| {}));
    }

    // A worker that panics outside a handler is reported by join; a job
    // knows it runs on one of the pool's workers (so that join skips it).
    #[test]
    fn join_reports_panics_and_skips_the_caller() {
        let pool = Arc::new(WorkerPool::new("test-panic", 4, None, &Arc::default()));
        pool.execute(|| panic!("a bug outside any handler"));
        let inner = Arc::clone(&pool);
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        pool.execute(move || {
            let _ = done_tx.send(inner.is_current_worker());
        });
        assert_eq!(done_rx.recv_timeout(Duration::from_secs(5)), Ok(true));
        match pool.join() {
            Err(e) => assert!(matches!(e.kind(), ErrorKind::ThreadPanicked(_)), "{:?}", e),
            Ok(()) => panic!("the panicked worker was not reported"),
        }
    }
}
