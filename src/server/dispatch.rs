//! Routing of incoming messages through the method table, and the
//! lifecycle state machine.
//!
//! A transport calls [`receive`] (or [`receive_checked`], for a 2026-07-28
//! request whose envelope it read already) on its reading thread for every
//! message from the client, and is told what became of it ([`Received`]).
//! Inline methods are answered right there. Methods that run a program's
//! handler are entered in the in-flight table on the reading thread, so
//! that a cancel arriving next finds them, and returned as a [`Job`] for
//! the transport to schedule (`WorkerPool::schedule`: a quick tool's call
//! where it was read, any other on a worker). A server with an
//! [`Upstream`](super::Upstream) routes by the table's `proxied` column
//! instead of the gates (DESIGN.md §25).

use std::sync::Arc;

use serde_json::Value;

use super::caller::Caller;
use super::envelope::{self, Envelope};
use super::listen::SubscriptionFilter;
use super::methods::{self, Method, Proxied, Runs};
use super::outcome::{RequestOutcome, RequestStatus};
use super::reply::{Answer, WorkerFn};
use super::run::{Arrival, Job};
use super::sink::Sink;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use crate::protocol::{methods as names, notifications, CancelledNotificationParams, Era};
use crate::server::cancel::{BeginError, CancellationFlag};
use crate::server::session::Session;

/// What became of one message from the client.
#[must_use]
// One per message, moved once to its transport: boxing the job would only
// add an allocation to the hot path.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Received {
    /// Answered on the reading thread: the transport sends this response.
    Answered(Response),
    /// A handler must run: the transport runs the job on a worker; its
    /// messages and its response go to the sink it was received with.
    Run(Job),
    /// A `subscriptions/listen` stream opened under this key; its
    /// acknowledgement is in the sink, and its result comes when it ends.
    Listening(u64),
    /// A notification or an answer of the client's: nothing to send.
    Consumed,
}

/// Handles one message from the client. Messages related to a request
/// go to `sink`.
pub(crate) fn receive(
    session: &Arc<Session>,
    message: Message,
    sink: &Arc<dyn Sink>,
    caller: Caller,
) -> Received {
    match message {
        Message::Request(request) => {
            let arrival = Arrival::now(session, caller, &request, metric_label(session, &request));
            receive_request(session, request, sink, arrival)
        }
        Message::Notification(notification) => {
            // A cancel reaches an upstream from the cancel path itself.
            let forward = session.server.upstream.is_some()
                && notification.method != notifications::CANCELLED;
            let params = match forward {
                true => notification.params.clone(),
                false => None,
            };
            receive_notification(session, &notification.method, notification.params);
            if forward {
                super::upstream::notified(session, &notification.method, params);
            }
            Received::Consumed
        }
        Message::Response(response) => {
            receive_response(session, response);
            Received::Consumed
        }
    }
}

/// Handles a 2026-07-28 request whose envelope the transport has read
/// and checked already (HTTP checks it against the headers first).
pub(crate) fn receive_checked(
    session: &Arc<Session>,
    request: Request,
    envelope: Envelope,
    sink: &Arc<dyn Sink>,
    caller: Caller,
) -> Received {
    log::debug!("< request {} {}", request.id, request.method);
    let arrival = Arrival::now(session, caller, &request, metric_label(session, &request));
    dispatch_2026(session, request, envelope, sink, arrival)
}

fn receive_request(
    session: &Arc<Session>,
    request: Request,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
) -> Received {
    log::debug!("< request {} {}", request.id, request.method);
    let claim = envelope::is_claim(&request);
    let claimed = if claim {
        Era::V2026_07_28
    } else {
        Era::V2025_11_25
    };
    match session.lock_era(claimed) {
        Era::V2026_07_28 => receive_2026(session, request, sink, arrival),
        _ if claim => {
            // ERA-6: a 2026-07-28 request on a handshake-era connection.
            let error = ErrorObject::invalid_request(
                "this connection uses the 2025-11-25 handshake era (initialize); \
                 requests with a 2026-07-28 _meta envelope are not accepted on it",
            );
            respond(session, request, arrival, Err(error))
        }
        _ => receive_2025(session, request, sink, arrival),
    }
}

/// LC-1: nothing but the handshake and `ping` before `initialize`.
fn receive_2025(
    session: &Arc<Session>,
    request: Request,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
) -> Received {
    let method = methods::find(&request.method, Era::V2025_11_25);
    if !method.map_or(false, |m| m.before_initialize) && !session.is_initialized() {
        let error = ErrorObject::invalid_request(format!(
            "{} before initialize: send initialize first",
            request.method
        ));
        return respond(session, request, arrival, Err(error));
    }
    dispatch(session, method, request, None, sink, arrival)
}

/// MOD-*, VER-*, META-*: the envelope is read and its version checked
/// before the method is looked up.
fn receive_2026(
    session: &Arc<Session>,
    request: Request,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
) -> Received {
    if request.method == names::INITIALIZE {
        // ERA-5: initialize on a connection locked to 2026-07-28.
        let requested = request
            .params
            .as_ref()
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let error = envelope::unsupported_version(requested);
        return respond(session, request, arrival, Err(error));
    }
    let checked = envelope::read_envelope(request.params.as_ref())
        .and_then(|e| envelope::check_version(&e.version).map(|()| e));
    match checked {
        Ok(envelope) => dispatch_2026(session, request, envelope, sink, arrival),
        Err(error) => respond(session, request, arrival, Err(error)),
    }
}

/// Dispatches a 2026-07-28 request whose envelope was read and checked.
fn dispatch_2026(
    session: &Arc<Session>,
    request: Request,
    envelope: Envelope,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
) -> Received {
    let method = methods::find(&request.method, Era::V2026_07_28);
    dispatch(session, method, request, Some(envelope), sink, arrival)
}

/// Runs the request's row of the method table (`method`, as found for the
/// request's era): `-32601` when it has none or its gate is closed.
fn dispatch(
    session: &Arc<Session>,
    method: Option<&'static Method>,
    mut request: Request,
    envelope: Option<Envelope>,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
) -> Received {
    let era = match envelope {
        Some(_) => Era::V2026_07_28,
        None => Era::V2025_11_25,
    };
    if session.server.upstream.is_some() {
        let proxied = method.map_or(Proxied::Forward, |m| m.proxied);
        match (proxied, method) {
            (Proxied::Here, Some(_)) => {}
            (Proxied::Answer(answer), _) => {
                let answer = match in_use(session, &request.id) {
                    true => Err(ErrorObject::invalid_request(format!(
                        "request id {} is already in flight",
                        request.id
                    ))),
                    false => answer(session, &arrival.caller, request.params.take()),
                };
                return respond(session, request, arrival, answer);
            }
            _ => {
                let method = method.unwrap_or(&methods::FORWARDED);
                let call = super::upstream::forward;
                return begin(session, method, call, request, envelope, sink, arrival);
            }
        }
    }
    let method = match method {
        Some(method) if method.gate(era).is_open(&session.server) => method,
        _ => {
            let error = ErrorObject::method_not_found(&request.method);
            return respond(session, request, arrival, Err(error));
        }
    };
    match method.runs {
        Runs::Inline(answer) if !in_use(session, &request.id) => {
            let answer = answer(session, &arrival.caller, request.params.take());
            let answer = match &envelope {
                Some(_) => answer.map(|v| session.server.decorate(v, method.cacheable)),
                None => answer,
            };
            respond(session, request, arrival, answer)
        }
        // The in-flight table refuses a duplicate itself (`begin`).
        Runs::Worker(call) if !listening_on(session, &request.id) => {
            begin(session, method, call, request, envelope, sink, arrival)
        }
        Runs::Listen if !in_use(session, &request.id) => {
            match open_listen(session, &request, sink) {
                Ok(key) => Received::Listening(key),
                Err(error) => respond(session, request, arrival, Err(error)),
            }
        }
        _ => {
            let message = format!("request id {} is already in flight", request.id);
            respond(
                session,
                request,
                arrival,
                Err(ErrorObject::invalid_request(message)),
            )
        }
    }
}

/// BASE-2: `true` while `id` names a request of this session still running:
/// one in flight, or an open listen stream.
fn in_use(session: &Session, id: &RequestId) -> bool {
    session.in_flight.contains(id) || listening_on(session, id)
}

/// BASE-2: `true` while `id` names an open listen stream of this session,
/// which is a request still running. Only a connection (stdio, memory)
/// carries more requests while one of its listen streams is open, so only
/// its streams are looked at.
fn listening_on(session: &Session, id: &RequestId) -> bool {
    session.is_connection() && session.server.listen.contains(session.key, id)
}

/// `true` for a `tools/call` of a tool registered as quick.
fn is_quick(session: &Session, method: &Method, request: &Request) -> bool {
    if method.offer != Some(super::scopes::Offer::Tool) {
        return false;
    }
    let name = request.params.as_ref().and_then(|p| p.get("name"));
    match name.and_then(|n| n.as_str()) {
        Some(name) => session.server.registry.read().is_quick(name),
        None => false,
    }
}

/// Enters a handler request in the in-flight table and hands it out.
///
/// A quick call on a connection (stdio, memory) is only checked against
/// the table (BASE-2), not entered: the transport runs it on the thread
/// that reads the connection, before it reads the next message, so no
/// cancel can reach it while it runs (CAN-1: a later one is a no-op), and
/// a close of the server spares it as it spares the request that closes.
fn begin(
    session: &Arc<Session>,
    method: &'static Method,
    call: WorkerFn,
    request: Request,
    envelope: Option<Envelope>,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
) -> Received {
    let quick = is_quick(session, method, &request);
    let untracked = quick && session.is_connection();
    let entered = if !untracked {
        session.in_flight.begin(&request.id, Arc::clone(sink))
    } else if session.in_flight.contains(&request.id) {
        Err(BeginError::Duplicate)
    } else {
        Ok(CancellationFlag::new())
    };
    match entered {
        Ok(flag) => Received::Run(Job {
            quick,
            tracked: !untracked,
            session: Arc::clone(session),
            method: method.traits(),
            call,
            request,
            flag,
            sink: Arc::clone(sink),
            arrival,
            envelope: envelope.map(Box::new),
        }),
        Err(BeginError::Duplicate) => {
            let message = format!("request id {} is already in flight", request.id);
            respond(
                session,
                request,
                arrival,
                Err(ErrorObject::invalid_request(message)),
            )
        }
        Err(BeginError::Full) => {
            let error = ErrorObject::internal("too many requests in flight; retry later");
            respond(session, request, arrival, Err(error))
        }
    }
}

/// The metrics label of `request`'s method: the table's own name of a
/// method it has (in either era), else `_OTHER`, so that a client's
/// made-up names never become labels (DESIGN.md §29); not looked up when
/// the metrics are off.
fn metric_label(session: &Session, request: &Request) -> &'static str {
    if !session.server.metrics.is_on() {
        return "";
    }
    let name = request.method.as_str();
    methods::find(name, Era::V2025_11_25)
        .or_else(|| methods::find(name, Era::V2026_07_28))
        .map_or("_OTHER", |method| method.name)
}

/// Reports an inline answer and hands it to the transport.
fn respond(session: &Session, request: Request, arrival: Arrival, answer: Answer) -> Received {
    let status = match &answer {
        Ok(_) => RequestStatus::Ok,
        Err(e) => RequestStatus::Error(e.code),
    };
    arrival.started.count(session, &status, 0, false);
    arrival.span.end(&status, false);
    session.server.report(|| RequestOutcome {
        method: request.method,
        duration: arrival.started.elapsed(),
        status,
        principal: arrival.caller.principal,
        trace: arrival.caller.trace,
    });
    Received::Answered(Response {
        id: Some(request.id),
        outcome: answer,
    })
}

/// LISTEN-2..4: opens a stream with the honoured part of the filter.
fn open_listen(
    session: &Session,
    request: &Request,
    sink: &Arc<dyn Sink>,
) -> Result<u64, ErrorObject> {
    let notifications = request
        .params
        .as_ref()
        .and_then(|p| p.get("notifications"))
        .ok_or_else(|| {
            ErrorObject::invalid_params("subscriptions/listen needs params.notifications")
        })?;
    let filter: SubscriptionFilter = serde_json::from_value(notifications.clone())
        .map_err(|e| ErrorObject::invalid_params(format!("invalid notifications: {}", e)))?;
    let honoured = session.server.with_capabilities(|c| filter.honoured(c));
    session
        .server
        .listen
        .open(session.key, request.id.clone(), honoured, Arc::clone(sink))
        .ok_or_else(|| ErrorObject::internal("too many listen streams; try again later"))
}

fn receive_notification(session: &Session, method: &str, params: Option<Value>) {
    log::debug!("< notification {}", method);
    match method {
        notifications::CANCELLED => {
            // CAN-2: malformed cancels are ignored silently.
            let params: CancelledNotificationParams = match params.map(serde_json::from_value) {
                Some(Ok(p)) => p,
                _ => return,
            };
            let id = match params.request_id.as_ref().and_then(RequestId::from_value) {
                Some(id) => id,
                None => return,
            };
            if session.cancel(&id, params.reason.clone(), true) {
                log::debug!(
                    "request {} cancelled: {}",
                    id,
                    params.reason.as_deref().unwrap_or("no reason given")
                );
            }
        }
        notifications::INITIALIZED | notifications::ROOTS_LIST_CHANGED => {}
        _ => log::debug!("ignoring notification {}", method),
    }
}

fn receive_response(session: &Session, response: Response) {
    let id = match response.id {
        Some(id) => id,
        None => {
            log::warn!(
                "the client sent an error without an id: {:?}",
                response.outcome
            );
            return;
        }
    };
    let waiter = session.pending.lock().remove(&id);
    match waiter {
        Some(waiter) => {
            let _ = waiter.send(response.outcome.map_err(|e| Error::new(ErrorKind::Peer(e))));
        }
        None => log::debug!("dropping an answer to {}, which no one waits for", id),
    }
}
