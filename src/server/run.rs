//! Running a handler on a worker: the [`Job`] a dispatcher hands its
//! transport, the run through the interceptors (a panic is `-32603`), the
//! era's finishing of the answer, and the response, unless a cancel won.

use std::net::IpAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::caller::{Caller, CallerKey, TraceContext};
use super::context::{ClientLink, MethodTraits, RequestContext};
use super::envelope::Envelope;
use super::metrics::{ErrorType, Operation, ToolSlot};
use super::outcome::{RequestOutcome, RequestStatus};
use super::reply::{failure, to_value, Failure, Reply, WorkerFn};
use super::sink::{Sink, ToolAnswer};
use super::tasks::{self, TaskSlot};
use super::trace::RequestSpan;
use super::{input, intercept};
use crate::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use crate::server::cancel::CancellationFlag;
use crate::server::session::Session;

/// When a request arrived and who sent it: carried from the reading
/// thread to its answer or its handler run.
pub(crate) struct Arrival {
    pub(crate) started: Started,
    pub(crate) caller: Caller,
    /// The request's `tracing` span (feature `tracing`; inert without).
    pub(crate) span: RequestSpan,
}

impl Arrival {
    /// Now, for `request` from `caller` to `session`: its trace context is
    /// read here, once (SEP-414).
    /// `method` is the request's metrics label: the table's name of its
    /// method, or `_OTHER`.
    pub(super) fn now(
        session: &Session,
        mut caller: Caller,
        request: &Request,
        method: &'static str,
    ) -> Arrival {
        caller.trace = TraceContext::from_params(request.params.as_ref())
            .or_else(|| caller.headers.as_ref().and_then(TraceContext::from_headers));
        let span = RequestSpan::open(session, request, caller.trace.as_ref());
        Arrival {
            started: Started::now(session, method),
            caller,
            span,
        }
    }
}

/// When a request arrived, and what the metrics count it as: the clock is
/// read only for the `on_request_finished` hook and the metrics, the
/// readers of a request's duration (about 1% of a quick stdio call's CPU
/// time, by `perf`).
#[derive(Clone, Copy)]
pub(crate) struct Started {
    at: Option<Instant>,
    /// The method's metrics label (DESIGN.md §29).
    method: &'static str,
}

impl Started {
    pub(super) fn now(session: &Session, method: &'static str) -> Started {
        let server = &session.server;
        let timed = server.on_request_finished.is_some() || server.metrics.is_on();
        Started {
            at: if timed { Some(Instant::now()) } else { None },
            method,
        }
    }

    /// The time since arrival; zero when nothing asked for it.
    pub(crate) fn elapsed(self) -> Duration {
        self.at.map_or(Duration::ZERO, |started| started.elapsed())
    }

    /// Counts the request in the metrics: `tool` is its tool label (0:
    /// none), `tool_error` a result with `isError: true`.
    pub(super) fn count(
        self,
        session: &Session,
        status: &RequestStatus,
        tool: u32,
        tool_error: bool,
    ) {
        let metrics = &session.server.metrics;
        if !metrics.is_on() {
            return;
        }
        let operation = Operation {
            method: self.method,
            tool,
            error: ErrorType::of(status, tool_error),
            version: session.version_label(),
            transport: session.transport(),
        };
        metrics.request(operation, self.elapsed());
    }
}

/// A request whose handler must run; `run` it on any thread.
pub(crate) struct Job {
    pub(super) session: Arc<Session>,
    pub(super) method: MethodTraits,
    pub(super) call: WorkerFn,
    pub(super) request: Request,
    pub(super) flag: CancellationFlag,
    pub(super) sink: Arc<dyn Sink>,
    pub(super) arrival: Arrival,
    /// The envelope of a 2026-07-28 request, read once (boxed: a job is
    /// moved from the reading thread to where it runs).
    pub(super) envelope: Option<Box<Envelope>>,
    /// A quick tool's call: run it where it was read
    /// ([`ServerBuilder::quick_tool`](crate::ServerBuilder::quick_tool)).
    pub(super) quick: bool,
    /// `true` when the request is in the session's in-flight table, where
    /// a cancel can take it; `false` for a quick call on a connection
    /// ([`begin`](super::dispatch)), which always answers.
    pub(super) tracked: bool,
}

impl Job {
    /// `true` when the transport should run this job on the thread that
    /// read it instead of a worker: a call of a quick tool.
    pub(crate) fn is_quick(&self) -> bool {
        self.quick
    }

    /// Who the worker running this job is counted against (DESIGN.md
    /// §26).
    pub(crate) fn caller_key(&self) -> CallerKey {
        self.arrival.caller.key(self.session.lasting_key())
    }

    /// The peer address its per-peer shares count against, when on.
    pub(crate) fn peer(&self) -> Option<IpAddr> {
        self.arrival.caller.peer
    }
}

impl Job {
    /// Answers the request with `error` without running its handler: a
    /// transport's bound refused it (DESIGN.md §31).
    pub(crate) fn refuse(self, error: ErrorObject) {
        let ticket = Ticket {
            flag: &self.flag,
            tracked: self.tracked,
            tool: 0,
        };
        finish(
            &self.session,
            self.request,
            ticket,
            &self.sink,
            self.arrival,
            Err(error),
        );
    }

    /// Runs the handler and writes the response, unless a cancel won.
    pub(crate) fn run(self) {
        let Job {
            session,
            method,
            call,
            mut request,
            flag,
            sink,
            arrival,
            envelope,
            quick,
            tracked,
        } = self;
        let mut ticket = Ticket {
            flag: &flag,
            tracked,
            tool: 0,
        };
        if flag.is_cancelled() {
            // Cancelled while it waited for a worker: the handler never
            // runs, and the cancel already won (no response).
            let answer = Ok(Reply::Value(Value::Null));
            return finish(&session, request, ticket, &sink, arrival, answer);
        }
        let link = match link_of(&session, &request, &arrival.caller, envelope) {
            Ok(link) => link,
            Err(error) => return finish(&session, request, ticket, &sink, arrival, Err(error)),
        };
        let Arrival {
            started,
            caller,
            span,
        } = arrival;
        let params = request.params.take();
        if let ClientLink::Retry { .. } = link {
            // `input_required` binds its state to these (2026-07-28).
            request.params = input::binding_params(params.as_ref());
        }
        let ctx = RequestContext {
            session: Arc::clone(&session),
            request_id: request.id.clone(),
            method,
            flag: flag.clone(),
            sink: Arc::clone(&sink),
            link,
            caller,
            quick,
            task: parking_lot::Mutex::new(TaskSlot::No),
            tool_label: ToolSlot::default(),
            unnamed: match method.name {
                "" => Some(request.method.clone()),
                _ => None,
            },
        };
        let running = Running::enter(session.key(), &request.id);
        // The handler's own events nest under the request's span.
        let outcome = span.in_scope(|| invoke(&ctx, call, params));
        drop(running);
        let answer = conclude(&ctx, &request, outcome);
        if let Some(run) = ctx.running_task() {
            // Answered when the task started: the result is the task's,
            // counted when the run ends.
            let status = status_of(&answer);
            started.count(&session, &status, ctx.tool_label.get(), false);
            span.end(&status, false);
            return tasks::settle(&ctx, &run, answer);
        }
        let caller = ctx.caller.clone();
        ticket.tool = ctx.tool_label.get();
        drop(ctx);
        let arrival = Arrival {
            started,
            caller,
            span,
        };
        finish(&session, request, ticket, &sink, arrival, answer);
    }
}

/// How a request reaches its client: the rounds of a 2026-07-28 retry
/// (read from its envelope), else the connection.
fn link_of(
    session: &Session,
    request: &Request,
    caller: &Caller,
    envelope: Option<Box<Envelope>>,
) -> Result<ClientLink, ErrorObject> {
    match envelope {
        Some(envelope) => {
            input::read_rounds(session, request, caller).map(|rounds| ClientLink::Retry {
                envelope: *envelope,
                rounds,
            })
        }
        None => Ok(ClientLink::connection(request.params.as_ref())),
    }
}

/// The status of an answer that is sent.
fn status_of(answer: &Result<Reply, ErrorObject>) -> RequestStatus {
    match answer {
        Ok(_) => RequestStatus::Ok,
        Err(e) => RequestStatus::Error(e.code),
    }
}

/// Runs the handler through the interceptors; a panic is `-32603`.
fn invoke(ctx: &RequestContext, call: WorkerFn, params: Option<Value>) -> Result<Reply, Failure> {
    let interceptors = &ctx.session.server.interceptors;
    catch_unwind(AssertUnwindSafe(|| {
        if interceptors.is_empty() {
            return call(ctx, params);
        }
        // Interceptors see the result as a value.
        let handler = |params| {
            let reply = call(ctx, params)?;
            reply.into_value().map_err(Failure::Rpc)
        };
        intercept::around(interceptors, ctx, params, handler, |e| failure(ctx, e)).map(Reply::Value)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        log::error!("handler for {} panicked: {}", ctx.method.name, what);
        Err(Failure::Rpc(ErrorObject::internal(
            "the handler failed unexpectedly",
        )))
    })
}

thread_local! {
    /// The request whose handler runs on this thread: (session key, id).
    static CURRENT: std::cell::RefCell<Option<(u64, RequestId)>> = const { std::cell::RefCell::new(None) };
}

/// Marks a handler run on this thread for [`current_request`].
struct Running;

impl Running {
    fn enter(session: u64, id: &RequestId) -> Running {
        CURRENT.with(|current| *current.borrow_mut() = Some((session, id.clone())));
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        CURRENT.with(|current| current.borrow_mut().take());
    }
}

/// The request whose handler runs on the calling thread, as (session key,
/// request id): a transport stopping the server from inside a handler
/// spares that request, so that it still answers.
pub(crate) fn current_request() -> Option<(u64, RequestId)> {
    CURRENT.with(|current| current.borrow().clone())
}

/// The answer a handler run gives in the request's era: 2026-07-28 results
/// are decorated, and `input_required` carries the request's state.
fn conclude(
    ctx: &RequestContext,
    request: &Request,
    outcome: Result<Reply, Failure>,
) -> Result<Reply, ErrorObject> {
    let server = &ctx.session.server;
    match (outcome, &ctx.link) {
        (Ok(reply), ClientLink::Retry { rounds, .. }) => {
            if rounds.asked_anything() {
                log::warn!(
                    "the {} handler asked the client for input but returned a result; \
                     pass ErrorKind::InputRequired on with `?`",
                    request.method
                );
            }
            match reply {
                Reply::Tool { mut result, .. } if !ctx.method.cacheable => {
                    server.stamp(result.meta.get_or_insert_with(Default::default));
                    Ok(Reply::Tool {
                        result,
                        complete: true,
                    })
                }
                reply => Ok(Reply::Value(
                    server.decorate(reply.into_value()?, ctx.method.cacheable),
                )),
            }
        }
        (Ok(reply), ClientLink::Connection { .. }) => Ok(reply),
        (Err(Failure::Rpc(error)), _) => Err(error),
        (Err(Failure::InputRequired), ClientLink::Retry { rounds, .. }) => {
            input::input_required(&ctx.session, request, rounds, &ctx.caller).map(Reply::Value)
        }
        (Err(Failure::InputRequired), ClientLink::Connection { .. }) => Err(ErrorObject::internal(
            "the handler asked for input outside the 2026-07-28 era",
        )),
    }
}

/// What decides whether a finished run answers: the request's flag, and
/// whether it is in the session's in-flight table (a request that is not,
/// `Job::tracked`, always answers).
#[derive(Clone, Copy)]
struct Ticket<'a> {
    flag: &'a CancellationFlag,
    tracked: bool,
    /// The metrics label of the tool a `tools/call` found (0: none).
    tool: u32,
}

/// Writes the response unless a cancel won, and reports the outcome.
fn finish(
    session: &Arc<Session>,
    request: Request,
    ticket: Ticket<'_>,
    sink: &Arc<dyn Sink>,
    arrival: Arrival,
    answer: Result<Reply, ErrorObject>,
) {
    let Ticket {
        flag,
        tracked,
        tool,
    } = ticket;
    let Arrival {
        started,
        caller,
        span,
    } = arrival;
    let answers = !tracked || session.in_flight.finish(&request.id).is_some();
    let tool_error =
        matches!(&answer, Ok(Reply::Tool { result, .. }) if result.is_error == Some(true));
    let status = if answers {
        log::debug!("> response {} {}", request.id, request.method);
        // Counted before the response goes: a client holding its response
        // finds it in the metrics.
        started.count(session, &status_of(&answer), tool, tool_error);
        respond(sink, request.id, answer)
    } else {
        // The cancel won: no response (CAN-1).
        sink.end();
        let status = RequestStatus::Cancelled {
            reason: flag.reason(),
        };
        started.count(session, &status, tool, tool_error);
        status
    };
    span.end(&status, tool_error);
    session.server.report(|| RequestOutcome {
        method: request.method,
        duration: started.elapsed(),
        status,
        principal: caller.principal,
        trace: caller.trace,
    });
}

/// Sends the response to request `id`: a tool's result as it is where the
/// sink takes one, else as a value.
fn respond(
    sink: &Arc<dyn Sink>,
    id: RequestId,
    answer: Result<Reply, ErrorObject>,
) -> RequestStatus {
    let answer = match answer {
        Ok(Reply::Tool { result, complete }) => {
            let answer = ToolAnswer {
                result: &result,
                complete,
            };
            match sink.send_tool_result(&id, &answer) {
                Some(_) => return RequestStatus::Ok,
                None => to_value(answer),
            }
        }
        Ok(reply) => reply.into_value(),
        Err(error) => Err(error),
    };
    let status = match &answer {
        Ok(_) => RequestStatus::Ok,
        Err(e) => RequestStatus::Error(e.code),
    };
    sink.send(Message::Response(Response {
        id: Some(id),
        outcome: answer,
    }));
    status
}
