//! The publishing thread: takes the queue's events in order and appends
//! each to the stream with `XADD`, keeping it through an outage until
//! Redis takes it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{select, Receiver, RecvTimeoutError};

use super::{Backoff, Counters, Settings};
use crate::redis::endpoint::Endpoint;

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

    /// One `XADD <key> MAXLEN ~ <max_stream_len> * e <message>` on the
    /// kept connection, made first when needed.
    fn publish(&mut self, message: &str) -> redis::RedisResult<()> {
        let key = self.settings.key.clone();
        let max_len = self.settings.max_stream_len;
        let connection = self.connection()?;
        // The answer is the new entry's id; only its arrival matters.
        let _: redis::Value = redis::cmd("XADD")
            .arg(&key)
            .arg("MAXLEN")
            .arg("~")
            .arg(max_len)
            .arg("*")
            .arg("e")
            .arg(message)
            .query(connection)?;
        self.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The kept connection, made first when needed.
    fn connection(&mut self) -> redis::RedisResult<&mut redis::Connection> {
        if self.connection.is_none() {
            self.connection = Some(self.endpoint.connect(Some(self.endpoint.timeout))?);
        }
        match self.connection.as_mut() {
            Some(connection) => Ok(connection),
            None => Err(redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "not connected",
            ))),
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
