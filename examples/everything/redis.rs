//! `--redis URL`: change events across instances over Redis pub/sub, on
//! channel `tiny-mcp-changes`.
//!
//! A minimal RESP2 client, written out here (PUBLISH on one connection,
//! SUBSCRIBE on another): the example builds with Debian 12's packaged
//! crates, which have no Redis client, and the two commands need little.
//! Every connect, write and reply has a timeout (2 s). Changes are
//! published from a thread of their own, through a bounded queue, so a
//! slow or unreachable Redis never holds the thread that made the change.
//! The subscriber PINGs after 30 s of silence and reconnects when no
//! answer comes (a connection dropped without a FIN), retrying every
//! second, forever, on its own thread; a message over 1 MiB is skipped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use tiny_mcp::{ChangeBus, ChangeEvent, ServerHandle};

/// The channel every instance publishes to and subscribes to.
const CHANNEL: &str = "tiny-mcp-changes";
/// How long one write or one reply may take.
const TIMEOUT: Duration = Duration::from_secs(2);

/// `host:port` of a `redis://host[:port][/db]` URL (no password, no TLS).
pub fn address(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("redis://")
        .ok_or_else(|| format!("not a redis:// URL: {}", url))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return Err(format!(
            "a redis://host:port/ URL without a password, not {}",
            url
        ));
    }
    Ok(if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{}:6379", authority)
    })
}

/// One RESP2 command: an array of bulk strings.
fn command(parts: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", parts.len()).into_bytes();
    for part in parts {
        out.extend_from_slice(format!("${}\r\n", part.len()).as_bytes());
        out.extend_from_slice(part.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn connect(address: &str, read_timeout: Option<Duration>) -> std::io::Result<TcpStream> {
    let address = super::socket_addr(address)
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::InvalidInput, why))?;
    let stream = TcpStream::connect_timeout(&address, TIMEOUT)?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    stream.set_read_timeout(read_timeout)?;
    Ok(stream)
}

/// Changes waiting for the publishing thread; more are dropped.
const PUBLISH_QUEUE: usize = 1024;
/// How long the subscriber waits in silence before it PINGs, and then
/// for the PONG before it reconnects: a connection that died without a
/// FIN (a NAT or firewall dropping it) is noticed within twice this.
const SUBSCRIBER_IDLE: Duration = Duration::from_secs(30);
/// Messages larger than this are skipped (the connection is kept).
const MAX_MESSAGE: usize = 1024 * 1024;

/// Publishes this instance's changes from a thread of its own, so that
/// the thread making a change never waits for Redis.
pub struct Publisher {
    queue: crossbeam_channel::Sender<String>,
}

impl Publisher {
    pub fn new(address: String) -> Publisher {
        let (queue, changes) = crossbeam_channel::bounded::<String>(PUBLISH_QUEUE);
        let connection = Connection {
            address,
            connection: Mutex::new(None),
        };
        let spawned = thread::Builder::new()
            .name("everything-redis-publish".into())
            .spawn(move || {
                for message in changes {
                    connection.publish(&message);
                }
            });
        if let Err(e) = spawned {
            eprintln!("everything: cannot start the Redis publisher: {}", e);
        }
        Publisher { queue }
    }
}

impl ChangeBus for Publisher {
    fn publish(&self, event: &ChangeEvent) {
        if self.queue.try_send(event.to_json()).is_err() {
            eprintln!("everything: the Redis publisher is behind; a change was not published");
        }
    }
}

/// The publishing connection, made (again) when needed.
struct Connection {
    address: String,
    connection: Mutex<Option<BufReader<TcpStream>>>,
}

impl Connection {
    fn publish(&self, message: &str) {
        if self.publish_once(message).is_err() {
            if let Err(e) = self.publish_once(message) {
                eprintln!("everything: cannot publish a change to Redis: {}", e);
            }
        }
    }

    /// PUBLISH on the kept connection, made (again) when needed.
    fn publish_once(&self, message: &str) -> std::io::Result<()> {
        let mut slot = self
            .connection
            .lock()
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::Other, "poisoned"))?;
        if slot.is_none() {
            *slot = Some(BufReader::new(connect(&self.address, Some(TIMEOUT))?));
        }
        let result = match slot.as_mut() {
            Some(reader) => {
                let request = command(&["PUBLISH", CHANNEL, message]);
                reader.get_mut().write_all(&request).and_then(|()| {
                    let mut reply = String::new();
                    reader.read_line(&mut reply).map(|_| ())
                })
            }
            None => Ok(()),
        };
        if result.is_err() {
            *slot = None;
        }
        result
    }
}

/// Feeds the other instances' changes into `handle`, on a thread of its
/// own, reconnecting every second when Redis is away.
pub fn subscribe(address: String, handle: ServerHandle) {
    let spawned = thread::Builder::new()
        .name("everything-redis".into())
        .spawn(move || loop {
            if let Err(e) = listen(&address, &handle) {
                eprintln!("everything: Redis subscription lost: {}", e);
            }
            thread::sleep(Duration::from_secs(1));
        });
    if let Err(e) = spawned {
        eprintln!("everything: cannot start the Redis subscriber: {}", e);
    }
}

/// SUBSCRIBE, then apply every message until the connection ends or
/// stays silent through a PING.
fn listen(address: &str, handle: &ServerHandle) -> std::io::Result<()> {
    let mut stream = connect(address, Some(SUBSCRIBER_IDLE))?;
    stream.write_all(&command(&["SUBSCRIBE", CHANNEL]))?;
    let mut reader = BufReader::new(stream);
    let mut pinged = false;
    loop {
        let parts = match read_array(&mut reader) {
            Ok(parts) => parts,
            Err(e) if is_timeout(&e) && !pinged => {
                reader.get_mut().write_all(&command(&["PING"]))?;
                pinged = true;
                continue;
            }
            Err(e) if is_timeout(&e) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no answer to PING",
                ))
            }
            Err(e) => return Err(e),
        };
        pinged = false;
        if parts.len() == 3 && parts[0] == "message" {
            match ChangeEvent::from_json(&parts[2]) {
                Ok(event) => {
                    handle.apply_change(&event);
                }
                Err(e) => eprintln!("everything: ignoring a Redis message: {}", e),
            }
        }
    }
}

/// One RESP2 array of bulk strings or integers, as text.
fn read_array(reader: &mut impl BufRead) -> std::io::Result<Vec<String>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let header = read_line(reader)?;
    let count: usize = header
        .strip_prefix('*')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| bad("expected an array"))?;
    let mut parts = Vec::with_capacity(count.min(16));
    for _ in 0..count {
        let line = read_line(reader)?;
        if let Some(n) = line.strip_prefix(':') {
            parts.push(n.to_string());
            continue;
        }
        let length: usize = line
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad("expected a bulk string"))?;
        if length > MAX_MESSAGE {
            // Skipped, not fatal: one oversized message must not cost
            // every instance its subscription.
            std::io::copy(
                &mut reader.by_ref().take(length as u64 + 2),
                &mut std::io::sink(),
            )?;
            parts.push(String::new());
            continue;
        }
        let mut data = vec![0; length + 2];
        reader.read_exact(&mut data)?;
        data.truncate(length);
        parts.push(String::from_utf8_lossy(&data).into_owned());
    }
    Ok(parts)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn read_line(reader: &mut impl BufRead) -> std::io::Result<String> {
    let mut line = String::new();
    if reader.by_ref().take(64 * 1024).read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "Redis closed the connection",
        ));
    }
    Ok(line.trim_end().to_string())
}
