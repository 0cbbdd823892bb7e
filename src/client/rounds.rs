//! One 2026-07-28 request: the envelope, and the `input_required` rounds
//! answered by the program's closures until the result is complete
//! (MRTR-1 to MRTR-3).

use serde_json::Value;

use super::link::{Outgoing, Wait};
use super::{envelope, Client};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::JsonObject;

/// Rounds of `input_required` one request may take.
pub(crate) const MAX_ROUNDS: usize = 16;

/// Sends `method` until its result is not `input_required`; each retry has
/// a new id, the answers in `inputResponses` and the server's
/// `requestState` as it was sent (MRTR-3).
pub(crate) fn run(
    client: &Client,
    method: &str,
    mut params: JsonObject,
    name: Option<String>,
    wait: &Wait<'_>,
) -> Result<Value, Error> {
    envelope(client, &mut params);
    for _ in 0..MAX_ROUNDS {
        let out = Outgoing {
            id: client.new_id(),
            method: method.to_string(),
            params: Value::Object(params.clone()),
            name: name.clone(),
        };
        let result = client.link.request(&out, wait)?;
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return Ok(result);
        }
        if !may_ask(method) {
            return Err(Error::new(ErrorKind::Protocol(format!(
                "the server answered {} with input_required, which only tools/call, prompts/get and resources/read may (MRTR-1)",
                method
            ))));
        }
        let responses = answer_inputs(client, result.get("inputRequests"))?;
        params.insert("inputResponses".into(), Value::Object(responses));
        match result.get("requestState") {
            Some(state) => params.insert("requestState".into(), state.clone()),
            None => params.remove("requestState"),
        };
    }
    Err(Error::new(ErrorKind::Protocol(format!(
        "{} asked for input more than {} times",
        method, MAX_ROUNDS
    ))))
}

/// MRTR-1: the methods whose result may be `input_required`.
fn may_ask(method: &str) -> bool {
    use crate::protocol::methods;
    matches!(
        method,
        methods::TOOLS_CALL | methods::PROMPTS_GET | methods::RESOURCES_READ
    )
}

/// The answer to each `{method, params}` of `inputRequests`, by key.
pub(super) fn answer_inputs(
    client: &Client,
    requests: Option<&Value>,
) -> Result<JsonObject, Error> {
    let mut responses = JsonObject::new();
    let requests = match requests {
        None | Some(Value::Null) => return Ok(responses),
        Some(Value::Object(requests)) => requests,
        Some(_) => {
            return Err(Error::new(ErrorKind::Protocol(
                "inputRequests is not an object".into(),
            )))
        }
    };
    for (key, request) in requests {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Error::new(ErrorKind::Protocol(format!(
                    "input request {:?} has no method",
                    key
                )))
            })?;
        let answer = client
            .inbox
            .answer(method, request.get("params").cloned())
            .map_err(|e| {
                Error::msg(format!(
                    "cannot answer the server's {} input request: {}",
                    method, e.message
                ))
            })?;
        responses.insert(key.clone(), answer);
    }
    Ok(responses)
}
