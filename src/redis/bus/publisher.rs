//! The publishing thread: takes the queue's events in order and sends
//! each with `PUBLISH`, keeping it through an outage until Redis takes it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, RecvTimeoutError};

use super::{Backoff, Counters, Settings};
use crate::redis::endpoint::Endpoint;

/// How often, after an outage, the publisher asks how many subscribers
/// are back (`PUBSUB NUMSUB`) before it sends what it kept.
const SUBSCRIBERS_POLL: Duration = Duration::from_millis(50);

/// Starts the thread `tiny-mcp-redis-publish`; it ends when `stop` is
/// disconnected (the bus was dropped), after one try at what is queued.
pub(super) fn start(
    endpoint: Endpoint,
    settings: Settings,
    counters: Arc<Counters>,
    queue: Receiver<String>,
    stop: Receiver<()>,
) {
    let backoff = Backoff::new(&settings);
    let publisher = Publisher {
        endpoint,
        settings,
        counters,
        queue,
        stop,
        connection: None,
        backoff,
        receivers: 0,
        outage: false,
    };
    let spawned = thread::Builder::new()
        .name("tiny-mcp-redis-publish".into())
        .spawn(move || publisher.run());
    if let Err(e) = spawned {
        log::error!("Redis change bus: cannot start the publishing thread: {e}; changes stay here");
    }
}

struct Publisher {
    endpoint: Endpoint,
    settings: Settings,
    counters: Arc<Counters>,
    queue: Receiver<String>,
    stop: Receiver<()>,
    connection: Option<redis::Connection>,
    backoff: Backoff,
    /// How many subscribers the last `PUBLISH` reached.
    receivers: i64,
    /// Whether a connection failed since the last one made: the next
    /// connection waits for the subscribers to come back first.
    outage: bool,
}

impl Publisher {
    fn run(mut self) {
        // Connected before the first change, when Redis is there.
        if let Err(e) = self.connection() {
            log::debug!("Redis change bus: not connected yet: {e}");
            self.connection = None;
        }
        loop {
            let message = select! {
                recv(self.queue) -> message => match message {
                    Ok(message) => message,
                    Err(_) => return,
                },
                recv(self.stop) -> _ => return self.drain(),
            };
            if !self.send(&message) {
                log::warn!("Redis change bus: dropped while Redis is away; a change was not sent");
                return self.drain();
            }
        }
    }

    /// Sends `message`, reconnecting with back-off until Redis takes it;
    /// `false` if the bus was dropped meanwhile.
    fn send(&mut self, message: &str) -> bool {
        let mut failing = false;
        loop {
            match self.publish(message) {
                Ok(()) => {
                    if failing {
                        log::info!("Redis change bus: publishing again");
                    }
                    self.backoff.reset();
                    return true;
                }
                Err(e) => {
                    self.connection = None;
                    self.outage = true;
                    if !failing {
                        log::warn!(
                            "Redis change bus: cannot publish ({e}); changes are kept \
                             (up to the queue's bound) and sent when Redis is back"
                        );
                        failing = true;
                    }
                    let wait = self.backoff.step();
                    if !self.pause(wait) {
                        return false;
                    }
                }
            }
        }
    }

    /// One `PUBLISH` on the kept connection, made first when needed.
    fn publish(&mut self, message: &str) -> redis::RedisResult<()> {
        let channel = self.settings.channel.clone();
        let connection = self.connection()?;
        let receivers: i64 = redis::cmd("PUBLISH")
            .arg(&channel)
            .arg(message)
            .query(connection)?;
        self.receivers = receivers;
        self.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The kept connection; a new one after an outage first waits for the
    /// subscribers to be back.
    fn connection(&mut self) -> redis::RedisResult<&mut redis::Connection> {
        if self.connection.is_none() {
            let mut connection = self.endpoint.connect(Some(self.endpoint.timeout))?;
            if self.outage {
                self.await_subscribers(&mut connection)?;
                self.outage = false;
            } else if self.receivers == 0 {
                let now = subscribers(&mut connection, &self.settings.channel)?;
                self.receivers = now.unwrap_or(0);
            }
            self.connection = Some(connection);
        }
        match self.connection.as_mut() {
            Some(connection) => Ok(connection),
            None => Err(redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "not connected",
            ))),
        }
    }

    /// Waits until as many subscribers are on the channel as the last
    /// `PUBLISH` reached, at most the longest back-off plus the connect
    /// timeout: the other instances' subscribers reconnect within that.
    fn await_subscribers(&self, connection: &mut redis::Connection) -> redis::RedisResult<()> {
        let deadline = Instant::now() + self.settings.max_backoff + self.endpoint.timeout;
        loop {
            let now = match subscribers(connection, &self.settings.channel)? {
                Some(now) if now < self.receivers => now,
                _ => return Ok(()),
            };
            if Instant::now() >= deadline {
                log::info!(
                    "Redis change bus: {now} of {} subscribers are back; sending the kept changes",
                    self.receivers
                );
                return Ok(());
            }
            if !self.pause(SUBSCRIBERS_POLL) {
                return Ok(());
            }
        }
    }

    /// Waits `wait`; `false` if the bus was dropped meanwhile.
    fn pause(&self, wait: Duration) -> bool {
        matches!(self.stop.recv_timeout(wait), Err(RecvTimeoutError::Timeout))
    }

    /// The bus was dropped: one try at each event still queued.
    fn drain(mut self) {
        while let Ok(message) = self.queue.try_recv() {
            if let Err(e) = self.publish(&message) {
                log::warn!("Redis change bus: closed with changes not sent: {e}");
                return;
            }
        }
    }
}

/// `PUBSUB NUMSUB channel`: how many connections subscribe to it; `None`
/// when the server refuses the command (an ACL): then nobody is waited for.
fn subscribers(
    connection: &mut redis::Connection,
    channel: &str,
) -> redis::RedisResult<Option<i64>> {
    let answer: redis::RedisResult<(String, i64)> = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query(connection);
    match answer {
        Ok((_, count)) => Ok(Some(count)),
        Err(e) if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() => Err(e),
        Err(e) => {
            log::debug!("Redis change bus: PUBSUB NUMSUB refused ({e})");
            Ok(None)
        }
    }
}
