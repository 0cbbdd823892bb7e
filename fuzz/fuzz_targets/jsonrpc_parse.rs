//! The JSON-RPC parser on arbitrary bytes: it never panics, and what it
//! reads it writes back as one line that reads again as the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tiny_mcp::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = Message::parse(data) {
        let line = message.to_json_string();
        assert!(!line.contains('\n'), "one message, one line: {}", line);
        let again = Message::parse(line.as_bytes()).expect("what we write parses");
        assert_eq!(
            again.to_json_string(),
            line,
            "a second round trip changes nothing"
        );
    }
});
