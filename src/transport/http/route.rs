//! HTTP routing: a function from a parsed request to an [`Answer`], with
//! no socket in sight (DESIGN.md §13). The head's steps (path,
//! DNS-rebinding protection, authorization, hooks) are `gate.rs`'s; here,
//! in order: the HTTP method, the body's media types, the scopes of what
//! the request acts on (DESIGN.md §15), the era (`era.rs`), then the
//! 2025-11-25 session rules here or the 2026-07-28 rules in
//! `per_request.rs`.
//!
//! Spec: basic/transports "Streamable HTTP" (2025-11-25), HTTP-1 to
//! HTTP-21, SEC-1, SEC-2.

use std::sync::Arc;

use super::answer::{
    not_acceptable, rpc_error, Accepts, Answer, EventStream, Framing, OnClose, Resumable,
};
use super::era::{choose_path, per_request_version, Path};
use super::media::{accepts, is_json};
use super::sse::{self, Attached, Outgoing, Stream, StreamSink};
use super::wire::{HttpRequest, HttpResponse};
use super::{auth, per_request, HttpSession, Lookup, Shared};
use crate::jsonrpc::{ErrorObject, Message, Request, RequestId};
use crate::protocol::versions;
use crate::server::methods;
use crate::server::session::Session;
use crate::server::{dispatch, Caller, NullSink, Principal, Received, Sink};

/// Header names, as the spec spells them.
pub(crate) mod headers {
    /// `Mcp-Session-Id`
    pub(crate) const MCP_SESSION_ID: &str = "Mcp-Session-Id";
}

/// Decides the answer to one request that passed its head's checks
/// (`gate.rs`: the path, Host and Origin, authorization, the hooks), with
/// the principal authorization established.
pub(crate) fn route(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    principal: Option<Arc<Principal>>,
) -> Answer {
    let caller = Caller {
        principal,
        headers: Some(request.headers.clone()),
        trace: None,
        peer: shared.config.peers.peer_of(request),
    };
    // HTTP-11 (2026-07-28): only POST exists without a session; a GET or
    // DELETE naming a live 2025-11-25 session keeps that era's meaning.
    let post_only = shared.config.stateless
        || (request.header("mcp-session-id").is_none() && per_request_version(request));
    match request.method.as_str() {
        "POST" => post(shared, request, caller),
        "GET" if !post_only => get(shared, request, &caller),
        "DELETE" if !post_only => delete(shared, request, &caller),
        _ => {
            let allow = if post_only {
                "POST"
            } else {
                "GET, POST, DELETE"
            };
            Answer::Whole(HttpResponse::new(405).header("Allow", allow))
        }
    }
}

/// HTTP-2, HTTP-3: media types, the body, then the era's rules.
fn post(shared: &Arc<Shared>, request: &HttpRequest, caller: Caller) -> Answer {
    let (json, sse) = accepts(request.header("accept"));
    let accepts = Accepts { json, sse };
    if !json && !sse {
        return not_acceptable(None, "application/json or text/event-stream");
    }
    if !request.header("content-type").map_or(false, is_json) {
        let error = ErrorObject::invalid_request(
            "Unsupported Media Type: Content-Type must be application/json",
        );
        return Answer::error(415, None, error);
    }
    let message = match Message::parse(&request.body) {
        Ok(message) => message,
        // A malformed response or notification is answered without an id:
        // the client could take one for the answer to its own request.
        Err(e) => {
            let id = if e.silent { None } else { e.id };
            return Answer::error(400, id, e.error);
        }
    };
    let id = match &message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    if let Some(refused) = check_scopes(shared, &message, &caller) {
        return refused;
    }
    match choose_path(shared, request, &message, caller.principal.as_deref()) {
        Path::PerRequest => per_request::post(shared, request, message, accepts, caller),
        Path::Initialize => initialize(shared, message, Poster { accepts, caller }),
        Path::Refuse(status, error) => Answer::error(status, id, error),
        Path::Session => on_session(shared, request, message, Poster { accepts, caller }),
    }
}

/// AUTH-5: a request whose principal lacks a scope of what it acts on (a
/// tool, prompt or resource with scopes of its own) is refused with 403
/// and the scopes it needs, in both eras, before it is dispatched.
fn check_scopes(shared: &Shared, message: &Message, caller: &Caller) -> Option<Answer> {
    let protected = shared.config.guards.protected.as_deref()?;
    let principal = caller.principal.as_deref()?;
    let request = match message {
        Message::Request(request) => request,
        _ => return None,
    };
    let needed = methods::scopes_needed(&shared.server, &request.method, request.params.as_ref());
    let lacking = principal.lacks(&needed);
    if lacking.is_empty() {
        return None;
    }
    Some(Answer::Whole(auth::insufficient_scope(
        protected, &needed, &lacking,
    )))
}

/// A 2025-11-25 message on its session, or in the stateless mode on a
/// session of its own. Notifications and the client's answers get 202
/// (HTTP-3).
/// Who posted a message, and what its `Accept` allows: carried together
/// from [`post`] to the answer.
struct Poster {
    accepts: Accepts,
    caller: Caller,
}

fn on_session(
    shared: &Arc<Shared>,
    request: &HttpRequest,
    message: Message,
    poster: Poster,
) -> Answer {
    if shared.config.stateless {
        let version = request.header("mcp-protocol-version");
        let core = Session::stateless_post(&shared.server, version);
        return match message {
            Message::Request(r) => serve_request(shared, &core, None, r, poster),
            other => {
                let sink: Arc<dyn Sink> = Arc::new(NullSink);
                let _ = dispatch::receive(&core, other, &sink, Caller::default());
                Answer::status(202)
            }
        };
    }
    let id = match &message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let session = match session_for(shared, request, id, &poster.caller) {
        Ok(session) => session,
        Err(response) => return Answer::Whole(response),
    };
    match message {
        Message::Request(r) => {
            let core = Arc::clone(&session.core);
            serve_request(shared, &core, Some(&session), r, poster)
        }
        other => {
            let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&session.get_stream)));
            let _ = dispatch::receive(&session.core, other, &sink, Caller::default());
            Answer::status(202)
        }
    }
}

/// One message as the whole answer: JSON when the client takes it, else a
/// one-event SSE stream without an event id.
fn single(
    accepts: Accepts,
    status: u16,
    json: String,
    headers: Vec<(&'static str, String)>,
) -> Answer {
    if accepts.json {
        let mut response = HttpResponse::json(status, json.into_bytes());
        response.headers.extend(headers);
        return Answer::Whole(response);
    }
    Answer::Stream(EventStream {
        receiver: crossbeam_channel::never(),
        replay: vec![
            Outgoing::Event {
                seq: 0,
                json: Arc::from(json),
                kind: sse::Kind::Other,
            },
            Outgoing::End,
        ],
        // No event id: the answer is whole, nothing can resume it, and
        // ids are unique per session (HTTP-14).
        framing: Framing::Plain {
            json_if_first: false,
        },
        on_close: OnClose::Nothing,
        headers,
        guard: None,
        writer: None,
    })
}

/// LC-1, HTTP-16: the handshake; a session is kept only when it succeeds.
fn initialize(shared: &Arc<Shared>, message: Message, poster: Poster) -> Answer {
    let Poster { accepts, caller } = poster;
    let session = if shared.config.stateless {
        None
    } else {
        // The peer as shares count it: none when they are off.
        Some(shared.new_session(caller.principal.clone(), caller.peer))
    };
    let core = match &session {
        Some(s) => Arc::clone(&s.core),
        None => Session::stateless_initialize(&shared.server),
    };
    let sink: Arc<dyn Sink> = Arc::new(NullSink);
    let response = match dispatch::receive(&core, message, &sink, caller) {
        Received::Answered(response) => response,
        _ => {
            let error = ErrorObject::internal("initialize produced no response");
            return Answer::error(500, None, error);
        }
    };
    if response.outcome.is_err() {
        // No session is left behind (HTTP-16).
        return single(accepts, 400, response_json(response), Vec::new());
    }
    let mut headers = Vec::new();
    if let Some(session) = &session {
        if let Err(why) = shared.register(session) {
            shared.refusals.refused(why);
            return Answer::error(503, response.id, ErrorObject::internal(why));
        }
        headers.push((headers::MCP_SESSION_ID, session.id.clone()));
    }
    single(accepts, 200, response_json(response), headers)
}

fn response_json(response: crate::jsonrpc::Response) -> String {
    Message::Response(response).to_json_string()
}

/// A 2025-11-25 request: answered at once as one JSON response, or its
/// handler's messages as an SSE stream of its own (HTTP-4, HTTP-5).
fn serve_request(
    shared: &Arc<Shared>,
    core: &Arc<Session>,
    session: Option<&Arc<HttpSession>>,
    request: Request,
    poster: Poster,
) -> Answer {
    let Poster { accepts, caller } = poster;
    let id = request.id.clone();
    let config = &shared.config;
    let stream = match session {
        Some(s) => match s.open_stream(config, &shared.retained, id.clone()) {
            Some(stream) => {
                shared.trim_retained();
                stream
            }
            None => {
                let error = ErrorObject::internal("too many open streams in this session");
                return Answer::error(429, Some(id), error);
            }
        },
        None => Arc::new(Stream::new(1, Some(id.clone()), config.stream_queue_len, 0)),
    };
    let Attached {
        receiver,
        priming: priming_seq,
        token,
        ..
    } = stream.attach(None);
    let json_only = !accepts.sse || config.json_response;
    if json_only {
        stream.set_json_only();
    }
    let sink: Arc<dyn Sink> = Arc::new(StreamSink(Arc::clone(&stream)));
    match dispatch::receive(core, Message::Request(request), &sink, caller) {
        Received::Answered(response) => {
            if let Some(s) = session {
                // The stream was never shown to the client.
                s.discard_stream(stream.id);
            }
            return single(accepts, 200, response_json(response), Vec::new());
        }
        Received::Run(job) => {
            if !shared.pool.schedule(job) {
                let error = ErrorObject::internal("the server is shutting down");
                return Answer::error(503, Some(id), error);
            }
        }
        Received::Listening(_) | Received::Consumed => return Answer::status(202),
    }
    let framing = if json_only {
        Framing::JsonWhenDone
    } else {
        Framing::WithIds {
            stream_id: stream.id,
            priming: priming(shared, core, priming_seq),
            resumable: Some(Resumable {
                stream: Arc::clone(&stream),
                token,
                forget_in: session.cloned(),
            }),
        }
    };
    Answer::Stream(EventStream {
        receiver,
        replay: Vec::new(),
        framing,
        on_close: OnClose::Nothing,
        headers: Vec::new(),
        guard: None,
        writer: None,
    })
}

/// HTTP-5: a priming event with `retry:` for sessions on 2025-11-25.
fn priming(shared: &Shared, core: &Session, seq: u64) -> Option<(u64, u64)> {
    if core.protocol_version().as_str() >= versions::V2025_11_25 {
        Some((seq, shared.config.sse_retry.as_millis() as u64))
    } else {
        None
    }
}

/// The session a request names: 400 without `Mcp-Session-Id`, 404 for an
/// unknown, deleted or expired one (HTTP-17, HTTP-18), and 404 for one
/// another principal opened: knowing a session's id does not let anyone
/// else use it (DESIGN.md §15).
fn session_for(
    shared: &Shared,
    request: &HttpRequest,
    id: Option<RequestId>,
    caller: &Caller,
) -> Result<Arc<HttpSession>, HttpResponse> {
    let not_found = |id| rpc_error(404, id, ErrorObject::invalid_request("session not found"));
    match request.header("mcp-session-id") {
        None => Err(rpc_error(
            400,
            id,
            ErrorObject::invalid_request("Bad Request: missing Mcp-Session-Id header"),
        )),
        Some(session_id) => match shared.lookup(session_id, caller.principal.as_deref()) {
            Lookup::Found(session) => Ok(session),
            Lookup::NotFound => Err(not_found(id)),
        },
    }
}

/// How long a new GET waits for the writer of a live GET stream to say
/// whether its client is still there.
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// HTTP-10 to HTTP-15: the standalone stream, or a resumed one.
fn get(shared: &Arc<Shared>, request: &HttpRequest, caller: &Caller) -> Answer {
    let (_, takes_sse) = accepts(request.header("accept"));
    if !takes_sse {
        return not_acceptable(None, "text/event-stream");
    }
    let session = match session_for(shared, request, None, caller) {
        Ok(s) => s,
        Err(response) => return Answer::Whole(response),
    };
    let resume = request
        .header("last-event-id")
        .and_then(sse::parse_event_id)
        .map(|(stream, seq)| (stream, session.stream(stream), seq));
    let (stream, after) = match resume {
        Some((_, Ok(stream), seq)) => (stream, Some(seq)),
        Some((id, Err(ended), _)) => return nothing_to_resume(id, ended),
        None => {
            // HTTP-12: a GET stream whose client left without a word is
            // noticed now, so that the client's reconnect takes it over.
            if !session.get_stream.probe_writer(PROBE_WAIT) {
                let error = ErrorObject::invalid_request(
                    "Conflict: only one GET stream per session is allowed",
                );
                return Answer::error(409, None, error);
            }
            (Arc::clone(&session.get_stream), None)
        }
    };
    let Attached {
        receiver,
        replay,
        priming: priming_seq,
        token,
    } = stream.attach(after);
    Answer::Stream(EventStream {
        receiver,
        replay,
        framing: Framing::WithIds {
            stream_id: stream.id,
            priming: priming(shared, &session.core, priming_seq),
            resumable: Some(Resumable {
                stream: Arc::clone(&stream),
                token,
                forget_in: None,
            }),
        },
        on_close: OnClose::Nothing,
        headers: Vec::new(),
        guard: None,
        writer: None,
    })
}

/// HTTP-15: a `Last-Event-ID` naming a stream that ended and was
/// forgotten (its request answered, or cancelled), or one the session never
/// had: 400 with a message that says so. The session itself is live (a
/// 404 would tell the client to start over).
fn nothing_to_resume(stream: u64, ended: bool) -> Answer {
    let message = if ended {
        format!(
            "stream {} has ended and its events are gone: nothing is left to resume \
             (the session is still live)",
            stream
        )
    } else {
        format!("this session has no stream {} to resume", stream)
    };
    Answer::error(400, None, ErrorObject::invalid_request(message))
}

/// HTTP-19: `DELETE` ends the session.
fn delete(shared: &Arc<Shared>, request: &HttpRequest, caller: &Caller) -> Answer {
    let session = match session_for(shared, request, None, caller) {
        Ok(session) => session,
        Err(response) => return Answer::Whole(response),
    };
    if shared.remove(&session.id) {
        Answer::status(200)
    } else {
        Answer::error(404, None, ErrorObject::invalid_request("session not found"))
    }
}

#[cfg(test)]
pub(super) mod tests {
    //! Routing without sockets: a parsed request in, an answer value out.

    use std::time::Duration;

    use serde_json::{json, Value};

    use super::*;
    use crate::transport::http::HttpConfig;
    use crate::{CallToolResult, JsonObject, RequestContext, Server, Tool};

    pub(crate) fn shared(config: HttpConfig) -> Arc<Shared> {
        let server = Server::builder("route", "1")
            .tool(
                Tool::new("echo", json!({"type": "object"})),
                |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("hi")),
            )
            .build();
        let addr = "127.0.0.1:9".parse().unwrap();
        Arc::new(Shared::new(&server, config, addr))
    }

    pub(crate) fn http(method: &str, headers: &[(&str, &str)], body: Value) -> HttpRequest {
        let mut all = vec![
            ("host".to_string(), "127.0.0.1".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ];
        for (name, value) in headers {
            all.retain(|(n, _)| n != name);
            all.push((name.to_string(), value.to_string()));
        }
        HttpRequest {
            method: method.into(),
            path: "/mcp".into(),
            query: None,
            headers: crate::server::HttpHeaders::new(all),
            body: if body.is_null() {
                Vec::new()
            } else {
                body.to_string().into_bytes()
            },
            keep_alive: true,
            http10: false,
            remote: None,
        }
    }

    /// The whole decision: the head's steps, then the routing.
    pub(crate) fn decide(shared: &Arc<Shared>, request: &HttpRequest) -> Answer {
        match super::super::gate::admit(shared, request) {
            super::super::gate::Admission::Answer(answer) => answer,
            super::super::gate::Admission::Pass(principal) => route(shared, request, principal),
        }
    }

    fn whole(answer: Answer) -> HttpResponse {
        match answer {
            Answer::Whole(response) => response,
            Answer::Stream(_) => panic!("expected a whole response"),
        }
    }

    fn body(response: &HttpResponse) -> Value {
        serde_json::from_slice(&response.body).unwrap()
    }

    pub(crate) fn initialize() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    }

    pub(crate) fn call_2026(name: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": name, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}})
    }

    const HEADERS_2026: [(&str, &str); 3] = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];

    // HTTP-1, SEC-1: the endpoint, then Host, then the method.
    #[test]
    fn path_host_and_method() {
        let shared = shared(HttpConfig::default());
        let mut other = http("POST", &[], initialize());
        other.path = "/other".into();
        assert_eq!(whole(decide(&shared, &other)).status, 404);
        let evil = http("POST", &[("host", "evil.example")], initialize());
        assert_eq!(whole(decide(&shared, &evil)).status, 403);
        let put = whole(decide(&shared, &http("PUT", &[], Value::Null)));
        assert_eq!(put.status, 405);
        assert!(put.headers.contains(&("Allow", "GET, POST, DELETE".into())));
        let config = HttpConfig {
            stateless: true,
            ..HttpConfig::default()
        };
        let get = whole(decide(
            &self::shared(config),
            &http("GET", &[], Value::Null),
        ));
        assert_eq!((get.status, get.headers[0].1.as_str()), (405, "POST"));
    }

    // HTTP-2, HTTP-3: Accept, Content-Type, then the body.
    #[test]
    fn media_types_and_body() {
        let shared = shared(HttpConfig::default());
        let xml = http("POST", &[("accept", "text/xml")], initialize());
        assert_eq!(whole(decide(&shared, &xml)).status, 406);
        let text = http("POST", &[("content-type", "text/plain")], initialize());
        assert_eq!(whole(decide(&shared, &text)).status, 415);
        let mut broken = http("POST", &[], Value::Null);
        broken.body = b"{not json".to_vec();
        let response = whole(decide(&shared, &broken));
        assert_eq!(response.status, 400);
        assert_eq!(body(&response)["error"]["code"], -32700);
        // A malformed client response is answered without its id, which
        // the client could take for the answer to its own request 3.
        let both =
            json!({"jsonrpc": "2.0", "id": 3, "result": {}, "error": {"code": 1, "message": "x"}});
        let response = whole(decide(&shared, &http("POST", &[], both)));
        assert_eq!(response.status, 400);
        assert_eq!(body(&response)["id"], Value::Null, "{:?}", body(&response));
    }

    // LC-1, HTTP-16..19: the handshake mints a session that later
    // requests name; DELETE ends it.
    #[test]
    fn session_lifecycle() {
        let shared = shared(HttpConfig::default());
        let response = whole(decide(&shared, &http("POST", &[], initialize())));
        assert_eq!(response.status, 200);
        let id = response
            .headers
            .iter()
            .find(|(n, _)| *n == headers::MCP_SESSION_ID)
            .map(|(_, v)| v.clone())
            .expect("an Mcp-Session-Id");
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let listed = whole(decide(
            &shared,
            &http("POST", &[("mcp-session-id", &id)], list.clone()),
        ));
        assert_eq!(body(&listed)["result"]["tools"][0]["name"], "echo");
        // HTTP-14: an SSE-only client's one-event answer carries no id.
        let sse_only = [
            ("mcp-session-id", id.as_str()),
            ("accept", "text/event-stream"),
        ];
        match decide(&shared, &http("POST", &sse_only, list.clone())) {
            Answer::Stream(stream) => assert!(matches!(
                stream.framing,
                Framing::Plain {
                    json_if_first: false
                }
            )),
            Answer::Whole(r) => panic!("expected one SSE event, got {}", r.status),
        }
        let missing = whole(decide(&shared, &http("POST", &[], list)));
        assert_eq!(missing.status, 400);
        let get = whole(decide(&shared, &http("GET", &[], Value::Null)));
        assert_eq!(get.status, 400);
        let delete = http("DELETE", &[("mcp-session-id", &id)], Value::Null);
        assert_eq!(whole(decide(&shared, &delete)).status, 200);
        assert_eq!(whole(decide(&shared, &delete)).status, 404);
    }

    // MHTTP-3, HTTP-6, HTTP-7: a checked 2026-07-28 call becomes a stream
    // that answers JSON when its first message is the response.
    #[test]
    fn call_2026_is_decided_then_streamed() {
        let shared = shared(HttpConfig::default());
        let stream = match decide(&shared, &http("POST", &HEADERS_2026, call_2026("echo"))) {
            Answer::Stream(stream) => stream,
            Answer::Whole(r) => panic!("expected a stream, got {}", r.status),
        };
        assert!(matches!(
            stream.framing,
            Framing::Plain {
                json_if_first: true
            }
        ));
        assert!(matches!(stream.on_close, OnClose::Cancel(..)));
        match stream.receiver.recv_timeout(Duration::from_secs(5)) {
            Ok(Outgoing::Event { json, .. }) => {
                let message: Value = serde_json::from_str(&json).unwrap();
                assert_eq!(message["result"]["content"][0]["text"], "hi");
                assert_eq!(message["result"]["resultType"], "complete");
            }
            _ => panic!("no response from the handler"),
        }
    }

    // HTTP-6 (-32020), HTTP-7 (-32601 is 404).
    #[test]
    fn refusals_2026() {
        let shared = shared(HttpConfig::default());
        let wrong_name = [HEADERS_2026[0], HEADERS_2026[1], ("mcp-name", "other")];
        let response = whole(decide(
            &shared,
            &http("POST", &wrong_name, call_2026("echo")),
        ));
        assert_eq!(response.status, 400);
        assert_eq!(body(&response)["error"]["code"], -32020);
        // HTTP-6: a repeated routing header (step 7) wins over a missing
        // envelope (step 8).
        let mut bare = call_2026("echo");
        bare["params"]["_meta"] = Value::Null;
        let mut twice = http("POST", &HEADERS_2026, bare);
        twice.headers.push("mcp-method", "tools/call");
        let response = whole(decide(&shared, &twice));
        assert_eq!(body(&response)["error"]["code"], -32020);
        let mut unknown = call_2026("echo");
        unknown["method"] = json!("tools/unknown");
        let headers = [HEADERS_2026[0], ("mcp-method", "tools/unknown")];
        let response = whole(decide(&shared, &http("POST", &headers, unknown)));
        assert_eq!(response.status, 404);
        assert_eq!(body(&response)["error"]["code"], -32601);
    }
}
