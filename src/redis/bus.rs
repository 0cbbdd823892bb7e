//! The change bus on a Redis stream (DESIGN.md §30): one publishing
//! thread fed through a bounded queue, one reading thread per server.

mod publisher;
mod stream;
mod subscriber;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::endpoint::Endpoint;
use crate::error::Error;
use crate::server::{ChangeBus, ChangeEvent, ServerHandle};

/// A [`ChangeBus`] on a Redis stream (Redis 5 or later, or Valkey), feature `redis`
/// (DESIGN.md §16, §30): every instance appends its changes to one stream
/// ([`key`](Self::key)) and reads it, and feeds the other instances'
/// events into [`ServerHandle::apply_change`] (its own come back too, and
/// are dropped there by their origin).
///
/// - **Delivery is at least once per instance, in order.** Each
///   instance's reader remembers the id of the last entry it read, and
///   after a lost connection reads on from it: nothing appended while it
///   was reconnecting is missed, and changes appended while Redis was
///   away (kept by the publisher, below) are read once it is back. A
///   change arrives twice only when an `XADD`'s answer was lost (it is
///   sent again). A change is lost to an instance only if it fell behind
///   by more than [`max_stream_len`](Self::max_stream_len) entries (the
///   stream is trimmed; logged at `warn`), or if Redis restarted without
///   persistence before that instance read it.
/// - **Publishing never blocks**: [`publish`](ChangeBus::publish) puts the
///   event's JSON in a bounded queue ([`max_queued`](Self::max_queued),
///   1024 events) that a thread of its own (`tiny-mcp-redis-publish`)
///   appends with `XADD <key> MAXLEN ~ <max_stream_len> * e <json>`. When
///   the queue is full the *oldest* waiting event is dropped, logged (at
///   `warn`, at the 1st, 2nd, 4th, 8th, … drop) and counted
///   ([`dropped`](Self::dropped)).
/// - **Changes made while Redis is away are sent when it is back**: an
///   event whose `XADD` failed is kept and sent again after the publisher
///   reconnected (back-off [`reconnect_backoff`](Self::reconnect_backoff),
///   100 ms doubling to 5 s).
/// - **The reader** (thread `tiny-mcp-redis-subscribe`, connection named
///   `tiny-mcp-bus-subscriber`, started when the server is built,
///   [`ChangeBus::attach`]) starts after the stream's last entry (history
///   is not replayed), then loops on `XREAD BLOCK 500 COUNT 100`; each
///   blocking read is answered within 500 ms plus the
///   [`timeout`](Self::timeout), or the reader reconnects (with the same
///   back-off, until the server closes), so a connection dropped without
///   a FIN is noticed within 2.5 s. An entry that is not a change event
///   or is over [`max_message_bytes`](Self::max_message_bytes) (64 KiB)
///   is skipped with a log line.
///
/// Every connection has the same [`timeout`](Self::timeout): 2 s to
/// connect, 2 s per write and per reply (the reader's replies: 2.5 s).
/// Nothing Redis sends can panic a thread.
///
/// ```no_run
/// use tiny_mcp::{RedisChangeBus, Server};
///
/// # fn main() -> Result<(), tiny_mcp::Error> {
/// let bus = RedisChangeBus::new("redis://:secret@redis.internal:6379/0")?
///     .key("weather-changes");
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
    pub(crate) key: String,
    pub(crate) max_stream_len: usize,
    pub(crate) max_queued: usize,
    pub(crate) max_message_bytes: usize,
    pub(crate) min_backoff: Duration,
    pub(crate) max_backoff: Duration,
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
    /// The stream key every instance uses unless [`key`](Self::key) names
    /// another: `tiny-mcp-changes`.
    pub const DEFAULT_KEY: &'static str = "tiny-mcp-changes";

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
                key: Self::DEFAULT_KEY.to_string(),
                max_stream_len: 10_000,
                max_queued: 1024,
                max_message_bytes: 64 * 1024,
                min_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(5),
            },
            queue: Queue::new(1024),
            counters: Arc::new(Counters::default()),
            started: AtomicBool::new(false),
            attached: AtomicBool::new(false),
        })
    }

    /// The Redis key of the stream; default `tiny-mcp-changes`
    /// ([`DEFAULT_KEY`](Self::DEFAULT_KEY)). Every instance of one
    /// deployment must name the same; deployments sharing a Redis name
    /// different ones. The key must hold a stream (or nothing).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.settings.key = key.into();
        self
    }

    /// About how many entries the stream keeps (`XADD … MAXLEN ~ n`: Redis
    /// trims whole nodes, so it may keep somewhat more), at least 1;
    /// default 10,000. An instance that falls behind by more (it was
    /// disconnected while that many changes were made) loses the oldest
    /// it did not read, and logs it at `warn`.
    pub fn max_stream_len(mut self, entries: usize) -> Self {
        self.settings.max_stream_len = entries.max(1);
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
    /// is not published, a larger entry read is skipped; both are logged
    /// at `warn`, and the reader goes on.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_message_bytes = bytes;
        self
    }

    /// The wait before reconnecting, for the publisher and the subscriber
    /// alike: `first`, doubled after each failure up to `max`, back to
    /// `first` after a success (an `XADD` answered; an `XREAD` answered);
    /// default 100 ms and 5 s. A zero `first` is
    /// taken as 1 ms; a `max` below `first` as `first`.
    pub fn reconnect_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.settings.min_backoff = first.max(Duration::from_millis(1));
        self.settings.max_backoff = max.max(self.settings.min_backoff);
        self
    }

    /// How long connecting to Redis, one write and one reply may take, on
    /// the publisher's connection and the reader's (whose blocking `XREAD`
    /// may take 500 ms more); default 2 s, at least 1 ms. The publisher
    /// keeps a change whose `XADD` timed out and sends it again (it may
    /// then arrive twice).
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

    /// How many events Redis took (`XADD` answered), since the bus was
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

    fn dropped(&self) -> u64 {
        RedisChangeBus::dropped(self)
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
