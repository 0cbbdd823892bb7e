//! The JSON-RPC parser on arbitrary bytes: it never panics, and what it
//! reads it writes back as one line that reads again as a message of the
//! same kind, method and id. (Numbers in params may change in their last
//! digit: serde_json parses floats fast, not exactly, unless its
//! `float_roundtrip` feature is on.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use tiny_mcp::{Message, RequestId};

/// The kind, method and id of a message.
fn shape(message: &Message) -> (u8, Option<String>, Option<RequestId>) {
    match message {
        Message::Request(r) => (0, Some(r.method.clone()), Some(r.id.clone())),
        Message::Notification(n) => (1, Some(n.method.clone()), None),
        Message::Response(r) => (2, None, r.id.clone()),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = Message::parse(data) {
        let line = message.to_json_string();
        assert!(!line.contains('\n'), "one message, one line: {}", line);
        let again = Message::parse(line.as_bytes()).expect("what we write parses");
        assert_eq!(shape(&again), shape(&message), "{}", line);
    }
});
