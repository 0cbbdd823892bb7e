//! A server that refuses the client's answer to its request (HTTP-3: a
//! 4xx or 5xx to a POSTed response): the call the request belongs to
//! fails at once with that status and the server's message.

use std::time::Duration;

use serde_json::json;
use tiny_mcp::{Client, ElicitResult, Era, ErrorKind};

use super::fake::{self, Fake, Reply, Request};

/// A 2025-11-25 server whose `tools/call` streams an `elicitation/create`
/// (id `e-<text>`) and never answers; it refuses the client's answer with
/// 400 and a body that depends on the call's `text`.
fn refusing(request: &Request) -> Reply {
    if let Some(reply) = fake::handshake_2025(request) {
        return reply;
    }
    let body = request.json();
    match (request.method.as_str(), &body["id"], request.rpc().as_str()) {
        ("GET", _, _) => Reply::Keep(fake::answer(405, "text/plain", "", "")),
        (_, _, "tools/call") => {
            let text = body["params"]["arguments"]["text"].as_str().unwrap_or("");
            let ask = json!({
                "jsonrpc": "2.0", "id": format!("e-{}", text), "method": "elicitation/create",
                "params": {"message": "who?", "requestedSchema": {"type": "object", "properties": {}}}
            });
            let event = format!("{}id: 1\r\ndata: {}\r\n\r\n", fake::SSE_HEAD, ask);
            Reply::Hold(event.into_bytes())
        }
        (_, id, _) if id == "e-plain" => Reply::Keep(fake::answer(
            400,
            "application/json",
            r#"{"error":"answer rejected: missing action"}"#,
            "",
        )),
        _ => Reply::Keep(fake::answer(
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad answer"}}"#,
            "",
        )),
    }
}

// basic/transports (2025-11-25) "Sending Messages to the Server" (HTTP-3):
// the client's POST of its answer to elicitation/create gets 400, with a
// plain JSON error or a JSON-RPC error; the tools/call fails with
// ErrorKind::Http, the status and the server's message, long before its
// 30 s timeout, and the server is told the call was abandoned
// (basic/utilities/cancellation).
#[test]
fn a_refused_answer_fails_the_call() {
    let server = Fake::start(refusing);
    let client = Client::builder("refused-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(30))
        .on_elicitation(|_| Ok(ElicitResult::decline()))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    for (text, message) in [
        ("plain", "answer rejected: missing action"),
        ("rpc", "bad answer (-32600)"),
    ] {
        let err = client.call_tool("t", json!({ "text": text })).unwrap_err();
        match err.kind() {
            ErrorKind::Http {
                status: 400, body, ..
            } => {
                assert!(body.contains(message), "{}", body)
            }
            other => panic!("expected HTTP 400, got {:?}", other),
        }
    }
    let requests = server.requests();
    let calls: Vec<_> = requests
        .iter()
        .filter(|r| r.rpc() == "tools/call")
        .collect();
    let cancels: Vec<_> = requests
        .iter()
        .filter(|r| r.rpc() == "notifications/cancelled")
        .collect();
    assert_eq!(cancels.len(), 2, "{:?}", requests);
    for (call, cancel) in calls.iter().zip(&cancels) {
        assert_eq!(cancel.json()["params"]["requestId"], call.json()["id"]);
    }
}
