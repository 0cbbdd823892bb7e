//! The reading thread: `XREAD BLOCK` on the stream, on a connection of
//! its own, each entry into [`ServerHandle::apply_change`], reconnecting
//! with back-off and reading on from the last id read, until the server
//! closes.

use std::thread;
use std::time::{Duration, Instant};

use super::stream::{self, Entry, EntryId};
use super::{Backoff, Settings};
use crate::redis::endpoint::Endpoint;
use crate::server::{ChangeEvent, ServerHandle, WeakServerHandle};

/// How long one `XREAD` blocks before the thread looks whether the server
/// closed; also the step of its waits between reconnections.
const BLOCK: Duration = Duration::from_millis(500);

/// How many entries one `XREAD` takes at most.
const BATCH: usize = 100;

/// The name of the reader's connection (`CLIENT SETNAME`), for operators.
const CONNECTION_NAME: &str = "tiny-mcp-bus-subscriber";

/// Starts the thread `tiny-mcp-redis-subscribe`; it ends once `server`
/// no longer upgrades or is closed. Where the stream ends is read here,
/// before the server is handed out (at most the endpoint's timeout when
/// Redis is away), so that every change made after it reaches this
/// instance; when Redis cannot tell now, the first connection finds out.
pub(super) fn start(endpoint: Endpoint, settings: Settings, server: WeakServerHandle) {
    let last_id = endpoint
        .connect(Some(endpoint.timeout))
        .and_then(|mut connection| last_entry(&mut connection, &settings.key));
    let last_id = match last_id {
        Ok(id) => Some(id),
        Err(e) => {
            log::debug!("Redis change bus: where the stream ends is not known yet ({e})");
            None
        }
    };
    let subscriber = Subscriber {
        endpoint,
        settings,
        server,
        last_id,
    };
    let spawned = thread::Builder::new()
        .name("tiny-mcp-redis-subscribe".into())
        .spawn(move || subscriber.run());
    if let Err(e) = spawned {
        log::error!(
            "Redis change bus: cannot start the subscribing thread: {e}; \
             other instances' changes are not heard"
        );
    }
}

struct Subscriber {
    endpoint: Endpoint,
    settings: Settings,
    server: WeakServerHandle,
    /// The id of the last entry read; `None` until the first connection
    /// found where the stream ends.
    last_id: Option<EntryId>,
}

/// Why [`Subscriber::listen`] returned.
enum Ended {
    /// The server closed: the thread ends.
    Closed,
    /// The connection failed; `read` if an `XREAD` was answered on it.
    Lost(redis::RedisError, bool),
}

impl Subscriber {
    fn run(mut self) {
        let mut backoff = Backoff::new(&self.settings);
        let mut failing = false;
        loop {
            match self.listen() {
                Ended::Closed => return,
                Ended::Lost(e, read) => {
                    // A connection that fails before any read (a proxy
                    // closing it) is retried with growing waits.
                    if read {
                        backoff.reset();
                    }
                    if read || !failing {
                        log::warn!(
                            "Redis change bus: reading the stream {:?} failed ({e}); \
                             reconnecting",
                            self.settings.key
                        );
                    }
                    failing = !read;
                }
            }
            if !self.wait(backoff.step()) {
                return;
            }
        }
    }

    /// Connects, then reads and applies entries until the connection
    /// fails or the server closes.
    fn listen(&mut self) -> Ended {
        let mut connection = match self.connect() {
            Ok(connection) => connection,
            Err(e) => return Ended::Lost(e, false),
        };
        let mut read = false;
        loop {
            let reply = redis::cmd("XREAD")
                .arg("BLOCK")
                .arg(BLOCK.as_millis() as u64)
                .arg("COUNT")
                .arg(BATCH)
                .arg("STREAMS")
                .arg(&self.settings.key)
                .arg(self.after().to_string())
                .query::<redis::Value>(&mut connection);
            let reply = match reply {
                Ok(reply) => reply,
                Err(e) => return Ended::Lost(e, read),
            };
            if !read {
                log::debug!("Redis change bus: reading {:?}", self.settings.key);
                read = true;
            }
            let server = match self.live() {
                Some(server) => server,
                None => return Ended::Closed,
            };
            let entries = match stream::xread_entries(&reply, &self.settings.key) {
                Some(entries) => entries,
                None => return Ended::Lost(odd("XREAD"), read),
            };
            let full = entries.len() >= BATCH;
            if !self.apply_all(&server, entries) {
                return Ended::Lost(odd("XREAD (no entry id)"), read);
            }
            if full {
                // Behind by a batch at least: was anything trimmed?
                if let Err(e) = self.check_trimmed(&mut connection) {
                    return Ended::Lost(e, read);
                }
            }
        }
    }

    /// A connection named [`CONNECTION_NAME`], whose replies may take the
    /// block time plus the timeout; where to read from is found on the
    /// first, and trimming checked on the later ones.
    fn connect(&mut self) -> redis::RedisResult<redis::Connection> {
        let timeout = self.endpoint.timeout;
        let mut connection = self.endpoint.connect(Some(BLOCK + timeout))?;
        let named = redis::cmd("CLIENT")
            .arg("SETNAME")
            .arg(CONNECTION_NAME)
            .query::<redis::Value>(&mut connection);
        match named {
            Err(e) if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() => {
                return Err(e)
            }
            // Refused (an ACL): the name is only for operators.
            Err(e) => log::debug!("Redis change bus: CLIENT SETNAME refused ({e})"),
            Ok(_) => {}
        }
        match self.last_id {
            None => self.last_id = Some(last_entry(&mut connection, &self.settings.key)?),
            Some(_) => self.check_trimmed(&mut connection)?,
        }
        Ok(connection)
    }

    /// The id to read after.
    fn after(&self) -> EntryId {
        self.last_id.unwrap_or(EntryId::ZERO)
    }

    /// Applies each entry in order and reads on after the last; `false`
    /// when there were entries but none had an id (nothing to read on
    /// from: reading again would return the same).
    fn apply_all(&mut self, server: &ServerHandle, entries: Vec<Entry>) -> bool {
        let any = !entries.is_empty();
        let mut moved = false;
        for entry in entries {
            match entry.id {
                Some(id) if id > self.after() => {
                    self.last_id = Some(id);
                    moved = true;
                }
                _ => {
                    log::warn!("Redis change bus: skipped a stream entry without a usable id");
                    continue;
                }
            }
            match entry.event {
                Some(event) => self.apply(server, &event),
                None => log::warn!(
                    "Redis change bus: skipped an entry of {:?} without an `e` field",
                    self.settings.key
                ),
            }
        }
        moved || !any
    }

    /// Logs, at `warn`, entries trimmed from the stream before they were
    /// read (`XINFO STREAM`'s `max-deleted-entry-id`, Redis 7 and later;
    /// not known before). Once per gap: reading on moves past it.
    fn check_trimmed(&self, connection: &mut redis::Connection) -> redis::RedisResult<()> {
        let info = redis::cmd("XINFO")
            .arg("STREAM")
            .arg(&self.settings.key)
            .query::<redis::Value>(connection);
        let info = match info {
            Ok(info) => info,
            Err(e) if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() => {
                return Err(e)
            }
            // No such key yet (after a restart), or refused: nothing known.
            Err(_) => return Ok(()),
        };
        if let Some(deleted) = stream::max_deleted(&info) {
            if deleted > self.after() {
                log::warn!(
                    "Redis change bus: changes on {:?} up to {deleted} were trimmed before \
                     this instance read them (behind by more than max_stream_len, {}); \
                     they are lost to it",
                    self.settings.key,
                    self.settings.max_stream_len
                );
            }
        }
        Ok(())
    }

    /// Feeds one entry's event into the server; one that is too large or
    /// not a change event is skipped with a log line.
    fn apply(&self, server: &ServerHandle, payload: &[u8]) {
        if payload.len() > self.settings.max_message_bytes {
            log::warn!(
                "Redis change bus: skipped an entry of {} bytes, over the limit of {} \
                 (max_message_bytes)",
                payload.len(),
                self.settings.max_message_bytes
            );
            return;
        }
        let event = std::str::from_utf8(payload)
            .ok()
            .and_then(|text| ChangeEvent::from_json(text).ok());
        match event {
            Some(event) => {
                server.apply_change(&event);
            }
            None => log::warn!(
                "Redis change bus: skipped an entry of {:?} that is not a change event \
                 ({} bytes)",
                self.settings.key,
                payload.len()
            ),
        }
    }

    /// The server, while it is open.
    fn live(&self) -> Option<ServerHandle> {
        self.server.upgrade().filter(|server| !server.is_closed())
    }

    /// Waits `wait` in steps of [`BLOCK`]; `false` once the server closed.
    fn wait(&self, wait: Duration) -> bool {
        let end = Instant::now() + wait;
        loop {
            if self.live().is_none() {
                return false;
            }
            let now = Instant::now();
            if now >= end {
                return true;
            }
            thread::sleep((end - now).min(BLOCK));
        }
    }
}

/// The id of the stream's last entry (`XREVRANGE key + - COUNT 1`), or
/// `0-0` when there is none: reading starts after it.
fn last_entry(connection: &mut redis::Connection, key: &str) -> redis::RedisResult<EntryId> {
    let reply = redis::cmd("XREVRANGE")
        .arg(key)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query::<redis::Value>(connection)?;
    match stream::range_entries(&reply) {
        Some(entries) => Ok(entries
            .first()
            .and_then(|entry| entry.id)
            .unwrap_or(EntryId::ZERO)),
        None => Err(odd("XREVRANGE")),
    }
}

/// An error for a reply of an unexpected shape.
fn odd(command: &str) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::Parse,
        "an unexpected reply",
        command.to_string(),
    ))
}
