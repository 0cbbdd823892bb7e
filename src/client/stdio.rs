//! A server as a child process, spoken to on its stdin and stdout
//! (basic/transports "stdio": the client launches the server; STDIO-4,
//! the client ends it by closing its input, then by signals).

use std::io::{BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::duplex::{Duplex, DuplexLimits};
use super::inbox::Inbox;
use crate::error::Error;

/// What happens to the child's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrMode {
    /// Passed through to this process's stderr (the default): the server's
    /// logs stay visible.
    Inherit,
    /// Kept, up to 64 KiB (the newest bytes), for
    /// [`Client::stderr`](crate::Client::stderr): put in the error when the
    /// child exits early.
    Capture,
    /// Discarded.
    Null,
}

/// The last bytes of a child's stderr.
const STDERR_KEEP: usize = 64 * 1024;

/// How long close waits for the child to exit after closing its stdin,
/// before it kills it.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The child and what it wrote to stderr.
pub(crate) struct ChildProcess {
    child: Mutex<Option<Child>>,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    /// Disconnected once the child's stderr has been read to its end.
    stderr_done: Option<crossbeam_channel::Receiver<()>>,
}

/// Spawns `command` with piped stdin and stdout and starts a duplex link
/// on them.
pub(crate) fn spawn(
    mut command: Command,
    stderr: StderrMode,
    inbox: Arc<Inbox>,
    limits: DuplexLimits,
) -> Result<(Duplex, Arc<ChildProcess>), Error> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    command.stderr(match stderr {
        StderrMode::Inherit => Stdio::inherit(),
        StderrMode::Capture => Stdio::piped(),
        StderrMode::Null => Stdio::null(),
    });
    let mut child = command
        .spawn()
        .map_err(|e| Error::msg(format!("cannot start the server {:?}: {}", command, e)))?;
    let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
        (Some(stdin), Some(stdout)) => (stdin, stdout),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::msg("the child's stdin or stdout is not a pipe"));
        }
    };
    let kept = Arc::new(Mutex::new(Vec::new()));
    let stderr_done = match child.stderr.take() {
        Some(pipe) => Some(keep_stderr(pipe, Arc::clone(&kept))?),
        None => None,
    };
    let process = Arc::new(ChildProcess {
        child: Mutex::new(Some(child)),
        stderr: kept,
        stderr_done,
    });
    let for_end = Arc::clone(&process);
    let duplex = Duplex::start(
        Box::new(BufReader::new(stdout)),
        Box::new(stdin),
        inbox,
        limits,
        Box::new(move || for_end.describe_end()),
    )?;
    let for_close = Arc::clone(&process);
    duplex.on_close(move || for_close.reap());
    Ok((duplex, process))
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

impl ChildProcess {
    /// Why the child's stdout ended: its exit status if it has exited (a
    /// short wait: stdout closes just before exit), and the end of its
    /// stderr when captured.
    fn describe_end(&self) -> String {
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
        let stderr = self.stderr.lock();
        if !stderr.is_empty() {
            let tail = String::from_utf8_lossy(&stderr[stderr.len().saturating_sub(500)..]);
            text.push_str(&format!("; its stderr ends: {}", tail.trim_end()));
        }
        text
    }

    /// Waits up to [`EXIT_GRACE`] for the child to exit (its stdin is
    /// closed), then kills it; always reaps it.
    pub(crate) fn reap(&self) {
        let child = self.child.lock().take();
        let mut child = match child {
            Some(child) => child,
            None => return,
        };
        let deadline = Instant::now() + EXIT_GRACE;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => break,
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// The process id, while the child runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.lock().as_ref().map(|c| c.id())
    }
}
