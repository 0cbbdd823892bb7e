//! Server-sent events: framing, and the streams of one session with their
//! replay buffers. No sockets here.
//!
//! Every stream (a POST's response stream, the session's GET stream) has an
//! id the server mints. Its events carry ids `<stream>-<seq>`, unique within
//! the session (HTTP-14), so a `Last-Event-ID` names the stream to resume
//! and where (HTTP-15). Each stream keeps its last events in a bounded
//! buffer for replay. A writer thread attaches to a stream through an
//! unbounded channel whose length `push` checks against the queue limit
//! (so that an idle stream preallocates nothing); a message sent while no
//! writer is attached, or while the attached writer's queue is at the
//! limit, is only buffered (and the writer is detached), so sending never
//! blocks and never waits on I/O.

use std::collections::VecDeque;
use std::sync::Arc;

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use parking_lot::Mutex;

use crate::jsonrpc::{write_result_or_error, ErrorCode, Message, RequestId};
use crate::server::{Sink, ToolAnswer};

/// What a stream's writer is given.
#[derive(Debug, Clone)]
pub(crate) enum Outgoing {
    /// One message, as JSON, with its sequence number in the stream, and
    /// what it is (so that writers need not parse it again).
    Event {
        seq: u64,
        json: Arc<str>,
        kind: Kind,
    },
    /// The stream is complete: end the response.
    End,
    /// Check that the client is still there; a writer whose client left
    /// ends (a new GET wants the stream).
    Probe,
}

/// What an event carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// A notification or a request to the client.
    Other,
    /// A successful response.
    Result,
    /// An error response with this code.
    Error(ErrorCode),
}

impl Kind {
    fn of(message: &Message) -> Kind {
        match message {
            Message::Response(r) => match &r.outcome {
                Ok(_) => Kind::Result,
                Err(e) => Kind::Error(e.code),
            },
            _ => Kind::Other,
        }
    }
}

/// Frames one SSE event carrying a JSON-RPC message, with the id
/// `<stream>-<seq>`.
pub(crate) fn frame_event(stream: u64, seq: u64, json: &str) -> Vec<u8> {
    frame(Some((stream, seq)), json)
}

/// Frames one SSE event without an id (2026-07-28 has no resumption,
/// MHTTP-6).
pub(crate) fn frame_event_plain(json: &str) -> Vec<u8> {
    frame(None, json)
}

fn frame(id: Option<(u64, u64)>, json: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + 48);
    if let Some((stream, seq)) = id {
        out.extend_from_slice(format!("id: {}-{}\n", stream, seq).as_bytes());
    }
    out.extend_from_slice(b"event: message\n");
    // Our JSON is one line; split anyway so that no payload breaks framing.
    for line in json.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.trim_end_matches('\r').as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

/// The priming event (an id and empty data) with a `retry:` field
/// (HTTP-5, HTTP-6).
pub(crate) fn frame_priming(stream: u64, seq: u64, retry_ms: u64) -> Vec<u8> {
    format!("id: {}-{}\nretry: {}\ndata: \n\n", stream, seq, retry_ms).into_bytes()
}

/// A keepalive comment.
pub(crate) const KEEPALIVE: &[u8] = b": keepalive\n\n";

/// Reads `<stream>-<seq>` from a `Last-Event-ID`.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// What [`Stream::attach`] gives a writer.
pub(crate) struct Attached {
    pub(crate) receiver: Receiver<Outgoing>,
    /// Buffered events to write first (a resumed stream's).
    pub(crate) replay: Vec<Outgoing>,
    /// The sequence number for the priming event.
    pub(crate) priming: u64,
    /// The writer's token for `detach_writer`.
    pub(crate) token: u64,
}

/// One stream and its replay buffer.
pub(crate) struct Stream {
    pub(crate) id: u64,
    /// For a POST stream, the request whose response ends it.
    pub(crate) response_to: Option<RequestId>,
    state: Mutex<StreamState>,
    /// Signalled when the writer detaches.
    detached: parking_lot::Condvar,
    queue_len: usize,
    buffer_len: usize,
    /// The answer is one JSON response: requests to the client cannot be
    /// carried, and are refused at once instead of waiting for a timeout.
    json_only: std::sync::atomic::AtomicBool,
    /// The server's count of bytes held in replay buffers, if it keeps one.
    total: Option<Arc<AtomicUsize>>,
}

struct StreamState {
    next_seq: u64,
    /// The last token handed to a writer.
    next_token: u64,
    buffer: VecDeque<(u64, Arc<str>, Kind)>,
    /// The attached writer's queue, with the token `attach` gave it.
    live: Option<(u64, Sender<Outgoing>)>,
    /// The response was sent: nothing follows.
    finished: bool,
    /// Bytes of JSON in `buffer`.
    bytes: usize,
}

/// What the retention rules need to know of a stream (one lock).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retention {
    pub(crate) finished: bool,
    pub(crate) live: bool,
    pub(crate) bytes: usize,
}

impl Stream {
    pub(crate) fn new(
        id: u64,
        response_to: Option<RequestId>,
        queue_len: usize,
        buffer_len: usize,
    ) -> Stream {
        Stream {
            id,
            response_to,
            state: Mutex::new(StreamState {
                next_seq: 1,
                next_token: 0,
                buffer: VecDeque::new(),
                live: None,
                finished: false,
                bytes: 0,
            }),
            detached: parking_lot::Condvar::new(),
            queue_len: queue_len.max(1),
            buffer_len,
            json_only: std::sync::atomic::AtomicBool::new(false),
            total: None,
        }
    }

    /// Counts this stream's buffered bytes in the server's `total`.
    pub(crate) fn counted_in(mut self, total: &Arc<AtomicUsize>) -> Stream {
        self.total = Some(Arc::clone(total));
        self
    }

    /// Whether it finished, whether a writer is attached, and the bytes
    /// its replay buffer holds.
    pub(crate) fn retention(&self) -> Retention {
        let state = self.state.lock();
        Retention {
            finished: state.finished,
            live: state.live.is_some(),
            bytes: state.bytes,
        }
    }

    /// Attaches a writer, replacing (and so ending) any earlier one.
    /// Returns the receiver, the buffered events after `after` (all when
    /// `None`), the writer's token for
    /// [`detach_writer`](Self::detach_writer), and the sequence number for
    /// a priming event: a fresh one for a new writer, `after` itself for a
    /// resumed one, so that a priming id never points past events the
    /// resumed writer has yet to deliver (HTTP-15).
    pub(crate) fn attach(&self, after: Option<u64>) -> Attached {
        // Unbounded, so that an idle stream holds no preallocated slots;
        // `push` enforces `queue_len`.
        let (sender, receiver) = crossbeam_channel::unbounded();
        let mut state = self.state.lock();
        let mut replay: Vec<Outgoing> = match after {
            Some(after) => state
                .buffer
                .iter()
                .filter(|(seq, _, _)| *seq > after)
                .map(|(seq, json, kind)| Outgoing::Event {
                    seq: *seq,
                    json: Arc::clone(json),
                    kind: *kind,
                })
                .collect(),
            None => Vec::new(),
        };
        let priming = match after {
            Some(after) => after,
            None => {
                let fresh = state.next_seq;
                state.next_seq += 1;
                fresh
            }
        };
        state.next_token += 1;
        let token = state.next_token;
        if state.finished {
            replay.push(Outgoing::End);
            state.live = None;
        } else {
            state.live = Some((token, sender));
        }
        Attached {
            receiver,
            replay,
            priming,
            token,
        }
    }

    /// Detaches the writer, which then ends its response.
    pub(crate) fn detach(&self) {
        self.state.lock().live = None;
        self.detached.notify_all();
    }

    /// Asks the writer holding `token`, if it still writes, to check its
    /// client: the kernel said the client left (`hangup.rs`).
    pub(crate) fn poke(&self, token: u64) {
        if let Some((live_token, live)) = &self.state.lock().live {
            if *live_token == token {
                let _ = live.try_send(Outgoing::Probe);
            }
        }
    }

    /// Asks the attached writer to check its client, and waits at most
    /// `wait` for it to detach; `true` when no writer is attached (any
    /// more). A client that left without a word is noticed at once instead
    /// of at the next keepalive write (HTTP-12).
    pub(crate) fn probe_writer(&self, wait: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + wait;
        let mut state = self.state.lock();
        match &state.live {
            None => return true,
            Some((_, live)) => {
                let _ = live.try_send(Outgoing::Probe);
            }
        }
        while state.live.is_some() {
            if self.detached.wait_until(&mut state, deadline).timed_out() {
                break;
            }
        }
        state.live.is_none()
    }

    /// Detaches the writer holding `token` only: a writer that failed must
    /// not end a newer one that resumed the stream meanwhile.
    pub(crate) fn detach_writer(&self, token: u64) {
        let mut state = self.state.lock();
        if matches!(&state.live, Some((t, _)) if *t == token) {
            state.live = None;
            self.detached.notify_all();
        }
    }

    /// Marks the stream as answered by one JSON response (HTTP-13: such an
    /// answer carries no request to the client).
    pub(crate) fn set_json_only(&self) {
        self.json_only
            .store(true, std::sync::atomic::Ordering::Release);
    }

    fn is_json_only(&self) -> bool {
        self.json_only.load(std::sync::atomic::Ordering::Acquire)
    }

    /// `true` while a writer is attached.
    pub(crate) fn is_live(&self) -> bool {
        self.state.lock().live.is_some()
    }

    /// `true` once the response was sent.
    pub(crate) fn is_finished(&self) -> bool {
        self.state.lock().finished
    }

    /// Ends the stream without a response (the request was cancelled).
    fn end(&self) {
        let mut state = self.state.lock();
        state.finished = true;
        if let Some((_, live)) = state.live.take() {
            let _ = live.try_send(Outgoing::End);
            self.detached.notify_all();
        }
    }

    /// Records `message` and hands it to the writer, if one is attached.
    fn push(&self, message: &Message) -> bool {
        let ends = match (message, &self.response_to) {
            (Message::Response(r), Some(id)) => r.id.as_ref() == Some(id),
            _ => false,
        };
        self.push_json(Arc::from(message.to_json_string()), Kind::of(message), ends)
    }

    /// Queues the response to `id` whose result is `result`, written
    /// straight from it.
    fn push_result(&self, id: &RequestId, result: &ToolAnswer<'_>) -> bool {
        let mut json = Vec::with_capacity(256);
        write_result_or_error(&mut json, id, result);
        let json = String::from_utf8(json).unwrap_or_default();
        let ends = self.response_to.as_ref() == Some(id);
        self.push_json(Arc::from(json), Kind::Result, ends)
    }

    /// Queues one event's JSON; `ends` when it is this stream's response.
    fn push_json(&self, json: Arc<str>, kind: Kind, ends: bool) -> bool {
        let mut state = self.state.lock();
        if state.finished {
            return false;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        if self.buffer_len > 0 {
            let mut freed = 0;
            if state.buffer.len() >= self.buffer_len {
                if let Some((_, old, _)) = state.buffer.pop_front() {
                    freed = old.len();
                }
            }
            state.bytes = state.bytes + json.len() - freed;
            if let Some(total) = &self.total {
                total.fetch_add(json.len(), AtomicOrdering::Relaxed);
                total.fetch_sub(freed, AtomicOrdering::Relaxed);
            }
            state.buffer.push_back((seq, Arc::clone(&json), kind));
        }
        if ends {
            state.finished = true;
        }
        let mut detach = false;
        if let Some((_, live)) = &state.live {
            let result = if live.len() >= self.queue_len {
                Err(TrySendError::Full(()))
            } else {
                live.try_send(Outgoing::Event { seq, json, kind })
                    .map_err(|e| match e {
                        TrySendError::Full(_) => TrySendError::Full(()),
                        TrySendError::Disconnected(_) => TrySendError::Disconnected(()),
                    })
            };
            match result {
                Ok(()) => {
                    if ends {
                        let _ = live.try_send(Outgoing::End);
                        detach = true;
                    }
                }
                Err(TrySendError::Full(_)) => {
                    log::warn!(
                        "SSE stream {} is {} events behind; closing it (the client may resume)",
                        self.id,
                        self.queue_len
                    );
                    detach = true;
                }
                Err(TrySendError::Disconnected(_)) => detach = true,
            }
        }
        if detach {
            state.live = None;
            self.detached.notify_all();
        }
        true
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(total) = &self.total {
            total.fetch_sub(self.state.get_mut().bytes, AtomicOrdering::Relaxed);
        }
    }
}

/// The [`Sink`] of one stream.
pub(crate) struct StreamSink(pub(crate) Arc<Stream>);

impl Sink for StreamSink {
    fn send(&self, message: Message) -> bool {
        if matches!(message, Message::Request(_)) && self.0.is_json_only() {
            return false;
        }
        self.0.push(&message)
    }

    fn send_tool_result(&self, id: &RequestId, result: &ToolAnswer<'_>) -> Option<bool> {
        Some(self.0.push_result(id, result))
    }

    fn end(&self) {
        self.0.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Response;
    use serde_json::json;

    // HTTP-14: event ids name the stream and the position in it.
    #[test]
    fn event_framing_and_ids() {
        let bytes = frame_event(3, 7, r#"{"a":1}"#);
        assert_eq!(
            bytes,
            b"id: 3-7\nevent: message\ndata: {\"a\":1}\n\n".to_vec()
        );
        assert_eq!(parse_event_id("3-7"), Some((3, 7)));
        assert_eq!(parse_event_id("x"), None);
        assert_eq!(
            frame_priming(1, 1, 500),
            b"id: 1-1\nretry: 500\ndata: \n\n".to_vec()
        );
    }

    // HTTP-15: a resumed stream replays what it missed, then its end.
    #[test]
    fn replay_after_detach() {
        let stream = Stream::new(1, Some(RequestId::Number(9)), 4, 16);
        let sink = StreamSink(Arc::new(stream));
        let Attached {
            receiver: rx,
            replay,
            ..
        } = sink.0.attach(None);
        assert!(replay.is_empty());
        sink.send(Message::notification("n1", None));
        let first = rx.try_recv().unwrap();
        sink.0.detach();
        drop(rx);
        sink.send(Message::notification("n2", None));
        sink.send(Message::Response(Response::ok(
            RequestId::Number(9),
            json!({}),
        )));
        assert!(sink.0.is_finished());
        let after = match first {
            Outgoing::Event { seq, .. } => seq,
            Outgoing::End | Outgoing::Probe => panic!("unexpected end"),
        };
        let replay = sink.0.attach(Some(after)).replay;
        assert_eq!(replay.len(), 3, "n2, the response, and the end");
        assert!(matches!(replay[2], Outgoing::End));
    }

    // Limits: a full queue detaches the writer instead of blocking.
    #[test]
    fn full_queue_detaches() {
        let stream = Arc::new(Stream::new(2, None, 1, 0));
        let sink = StreamSink(Arc::clone(&stream));
        let _attached = stream.attach(None);
        assert!(sink.send(Message::notification("a", None)));
        assert!(sink.send(Message::notification("b", None)));
        assert!(!stream.is_live());
    }
}
