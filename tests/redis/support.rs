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

    /// Waits until `count` connections subscribe to `channel`.
    pub fn await_subscribers(&self, channel: &str, count: i64) {
        self.await_numsub(channel, |now| now >= count, "at least", count);
    }

    /// Waits until fewer than `count` connections subscribe to `channel`.
    pub fn await_subscribers_below(&self, channel: &str, count: i64) {
        self.await_numsub(channel, |now| now < count, "fewer than", count);
    }

    fn await_numsub(&self, channel: &str, done: impl Fn(i64) -> bool, what: &str, count: i64) {
        let mut connection = self.connection(None);
        let deadline = Instant::now() + START;
        loop {
            let (_, now): (String, i64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg(channel)
                .query(&mut connection)
                .expect("PUBSUB NUMSUB");
            if done(now) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} subscribers on {}, not {} {}",
                now,
                channel,
                what,
                count
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
