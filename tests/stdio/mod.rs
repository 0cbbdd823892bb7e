//! The stdio transport end to end: the `everything` example runs as a child
//! process and the test speaks newline-delimited JSON-RPC to it.
//!
//! Every line the server writes goes through `support::parse_line`, which
//! fails the test unless the line is exactly one JSON-RPC 2.0 object
//! (STDIO-1, STDIO-2).

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{is_response, parse_line, ChildServer, WAIT};

mod end_of_input;

const EXAMPLE: &str = "everything";

/// How long a ping may take while a slow tool runs: "at once", with room
/// for a loaded machine.
const PROMPT: Duration = Duration::from_secs(3);

fn ping_answer(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {}})
}

fn error_code(message: &Value) -> Option<i64> {
    message["error"]["code"].as_i64()
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    is_response(message) && message.get("id") == Some(id)
}

fn responses_to<'a>(messages: &'a [Value], id: &Value) -> Vec<&'a Value> {
    messages.iter().filter(|m| is_response_to(m, id)).collect()
}

/// The start of `message` as JSON, for failure messages about huge lines.
fn abbreviated(message: &Value) -> String {
    message.to_string().chars().take(300).collect()
}

fn call_params(name: &str, arguments: Value) -> Value {
    json!({ "name": name, "arguments": arguments })
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

// BASE-5, basic "Notifications": notifications are never answered, known or
// not: the line after them is the answer to the ping sent next.
#[test]
fn notifications_get_no_reply() {
    let mut server = ChildServer::spawn_example(EXAMPLE);
    server.request(
        json!(1),
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tiny-mcp-tests", "version": "0.0.0"}
        }),
    );
    let (response, _) = server.wait_response(&json!(1), "the initialize result");
    assert!(
        response["result"].is_object(),
        "initialize failed: {}",
        response
    );

    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.notify("notifications/made_up", json!({"anything": [1, 2, 3]}));
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/also_made_up"}));
    server.request(json!(2), "ping", json!({}));
    assert_eq!(
        server.next_message("the answer to the ping after the notifications"),
        ping_answer(json!(2))
    );
}

// BASE-2, BASE-3, basic "Requests"/"Responses": ids 0 and "0" are echoed
// with their JSON type; a null id is -32600 answered with id null.
#[test]
fn ids_keep_their_json_type_and_null_is_invalid() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    server.request(json!(0), "ping", json!({}));
    let answer = server.next_message("the answer to ping id 0");
    assert_eq!(answer, ping_answer(json!(0)));
    assert!(answer["id"].is_number());

    server.request(json!("0"), "ping", json!({}));
    let answer = server.next_message("the answer to ping id \"0\"");
    assert_eq!(answer, ping_answer(json!("0")));
    assert!(answer["id"].is_string());

    server.request(Value::Null, "ping", json!({}));
    let answer = server.next_message("the answer to ping id null");
    assert_eq!(error_code(&answer), Some(-32600), "{}", answer);
    assert_eq!(answer.get("id"), Some(&Value::Null), "{}", answer);
}

// BASE-1, basic "JSON-RPC" (batches removed in 2025-06-18): an array gets
// one -32600 with id null, nothing per element.
#[test]
fn batch_array_gets_a_single_invalid_request() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    server.send(&json!([
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"}
    ]));
    let answer = server.next_message("the answer to a batch");
    assert_eq!(error_code(&answer), Some(-32600), "{}", answer);
    assert_eq!(answer.get("id"), Some(&Value::Null), "{}", answer);

    server.request(json!(5), "ping", json!({}));
    assert_eq!(
        server.next_message("the answer to the ping after the batch"),
        ping_answer(json!(5)),
        "the batch got more than one answer"
    );
}

// BASE-3, basic "Error codes" -32700: an unparsable line gets a parse error
// with id null, and the session continues.
#[test]
fn unparsable_line_is_a_parse_error_and_the_session_continues() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    server.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": \"ping\"\n");
    let answer = server.next_message("the answer to an unparsable line");
    assert_eq!(error_code(&answer), Some(-32700), "{}", answer);
    assert_eq!(answer.get("id"), Some(&Value::Null), "{}", answer);

    server.request(json!(7), "ping", json!({}));
    assert_eq!(
        server.next_message("the answer to the ping after the bad line"),
        ping_answer(json!(7))
    );
}

// STDIO-1, basic "JSON-RPC" (UTF-8 everywhere): a line that is not UTF-8 is
// answered with an error, and the session continues.
#[test]
fn invalid_utf8_line_is_an_error_and_the_session_continues() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    server.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n",
    );
    let answer = server.next_message("the answer to a line that is not UTF-8");
    assert!(
        answer.get("error").is_some() && answer.get("result").is_none(),
        "expected an error, got {}",
        answer
    );

    server.request(json!(9), "ping", json!({}));
    assert_eq!(
        server.next_message("the answer to the ping after the bad bytes"),
        ping_answer(json!(9))
    );
}

// PING-1, CAN-1, STDIO-5 (basic/utilities/ping, basic/utilities/cancellation):
// a ping sent while a 30 s tool runs is answered at once; after
// notifications/cancelled the tool's response never arrives.
#[test]
fn ping_is_answered_while_a_slow_tool_runs_and_a_cancel_suppresses_its_response() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    let slow_id = json!(10);
    server.request(
        slow_id.clone(),
        "tools/call",
        json!({
            "name": "slow",
            "arguments": {"seconds": 30},
            "_meta": {"progressToken": "slow-10"}
        }),
    );
    server.request(json!(11), "ping", json!({}));
    let (_, before) = server.wait_response_within(
        &json!(11),
        PROMPT,
        "the answer to a ping sent while `slow` runs",
    );
    assert!(
        responses_to(&before, &slow_id).is_empty(),
        "slow finished early"
    );

    // The tool is running: its progress carries the string token.
    loop {
        let message = server.next_message("a progress notification from `slow`");
        assert!(
            !is_response_to(&message, &slow_id),
            "slow answered before its first progress: {}",
            message
        );
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "slow-10");
            break;
        }
    }

    server.notify(
        "notifications/cancelled",
        json!({"requestId": slow_id, "reason": "the test is done waiting"}),
    );
    server.request(json!(12), "ping", json!({}));
    let (_, before) = server.wait_response(&json!(12), "the answer to the ping after the cancel");
    assert!(
        responses_to(&before, &slow_id).is_empty(),
        "the cancelled call was answered: {:?}",
        before
    );

    // End of input: anything still queued for the call would come out now.
    let (status, rest) = server.finish(WAIT);
    assert!(status.success(), "the server exited with {}", status);
    assert!(
        responses_to(&rest, &slow_id).is_empty(),
        "the cancelled call was answered: {:?}",
        rest
    );
}

// STDIO-1, basic/transports "stdio" (and the size limit of the transport):
// an 8 MiB line is refused with an error and the next ping is answered.
#[test]
fn oversized_line_is_refused_and_the_next_ping_answered() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    let text = "x".repeat(8 * 1024 * 1024);
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": 20,
        "method": "tools/call",
        "params": call_params("echo", json!({ "text": text }))
    }))
    .expect("a Value serializes");
    line.push(b'\n');
    server.send_raw(&line);
    server.request(json!(21), "ping", json!({}));

    let (_, before) = server.wait_response_within(
        &json!(21),
        Duration::from_secs(20),
        "the answer to the ping after an 8 MiB line",
    );
    let answers: Vec<&Value> = before.iter().filter(|m| is_response(m)).collect();
    assert_eq!(
        answers.len(),
        1,
        "expected one answer to the big line: {:?}",
        answers.iter().map(|m| abbreviated(m)).collect::<Vec<_>>()
    );
    let answer = answers[0];
    assert!(
        answer.get("error").is_some(),
        "the 8 MiB line was not refused: {}",
        abbreviated(answer)
    );
    let id = answer.get("id");
    assert!(
        id == Some(&Value::Null) || id == Some(&json!(20)),
        "the error names id {:?}",
        id
    );
}

// STDIO-3, basic/transports "stdio": 16 MiB without a newline, then end of
// input: the server still exits cleanly (status 0), writing only JSON.
#[test]
fn unterminated_huge_line_then_eof_exits_cleanly() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    let mut bytes =
        b"{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"ping\",\"params\":{\"pad\":\"".to_vec();
    bytes.resize(16 * 1024 * 1024, b'x');
    server.send_raw(&bytes);
    let (status, rest) = server.finish(Duration::from_secs(20));
    assert!(status.success(), "the server exited with {}", status);
    for message in &rest {
        assert!(
            message.get("result").is_none(),
            "the unterminated line was answered with a result: {}",
            message
        );
    }
}

// STDIO-1, basic/transports "stdio" (no embedded newlines): a result with
// "\n" and U+2028/U+2029 in a string is one line that parses as one
// message, the separators escaped (jsonrpc.rs `Message::write_to`).
#[test]
fn newlines_and_line_separators_stay_inside_one_line() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    let text = "a\nb\u{2028}c\u{2029}d\r\ne";
    server.request(
        json!(31),
        "tools/call",
        call_params("echo", json!({ "text": text })),
    );
    loop {
        let line = server.next_line(WAIT, "the echo result");
        let message = parse_line(&line);
        if !(is_response(&message) && message["id"] == 31) {
            continue;
        }
        let raw = String::from_utf8(line).expect("the line is UTF-8");
        assert!(
            !raw.contains('\u{2028}') && !raw.contains('\u{2029}') && !raw.contains('\r'),
            "a line separator was written unescaped: {:?}",
            raw
        );
        let result = &message["result"];
        assert_ne!(result["isError"], true, "echo failed: {}", result);
        assert!(
            texts(result).iter().any(|t| t.contains(text)),
            "the text did not survive: {}",
            result
        );
        break;
    }
}

// TOOL-6, server/tools "Error Handling": a wrongly typed argument is an
// isError result, not a JSON-RPC error.
#[test]
fn wrongly_typed_argument_is_an_is_error_result() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    server.request(
        json!(32),
        "tools/call",
        call_params("echo", json!({"text": 5})),
    );
    let (answer, _) = server.wait_response(&json!(32), "the answer to echo with text: 5");
    assert_eq!(answer["result"]["isError"], true, "{}", answer);
}

// TOOL-6, server/tools "Error Handling": an unknown tool is -32602.
#[test]
fn unknown_tool_is_invalid_params() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    server.request(
        json!(33),
        "tools/call",
        call_params("no_such_tool", json!({})),
    );
    let (answer, _) = server.wait_response(&json!(33), "the answer to an unknown tool");
    assert_eq!(error_code(&answer), Some(-32602), "{}", answer);
}

// STDIO-3, LC-7, basic/transports "stdio" / basic/lifecycle "Shutdown":
// end of input while `slow` (30 s) runs: the process exits promptly with
// status 0. (Whether the interrupted call still gets an answer is the
// server's choice: end of input is not notifications/cancelled.)
#[test]
fn stdin_eof_while_a_tool_runs_exits_promptly() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    let slow_id = json!(40);
    server.request(
        slow_id.clone(),
        "tools/call",
        json!({
            "name": "slow",
            "arguments": {"seconds": 30},
            "_meta": {"progressToken": 40}
        }),
    );
    // The handler is running once it reports progress.
    loop {
        let message = server.next_message("a progress notification from `slow`");
        assert!(
            !is_response_to(&message, &slow_id),
            "slow answered before its first progress: {}",
            message
        );
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], 40);
            break;
        }
    }

    let (status, _) = server.finish(Duration::from_secs(5));
    assert!(status.success(), "the server exited with {}", status);
}

// STDIO-2, basic/transports "stdio": a session using tools, resources,
// prompts, logging and progress writes nothing but JSON-RPC lines.
#[test]
fn stdout_carries_nothing_but_json_rpc() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({}));
    let requests = [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
        ("tools/call", call_params("test_simple_text", json!({}))),
        (
            "tools/call",
            call_params("test_tool_with_logging", json!({})),
        ),
        (
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 5}}),
        ),
        (
            "tools/call",
            call_params("test_multiple_content_types", json!({})),
        ),
        ("resources/read", json!({"uri": "test://static-text"})),
        ("prompts/get", json!({"name": "test_simple_prompt"})),
    ];
    let mut notifications = 0;
    for (n, (method, params)) in requests.iter().enumerate() {
        let id = json!(100 + n);
        server.request(id.clone(), method, params.clone());
        let (answer, before) = server.wait_response(&id, method);
        assert!(
            answer.get("result").is_some(),
            "{} failed: {}",
            method,
            answer
        );
        notifications += before.len();
    }
    assert!(
        notifications >= 3,
        "the logging and progress tools sent only {} notifications",
        notifications
    );
    // finish() parses every remaining line too.
    let (status, _) = server.finish(WAIT);
    assert!(status.success(), "the server exited with {}", status);
}

// SAMP-1, client/sampling: over stdio the server asks the client with
// sampling/createMessage, and the client's answer reaches the tool result.
#[test]
fn sampling_round_trip_over_stdio() {
    let (mut server, _) = ChildServer::initialized(EXAMPLE, json!({"sampling": {}}));
    let prompt = "What is 2 + 2?";
    let call_id = json!(50);
    server.request(
        call_id.clone(),
        "tools/call",
        call_params("test_sampling", json!({ "prompt": prompt })),
    );
    let request = loop {
        let message = server.next_message("the sampling/createMessage request");
        assert!(
            !is_response_to(&message, &call_id),
            "test_sampling answered without asking: {}",
            message
        );
        if message["method"] == "sampling/createMessage" {
            break message;
        }
    };
    let params = &request["params"];
    assert_eq!(params["messages"][0]["role"], "user", "{}", request);
    assert_eq!(
        params["messages"][0]["content"]["text"], prompt,
        "{}",
        request
    );
    assert!(
        params["maxTokens"].is_number(),
        "maxTokens is required: {}",
        request
    );
    let answer = "Four, said the test client";
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": request["id"].clone(),
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": answer},
            "model": "test-model",
            "stopReason": "endTurn"
        }
    }));
    let (response, _) = server.wait_response(&call_id, "the test_sampling result");
    let result = &response["result"];
    assert_ne!(result["isError"], true, "{}", response);
    assert!(
        texts(result).iter().any(|t| t.contains(answer)),
        "the client's answer is not in the result: {}",
        response
    );
}
