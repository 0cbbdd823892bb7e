//! The threads `mcp bridge` forwards requests on: each request still has a
//! thread to itself while it runs, but a thread that has answered waits
//! [`KEEP_IDLE`] for the next request before it ends, instead of ending at
//! once. Starting a thread per request (its stack mapped and zeroed, the
//! allocator's arena for it, unmapped again at its end) cost the bridge
//! several times the CPU of the forwarding itself (docs/perf.md, "The
//! bridge").

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// How long a thread with nothing to do waits for a request.
pub const KEEP_IDLE: Duration = Duration::from_secs(30);

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job; more than `jobs.len()` whenever a job
    /// is queued, so that each queued job has a thread to take it.
    idle: usize,
}

/// See the module docs.
#[derive(Clone, Default)]
pub struct Workers {
    shared: Arc<(Mutex<Queue>, Condvar)>,
}

fn lock(mutex: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Workers {
    pub fn new() -> Workers {
        Workers::default()
    }

    /// Runs `job` on a waiting thread, or on a new one when none waits.
    ///
    /// # Errors
    ///
    /// A new thread could not be started; `job` did not run.
    pub fn run(&self, job: impl FnOnce() + Send + 'static) -> io::Result<()> {
        let (queue, wake) = &*self.shared;
        {
            let mut q = lock(queue);
            if q.idle > q.jobs.len() {
                q.jobs.push_back(Box::new(job));
                wake.notify_one();
                return Ok(());
            }
        }
        let shared = Arc::clone(&self.shared);
        thread::Builder::new()
            .name("mcp-bridge-request".into())
            .spawn(move || {
                job();
                wait_for_jobs(&shared);
            })
            .map(drop)
    }
}

/// A thread's life after its first job: the next queued one, until none
/// comes for [`KEEP_IDLE`].
fn wait_for_jobs(shared: &(Mutex<Queue>, Condvar)) {
    let (queue, wake) = shared;
    let mut q = lock(queue);
    q.idle += 1;
    loop {
        if let Some(job) = q.jobs.pop_front() {
            q.idle -= 1;
            drop(q);
            job();
            q = lock(queue);
            q.idle += 1;
            continue;
        }
        let (next, waited) = wake
            .wait_timeout(q, KEEP_IDLE)
            .unwrap_or_else(|e| e.into_inner());
        q = next;
        if waited.timed_out() && q.jobs.is_empty() {
            q.idle -= 1;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn every_job_runs_and_threads_are_reused() {
        let workers = Workers::new();
        let (done, finished) = channel();
        for round in 0..3 {
            for i in 0..8 {
                let done = done.clone();
                workers.run(move || done.send((round, i)).unwrap()).unwrap();
            }
            for _ in 0..8 {
                finished.recv_timeout(Duration::from_secs(5)).unwrap();
            }
        }
        let q = lock(&workers.shared.0);
        assert!(q.jobs.is_empty());
    }

    #[test]
    fn jobs_run_at_once_side_by_side() {
        // Eight jobs that each wait for all eight to have started: they
        // finish only if each has a thread of its own.
        let workers = Workers::new();
        let barrier = Arc::new(std::sync::Barrier::new(8));
        let (done, finished) = channel();
        for _ in 0..2 {
            for _ in 0..8 {
                let (barrier, done) = (Arc::clone(&barrier), done.clone());
                workers
                    .run(move || {
                        barrier.wait();
                        done.send(()).unwrap();
                    })
                    .unwrap();
            }
            for _ in 0..8 {
                finished.recv_timeout(Duration::from_secs(5)).unwrap();
            }
        }
    }
}
