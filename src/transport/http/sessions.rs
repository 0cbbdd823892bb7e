//! The sessions of the 2025-11-25 HTTP transport: one per
//! `Mcp-Session-Id`, each the protocol session plus its SSE streams, kept
//! in the server's map until deleted, expired or shut down (HTTP-16 to
//! HTTP-19).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::sse::{Stream, StreamSink};
use super::{HttpConfig, Shared};
use crate::jsonrpc::RequestId;
use crate::server::session::{Closing, Session};
use crate::server::{Principal, Sink};

/// One `Mcp-Session-Id`: the protocol session plus its streams.
pub(crate) struct HttpSession {
    pub(crate) id: String,
    pub(crate) core: Arc<Session>,
    last_seen: Mutex<Instant>,
    /// A request named the session after its `initialize`.
    used: AtomicBool,
    streams: Mutex<Streams>,
    /// The standalone stream for messages related to no request.
    pub(crate) get_stream: Arc<Stream>,
    /// The principal whose `initialize` opened it, on a protected
    /// endpoint: only the same caller may use it.
    owner: Option<Arc<Principal>>,
    /// The address its `initialize` came from.
    peer: Option<IpAddr>,
}

impl HttpSession {
    /// `true` if `principal` may use this session: the same subject and
    /// client as its owner (a refreshed token with other scopes still
    /// is). Always on an endpoint that is not protected.
    /// Whose sessions this one counts among, and how many they may hold:
    /// its principal (subject and client id) on a protected endpoint,
    /// else its peer address when a per-peer limit is set.
    fn owner_key(&self, config: &HttpConfig) -> Option<(String, usize)> {
        match (&self.owner, self.peer, config.max_sessions_per_peer) {
            (Some(owner), _, _) => {
                let client = owner.client_id.as_deref().unwrap_or("");
                let key = format!("principal\u{0}{}\u{0}{}", owner.subject, client);
                Some((key, config.max_sessions_per_principal))
            }
            (None, Some(peer), max) => Some((format!("peer\u{0}{}", peer), max)),
            _ => None,
        }
    }

    pub(crate) fn belongs_to(&self, principal: Option<&Principal>) -> bool {
        match (&self.owner, principal) {
            (None, _) => true,
            (Some(owner), Some(principal)) => owner.same_caller(principal),
            (Some(_), None) => false,
        }
    }
}

/// The live sessions, and their ids in the order they were opened (with
/// ids of removed sessions dropped lazily), for eviction without a scan.
#[derive(Default)]
pub(crate) struct SessionTable {
    pub(crate) map: HashMap<String, Arc<HttpSession>>,
    order: VecDeque<String>,
    /// On a protected endpoint: each principal's session ids, oldest
    /// first (ids of removed sessions dropped lazily).
    owned: HashMap<String, VecDeque<String>>,
}

/// How many sessions one `initialize` looks at to make room.
const EVICTION_LOOKS: usize = 64;

impl SessionTable {
    /// Makes room for one session when the table holds `max`: evicts an
    /// expired session, or one that nothing used since its `initialize`
    /// and that holds no request or stream, looking at no more than
    /// [`EVICTION_LOOKS`] of the oldest. `false` when none could go.
    fn make_room(&mut self, max: usize, idle: Duration) -> bool {
        for _ in 0..EVICTION_LOOKS {
            if self.map.len() < max {
                return true;
            }
            let id = match self.order.pop_front() {
                Some(id) => id,
                None => break,
            };
            let session = match self.map.get(&id) {
                Some(session) => Arc::clone(session),
                None => continue, // Removed already.
            };
            if session.expired(idle) || session.unused_and_quiet() {
                self.map.remove(&id);
                log::info!("session {} evicted to make room", id);
                session.close("the session was evicted", Closing::ServerEnds);
            } else {
                self.order.push_back(id);
            }
        }
        self.map.len() < max || self.evict_idle(None)
    }

    /// Evicts the least recently used session (of `peer`'s without a
    /// principal, when given) that holds nothing (see
    /// [`HttpSession::holds_nothing`]); `false` when every one holds
    /// something. One scan of the table: O(sessions) under the table's
    /// lock, paid only at a limit.
    fn evict_idle(&mut self, peer: Option<IpAddr>) -> bool {
        let lru = self
            .map
            .values()
            .filter(|s| peer.is_none() || (s.owner.is_none() && s.peer == peer))
            .filter(|s| s.holds_nothing())
            .min_by_key(|s| *s.last_seen.lock())
            .map(Arc::clone);
        match lru.and_then(|s| self.map.remove(&s.id)) {
            Some(session) => {
                log::info!("session {} evicted to make room", session.id);
                session.close("the session was evicted", Closing::ServerEnds);
                true
            }
            None => false,
        }
    }

    /// Keeps a principal (or a peer) below its limit of sessions, so one
    /// caller cannot fill the table for everyone else. A principal's
    /// oldest session ends; a peer's least recently used idle one is
    /// evicted, and `false` when all of the peer's sessions hold something.
    fn limit_owner(&mut self, session: &HttpSession, config: &HttpConfig) -> bool {
        let (owner, max) = match session.owner_key(config) {
            Some(owner) => owner,
            None => return true,
        };
        let by_peer = session.owner.is_none();
        loop {
            let map = &mut self.map;
            let ids = self.owned.entry(owner.clone()).or_default();
            ids.retain(|id| map.contains_key(id));
            if ids.len() < max.max(1) {
                ids.push_back(session.id.clone());
                return true;
            }
            if by_peer {
                if !self.evict_idle(session.peer) {
                    return false;
                }
                continue;
            }
            let oldest = match ids.pop_front().and_then(|id| map.remove(&id)) {
                Some(oldest) => oldest,
                None => continue,
            };
            log::info!("session {} ended: its owner opened too many", oldest.id);
            oldest.close("its owner opened too many sessions", Closing::ServerEnds);
        }
    }

    fn insert(&mut self, session: &Arc<HttpSession>) {
        // Drop the ids of removed sessions before the queues outgrow the
        // map, and the principals who hold none.
        if self.order.len() > 2 * self.map.len() + EVICTION_LOOKS {
            let map = &self.map;
            self.order.retain(|id| map.contains_key(id));
            self.owned.retain(|_, ids| {
                ids.retain(|id| map.contains_key(id));
                !ids.is_empty()
            });
        }
        self.order.push_back(session.id.clone());
        self.map.insert(session.id.clone(), Arc::clone(session));
    }
}

struct Streams {
    next_id: u64,
    /// Retained streams, oldest first.
    list: Vec<Arc<Stream>>,
}

impl HttpSession {
    pub(crate) fn touch(&self) {
        *self.last_seen.lock() = Instant::now();
        self.used.store(true, Ordering::Relaxed);
    }

    /// Holding no request in flight and no open stream.
    fn quiet(&self) -> bool {
        self.core.in_flight_count() == 0 && !self.streams.lock().list.iter().any(|s| s.is_live())
    }

    /// Never used since `initialize`, and holding no request or stream.
    fn unused_and_quiet(&self) -> bool {
        !self.used.load(Ordering::Relaxed) && self.quiet()
    }

    /// Holds nothing a client would lose if it went: no request in
    /// flight, no open stream, no resource subscription.
    fn holds_nothing(&self) -> bool {
        self.quiet() && !self.core.has_subscriptions()
    }

    pub(crate) fn expired(&self, idle: Duration) -> bool {
        self.last_seen.lock().elapsed() > idle && self.quiet()
    }

    /// A new POST stream, or `None` at the open-stream limit.
    pub(crate) fn open_stream(
        &self,
        config: &HttpConfig,
        retained_total: &Arc<AtomicUsize>,
        response_to: RequestId,
    ) -> Option<Arc<Stream>> {
        let mut streams = self.streams.lock();
        let (open, bytes) = streams.list.iter().fold((0, 0), |(open, bytes), s| {
            let r = s.retention();
            (open + usize::from(!r.finished), bytes + r.bytes)
        });
        if open >= config.max_streams_per_session {
            return None;
        }
        let id = streams.next_id;
        streams.next_id += 1;
        let stream = Stream::new(
            id,
            Some(response_to),
            config.stream_queue_len,
            config.replay_buffer_events,
        )
        .counted_in(retained_total);
        let stream = Arc::new(stream);
        if streams.list.len() >= config.max_retained_streams
            || bytes > config.max_retained_bytes_per_session
            || retained_total.load(Ordering::Relaxed) > config.max_retained_bytes
        {
            forget_oldest(&mut streams.list, bytes, config, retained_total);
        }
        streams.list.push(Arc::clone(&stream));
        Some(stream)
    }

    /// Forgets this session's oldest finished streams until the server
    /// retains at most `max` bytes; how many bytes it let go.
    fn forget_for_server(&self, total: &AtomicUsize, max: usize) -> usize {
        let mut freed = 0;
        self.streams.lock().list.retain(|stream| {
            let r = stream.retention();
            if total.load(Ordering::Relaxed) > max && r.finished && !r.live {
                freed += r.bytes;
                false
            } else {
                true
            }
        });
        freed
    }

    /// Forgets a stream whose response was delivered whole.
    pub(crate) fn forget_stream(&self, id: u64) {
        self.streams
            .lock()
            .list
            .retain(|s| s.id != id || !s.is_finished());
    }

    /// Forgets a stream that was never shown to the client (its request
    /// was answered at once).
    pub(crate) fn discard_stream(&self, id: u64) {
        self.streams.lock().list.retain(|s| s.id != id);
    }

    /// The stream with this id, for resumption: `Err(true)` when it was
    /// minted but has ended and been forgotten, `Err(false)` when this
    /// session never had it.
    pub(crate) fn stream(&self, id: u64) -> Result<Arc<Stream>, bool> {
        let streams = self.streams.lock();
        match streams.list.iter().find(|s| s.id == id) {
            Some(stream) => Ok(Arc::clone(stream)),
            None => Err(id < streams.next_id),
        }
    }

    /// Ends the session: cancels its requests and ends its streams.
    pub(crate) fn close(&self, reason: &str, by: Closing) {
        self.close_sparing(reason, by, None)
    }

    /// [`close`](Self::close), but request `spare` runs on and its stream
    /// stays attached (its handler is stopping the server).
    pub(crate) fn close_sparing(&self, reason: &str, by: Closing, spare: Option<&RequestId>) {
        self.core.close_sparing(reason, by, spare);
        for stream in self.streams.lock().list.iter() {
            if spare.is_none() || stream.response_to.as_ref() != spare {
                stream.detach();
            }
        }
    }
}

/// Forgets the oldest finished streams (no writer attached) while the
/// session retains more streams or bytes than its limits, or the server
/// more bytes than its own (DESIGN.md §6). A forgotten stream's resume
/// gets the "ended" answer; dropping it takes its bytes out of the
/// server's count. `bytes` is what the session's streams hold; the stream
/// about to be added counts as one more.
fn forget_oldest(
    list: &mut Vec<Arc<Stream>>,
    mut bytes: usize,
    config: &HttpConfig,
    total: &AtomicUsize,
) {
    let mut count = list.len() + 1;
    list.retain(|stream| {
        let over = count > config.max_retained_streams
            || bytes > config.max_retained_bytes_per_session
            || total.load(Ordering::Relaxed) > config.max_retained_bytes;
        let r = stream.retention();
        if over && r.finished && !r.live {
            count -= 1;
            bytes -= r.bytes;
            false
        } else {
            true
        }
    });
}

/// Why a session id could not be used.
pub(crate) enum Lookup {
    Found(Arc<HttpSession>),
    /// Unknown, deleted or expired: 404 (HTTP-18).
    NotFound,
}

impl Shared {
    /// Past `max_retained_bytes` (the opening session already forgot what
    /// it could), forgets the oldest finished streams of the sessions
    /// least recently seen until the server is back under it: one client
    /// cannot keep the whole allowance by never opening another stream.
    /// Runs only when over the limit; the session map is read (cloned
    /// out) under its lock, the streams after it, in the lock order.
    pub(crate) fn trim_retained(&self) {
        let max = self.config.max_retained_bytes;
        if self.retained.load(Ordering::Relaxed) <= max {
            return;
        }
        let sessions: Vec<Arc<HttpSession>> = self.sessions.lock().map.values().cloned().collect();
        // Least recently seen first (ties in map order), through a heap: no
        // sort routine in the binary for this one cold path.
        let mut oldest: BinaryHeap<Reverse<(Instant, usize)>> = sessions
            .iter()
            .enumerate()
            .map(|(i, s)| Reverse((*s.last_seen.lock(), i)))
            .collect();
        let mut freed = 0;
        while let Some(Reverse((_, i))) = oldest.pop() {
            if self.retained.load(Ordering::Relaxed) <= max {
                break;
            }
            freed += sessions[i].forget_for_server(&self.retained, max);
        }
        log::info!(
            "retained responses over {} bytes: forgot {} bytes of finished streams",
            max,
            freed
        );
    }

    /// Finds a session for `principal`, evicting it if it expired. An
    /// expired session, and one another principal opened, are reported as
    /// not found; the latter is left untouched (a stranger who knows its id
    /// cannot keep it alive).
    pub(crate) fn lookup(&self, id: &str, principal: Option<&Principal>) -> Lookup {
        let mut sessions = self.sessions.lock();
        let session = match sessions.map.get(id) {
            Some(s) => Arc::clone(s),
            None => return Lookup::NotFound,
        };
        let ended = session.core.is_ended();
        if ended || session.expired(self.config.session_idle_timeout) {
            // An ended session's running requests still answer (SessionHandle::end).
            if !ended || session.core.in_flight_count() == 0 {
                sessions.map.remove(id);
                drop(sessions);
                log::info!("session {} expired or ended", id);
                session.close("the session expired", Closing::ServerEnds);
            }
            return Lookup::NotFound;
        }
        drop(sessions);
        if !session.belongs_to(principal) {
            log::warn!("refused session {} to another principal", id);
            return Lookup::NotFound;
        }
        session.touch();
        Lookup::Found(session)
    }

    /// Ends the expired sessions, and the ended ones with no request left
    /// ([`HttpServer::end_idle_sessions`](super::HttpServer::end_idle_sessions)).
    pub(crate) fn end_idle_sessions(&self) -> usize {
        let idle = self.config.session_idle_timeout;
        let gone: Vec<Arc<HttpSession>> = {
            let mut sessions = self.sessions.lock();
            let ids: Vec<String> = sessions
                .map
                .values()
                .filter(|s| s.expired(idle) || (s.core.is_ended() && s.core.in_flight_count() == 0))
                .map(|s| s.id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| sessions.map.remove(id))
                .collect()
        };
        for session in &gone {
            log::info!("session {} expired or ended", session.id);
            session.close("the session expired", Closing::ServerEnds);
        }
        gone.len()
    }

    /// A new session, not yet registered (see [`Shared::register`]).
    pub(crate) fn new_session(
        &self,
        owner: Option<Arc<Principal>>,
        peer: Option<IpAddr>,
    ) -> Arc<HttpSession> {
        let id = format!("{}{}", self.config.session_id_prefix, uuid::Uuid::new_v4());
        let get_stream = Arc::new(Stream::new(
            0,
            None,
            self.config.stream_queue_len,
            self.config.replay_buffer_events,
        ));
        let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&get_stream)));
        let core = Session::http(&self.server, id.clone(), sink);
        Arc::new(HttpSession {
            id,
            core,
            last_seen: Mutex::new(Instant::now()),
            used: AtomicBool::new(false),
            streams: Mutex::new(Streams {
                next_id: 1,
                list: vec![Arc::clone(&get_stream)],
            }),
            get_stream,
            owner,
            peer,
        })
    }

    /// Registers an initialized session, or says why not: its peer holds
    /// its share of sessions, all in use, or the table is full of
    /// sessions in use (see [`SessionTable::make_room`]: a full table
    /// evicts its least recently used idle session).
    pub(crate) fn register(&self, session: &Arc<HttpSession>) -> Result<(), &'static str> {
        let mut sessions = self.sessions.lock();
        if !sessions.limit_owner(session, &self.config) {
            return Err("too many sessions from this address; try again later");
        }
        let (max, idle) = (self.config.max_sessions, self.config.session_idle_timeout);
        if sessions.map.len() >= max && !sessions.make_room(max, idle) {
            return Err("too many sessions; try again later");
        }
        sessions.insert(session);
        log::info!("session {} opened", session.id);
        Ok(())
    }

    /// Ends a session (`DELETE`); `false` if it was unknown.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let removed = self.sessions.lock().map.remove(id);
        match removed {
            Some(session) => {
                log::info!("session {} deleted", id);
                session.close("the session was deleted", Closing::ClientLeft);
                true
            }
            None => false,
        }
    }
}
