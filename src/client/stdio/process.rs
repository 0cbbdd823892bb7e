//! One started server process: starting it, keeping its stderr, telling
//! why it ended, and ending it (basic/lifecycle "Shutdown", stdio,
//! 2025-11-25: close its input, wait, `SIGTERM`, wait, `SIGKILL`).

use std::io::Read;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::group::{self, Members, Signal};
use super::StderrMode;
use crate::error::Error;

/// The last bytes of a child's stderr.
const STDERR_KEEP: usize = 64 * 1024;

/// The longest pause between two looks at whether the server is gone.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// A running child and what it wrote to stderr.
pub(super) struct Process {
    child: Mutex<Option<Child>>,
    kept: Arc<Mutex<Vec<u8>>>,
    /// Disconnected once the child's stderr has been read to its end.
    stderr_done: Option<crossbeam_channel::Receiver<()>>,
}

impl Process {
    /// Starts `command` (in a process group of its own where possible)
    /// with piped stdin and stdout; its stderr goes where `stderr` says,
    /// kept in `kept` when captured.
    pub(super) fn spawn(
        command: &mut Command,
        stderr: StderrMode,
        kept: Arc<Mutex<Vec<u8>>>,
    ) -> Result<(Process, ChildStdin, ChildStdout), Error> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        command.stderr(match stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture => Stdio::piped(),
            StderrMode::Null => Stdio::null(),
        });
        group::isolate(command);
        let mut child = command
            .spawn()
            // The program only: `Command`'s Debug shows the environment
            // given with `env`, where API keys go.
            .map_err(|e| {
                Error::msg(format!(
                    "cannot start the server {:?}: {}",
                    command.get_program(),
                    e
                ))
            })?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::msg("the child's stdin or stdout is not a pipe"));
            }
        };
        let stderr_done = match child
            .stderr
            .take()
            .map(|pipe| keep_stderr(pipe, Arc::clone(&kept)))
        {
            Some(Ok(done)) => Some(done),
            Some(Err(e)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
            None => None,
        };
        let process = Process {
            child: Mutex::new(Some(child)),
            kept,
            stderr_done,
        };
        Ok((process, stdin, stdout))
    }

    /// The process id, while the child runs.
    pub(super) fn id(&self) -> Option<u32> {
        self.child.lock().as_ref().map(|c| c.id())
    }

    /// Whether the child has exited (and not been ended by the client).
    pub(super) fn exited(&self) -> bool {
        match self.child.lock().as_mut() {
            Some(child) => !matches!(child.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The members to end, as they are now (before the child's input
    /// closes, so that its children are seen while it is their parent).
    pub(super) fn members(&self) -> Option<Members> {
        self.child.lock().as_ref().map(Members::of)
    }

    /// Why the child's stdout ended: its exit status if it has exited (a
    /// short wait: stdout closes just before exit), and the end of its
    /// stderr when captured.
    pub(super) fn describe_end(&self) -> String {
        let mut text = String::from("the server closed its stdout");
        let deadline = Instant::now() + Duration::from_millis(500);
        if let Some(child) = self.child.lock().as_mut() {
            loop {
                match child.try_wait() {
                    Ok(Some(status)) => {
                        text = format!("the server exited ({})", status);
                        break;
                    }
                    Ok(None) if Instant::now() < deadline => {
                        thread::sleep(Duration::from_millis(10))
                    }
                    _ => break,
                }
            }
        }
        // What it wrote last is still in the pipe, or in flight to us.
        if let Some(done) = &self.stderr_done {
            let _ = done.recv_timeout(Duration::from_millis(500));
        }
        let stderr = self.kept.lock();
        if !stderr.is_empty() {
            let tail = String::from_utf8_lossy(&stderr[stderr.len().saturating_sub(500)..]);
            text.push_str(&format!("; its stderr ends: {}", tail.trim_end()));
        }
        text
    }

    /// Ends the server whose input is already closed: waits up to
    /// `timeout` for it and everything it started (`members`) to exit,
    /// then sends `SIGTERM`, waits again, then sends `SIGKILL`; always
    /// reaps the child. Returns at once when everything is gone.
    pub(super) fn end(&self, members: Option<Members>, timeout: Duration) {
        let child = self.child.lock().take();
        let (mut child, mut members) = match (child, members) {
            (Some(child), Some(members)) => (child, members),
            (Some(child), None) => {
                let members = Members::of(&child);
                (child, members)
            }
            (None, _) => return,
        };
        for signal in [Signal::Terminate, Signal::Kill] {
            if gone_within(&mut child, &mut members, timeout) {
                return;
            }
            log::debug!(
                "the server (pid {}) still runs {:?} later; {:?}",
                child.id(),
                timeout,
                signal
            );
            members.signal(&mut child, signal);
        }
        // SIGKILL is not instant: the processes are gone a moment later.
        if !gone_within(&mut child, &mut members, timeout) {
            log::warn!("the server (pid {}) outlives SIGKILL", child.id());
        }
        let _ = child.wait();
    }
}

/// Waits up to `timeout` until the child has exited (reaped) and no other
/// member runs; true when that happened.
fn gone_within(child: &mut Child, members: &mut Members, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    loop {
        // An error is a child already reaped.
        let leader_gone = !matches!(child.try_wait(), Ok(None));
        if leader_gone && !members.others_alive() {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        thread::sleep(pause.min(left));
        pause = (pause * 2).min(LOOK_EVERY);
    }
}

fn keep_stderr(
    mut pipe: impl Read + Send + 'static,
    kept: Arc<Mutex<Vec<u8>>>,
) -> Result<crossbeam_channel::Receiver<()>, Error> {
    let (done, stderr_done) = crossbeam_channel::bounded::<()>(0);
    thread::Builder::new()
        .name("tiny-mcp-client-stderr".into())
        .spawn(move || {
            let _done = done;
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut kept = kept.lock();
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_KEEP {
                    let cut = kept.len() - STDERR_KEEP;
                    kept.drain(..cut);
                }
            }
        })?;
    Ok(stderr_done)
}
