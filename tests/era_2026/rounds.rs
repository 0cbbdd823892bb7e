//! Multi round-trip requests (SEP-2322): `input_required`, retries and
//! `requestState`.

use super::*;
use crate::support::forms::{bad_profiles, form_server, good_profile, profile_schema};
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, ElicitRequestFormParams, JsonObject, MemoryClient, RequestContext, Server,
    ServerStateStore, Tool,
};

/// Calls `tool` with `extra` params (inputResponses, requestState) and
/// `capabilities`.
fn call_mrtr(
    client: &mut MemoryClient,
    tool: &str,
    extra: Value,
    capabilities: Value,
) -> Result<Value, ErrorObject> {
    let mut params = json!({"name": tool, "arguments": {}});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    mreq_caps(client, "tools/call", params, capabilities)
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// MRTR-1, MRTR-4, CACHE-2: an `input_required` result; returns its
/// requests and state.
fn input_required(result: &Value, what: &str) -> (JsonObject, String) {
    assert_eq!(
        result["resultType"], "input_required",
        "{}: {}",
        what, result
    );
    assert!(
        result.get("ttlMs").is_none() && result.get("cacheScope").is_none(),
        "{}: no cache hints on input_required: {}",
        what,
        result
    );
    assert_eq!(result["_meta"][SERVER_INFO]["name"], SERVER_NAME);
    let requests = result["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let state = match result["requestState"].as_str() {
        Some(state) => state.to_string(),
        None => panic!("{}: no requestState in {}", what, result),
    };
    (requests, state)
}

// MRTR-1, MRTR-2, MRTR-3, CACHE-2 (2026-07-28): `ctx.elicit` answers
// input_required with `input-0`; the retry with the answer and state
// completes.
#[test]
fn elicit_returns_input_required_and_the_retry_completes() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "ask_name", json!({}), caps.clone()),
        "ask_name",
    );
    let (requests, state) = input_required(&first, "ask_name");
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        vec!["input-0"],
        "{}",
        first
    );
    let request = &requests["input-0"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your name?");
    assert_eq!(request["params"]["requestedSchema"], name_schema());
    let done = ok(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Ada")}, "requestState": state}),
            caps,
        ),
        "the retry",
    );
    assert_complete(&done, "the retry");
    assert_eq!(text_of(&done), "hello Ada");
}

// MRTR-2 (2026-07-28): several inputs of different kinds in one round,
// under the handler's own keys.
#[test]
fn request_inputs_asks_several_named_inputs_in_one_round() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let first = ok(
        call_mrtr(&mut client, "ask_three", json!({}), all_caps()),
        "ask_three",
    );
    let (requests, state) = input_required(&first, "ask_three");
    let mut kinds: Vec<(String, String)> = requests
        .iter()
        .map(|(k, v)| (k.clone(), v["method"].as_str().unwrap_or("").to_string()))
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![
            ("confirm".to_string(), "elicitation/create".to_string()),
            ("summary".to_string(), "sampling/createMessage".to_string()),
            ("where".to_string(), "roots/list".to_string()),
        ]
    );
    assert_eq!(requests["summary"]["params"]["maxTokens"], 50);
    let answers = json!({
        "confirm": accept("yes"),
        "summary": {"role": "assistant", "content": {"type": "text", "text": "short"},
                    "model": "m"},
        "where": {"roots": [{"uri": "file:///work"}]}
    });
    let done = ok(
        call_mrtr(
            &mut client,
            "ask_three",
            json!({"inputResponses": answers, "requestState": state}),
            all_caps(),
        ),
        "the retry",
    );
    assert_eq!(
        text_of(&done),
        "confirm=yes summary=short root=file:///work"
    );
}

// MRTR-3 (2026-07-28): several rounds; answers and the handler's state
// travel in requestState, so earlier answers need not be resent.
#[test]
fn multi_round_request_carries_answers_and_state() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let r1 = ok(
        call_mrtr(&mut client, "rounds", json!({}), caps.clone()),
        "round 1",
    );
    let (requests, s1) = input_required(&r1, "round 1");
    assert_eq!(requests.keys().collect::<Vec<_>>(), vec!["a"]);
    let r2 = ok(
        call_mrtr(
            &mut client,
            "rounds",
            json!({"inputResponses": {"a": accept("Ann")}, "requestState": s1}),
            caps.clone(),
        ),
        "round 2",
    );
    let (requests, s2) = input_required(&r2, "round 2");
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        vec!["b"],
        "a was answered already: {}",
        r2
    );
    let r3 = ok(
        call_mrtr(
            &mut client,
            "rounds",
            json!({"inputResponses": {"b": accept("Bob")}, "requestState": s2}),
            caps,
        ),
        "round 3",
    );
    assert_eq!(text_of(&r3), "round 3 a=Ann b=Bob");
}

// MRTR-3 (2026-07-28): a tampered or unknown requestState is -32602.
#[test]
fn tampered_or_unknown_request_state_is_invalid_params() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "ask_name", json!({}), caps.clone()),
        "ask_name",
    );
    let (_, state) = input_required(&first, "ask_name");
    let mut tampered = state.clone();
    tampered.push('x');
    for bad in [json!(tampered), json!("nonsense"), json!(""), json!(42)] {
        expect_error(
            call_mrtr(
                &mut client,
                "ask_name",
                json!({"inputResponses": {"input-0": accept("Eve")}, "requestState": bad}),
                caps.clone(),
            ),
            ErrorCode::INVALID_PARAMS,
            &format!("requestState {}", bad),
        );
    }
}

// MRTR-3 (2026-07-28): a requestState issued for another tool is -32602.
#[test]
fn request_state_from_another_tool_is_invalid_params() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "rounds", json!({}), caps.clone()),
        "rounds",
    );
    let (_, state) = input_required(&first, "rounds");
    expect_error(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Eve")}, "requestState": state}),
            caps,
        ),
        ErrorCode::INVALID_PARAMS,
        "rounds' state sent to ask_name",
    );
}

// MRTR-3 (2026-07-28): missing answers get a new input_required, not an
// error; keys nobody asked for are ignored.
#[test]
fn missing_answers_ask_again_and_extra_keys_are_ignored() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        call_mrtr(&mut client, "ask_name", json!({}), caps.clone()),
        "ask_name",
    );
    let (_, state) = input_required(&first, "ask_name");
    let again = ok(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"other": accept("x")}, "requestState": state}),
            caps.clone(),
        ),
        "a retry without the answer",
    );
    let (requests, state) = input_required(&again, "the retry without the answer");
    assert_eq!(requests.keys().collect::<Vec<_>>(), vec!["input-0"]);
    let done = ok(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Ada"), "bogus": {"x": 1}},
                   "requestState": state}),
            caps,
        ),
        "a retry with an extra key",
    );
    assert_eq!(text_of(&done), "hello Ada");
}

// MRTR-2, ERR-3 (2026-07-28): asking for input the request's capabilities
// do not cover is -32021 with `data.requiredCapabilities`.
#[test]
fn undeclared_capability_is_missing_required_client_capability() {
    let server = mrtr_server();
    let mut client = memory(&server);
    for (tool, caps, needed) in [
        ("ask_name", json!({}), "elicitation"),
        ("sample", json!({"elicitation": {}}), "sampling"),
        (
            "ask_three",
            json!({"elicitation": {}, "sampling": {}}),
            "roots",
        ),
    ] {
        let error = expect_error(
            call_mrtr(&mut client, tool, json!({}), caps),
            ErrorCode(MISSING_CAPABILITY),
            tool,
        );
        let required = error
            .data
            .as_ref()
            .map(|d| d["requiredCapabilities"].clone())
            .unwrap_or(Value::Null);
        assert!(
            required.get(needed).map_or(false, Value::is_object),
            "{}: requiredCapabilities names {}: {:?}",
            tool,
            needed,
            error
        );
    }
}

// MRTR-1, CACHE-2 (2026-07-28): resources/read may ask for input; its
// input_required carries no cache hints.
#[test]
fn resource_read_can_require_input_without_cache_hints() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        mreq_caps(
            &mut client,
            "resources/read",
            json!({"uri": "test://secret"}),
            caps.clone(),
        ),
        "read test://secret",
    );
    let (_, state) = input_required(&first, "resources/read");
    let done = ok(
        mreq_caps(
            &mut client,
            "resources/read",
            json!({"uri": "test://secret", "requestState": state,
                   "inputResponses": {"input-0": accept("pw")}}),
            caps,
        ),
        "the retry",
    );
    assert_eq!(done["contents"][0]["text"], "pw");
}

// MRTR-1 (2026-07-28): only tools/call, prompts/get and resources/read
// may answer input_required; a completion handler asking for input must
// not produce one.
#[test]
fn completion_never_answers_input_required() {
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .prompt(
            Prompt::new("p"),
            |_: &RequestContext, _: BTreeMap<String, String>| Ok(GetPromptResult::new(vec![])),
        )
        .completion(|ctx: &RequestContext, _: tiny_mcp::CompleteRequestParams| {
            ctx.elicit(ElicitRequestFormParams::new("Which?", name_schema()))?;
            Ok(CompleteResult::new(vec!["x".into()]))
        })
        .build();
    let mut client = memory(&server);
    let outcome = mreq_caps(
        &mut client,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "p"},
               "argument": {"name": "a", "value": ""}}),
        json!({"elicitation": {}}),
    );
    if let Ok(result) = outcome {
        assert_ne!(
            result["resultType"], "input_required",
            "completion/complete answered input_required: {}",
            result
        );
    }
}

// MRTR-1, MRTR-3 (2026-07-28): prompts/get may ask for input too, and its
// requestState is bound to the method: a tool of the same name refuses it.
#[test]
fn prompt_input_state_is_bound_to_its_method() {
    let server = mrtr_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(
        mreq_caps(
            &mut client,
            "prompts/get",
            json!({"name": "ask_name"}),
            caps.clone(),
        ),
        "prompts/get ask_name",
    );
    let (requests, state) = input_required(&first, "prompts/get");
    assert_eq!(requests["input-0"]["params"]["message"], "Prompt name?");
    expect_error(
        call_mrtr(
            &mut client,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Eve")}, "requestState": state}),
            caps.clone(),
        ),
        ErrorCode::INVALID_PARAMS,
        "the prompt's state sent to the tool of the same name",
    );
    let done = ok(
        mreq_caps(
            &mut client,
            "prompts/get",
            json!({"name": "ask_name", "requestState": state,
                   "inputResponses": {"input-0": accept("Pat")}}),
            caps,
        ),
        "the prompt's retry",
    );
    assert_complete(&done, "prompts/get retry");
    assert_eq!(done["messages"][0]["content"]["text"], "Pat");
}

// MRTR-2, REM-3 (2026-07-28) with client/elicitation, client/sampling and
// client/roots (2025-11-25): the same handlers work in the handshake era,
// their input requests sent to the client as requests.
#[test]
fn mrtr_handlers_work_in_the_handshake_era() {
    let server = mrtr_server();
    let mut client = connect(&server, all_caps());
    client.on_server_request(|request: &Request| {
        let params = request.params.clone().unwrap_or(Value::Null);
        match request.method.as_str() {
            "elicitation/create" => {
                let message = params["message"].as_str().unwrap_or("").to_string();
                Ok(json!({"action": "accept", "content": {"name": message}}))
            }
            "sampling/createMessage" => Ok(json!({"role": "assistant", "model": "m",
                     "content": {"type": "text", "text": "sampled"}})),
            "roots/list" => Ok(json!({"roots": [{"uri": "file:///legacy"}]})),
            other => Err(ErrorObject::method_not_found(other)),
        }
    });
    let call = |client: &mut MemoryClient, tool: &str| {
        let result = ok(
            client.request("tools/call", Some(json!({"name": tool}))),
            tool,
        );
        assert_2025_shape(&result, tool);
        text_of(&result).to_string()
    };
    assert_eq!(call(&mut client, "ask_name"), "hello Your name?");
    assert_eq!(
        call(&mut client, "ask_three"),
        "confirm=Go on? summary=sampled root=file:///legacy"
    );
    assert_eq!(call(&mut client, "rounds"), "round 1 a=A? b=B?");
    assert_eq!(call(&mut client, "sample"), "sampled");
}

// MRTR-1..3, ERR-3 (2026-07-28) over HTTP: input_required is 200, the
// retry completes, and a missing capability is 400 -32021.
#[test]
fn http_mrtr_round_trip() {
    let http = serve(mrtr_server().http());
    let addr = http.local_addr();
    let caps = json!({"elicitation": {}});
    let first = send(
        addr,
        &post_2026(
            json!(1),
            "tools/call",
            enveloped(json!({"name": "ask_name"}), caps.clone()),
        ),
        "ask_name",
    );
    first.expect_status(200, "input_required");
    let (_, state) = input_required(&first.json()["result"], "ask_name over HTTP");
    let retry = post_2026(
        json!(2),
        "tools/call",
        enveloped(
            json!({"name": "ask_name", "requestState": state,
                   "inputResponses": {"input-0": accept("Http")}}),
            caps,
        ),
    );
    let done = send(addr, &retry, "the retry");
    done.expect_status(200, "the retry");
    assert_eq!(text_of(&done.json()["result"]), "hello Http");
    let refused = send(
        addr,
        &call_req(json!(3), "sample", json!({})),
        "sample without sampling",
    );
    expect_http_error(&refused, 400, MISSING_CAPABILITY, "sample without sampling");
}

// 8. MRTR-5 and the MRTR server guidance: a requestState answers only the
// request it was minted for, arguments included.
#[test]
fn request_state_is_bound_to_the_arguments() {
    let server = asking_server();
    let mut client = memory(&server);
    let caps = json!({"elicitation": {"form": {}}});
    let ask = |message: &str| json!({"name": "confirm", "arguments": {"message": message}});
    let first = client
        .request(
            "tools/call",
            Some(enveloped(ask("Delete repo A?"), caps.clone())),
        )
        .unwrap();
    assert_eq!(first["resultType"], "input_required", "{}", first);
    let state = first["requestState"].clone();
    let key = first["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answers = json!({ key: {"action": "accept", "content": {}} });
    let mut retry = enveloped(ask("Delete repo B?"), caps.clone());
    retry["requestState"] = state.clone();
    retry["inputResponses"] = answers.clone();
    let err = client.request("tools/call", Some(retry)).unwrap_err();
    assert_eq!(err.code.0, -32602, "{:?}", err);
    let mut same = enveloped(ask("Delete repo A?"), caps);
    same["requestState"] = state;
    same["inputResponses"] = answers;
    let done = client.request("tools/call", Some(same)).unwrap();
    assert_eq!(done["content"][0]["text"], "Accept", "{}", done);
}

// MRTR-5, DESIGN.md §26 (issue 27 item 4): one caller's many first calls
// drop its own oldest stored states, never another caller's: a quiet
// client's retry still completes after a busy client's flood.
#[test]
fn a_busy_caller_cannot_evict_another_callers_request_state() {
    let store = ServerStateStore::new(std::time::Duration::from_secs(600), 100);
    let server = Server::builder(SERVER_NAME, SERVER_VERSION)
        .tool(Tool::new("ask_name", json!({"type": "object"})), ask_name)
        .request_state_codec(store)
        .build();
    let caps = json!({"elicitation": {}});
    let mut quiet = memory(&server);
    let first = ok(
        call_mrtr(&mut quiet, "ask_name", json!({}), caps.clone()),
        "quiet",
    );
    let (_, state) = input_required(&first, "the quiet client's first call");
    let mut busy = memory(&server);
    for n in 0..300 {
        let flood = ok(
            call_mrtr(&mut busy, "ask_name", json!({}), caps.clone()),
            "busy",
        );
        input_required(&flood, &format!("busy call {}", n));
    }
    let done = ok(
        call_mrtr(
            &mut quiet,
            "ask_name",
            json!({"inputResponses": {"input-0": accept("Quiet")}, "requestState": state}),
            caps,
        ),
        "the quiet client's retry after the flood",
    );
    assert_eq!(text_of(&done), "hello Quiet");
}

/// What `tool`'s handler of [`form_server`] got when the client retried
/// with `answer` under `key`, the key the first round asked with.
fn handler_got(tool: &str, key: &str, answer: Value) -> String {
    let server = form_server(SERVER_NAME, SERVER_VERSION);
    let mut client = memory(&server);
    let caps = json!({"elicitation": {}});
    let first = ok(call_mrtr(&mut client, tool, json!({}), caps.clone()), tool);
    let (requests, state) = input_required(&first, tool);
    assert_eq!(requests[key]["params"]["requestedSchema"], profile_schema());
    let retry = json!({"inputResponses": {key: answer}, "requestState": state});
    let done = ok(call_mrtr(&mut client, tool, retry, caps), "the retry");
    assert_complete(&done, "the retry");
    text_of(&done).to_string()
}

// ELIC-8, MRTR-3 (2026-07-28): an accepted form in inputResponses is
// checked against the schema the server asked with; ctx.elicit and
// ctx.request_inputs get an error naming the field and the rule.
#[test]
fn answers_that_break_the_form_are_errors() {
    for (answer, words) in bad_profiles() {
        let got = handler_got("profile", "input-0", answer.clone());
        assert!(
            got.starts_with("refused: elicitation answer: field "),
            "{}",
            got
        );
        assert!(
            got.contains(words[0]) && got.contains(words[1]),
            "{} ({})",
            got,
            answer
        );
    }
    let (answer, words) = bad_profiles().remove(4);
    let got = handler_got("profile_named", "profile", answer);
    assert!(
        got.starts_with("refused: elicitation answer \"profile\": field "),
        "{}",
        got
    );
    assert!(got.contains(words[0]) && got.contains(words[1]), "{}", got);
}

// ELIC-8, MRTR-3 (2026-07-28): an answer that fits passes as it came, and
// a decline is not checked.
#[test]
fn answers_that_fit_the_form_pass() {
    let content = good_profile()["content"].clone();
    for (tool, key) in [("profile", "input-0"), ("profile_named", "profile")] {
        let got = handler_got(tool, key, good_profile());
        assert_eq!(got, format!("accept {}", content));
        let decline = json!({"action": "decline", "content": {"age": -1}});
        assert_eq!(handler_got(tool, key, decline), "decline");
    }
}

fn asking_server() -> Server {
    Server::builder("fixes", "1")
        .tool(
            Tool::new("confirm", json!({"type": "object"})),
            |ctx: &RequestContext, args: JsonObject| {
                let question = args.get("message").and_then(Value::as_str).unwrap_or("?");
                let form = ElicitRequestFormParams::new(question, json!({"type": "object"}));
                let answer = ctx.elicit(form)?;
                Ok(CallToolResult::text(format!("{:?}", answer.action)))
            },
        )
        .build()
}
