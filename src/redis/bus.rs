//! The change bus on Redis pub/sub (DESIGN.md §30): one publishing
//! thread fed through a bounded queue, one subscribing thread per server.

mod publisher;
mod subscriber;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::endpoint::Endpoint;
use crate::error::Error;
use crate::server::{ChangeBus, ChangeEvent, ServerHandle};

/// A [`ChangeBus`] on Redis (or Valkey) pub/sub, feature `redis`
/// (DESIGN.md §16, §30): every instance publishes its changes on one
/// channel and subscribes to it, and feeds the other instances' events
/// into [`ServerHandle::apply_change`] (its own come back too, and are
/// dropped there by their origin).
///
/// - **Publishing never blocks**: [`publish`](ChangeBus::publish) puts the
///   event's JSON in a bounded queue ([`max_queued`](Self::max_queued),
///   1024 events) that a thread of its own (`tiny-mcp-redis-publish`)
///   sends with `PUBLISH`. When the queue is full the *oldest* waiting
///   event is dropped, logged (at `warn`, at the 1st, 2nd, 4th, 8th, …
///   drop) and counted ([`dropped`](Self::dropped)).
/// - **Changes made while Redis is away are sent when it is back**: an
///   event whose `PUBLISH` failed is kept and sent again after the
///   publisher reconnected (back-off [`reconnect_backoff`](Self::reconnect_backoff),
///   100 ms doubling to 5 s). After such an outage the publisher first
///   waits, at most the longest back-off plus the connect timeout, until
///   as many subscribers are back on the channel as it last reached, so
///   that the instances' subscribers, which reconnect with the same
///   back-off, hear what was queued. Delivery is at least once: a
///   `PUBLISH` whose answer was lost is sent again.
/// - **The subscriber** (thread `tiny-mcp-redis-subscribe`, started when
///   the server is built, [`ChangeBus::attach`]) reconnects with the same
///   back-off until the server closes, sends `PING` after
///   [`idle_ping`](Self::idle_ping) (30 s) of silence and reconnects when
///   no answer comes within the connect timeout (2 s), and skips (with a
///   log line) a message that is not a change event or is over
///   [`max_message_bytes`](Self::max_message_bytes) (64 KiB). Events
///   published by others while this subscriber was disconnected and
///   Redis was up are not heard (plain pub/sub keeps nothing).
///
/// Every connection has the same [`timeout`](Self::timeout): 2 s to
/// connect, 2 s per write and per reply. Nothing Redis sends can panic a
/// thread.
///
/// ```no_run
/// use tiny_mcp::{RedisChangeBus, Server};
///
/// # fn main() -> Result<(), tiny_mcp::Error> {
/// let bus = RedisChangeBus::new("redis://:secret@redis.internal:6379/0")?
///     .channel("weather-changes");
/// let server = Server::builder("weather", "1.0.0")
///     .offer_tools()
///     .change_bus(bus)
///     .build();
/// // A change made here reaches the other instances' clients too.
/// server.handle().notify_tools_list_changed();
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct RedisChangeBus {
    endpoint: Endpoint,
    settings: Settings,
    queue: Queue,
    counters: Arc<Counters>,
    /// Whether the publishing thread was started (at the first change or
    /// when the server is built, after the settings).
    started: AtomicBool,
    attached: AtomicBool,
}

/// What the bus may be set to; shared (copied) by its threads.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) channel: String,
    pub(crate) max_queued: usize,
    pub(crate) max_message_bytes: usize,
    pub(crate) min_backoff: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) idle_ping: Duration,
}

/// Counted by `publish` and the threads, read by the program.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) dropped: AtomicU64,
    pub(crate) published: AtomicU64,
}

/// The publisher's queue: `receiver` is a clone of the thread's, kept to
/// take the oldest event out when the queue is full; dropping `stop`
/// (with the bus) disconnects `stopped`, which tells the thread to end.
#[derive(Debug)]
struct Queue {
    sender: Sender<String>,
    receiver: Receiver<String>,
    _stop: Sender<()>,
    stopped: Receiver<()>,
}

impl Queue {
    fn new(bound: usize) -> Queue {
        let (sender, receiver) = crossbeam_channel::bounded(bound);
        let (stop, stopped) = crossbeam_channel::bounded(0);
        Queue {
            sender,
            receiver,
            _stop: stop,
            stopped,
        }
    }
}

impl RedisChangeBus {
    /// The channel every instance uses unless [`channel`](Self::channel)
    /// names another: `tiny-mcp-changes`.
    pub const DEFAULT_CHANNEL: &'static str = "tiny-mcp-changes";

    /// A bus on the Redis server of `url`:
    /// `redis://[[user]:password@]host[:port][/db]`, or `rediss://` with the
    /// `tls` feature. Nothing connects yet: the publisher connects at the
    /// first change, the subscriber when the server is built, and both
    /// keep trying while Redis is away.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for a
    /// URL the redis crate does not take, or a `rediss://` URL without the
    /// `tls` feature (the URL is not repeated: it may hold a password).
    pub fn new(url: &str) -> Result<RedisChangeBus, Error> {
        Ok(RedisChangeBus {
            endpoint: Endpoint::open(url)?,
            settings: Settings {
                channel: Self::DEFAULT_CHANNEL.to_string(),
                max_queued: 1024,
                max_message_bytes: 64 * 1024,
                min_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(5),
                idle_ping: Duration::from_secs(30),
            },
            queue: Queue::new(1024),
            counters: Arc::new(Counters::default()),
            started: AtomicBool::new(false),
            attached: AtomicBool::new(false),
        })
    }

    /// The pub/sub channel; default `tiny-mcp-changes`
    /// ([`DEFAULT_CHANNEL`](Self::DEFAULT_CHANNEL)). Every instance of one deployment must name
    /// the same; deployments sharing a Redis name different ones.
    pub fn channel(mut self, name: impl Into<String>) -> Self {
        self.settings.channel = name.into();
        self
    }

    /// How many events may wait for the publisher (at least 1); default
    /// 1024. One more may be in the publisher's hands, being sent. When
    /// the queue is full the oldest waiting event is dropped and counted
    /// ([`dropped`](Self::dropped)).
    pub fn max_queued(mut self, events: usize) -> Self {
        self.settings.max_queued = events.max(1);
        self.queue = Queue::new(self.settings.max_queued);
        self
    }

    /// The largest message, in bytes of JSON, published or applied;
    /// default 64 KiB (65,536). A larger event (a very long resource URI)
    /// is not published, a larger message received is skipped; both are
    /// logged at `warn`, and the subscription is kept.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_message_bytes = bytes;
        self
    }

    /// The wait before reconnecting, for the publisher and the subscriber
    /// alike: `first`, doubled after each failure up to `max`, back to
    /// `first` after a success (a `PUBLISH` answered; a subscription that
    /// lasted at least `max`); default 100 ms and 5 s. A zero `first` is
    /// taken as 1 ms; a `max` below `first` as `first`.
    pub fn reconnect_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.settings.min_backoff = first.max(Duration::from_millis(1));
        self.settings.max_backoff = max.max(self.settings.min_backoff);
        self
    }

    /// How long the subscriber's connection may stay silent before it
    /// sends `PING` (its answer is awaited for the connect timeout, 2 s,
    /// then the subscriber reconnects); default 30 s, at least 1 s. A
    /// connection dropped without a FIN (a NAT or firewall forgetting it)
    /// is noticed within this plus 2 s.
    pub fn idle_ping(mut self, every: Duration) -> Self {
        self.settings.idle_ping = every.max(Duration::from_secs(1));
        self
    }

    /// How long connecting to Redis, one write and one reply may take, on
    /// the publisher's connection and the subscriber's (whose reads wait
    /// for messages, but whose `PING` is answered within it); default 2 s,
    /// at least 1 ms. The publisher keeps a change whose `PUBLISH` timed
    /// out and sends it again (it may then arrive twice).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.endpoint.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many events were dropped, oldest first, because the queue was
    /// full (Redis away for long, or slower than the changes), since the
    /// bus was made.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// How many events Redis took (`PUBLISH` answered), since the bus was
    /// made.
    pub fn published(&self) -> u64 {
        self.counters.published.load(Ordering::Relaxed)
    }

    /// The queue, its thread started at the first use.
    fn queue(&self) -> &Queue {
        if !self.started.swap(true, Ordering::SeqCst) {
            publisher::start(
                self.endpoint.clone(),
                self.settings.clone(),
                Arc::clone(&self.counters),
                self.queue.receiver.clone(),
                self.queue.stopped.clone(),
            );
        }
        &self.queue
    }

    /// Counts one dropped event, logging the 1st, 2nd, 4th, 8th, ….
    fn count_dropped(&self) {
        let dropped = self.counters.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            log::warn!(
                "Redis change bus: the publish queue is full ({} events); \
                 the oldest change was dropped ({} dropped so far)",
                self.settings.max_queued,
                dropped
            );
        }
    }
}

impl ChangeBus for RedisChangeBus {
    fn publish(&self, event: &ChangeEvent) {
        let message = event.to_json();
        if message.len() > self.settings.max_message_bytes {
            log::warn!(
                "Redis change bus: a change of {} bytes is over the limit of {} \
                 (max_message_bytes); not published",
                message.len(),
                self.settings.max_message_bytes
            );
            return;
        }
        let queue = self.queue();
        let mut message = message;
        // A few times at most: racing `publish` calls may take the room made.
        for _ in 0..3 {
            match queue.sender.try_send(message) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => {
                    if queue.receiver.try_recv().is_ok() {
                        self.count_dropped();
                    }
                    message = back;
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
        self.count_dropped();
    }

    fn attach(&self, server: &ServerHandle) {
        if self.attached.swap(true, Ordering::SeqCst) {
            log::warn!("Redis change bus: attached twice; the second server is not subscribed");
            return;
        }
        // The publisher starts now too, so that it is connected before the
        // first change.
        let _ = self.queue();
        subscriber::start(
            self.endpoint.clone(),
            self.settings.clone(),
            server.downgrade(),
        );
    }
}

/// The wait before the next reconnection: doubling, bounded, reset after
/// a success.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
    first: Duration,
    max: Duration,
}

impl Backoff {
    pub(crate) fn new(settings: &Settings) -> Backoff {
        Backoff {
            next: settings.min_backoff,
            first: settings.min_backoff,
            max: settings.max_backoff,
        }
    }

    /// The wait to make now; the next one is twice as long (at most `max`).
    pub(crate) fn step(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 2).min(self.max);
        now
    }

    pub(crate) fn reset(&mut self) {
        self.next = self.first;
    }
}
