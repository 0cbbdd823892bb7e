//! 2026-07-28 clients of a 2025-era stdio server: the proxy holds the
//! 2025-11-25 session with the common child, and answers each request of
//! the new era there.
//!
//! `server/discover` is answered from the child's `initialize` result (the
//! library adds `resultType` and the server info). Every other request is
//! forwarded without the envelope's `_meta` keys, which a 2025-era server
//! does not know.
//!
//! A request the child makes during a call (an elicitation, a sampling
//! request, `roots/list`) becomes an `input_required` round: the child's
//! call is parked, still waiting for its answer, under a number that goes
//! into the round's `requestState` (which the library keeps server-side,
//! bound to the request and the caller); the client's retry finds it,
//! hands the child the answer, and goes on waiting for the next request or
//! the result (SEP-2322). A parked call that no retry takes within
//! [`PARKED_TTL`] is cancelled; at most [`MAX_PARKED`] wait at once, the
//! oldest cancelled first. A client that closes its request's stream
//! cancels the child's call (the library tells the proxy as a
//! `notifications/cancelled`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{Error, ErrorKind, InputRequest, RequestContext, SessionHandle};

use super::child::{lock, Call, Child, Event};

/// How long a parked call waits for the client's retry.
pub(crate) const PARKED_TTL: Duration = Duration::from_secs(10 * 60);
/// Most parked calls at once.
pub(crate) const MAX_PARKED: usize = 1000;

/// The calls waiting for a client's retry.
#[derive(Default)]
pub(crate) struct Parked {
    calls: Mutex<HashMap<u64, Waiting>>,
    next: AtomicU64,
}

/// One call of the child, waiting for the answer to its request.
struct Waiting {
    call: Call,
    /// The input key and the request the client was asked.
    key: String,
    request: InputRequest,
    reply: Sender<Result<Value, Error>>,
    /// How many requests of the child's this call asked so far.
    asked: usize,
    since: Instant,
}

/// Forwards one 2026-07-28 request to the common child.
pub(crate) fn forward(
    parked: &Parked,
    child: &Arc<Child>,
    session: &SessionHandle,
    ctx: &RequestContext,
    params: Option<Value>,
) -> Result<Value, Error> {
    if ctx.method() == tiny_mcp::methods::SERVER_DISCOVER {
        return discover(child);
    }
    let state = ctx.request_state();
    let number = state.as_ref().and_then(|s| s["parked"].as_u64());
    let (call, asked) = match number {
        Some(number) => match resume(parked, number, ctx)? {
            Some(resumed) => resumed,
            None => return Err(Error::new(ErrorKind::InputRequired)),
        },
        None => (
            child.start_call(session.key(), ctx, params.map(without_envelope))?,
            0,
        ),
    };
    relay(parked, call, asked, ctx)
}

/// The parked call `number`, given the client's answer; `None` when the
/// retry brought no answer (it is asked again, still parked).
fn resume(
    parked: &Parked,
    number: u64,
    ctx: &RequestContext,
) -> Result<Option<(Call, usize)>, Error> {
    let waiting = lock(&parked.calls).remove(&number).ok_or_else(|| {
        Error::invalid_params("the call this retry continues has ended or expired; call again")
    })?;
    let asked = vec![(waiting.key.clone(), waiting.request.clone())];
    match ctx.request_inputs(asked) {
        Ok(answers) => {
            let answer = answers.get(&waiting.key).cloned().unwrap_or(Value::Null);
            let _ = waiting.reply.send(Ok(answer));
            Ok(Some((waiting.call, waiting.asked)))
        }
        Err(e) if e.is_input_required() => {
            ctx.set_request_state(json!({ "parked": number }));
            lock(&parked.calls).insert(number, waiting);
            Ok(None)
        }
        Err(e) => {
            let _ = waiting.reply.send(Err(e));
            Ok(Some((waiting.call, waiting.asked)))
        }
    }
}

/// Relays the call's progress until its answer, or parks it at the next
/// request of the child's, which becomes this round's `input_required`.
fn relay(
    parked: &Parked,
    call: Call,
    mut asked: usize,
    ctx: &RequestContext,
) -> Result<Value, Error> {
    loop {
        let event = match call.events.recv() {
            Ok(event) => event,
            Err(_) => return Err(Error::new(ErrorKind::Closed)),
        };
        let (method, params, reply) = match event {
            Event::Progress(p) => {
                ctx.notify_progress(p.progress, p.total, p.message.as_deref());
                continue;
            }
            Event::Done(answer) => {
                return answer.map_err(|e| call.child().failed(ctx.method(), e));
            }
            Event::Ask {
                method,
                params,
                reply,
            } => (method, params, reply),
        };
        let request = match input_request(method, params) {
            Ok(request) => request,
            Err(e) => {
                let _ = reply.send(Err(e));
                continue;
            }
        };
        let key = format!("upstream-{}", asked);
        asked += 1;
        match ctx.request_inputs(vec![(key.clone(), request.clone())]) {
            Err(e) if e.is_input_required() => {}
            // A capability the client did not declare: the child's error.
            Err(e) => {
                let _ = reply.send(Err(e));
                continue;
            }
            Ok(answers) => {
                let answer = answers.get(&key).cloned().unwrap_or(Value::Null);
                let _ = reply.send(Ok(answer));
                continue;
            }
        }
        let number = parked.next.fetch_add(1, Ordering::Relaxed);
        ctx.set_request_state(json!({ "parked": number }));
        let waiting = Waiting {
            call,
            key,
            request,
            reply,
            asked,
            since: Instant::now(),
        };
        park(parked, number, waiting);
        return Err(Error::new(ErrorKind::InputRequired));
    }
}

/// Keeps `waiting` for the retry; expired calls, then the oldest past
/// [`MAX_PARKED`], are dropped (which cancels them).
fn park(parked: &Parked, number: u64, waiting: Waiting) {
    let mut dropped = Vec::new();
    {
        let mut calls = lock(&parked.calls);
        let expired: Vec<u64> = calls
            .iter()
            .filter(|(_, w)| w.since.elapsed() > PARKED_TTL)
            .map(|(n, _)| *n)
            .collect();
        dropped.extend(expired.iter().filter_map(|n| calls.remove(n)));
        while calls.len() >= MAX_PARKED {
            let oldest = calls.iter().min_by_key(|(_, w)| w.since).map(|(n, _)| *n);
            match oldest.and_then(|n| calls.remove(&n)) {
                Some(w) => dropped.push(w),
                None => break,
            }
        }
        calls.insert(number, waiting);
    }
    // Dropped outside the lock: each drop cancels a call.
    drop(dropped);
}

/// The child's request as an input request of the 2026-07-28 era.
fn input_request(method: &str, params: Option<Value>) -> Result<InputRequest, Error> {
    let params = params.unwrap_or(Value::Null);
    Ok(match method {
        tiny_mcp::methods::ELICITATION_CREATE => InputRequest::elicit(serde_json::from_value::<
            tiny_mcp::ElicitRequestParams,
        >(params)?),
        tiny_mcp::methods::SAMPLING_CREATE_MESSAGE => {
            InputRequest::create_message(serde_json::from_value(params)?)
        }
        _ => InputRequest::list_roots(),
    })
}

/// DISC-1: the versions, and the child's capabilities and instructions.
fn discover(child: &Child) -> Result<Value, Error> {
    let initialized = child.initialize_result("")?;
    let mut result = json!({
        "supportedVersions": [tiny_mcp::versions::V2026_07_28],
        "capabilities": serde_json::to_value(&initialized.capabilities)?,
    });
    if let Some(instructions) = initialized.instructions {
        result["instructions"] = Value::from(instructions);
    }
    Ok(result)
}

/// The params without the 2026-07-28 envelope's `_meta` entries
/// (`io.modelcontextprotocol/…`); a `_meta` left empty is dropped.
fn without_envelope(mut params: Value) -> Value {
    if let Some(object) = params.as_object_mut() {
        let emptied = match object.get_mut("_meta").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
                meta.is_empty()
            }
            None => false,
        };
        if emptied {
            object.remove("_meta");
        }
    }
    params
}
