//! A real `redis-server` (Debian's package; CI installs it) on a free
//! loopback port, as a child process, killed on drop.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a starting `redis-server` may take to answer PING.
const START: Duration = Duration::from_secs(10);

pub struct RedisServer {
    port: u16,
    args: Vec<String>,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts `redis-server` on a free loopback port with `args` added.
    pub fn start(args: &[&str]) -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|addr| addr.port())
            .expect("a free loopback port");
        let mut server = RedisServer {
            port,
            args: args.iter().map(|a| a.to_string()).collect(),
            child: None,
        };
        server.restart();
        server
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A connection of the test's own (`password` for `--requirepass`).
    pub fn connection(&self, password: Option<&str>) -> redis::Connection {
        let url = match password {
            Some(password) => format!("redis://:{}@127.0.0.1:{}/", password, self.port),
            None => self.url(),
        };
        redis::Client::open(url)
            .and_then(|client| client.get_connection_with_timeout(Duration::from_secs(2)))
            .expect("a connection to the test's redis-server")
    }

    /// Kills the server (its clients see their connections end).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server (again) on the same port and waits until it
    /// answers PING.
    pub fn restart(&mut self) {
        self.stop();
        let port = self.port.to_string();
        let spawned = Command::new("redis-server")
            .args(["--port", &port, "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match spawned {
            Ok(child) => self.child = Some(child),
            Err(e) => panic!(
                "cannot run redis-server ({}): the Redis tests need Debian's \
                 redis-server package (apt-get install redis-server)",
                e
            ),
        }
        self.await_ping();
    }

    fn await_ping(&mut self) {
        let deadline = Instant::now() + START;
        let url = self.url();
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!("redis-server on port {} exited: {}", self.port, status);
            }
            let answered = redis::Client::open(url.as_str())
                .and_then(|client| client.get_connection_with_timeout(Duration::from_millis(200)))
                .and_then(|mut connection| redis::cmd("PING").query::<String>(&mut connection));
            match answered {
                Ok(_) => return,
                // An answer, if only "authentication required": it is up.
                Err(e) if !e.is_io_error() => return,
                Err(e) if Instant::now() >= deadline => {
                    panic!("redis-server on port {} never answered: {}", self.port, e)
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// Waits until `count` bus readers (connections named
    /// `tiny-mcp-bus-subscriber`) are blocked in `XREAD`: past the start,
    /// where they took the stream's end, so they read what follows.
    pub fn await_readers(&self, count: usize) {
        self.await_named(
            |line| line.contains(" cmd=xread"),
            |now| now >= count,
            "at least",
            count,
        );
    }

    /// Waits until fewer than `count` bus readers are connected.
    pub fn await_readers_below(&self, count: usize) {
        self.await_named(|_| true, |now| now < count, "fewer than", count);
    }

    /// The ids of the bus readers' connections (`CLIENT LIST`).
    pub fn reader_ids(&self) -> Vec<u64> {
        reader_lines(&mut self.connection(None))
            .iter()
            .filter_map(|line| line.strip_prefix("id="))
            .filter_map(|rest| rest.split(' ').next())
            .filter_map(|id| id.parse().ok())
            .collect()
    }

    fn await_named(
        &self,
        filter: impl Fn(&str) -> bool,
        done: impl Fn(usize) -> bool,
        what: &str,
        count: usize,
    ) {
        let mut connection = self.connection(None);
        let deadline = Instant::now() + START;
        loop {
            let lines = reader_lines(&mut connection);
            let now = lines.iter().filter(|line| filter(line)).count();
            if done(now) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} bus readers, not {} {}: {:?}",
                now,
                what,
                count,
                lines
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `CLIENT LIST`'s lines for connections named `tiny-mcp-bus-subscriber`.
fn reader_lines(connection: &mut redis::Connection) -> Vec<String> {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(connection)
        .expect("CLIENT LIST");
    list.lines()
        .filter(|line| line.contains(" name=tiny-mcp-bus-subscriber "))
        .map(str::to_string)
        .collect()
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
