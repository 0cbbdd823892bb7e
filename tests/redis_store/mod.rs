//! `RedisTaskStore` (feature `redis`, DESIGN.md §30) against a real
//! Redis: Debian's `/usr/bin/redis-server` (or the program named by
//! `TINY_MCP_REDIS_SERVER`, e.g. `valkey-server`), started per test on a
//! free loopback port with nothing saved, killed when the test ends.
//!
//! `contract` checks the `TaskStore` contract (as `MemoryTaskStore`
//! keeps it: records, listing, expiry, bounds, final states, concurrent
//! updates); `relay` runs two servers on one Redis, each with its own
//! store, and checks commands between them and leases.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tiny_mcp::{Era, TaskRecord};

mod contract;
mod hostile;
mod relay;

const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// The server program: `TINY_MCP_REDIS_SERVER`, else [`REDIS_SERVER`].
fn program() -> String {
    std::env::var("TINY_MCP_REDIS_SERVER").unwrap_or_else(|_| REDIS_SERVER.to_string())
}

/// A redis-server child process on 127.0.0.1, killed on drop.
pub(crate) struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    /// Starts one and waits (at most 10 s) until it answers PING.
    ///
    /// Panics with what to install when redis-server is missing: the
    /// tests must not pass without running.
    pub(crate) fn start() -> Redis {
        let program = program();
        assert!(
            std::path::Path::new(&program).exists(),
            "{} is missing: install Debian's redis-server package (CI does) \
             to run the redis_store tests, or name another server in \
             TINY_MCP_REDIS_SERVER",
            program
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Redis {
            child: spawn(port),
            port,
        }
        .answering()
    }

    /// Kills it and starts a new one on the same port (empty: nothing is
    /// saved), as when Redis restarts.
    pub(crate) fn restart(mut self) -> Redis {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn(self.port);
        self.answering()
    }

    /// Waits (at most 10 s) until it answers PING.
    fn answering(self) -> Redis {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.pings() {
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer PING within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        self
    }

    /// `redis://127.0.0.1:<port>/`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn pings(&self) -> bool {
        let mut stream = match TcpStream::connect(("127.0.0.1", self.port)) {
            Ok(stream) => stream,
            Err(_) => return false,
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut answer = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut answer).is_ok()
            && &answer == b"+PONG\r\n"
    }
}

fn spawn(port: u16) -> Child {
    Command::new(program())
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts")
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `working` 2026-07-28 task whose times are whole milliseconds (what
/// the store keeps), so that what comes back compares equal.
pub(crate) fn record(id: &str, owner: &str, ttl_ms: u64) -> TaskRecord {
    let mut record = TaskRecord::new(
        id.into(),
        owner.into(),
        Era::V2026_07_28,
        Duration::from_millis(ttl_ms),
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970");
    record.created_at = UNIX_EPOCH + Duration::from_millis(now.as_millis() as u64);
    record.last_updated_at = record.created_at;
    record
}
