//! The sessions of the 2025-11-25 HTTP transport: one per
//! `Mcp-Session-Id`, each the protocol session plus its SSE streams, kept
//! in the server's map until deleted, expired or shut down (HTTP-16 to
//! HTTP-19).

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::sse::{Stream, StreamSink};
use super::{HttpConfig, Shared};
use crate::jsonrpc::RequestId;
use crate::server::Sink;
use crate::session::{Closing, Session};

/// One `Mcp-Session-Id`: the protocol session plus its streams.
pub(crate) struct HttpSession {
    pub(crate) id: String,
    pub(crate) core: Arc<Session>,
    last_seen: Mutex<Instant>,
    streams: Mutex<Streams>,
    /// The standalone stream for messages related to no request.
    pub(crate) get_stream: Arc<Stream>,
}

struct Streams {
    next_id: u64,
    /// Retained streams, oldest first.
    list: Vec<Arc<Stream>>,
}

impl HttpSession {
    pub(crate) fn touch(&self) {
        *self.last_seen.lock() = Instant::now();
    }

    pub(crate) fn expired(&self, idle: Duration) -> bool {
        self.last_seen.lock().elapsed() > idle
            && self.core.in_flight_count() == 0
            && !self.streams.lock().list.iter().any(|s| s.is_live())
    }

    /// A new POST stream, or `None` at the open-stream limit.
    pub(crate) fn open_stream(
        &self,
        config: &HttpConfig,
        response_to: RequestId,
    ) -> Option<Arc<Stream>> {
        let mut streams = self.streams.lock();
        let open = streams.list.iter().filter(|s| !s.is_finished()).count();
        if open >= config.max_streams_per_session {
            return None;
        }
        let id = streams.next_id;
        streams.next_id += 1;
        let stream = Arc::new(Stream::new(
            id,
            Some(response_to),
            config.stream_queue_len,
            config.replay_buffer_events,
        ));
        streams.list.push(Arc::clone(&stream));
        // Forget the oldest finished streams beyond the retention limit.
        while streams.list.len() > config.max_retained_streams {
            match streams
                .list
                .iter()
                .position(|s| s.is_finished() && !s.is_live())
            {
                Some(i) => {
                    streams.list.remove(i);
                }
                None => break,
            }
        }
        Some(stream)
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

/// Why a session id could not be used.
pub(crate) enum Lookup {
    Found(Arc<HttpSession>),
    /// Unknown, deleted or expired: 404 (HTTP-18).
    NotFound,
}

impl Shared {
    /// Finds a session, evicting it if it expired (reported as not found).
    pub(crate) fn lookup(&self, id: &str) -> Lookup {
        let mut sessions = self.sessions.lock();
        let session = match sessions.get(id) {
            Some(s) => Arc::clone(s),
            None => return Lookup::NotFound,
        };
        if session.expired(self.config.session_idle_timeout) {
            sessions.remove(id);
            drop(sessions);
            log::info!("session {} expired", id);
            session.close("the session expired", Closing::ServerEnds);
            return Lookup::NotFound;
        }
        drop(sessions);
        session.touch();
        Lookup::Found(session)
    }

    /// A new session, not yet registered (see [`Shared::register`]).
    pub(crate) fn new_session(&self) -> Arc<HttpSession> {
        let id = uuid::Uuid::new_v4().to_string();
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
            streams: Mutex::new(Streams {
                next_id: 1,
                list: vec![Arc::clone(&get_stream)],
            }),
            get_stream,
        })
    }

    /// Registers an initialized session; `false` when the map is full of
    /// live sessions.
    pub(crate) fn register(&self, session: &Arc<HttpSession>) -> bool {
        let mut sessions = self.sessions.lock();
        if sessions.len() >= self.config.max_sessions {
            let idle = self.config.session_idle_timeout;
            let expired: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.expired(idle))
                .map(|(k, _)| k.clone())
                .collect();
            for key in expired {
                if let Some(s) = sessions.remove(&key) {
                    s.close("the session expired", Closing::ServerEnds);
                }
            }
            if sessions.len() >= self.config.max_sessions {
                return false;
            }
        }
        sessions.insert(session.id.clone(), Arc::clone(session));
        log::info!("session {} opened", session.id);
        true
    }

    /// Ends a session (`DELETE`); `false` if it was unknown.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let removed = self.sessions.lock().remove(id);
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
