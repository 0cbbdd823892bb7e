//! An HTTP server the driver starts itself (`--serve`), so that it can stop
//! it mid-session and start it again: the check `session expiry`.

use std::fs::{self, File};
use std::io::Read;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use tiny_mcp::Client;

use crate::checks::expect_text;
use crate::{split_words, Profile};

/// How long a started server may take to accept connections.
const READY_BOUND: Duration = Duration::from_secs(20);

pub(crate) struct Served {
    argv: Vec<String>,
    addr: SocketAddr,
    log: PathBuf,
    child: Option<Child>,
}

impl Served {
    /// Starts `line` (a command, split as `--stdio` is) and waits until
    /// the port of `url` accepts connections.
    pub(crate) fn start(line: &str, url: &str) -> Result<Served, String> {
        let argv = split_words(line)?;
        if argv.is_empty() {
            return Err("--serve needs a command".into());
        }
        let log =
            std::env::temp_dir().join(format!("interop-client-server-{}.log", std::process::id()));
        let mut served = Served {
            argv,
            addr: socket_addr(url)?,
            log,
            child: None,
        };
        served.spawn()?;
        Ok(served)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("{}: {}", self.log.display(), e))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&self.argv[0])
            .args(&self.argv[1..])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{}: {}", self.argv[0], e))?;
        self.child = Some(child);
        self.wait_ready()
    }

    /// Polls (every 100 ms, up to [`READY_BOUND`]) for the port; fails at
    /// once if the server exits.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_BOUND;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    return Err(format!("the server exited ({}) before it listened", status));
                }
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(500)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "nothing listened on {} within {:?}",
                    self.addr, READY_BOUND
                ));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Kills the server (as a crash or a redeploy would end it) and starts
    /// it again on the same port.
    pub(crate) fn restart(&mut self) -> Result<(), String> {
        self.kill();
        self.spawn()
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server and removes its log.
    pub(crate) fn stop(mut self) {
        self.kill();
        let _ = fs::remove_file(&self.log);
    }

    /// The last lines of the server's output, to explain failures.
    pub(crate) fn print_log(&self) {
        let mut text = String::new();
        if let Ok(mut file) = File::open(&self.log) {
            let _ = file.read_to_string(&mut text);
        }
        let lines: Vec<&str> = text.lines().collect();
        eprintln!("interop_client: the served server's output (last lines):");
        for line in &lines[lines.len().saturating_sub(30)..] {
            eprintln!("  {}", line);
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The host and port of an `http://` URL.
fn socket_addr(url: &str) -> Result<SocketAddr, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--serve needs an http:// URL, not {:?}", url))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    authority
        .to_socket_addrs()
        .map_err(|e| format!("{}: {}", authority, e))?
        .next()
        .ok_or_else(|| format!("{} resolves to no address", authority))
}

/// Session expiry (basic/transports (2025-11-25) Session Management: a
/// 404 on the session id means the client MUST start a new session): the
/// server is stopped mid-session and started again, which forgets every
/// session; the next call and a `tools/list` must succeed. Over 2026-07-28
/// there is no session, and the check is that the client gets past its
/// connections to the stopped server.
pub(crate) fn check_expiry(
    client: &Client,
    served: &mut Served,
    profile: Profile,
) -> Result<(), String> {
    let before = client.session_id();
    served.restart()?;
    let outcome = match profile {
        Profile::Everything => expect_text(
            client,
            "echo",
            json!({"message": "after a restart"}),
            "Echo: after a restart",
        ),
        _ => expect_text(
            client,
            "echo",
            json!({"text": "after a restart"}),
            "after a restart",
        ),
    };
    outcome.map_err(|e| format!("the first call after the restart: {}", e))?;
    client
        .list_tools()
        .map_err(|e| format!("tools/list after the restart: {}", e))?;
    let after = client.session_id();
    println!(
        "note session expiry: session {} before the restart, {} after",
        if before.is_some() { "one" } else { "none" },
        match (&before, &after) {
            (_, None) => "none",
            (Some(b), Some(a)) if a == b => "the same (not renewed)",
            _ => "a new one",
        }
    );
    Ok(())
}
