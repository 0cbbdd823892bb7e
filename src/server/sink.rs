//! The core's output port: where the messages of one request (or of one
//! session) go. Transports implement it; the core never knows which one it
//! talks to (DESIGN.md §2).

use crossbeam_channel::Sender;

use crate::jsonrpc::{Message, RequestId};
use crate::protocol::CallToolResult;

/// Where outgoing messages of one request (or of one session) go.
///
/// stdio: the writer thread's queue; Streamable HTTP: one SSE stream. The
/// handler never knows which transport it runs on. `send` is called from
/// any thread (the reading thread, workers, `ServerHandle` callers) and must
/// never block on I/O.
pub(crate) trait Sink: Send + Sync {
    /// Queues one message; `false` when the peer is gone.
    fn send(&self, message: Message) -> bool;

    /// The request this sink belongs to ended without a response (it was
    /// cancelled): an HTTP response stream ends here.
    fn end(&self) {}

    /// Sends the response to request `id` whose result is `result`,
    /// written straight from it (the JSON `send` would write for it made a
    /// value, members in the type's order). `None` when this sink takes only messages: the caller
    /// then sends the response as one.
    fn send_tool_result(&self, _id: &RequestId, _result: &CallToolResult) -> Option<bool> {
        None
    }
}

/// A sink that feeds a channel (the stdio writer, the in-memory client).
pub(crate) struct ChannelSink(pub(crate) Sender<Message>);

impl Sink for ChannelSink {
    fn send(&self, message: Message) -> bool {
        self.0.send(message).is_ok()
    }
}

/// A sink for messages with nowhere to go (a stateless HTTP notification).
pub(crate) struct NullSink;

impl Sink for NullSink {
    fn send(&self, _: Message) -> bool {
        false
    }
}
