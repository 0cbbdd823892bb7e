//! Transports: stdio, in-memory (for tests), and the worker pool they share.

pub mod http;
pub mod memory;
pub(crate) mod pool;
pub mod stdio;

use crossbeam_channel::Sender;

use crate::jsonrpc::Message;

/// Where outgoing messages of one request (or of one session) go.
///
/// stdio: the writer thread's queue. The handler never knows which
/// transport it runs on (DESIGN.md, "one outbound channel").
pub(crate) trait Sink: Send + Sync {
    /// Queues one message; `false` when the peer is gone.
    fn send(&self, message: Message) -> bool;

    /// The request this sink belongs to ended without a response (it was
    /// cancelled): an HTTP response stream ends here.
    fn end(&self) {}
}

/// A sink that feeds a channel (the stdio writer, the in-memory client).
pub(crate) struct ChannelSink(pub(crate) Sender<Message>);

impl Sink for ChannelSink {
    fn send(&self, message: Message) -> bool {
        self.0.send(message).is_ok()
    }
}
