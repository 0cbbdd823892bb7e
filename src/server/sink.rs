//! The core's output port: where the messages of one request (or of one
//! session) go. Transports implement it; the core never knows which one it
//! talks to (DESIGN.md §2).

use crossbeam_channel::Sender;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::jsonrpc::{Message, RequestId};
use crate::protocol::CallToolResult;

/// A tool's result on its way out, written straight from its type; in
/// the 2026-07-28 era with `resultType: "complete"` (its `_meta` already
/// stamped by the server).
pub(crate) struct ToolAnswer<'a> {
    pub(crate) result: &'a CallToolResult,
    /// Add `resultType: "complete"` (2026-07-28).
    pub(crate) complete: bool,
}

impl Serialize for ToolAnswer<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !self.complete {
            return self.result.serialize(serializer);
        }
        // CallToolResult's own members (as its derive writes them; the
        // test below breaks when a member is added), then resultType.
        let r = self.result;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &r.content)?;
        if let Some(value) = &r.structured_content {
            map.serialize_entry("structuredContent", value)?;
        }
        if let Some(is_error) = &r.is_error {
            map.serialize_entry("isError", is_error)?;
        }
        if let Some(meta) = &r.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.serialize_entry("resultType", "complete")?;
        map.end()
    }
}

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
    fn send_tool_result(&self, _id: &RequestId, _answer: &ToolAnswer<'_>) -> Option<bool> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ContentBlock;
    use serde_json::json;

    // A 2026-07-28 tool answer is the result's JSON plus resultType, and
    // an earlier era's is the result's JSON alone (every member given: a
    // new member of CallToolResult stops this from compiling).
    #[test]
    fn tool_answers_are_the_result_and_its_result_type() {
        let result = CallToolResult {
            content: vec![ContentBlock::text("t")],
            structured_content: Some(json!({"n": 1})),
            is_error: Some(false),
            meta: json!({"k": "v"}).as_object().cloned(),
        };
        let mut expected = serde_json::to_value(&result).unwrap();
        let plain = ToolAnswer {
            result: &result,
            complete: false,
        };
        assert_eq!(serde_json::to_value(&plain).unwrap(), expected);
        expected["resultType"] = json!("complete");
        let complete = ToolAnswer {
            result: &result,
            complete: true,
        };
        assert_eq!(serde_json::to_value(&complete).unwrap(), expected);
    }
}
