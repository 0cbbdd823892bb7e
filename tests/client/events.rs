//! What the client takes from a response's event stream: only events of
//! type `message` carry JSON-RPC messages (2025-11-25 transports,
//! "Streamable HTTP"; HTML "Server-sent events": an event named otherwise
//! is not a `message` event).

use std::time::Duration;

use serde_json::json;
use tiny_mcp::{Client, Era};

use super::fake::{self, Fake, Reply};

// An event named `ping` whose data looks like the answer is passed over;
// the answer is the `message` event after it.
#[test]
fn only_message_events_are_read_as_messages() {
    let server = Fake::start(|request| {
        if let Some(reply) = fake::handshake_2025(request) {
            return reply;
        }
        if request.rpc() != "tools/call" {
            return Reply::Keep(fake::answer(405, "text/plain", "", ""));
        }
        let decoy = fake::text_result(request, "decoy");
        let answer = fake::text_result(request, "answer");
        let body = format!(
            "event: ping\r\ndata: {}\r\n\r\nevent: message\r\ndata: {}\r\n\r\n",
            decoy, answer
        );
        Reply::Close(format!("{}{}", fake::SSE_HEAD, body).into_bytes())
    });
    let client = Client::builder("events-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .expect("connect");
    let result = client.call_tool("echo", json!({})).expect("the answer");
    let result = serde_json::to_value(result).unwrap();
    assert_eq!(result["content"][0]["text"], "answer");
}
