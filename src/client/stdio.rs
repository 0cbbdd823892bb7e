//! A server as a child process, spoken to on its stdin and stdout
//! (basic/transports "stdio": the client launches the server;
//! basic/lifecycle "Shutdown", stdio: the client ends it by closing its
//! input, then by `SIGTERM`, then by `SIGKILL`, STDIO-4).
//!
//! [`ChildProcess`] is the link: a [`Duplex`] on the pipes of one
//! started process (`process.rs`), which ends together with everything it
//! started (`group.rs`).

mod group;
mod process;

use std::io::BufReader;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;

use self::process::Process;
use super::duplex::{Duplex, DuplexLimits};
use super::inbox::Inbox;
use super::link::{Link, Outgoing, Wait};
use crate::error::Error;
use crate::protocol::Era;

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

/// How a stdio server is started and ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StdioSettings {
    pub(crate) stderr: StderrMode,
    pub(crate) limits: DuplexLimits,
    /// Each of the two waits of a shutdown: after closing the child's
    /// input, and after `SIGTERM`.
    pub(crate) shutdown_timeout: Duration,
}

/// A server started as a child process: the client's link to it, and
/// what the client tells of it (its process id, its stderr).
pub(crate) struct ChildProcess {
    current: Mutex<Arc<Started>>,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    /// Kept to start the server again (`restart`).
    command: Mutex<Command>,
    inbox: Arc<Inbox>,
    settings: StdioSettings,
}

/// One started process and the duplex link on its pipes.
struct Started {
    duplex: Duplex,
    process: Arc<Process>,
}

impl ChildProcess {
    /// Starts `command` and a duplex link on its stdin and stdout.
    pub(crate) fn start(
        mut command: Command,
        settings: StdioSettings,
        inbox: Arc<Inbox>,
    ) -> Result<ChildProcess, Error> {
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let started = Started::spawn(
            &mut command,
            &settings,
            Arc::clone(&inbox),
            Arc::clone(&stderr),
        )?;
        Ok(ChildProcess {
            current: Mutex::new(Arc::new(started)),
            stderr,
            command: Mutex::new(command),
            inbox,
            settings,
        })
    }

    /// Whether the child has exited (by itself: the client has not closed
    /// it).
    pub(crate) fn exited(&self) -> bool {
        self.current().process.exited()
    }

    /// Starts the server again, with the same command and settings, after
    /// it exited: for a 2025-era server that exits on `server/discover`
    /// and is then spoken to with `initialize`. What the old one left
    /// running is ended first.
    ///
    /// # Errors
    ///
    /// The command cannot start again.
    pub(crate) fn restart(&self) -> Result<(), Error> {
        let started = Started::spawn(
            &mut self.command.lock(),
            &self.settings,
            Arc::clone(&self.inbox),
            Arc::clone(&self.stderr),
        )?;
        let old = std::mem::replace(&mut *self.current.lock(), Arc::new(started));
        old.close(self.settings.shutdown_timeout);
        Ok(())
    }

    /// The process id, while the child runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.current().process.id()
    }

    fn current(&self) -> Arc<Started> {
        Arc::clone(&self.current.lock())
    }
}

impl Started {
    fn spawn(
        command: &mut Command,
        settings: &StdioSettings,
        inbox: Arc<Inbox>,
        stderr: Arc<Mutex<Vec<u8>>>,
    ) -> Result<Started, Error> {
        let (process, stdin, stdout) = Process::spawn(command, settings.stderr, stderr)?;
        let process = Arc::new(process);
        let for_end = Arc::clone(&process);
        let duplex = Duplex::start(
            Box::new(BufReader::new(stdout)),
            Box::new(stdin),
            inbox,
            settings.limits,
            Box::new(move || for_end.describe_end()),
        );
        match duplex {
            Ok(duplex) => Ok(Started { duplex, process }),
            Err(e) => {
                process.end(None, Duration::ZERO);
                Err(e)
            }
        }
    }

    /// Closes the child's input, fails what still waits, and ends the
    /// child and what it started.
    fn close(&self, shutdown_timeout: Duration) {
        let members = self.process.members();
        self.duplex.close();
        self.process.end(members, shutdown_timeout);
    }
}

impl Link for ChildProcess {
    fn request(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error> {
        self.current().duplex.request(out, wait)
    }

    fn request_uncancelled(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error> {
        self.current().duplex.request_uncancelled(out, wait)
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.current().duplex.notify(method, params)
    }

    fn settle(&self, _era: Era, _version: &str) {}

    fn close(&self) {
        self.current().close(self.settings.shutdown_timeout);
    }
}
