//! Multi round-trip requests (2026-07-28): asking the client for input by
//! returning `input_required`, and the `requestState` that carries a
//! handler's progress from one round to the next.
//!
//! In the 2026-07-28 era a server never sends requests to the client. A
//! handler that needs the client's input ends its run with an
//! `input_required` result naming what it needs; the client answers and
//! retries the whole request with `inputResponses` and the `requestState` it
//! was given; the handler runs again from the start and now finds the
//! answers. Handlers therefore must reach their input requests
//! deterministically: no side effects before them that must not repeat.
//!
//! `requestState` is attacker-controlled (MRTR-5). By default the state
//! stays on the server ([`ServerStateStore`]) behind an unguessable,
//! expiring key; [`RequestStateCodec`] lets a program authenticate the state
//! itself instead, e.g. with a MAC under a key shared by several instances.

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::Value;

use super::caller::Caller;
use super::envelope::decorate;
use crate::error::to_json;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, JsonObject, Request};
use crate::protocol::CreateMessageResult;
use crate::protocol::{
    methods, CreateMessageRequestParams, ElicitRequestParams, ElicitResult, ListRootsResult,
};
use crate::server::session::Session;

pub(crate) mod answer_check;
mod store;

pub use store::ServerStateStore;

/// One request for the client's input: `{"method", "params"}`, where
/// `method` is `elicitation/create`, `sampling/createMessage` or
/// `roots/list`.
///
/// In the 2025-11-25 era it is sent to the client as a request; in the
/// 2026-07-28 era it becomes an entry of `inputRequests`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputRequest {
    /// The method.
    pub method: String,
    /// Its params.
    pub params: Value,
}

impl InputRequest {
    /// An `elicitation/create` request.
    pub fn elicit(params: impl Into<ElicitRequestParams>) -> InputRequest {
        InputRequest {
            method: methods::ELICITATION_CREATE.into(),
            // Cannot fail for these params (a failure is logged; null sent).
            params: to_json("elicitation/create params", &params.into()).unwrap_or(Value::Null),
        }
    }

    /// A `sampling/createMessage` request.
    pub fn create_message(params: CreateMessageRequestParams) -> InputRequest {
        InputRequest {
            method: methods::SAMPLING_CREATE_MESSAGE.into(),
            // Cannot fail for these params (a failure is logged; null sent).
            params: to_json("sampling/createMessage params", &params).unwrap_or(Value::Null),
        }
    }

    /// A `roots/list` request.
    pub fn list_roots() -> InputRequest {
        InputRequest {
            method: methods::ROOTS_LIST.into(),
            params: Value::Object(JsonObject::new()),
        }
    }

    /// The client capability this request needs: `sampling`, `elicitation`
    /// (with `form` or `url`) or `roots`.
    pub(crate) fn capability(&self) -> &'static str {
        match self.method.as_str() {
            methods::SAMPLING_CREATE_MESSAGE => "sampling",
            methods::ROOTS_LIST => "roots",
            _ if self.params.get("mode").and_then(Value::as_str) == Some("url") => {
                "elicitation.url"
            }
            _ => "elicitation.form",
        }
    }
}

/// The client's answers to [`InputRequest`]s, by the keys the handler chose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputResponses(pub(crate) JsonObject);

impl InputResponses {
    /// The raw answer under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// The answer under `key` as an `elicitation/create` result.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) when it
    /// is missing or malformed.
    pub fn elicit_result(&self, key: &str) -> Result<ElicitResult, Error> {
        self.parse(key)
    }

    /// The answer under `key` as a `sampling/createMessage` result.
    ///
    /// # Errors
    ///
    /// As [`elicit_result`](Self::elicit_result).
    pub fn create_message_result(&self, key: &str) -> Result<CreateMessageResult, Error> {
        self.parse(key)
    }

    /// The answer under `key` as a `roots/list` result.
    ///
    /// # Errors
    ///
    /// As [`elicit_result`](Self::elicit_result).
    pub fn list_roots_result(&self, key: &str) -> Result<ListRootsResult, Error> {
        self.parse(key)
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<T, Error> {
        let value = self
            .0
            .get(key)
            .ok_or_else(|| Error::invalid_params(format!("no answer for input {}", key)))?;
        serde_json::from_value(value.clone()).map_err(|e| {
            Error::invalid_params(format!("malformed answer for input {}: {}", key, e))
        })
    }
}

/// Turns a handler's state into the opaque `requestState` string and back.
///
/// The state is a JSON value holding the answers gathered so far, the
/// handler's own state, and the method, name and arguments it belongs to. `decode`
/// must reject (with `Err`) any string it did not produce or that expired;
/// the client then gets `-32602`.
pub trait RequestStateCodec: Send + Sync + 'static {
    /// Encodes `state` for the client to echo back.
    ///
    /// # Errors
    ///
    /// Any error; the request then fails with `-32603`.
    fn encode(&self, state: &Value) -> Result<String, Error>;

    /// Decodes a `requestState` the client sent.
    ///
    /// # Errors
    ///
    /// When `token` is unknown, tampered with, or expired.
    fn decode(&self, token: &str) -> Result<Value, Error>;

    /// Encodes `state` for the client to echo back, on behalf of `caller`:
    /// a stable text naming who the state is counted against (the
    /// principal, else the session, else the peer address; DESIGN.md §26).
    /// The crate calls this one; a codec that keeps nothing per caller
    /// leaves it as it is, which calls [`encode`](Self::encode).
    ///
    /// # Errors
    ///
    /// As [`encode`](Self::encode).
    fn encode_for(&self, caller: &str, state: &Value) -> Result<String, Error> {
        let _ = caller;
        self.encode(state)
    }
}

/// The MRTR part of one 2026-07-28 request's context.
pub(crate) struct Rounds {
    /// Answers from earlier rounds (from the state) and from this retry.
    pub(crate) answers: JsonObject,
    /// The handler's own state from the previous round.
    pub(crate) user_state: Option<Value>,
    /// What this run asks for, in order.
    pub(crate) asked: Mutex<Vec<(String, InputRequest)>>,
    /// The state the handler set during this run.
    pub(crate) new_user_state: Mutex<Option<Value>>,
    /// Counter for keys of the blocking calls (`elicit`, …).
    pub(crate) next_key: Mutex<usize>,
    /// Retries so far: 0 on the first run.
    pub(crate) round: u64,
    /// The highest progress sent for this request, over every round.
    pub(crate) progress: Mutex<Option<f64>>,
}

impl Rounds {
    pub(crate) fn new(answers: JsonObject, user_state: Option<Value>) -> Rounds {
        Rounds {
            answers,
            user_state,
            asked: Mutex::new(Vec::new()),
            new_user_state: Mutex::new(None),
            next_key: Mutex::new(0),
            round: 0,
            progress: Mutex::new(None),
        }
    }

    /// The next key for a blocking call: `input-0`, `input-1`, …
    pub(crate) fn next_key(&self) -> String {
        let mut n = self.next_key.lock();
        let key = format!("input-{}", *n);
        *n += 1;
        key
    }

    /// `true` once this run asked the client for anything.
    pub(crate) fn asked_anything(&self) -> bool {
        !self.asked.lock().is_empty()
    }

    /// The handler's state: set in this run, else from the previous round.
    pub(crate) fn current_user_state(&self) -> Option<Value> {
        self.new_user_state
            .lock()
            .clone()
            .or_else(|| self.user_state.clone())
    }

    /// Records `request` under `key` unless it was asked already.
    pub(crate) fn ask(&self, key: &str, request: InputRequest) {
        let mut asked = self.asked.lock();
        if !asked.iter().any(|(k, _)| k == key) {
            asked.push((key.to_string(), request));
        }
    }
}

/// The members of `params` that [`input_required`] reads (`name`, `uri`,
/// `arguments`), copied before the handler takes the params.
pub(crate) fn binding_params(params: Option<&Value>) -> Option<Value> {
    let params = params?.as_object()?;
    let mut kept = JsonObject::new();
    for key in ["name", "uri", "arguments"] {
        if let Some(value) = params.get(key) {
            kept.insert(key.to_string(), value.clone());
        }
    }
    Some(Value::Object(kept))
}

/// The name a request's `requestState` is bound to: the tool or prompt
/// name, or the resource URI.
fn request_target(request: &Request) -> Value {
    let params = request.params.as_ref();
    params
        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The arguments a request's `requestState` is bound to (MRTR server
/// guidance: a state answers only the request it was minted for): the
/// `arguments` of `tools/call` and `prompts/get`, `null` otherwise. serde
/// maps are ordered, so equal arguments compare equal whatever their order.
fn request_arguments(request: &Request) -> Value {
    request
        .params
        .as_ref()
        .and_then(|p| p.get("arguments"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The caller a `requestState` is bound to (DESIGN-NOTES §11, MRTR-5):
/// the principal's subject and client id, `null` without a principal.
fn caller_binding(caller: &Caller) -> Value {
    match caller.principal.as_deref() {
        Some(p) => serde_json::json!([p.subject, p.client_id]),
        None => Value::Null,
    }
}

/// MRTR-3, MRTR-5: the answers and state a retry carries. A state minted
/// for another request, or for another principal, is refused alike.
pub(crate) fn read_rounds(
    session: &Session,
    request: &Request,
    caller: &Caller,
) -> Result<Rounds, ErrorObject> {
    let params = request.params.as_ref();
    let mut answers = match params.and_then(|p| p.get("inputResponses")) {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object",
            ))
        }
    };
    let mut user_state = None;
    let mut round = 0;
    let mut progress = None;
    match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => {}
        Some(Value::String(token)) => {
            let state =
                session.server.state_codec.decode(token).map_err(|e| {
                    ErrorObject::invalid_params(format!("invalid requestState: {}", e))
                })?;
            let arguments = state.get("arguments").unwrap_or(&Value::Null);
            let principal = state.get("principal").unwrap_or(&Value::Null);
            if state.get("method").and_then(Value::as_str) != Some(request.method.as_str())
                || state.get("target") != Some(&request_target(request))
                || *arguments != request_arguments(request)
                || *principal != caller_binding(caller)
            {
                return Err(ErrorObject::invalid_params(
                    "requestState belongs to another request",
                ));
            }
            if let Some(Value::Object(earlier)) = state.get("answers") {
                for (key, value) in earlier {
                    answers.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            user_state = state.get("user").cloned().filter(|v| !v.is_null());
            round = state.get("round").and_then(Value::as_u64).unwrap_or(0);
            progress = state.get("progress").and_then(Value::as_f64);
        }
        Some(_) => return Err(ErrorObject::invalid_params("requestState must be a string")),
    }
    let mut rounds = Rounds::new(answers, user_state);
    rounds.round = round;
    rounds.progress = Mutex::new(progress);
    Ok(rounds)
}

/// MRTR-1..3: `{"resultType": "input_required", "inputRequests",
/// "requestState"}`, the state carrying every answer so far; decorated as
/// every 2026-07-28 result is.
pub(crate) fn input_required(
    session: &Session,
    request: &Request,
    rounds: &Rounds,
    caller: &Caller,
) -> Result<Value, ErrorObject> {
    let mut input_requests = JsonObject::new();
    for (key, input) in rounds.asked.lock().iter() {
        input_requests.insert(
            key.clone(),
            serde_json::json!({ "method": input.method, "params": input.params }),
        );
    }
    let state = serde_json::json!({
        "method": request.method,
        "target": request_target(request),
        "arguments": request_arguments(request),
        "answers": rounds.answers,
        "user": rounds.current_user_state(),
        "principal": caller_binding(caller),
        "round": rounds.round + 1,
        "progress": *rounds.progress.lock(),
    });
    let token = session
        .server
        .state_codec
        .encode_for(&caller.key(session.lasting_key()).to_string(), &state)
        .map_err(|e| ErrorObject::internal(format!("cannot encode requestState: {}", e)))?;
    let mut result = JsonObject::new();
    result.insert("resultType".into(), Value::from("input_required"));
    if !input_requests.is_empty() {
        result.insert("inputRequests".into(), Value::Object(input_requests));
    }
    result.insert("requestState".into(), Value::from(token));
    Ok(decorate(Value::Object(result), &session.server.info, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_of_input_requests() {
        assert_eq!(InputRequest::list_roots().capability(), "roots");
        let url = crate::protocol::ElicitRequestUrlParams::new("m", "https://x", "e");
        assert_eq!(InputRequest::elicit(url).capability(), "elicitation.url");
    }
}
