//! The subscribing thread: `SUBSCRIBE` on a connection of its own, each
//! message into [`ServerHandle::apply_change`], reconnecting with back-off
//! until the server closes.

use std::thread;
use std::time::{Duration, Instant};

use super::{Backoff, Settings};
use crate::redis::endpoint::Endpoint;
use crate::server::{ChangeEvent, ServerHandle, WeakServerHandle};

/// How long one read of the subscription waits before the thread looks
/// whether the server closed (and whether it is time to `PING`); also
/// the step of its waits between reconnections.
const CLOSED_POLL: Duration = Duration::from_millis(500);

/// Starts the thread `tiny-mcp-redis-subscribe`; it ends once `server`
/// no longer upgrades or is closed.
pub(super) fn start(endpoint: Endpoint, settings: Settings, server: WeakServerHandle) {
    let subscriber = Subscriber {
        endpoint,
        settings,
        server,
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
}

/// Why [`Subscriber::listen`] returned.
enum Ended {
    /// The server closed: the thread ends.
    Closed,
    /// The connection failed; after a subscription that lasted this long,
    /// if it was made.
    Lost(redis::RedisError, Option<Duration>),
}

impl Subscriber {
    fn run(self) {
        let mut backoff = Backoff::new(&self.settings);
        let mut failing = false;
        loop {
            match self.listen() {
                Ended::Closed => return,
                Ended::Lost(e, lived) => {
                    let subscribed = lived.is_some();
                    // A subscription that fails as soon as it is made
                    // (a proxy closing it) is retried with growing waits.
                    if matches!(lived, Some(lived) if lived >= self.settings.max_backoff) {
                        backoff.reset();
                    }
                    if subscribed || !failing {
                        log::warn!(
                            "Redis change bus: the subscription to {:?} failed ({e}); \
                             reconnecting",
                            self.settings.channel
                        );
                    }
                    failing = !subscribed;
                }
            }
            if !self.wait(backoff.step()) {
                return;
            }
        }
    }

    /// Subscribes, then applies each message until the connection fails
    /// or the server closes.
    fn listen(&self) -> Ended {
        let timeout = self.endpoint.timeout;
        let mut connection = match self.endpoint.connect(Some(timeout)) {
            Ok(connection) => connection,
            Err(e) => return Ended::Lost(e, None),
        };
        let mut pubsub = connection.as_pubsub();
        if let Err(e) = pubsub.subscribe(&self.settings.channel) {
            return Ended::Lost(e, None);
        }
        let since = Instant::now();
        if let Err(e) = pubsub.set_read_timeout(Some(CLOSED_POLL)) {
            return Ended::Lost(e, Some(since.elapsed()));
        }
        log::debug!(
            "Redis change bus: subscribed to {:?}",
            self.settings.channel
        );
        let mut heard = Instant::now();
        loop {
            match pubsub.get_message() {
                Ok(message) => {
                    heard = Instant::now();
                    match self.live() {
                        Some(server) => self.apply(&server, message.get_payload_bytes()),
                        None => return Ended::Closed,
                    }
                }
                Err(e) if e.is_timeout() => {
                    if self.live().is_none() {
                        return Ended::Closed;
                    }
                    if heard.elapsed() >= self.settings.idle_ping {
                        // Silence: is the connection still there? The
                        // answer is awaited for the connect timeout.
                        let answered = pubsub
                            .set_read_timeout(Some(timeout))
                            .and_then(|()| pubsub.ping::<redis::Value>())
                            .and_then(|_| pubsub.set_read_timeout(Some(CLOSED_POLL)));
                        if let Err(e) = answered {
                            return Ended::Lost(e, Some(since.elapsed()));
                        }
                        heard = Instant::now();
                    }
                }
                Err(e) => return Ended::Lost(e, Some(since.elapsed())),
            }
        }
    }

    /// Feeds one message into the server; a message that is too large or
    /// not a change event is skipped with a log line.
    fn apply(&self, server: &ServerHandle, payload: &[u8]) {
        if payload.len() > self.settings.max_message_bytes {
            log::warn!(
                "Redis change bus: skipped a message of {} bytes, over the limit of {} \
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
                "Redis change bus: skipped a message on {:?} that is not a change event \
                 ({} bytes)",
                self.settings.channel,
                payload.len()
            ),
        }
    }

    /// The server, while it is open.
    fn live(&self) -> Option<ServerHandle> {
        self.server.upgrade().filter(|server| !server.is_closed())
    }

    /// Waits `wait` in steps of [`CLOSED_POLL`]; `false` once the server
    /// closed.
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
            thread::sleep((end - now).min(CLOSED_POLL));
        }
    }
}
