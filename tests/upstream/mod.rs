//! The `Upstream` seam (DESIGN.md §24): a server whose sessions a program
//! forwards, served by the real HTTP transport on 127.0.0.1 and driven by
//! the crate's `Client`.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CancelToken, Client, ClientBuilder, ElicitRequestParams, ElicitResult, Era, Error,
    ErrorKind, ErrorObject, HttpServer, InitializeRequestParams, InitializeResult, RequestContext,
    Server, SessionHandle, Upstream,
};

use crate::support::WAIT;

/// What the test upstream saw, in order.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Opened(String),
    Started(String),
    Notified(String),
    Closed(u64),
}

/// An upstream that answers from the test itself.
struct Fake {
    seen: Sender<Seen>,
    /// The sessions opened, for the test to reach them.
    sessions: Arc<Mutex<Vec<SessionHandle>>>,
}

impl Upstream for Fake {
    fn open(
        &self,
        session: &SessionHandle,
        params: &InitializeRequestParams,
    ) -> Result<InitializeResult, Error> {
        if params.client_info.name == "refused" {
            return Err(Error::rpc(ErrorObject::new(
                tiny_mcp::ErrorCode(-32001),
                "no upstream for you",
            )));
        }
        self.sessions.lock().push(session.clone());
        let _ = self
            .seen
            .send(Seen::Opened(params.client_info.name.clone()));
        Ok(serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-upstream", "version": "9"},
            "instructions": "forwarded",
        }))?)
    }

    fn forward(
        &self,
        _: &SessionHandle,
        ctx: &RequestContext,
        params: Option<Value>,
    ) -> Result<Value, Error> {
        let params = params.unwrap_or(Value::Null);
        let name = params["name"].as_str().unwrap_or("");
        match (ctx.method(), name) {
            // 2026-07-28: the upstream says what it serves.
            ("server/discover", _) => Ok(json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            })),
            ("tools/list", _) => {
                Ok(json!({"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}))
            }
            ("tools/call", "ask") if ctx.era() == Era::V2026_07_28 => {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let form = tiny_mcp::ElicitRequestFormParams::new("name?", schema);
                let request = tiny_mcp::InputRequest::elicit(form);
                let answers = ctx.request_inputs(vec![("name".into(), request)])?;
                let name = answers.elicit_result("name")?.content.unwrap_or_default();
                Ok(json!({"content": [{"type": "text", "text": name["name"]}]}))
            }
            ("tools/call", "ask") => {
                let request = json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
                let answer = ctx.send_request("elicitation/create", Some(request), WAIT)?;
                Ok(json!({"content": [{"type": "text", "text": answer["content"]["name"]}]}))
            }
            ("tools/call", "progress") => {
                ctx.notify_progress(1.0, Some(2.0), Some("half"));
                ctx.notify_progress(2.0, Some(2.0), None);
                Ok(json!({"content": []}))
            }
            ("tools/call", "wait") => {
                let _ = self.seen.send(Seen::Started("wait".into()));
                // Runs until the client cancels it (bounded for a failure).
                let deadline = std::time::Instant::now() + WAIT;
                while !ctx.is_cancelled() && std::time::Instant::now() < deadline {
                    std::thread::yield_now();
                }
                Ok(json!({"content": []}))
            }
            ("tools/call", "fail") => Err(Error::rpc(ErrorObject::new(
                tiny_mcp::ErrorCode(-32050),
                "upstream says no",
            ))),
            (method, _) => Ok(json!({ "method": method })),
        }
    }

    fn notify(&self, _: &SessionHandle, method: &str, _: Option<Value>) {
        let _ = self.seen.send(Seen::Notified(method.to_string()));
    }

    fn close(&self, session: &SessionHandle) {
        let _ = self.seen.send(Seen::Closed(session.key()));
    }
}

struct Proxy {
    http: HttpServer,
    url: String,
    seen: Receiver<Seen>,
    sessions: Arc<Mutex<Vec<SessionHandle>>>,
}

fn proxy(idle: Duration) -> Proxy {
    let (seen, receiver) = crossbeam_channel::unbounded();
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake {
        seen,
        sessions: Arc::clone(&sessions),
    };
    let server = Server::builder("proxy", "1").upstream(fake).build();
    let http = server
        .http()
        .session_idle_timeout(idle)
        .serve("127.0.0.1:0")
        .expect("serve");
    let url = format!("http://{}/mcp", http.local_addr());
    Proxy {
        http,
        url,
        seen: receiver,
        sessions,
    }
}

fn client(name: &str) -> ClientBuilder {
    Client::builder(name, "1.0.0")
        .era(Era::V2025_11_25)
        .request_timeout(WAIT)
        .on_elicitation(|request| match request {
            ElicitRequestParams::Form(_) => {
                let mut values = tiny_mcp::JsonObject::new();
                values.insert("name".into(), json!("Ada"));
                Ok(ElicitResult::accept(Some(values)))
            }
            _ => Ok(ElicitResult::decline()),
        })
}

/// The next thing the upstream saw that `keep` keeps.
fn next_seen(proxy: &Proxy, keep: impl Fn(&Seen) -> bool) -> Seen {
    loop {
        match proxy.seen.recv_timeout(WAIT) {
            Ok(seen) if keep(&seen) => return seen,
            Ok(_) => continue,
            Err(_) => panic!("the upstream saw nothing more"),
        }
    }
}

// LC-2 (basic/lifecycle): initialize is the upstream's: its result, with
// the client's own clientInfo; every request is forwarded, unknown ones too.
#[test]
fn initialize_and_requests_are_forwarded() {
    let proxy = proxy(Duration::from_secs(60));
    let client = client("forwarded-client")
        .connect_http(&proxy.url)
        .expect("connect");
    assert_eq!(
        next_seen(&proxy, |_| true),
        Seen::Opened("forwarded-client".into())
    );
    assert_eq!(
        client.server_info().map(|i| i.name.as_str()),
        Some("fake-upstream")
    );
    assert_eq!(client.instructions(), Some("forwarded"));
    let tools = client.list_tools().expect("tools/list");
    assert_eq!(tools[0].name, "ask");
    let custom = client.request("custom/thing", json!({})).expect("custom");
    assert_eq!(custom, json!({"method": "custom/thing"}));
    client.ping().expect("ping is answered here");
    let error = client
        .call_tool("fail", json!({}))
        .expect_err("the upstream's error");
    match error.kind() {
        ErrorKind::Peer(object) => {
            assert_eq!(object.code.0, -32050);
            assert_eq!(object.message, "upstream says no");
        }
        other => panic!("expected the upstream's error, got {:?}", other),
    }
    drop(proxy.http);
}

// LC-1: an upstream that refuses the session refuses initialize, with its error.
#[test]
fn a_refused_open_refuses_initialize() {
    let proxy = proxy(Duration::from_secs(60));
    let error = client("refused")
        .connect_http(&proxy.url)
        .expect_err("refused");
    assert!(
        error.to_string().contains("no upstream for you"),
        "{}",
        error
    );
}

// client/elicitation, basic/utilities/progress: a forwarded call reaches its
// client through its context, on its own stream.
#[test]
fn elicitation_and_progress_go_through_the_context() {
    let proxy = proxy(Duration::from_secs(60));
    let client = client("asker").connect_http(&proxy.url).expect("connect");
    let answer = client.call_tool("ask", json!({})).expect("ask");
    let text = serde_json::to_value(&answer.content[0]).expect("content");
    assert_eq!(text["text"], json!("Ada"));
    let (sender, progress) = crossbeam_channel::unbounded();
    let sender = Mutex::new(sender);
    let options = CallOptions::new().on_progress(move |p| {
        let _ = sender.lock().send(p.progress);
    });
    let params = json!({"name": "progress", "arguments": {}});
    client
        .request_with("tools/call", params, &options)
        .expect("progress call");
    let seen: Vec<f64> = progress.try_iter().collect();
    assert_eq!(seen, vec![1.0, 2.0]);
}

// basic/utilities/cancellation: the cancel sets the call's flag and reaches
// the upstream as a notification; no response follows.
#[test]
fn cancellation_reaches_the_upstream() {
    let proxy = proxy(Duration::from_secs(60));
    let client = client("canceller")
        .connect_http(&proxy.url)
        .expect("connect");
    let token = CancelToken::new();
    let canceller = token.clone();
    let seen = proxy.seen.clone();
    let cancel = std::thread::spawn(move || {
        // Cancels once the upstream has the call, then waits for the cancel.
        let wanted = |want: &dyn Fn(&Seen) -> bool| loop {
            match seen.recv_timeout(WAIT) {
                Ok(s) if want(&s) => return Some(s),
                Ok(_) => continue,
                Err(_) => return None,
            }
        };
        wanted(&|s| matches!(s, Seen::Started(_)));
        canceller.cancel();
        wanted(&|s| matches!(s, Seen::Notified(m) if m == "notifications/cancelled"))
    });
    let options = CallOptions::new().cancel_token(token);
    let outcome = client.request_with("tools/call", json!({"name": "wait"}), &options);
    assert!(outcome.expect_err("cancelled").is_cancelled());
    let seen = cancel.join().expect("the cancelling thread");
    assert_eq!(
        seen,
        Some(Seen::Notified("notifications/cancelled".into())),
        "the upstream was not told of the cancel"
    );
}

// basic/transports "Session Management": DELETE ends the session and the
// upstream is told once; a session the program ends gets 404, and the
// client starts a new one (opened again).
#[test]
fn session_end_closes_the_upstream_and_ended_sessions_are_404() {
    let proxy = proxy(Duration::from_secs(60));
    let client = client("ender").connect_http(&proxy.url).expect("connect");
    next_seen(&proxy, |s| matches!(s, Seen::Opened(_)));
    let first = proxy.sessions.lock()[0].clone();
    assert!(first.id().is_some());
    first.end();
    client.list_tools().expect("a new session serves it");
    assert_eq!(
        next_seen(&proxy, |s| !matches!(s, Seen::Notified(_))),
        Seen::Closed(first.key())
    );
    next_seen(&proxy, |s| matches!(s, Seen::Opened(_)));
    let second = proxy.sessions.lock()[1].clone();
    client.close();
    assert_eq!(
        next_seen(&proxy, |s| matches!(s, Seen::Closed(_))),
        Seen::Closed(second.key())
    );
}

// HTTP-18: an idle session expires; the sweep ends it and tells the upstream.
#[test]
fn idle_sessions_are_swept() {
    // Long enough that the client's `notifications/initialized` finds the
    // session alive (a request to an expired session ends it itself, and
    // the sweep would find nothing), short enough to poll for.
    let proxy = proxy(Duration::from_millis(300));
    // No handlers, so no GET stream: an open stream keeps a session alive.
    let client = Client::builder("idler", "1")
        .era(Era::V2025_11_25)
        .connect_http(&proxy.url)
        .expect("connect");
    next_seen(&proxy, |s| matches!(s, Seen::Opened(_)));
    let key = proxy.sessions.lock()[0].key();
    // Idle for 300 ms: swept once it is (bounded by WAIT).
    let deadline = std::time::Instant::now() + WAIT;
    let mut ended = 0;
    while ended == 0 && std::time::Instant::now() < deadline {
        ended = proxy.http.end_idle_sessions();
        std::thread::yield_now();
    }
    assert_eq!(ended, 1, "the idle session was not swept");
    assert_eq!(
        next_seen(&proxy, |s| matches!(s, Seen::Closed(_))),
        Seen::Closed(key)
    );
    drop(client);
}

// basic/lifecycle: the seam is the dispatcher's, not HTTP's: a connection
// (here in memory, as on stdio) is opened, forwarded and closed alike.
#[test]
fn a_connection_is_forwarded_too() {
    let (seen, receiver) = crossbeam_channel::unbounded();
    let fake = Fake {
        seen,
        sessions: Arc::new(Mutex::new(Vec::new())),
    };
    let server = Server::builder("proxy", "1").upstream(fake).build();
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    let result = client.initialize(json!({})).expect("initialize");
    assert_eq!(result["serverInfo"]["name"], json!("fake-upstream"));
    let custom = client.request("custom/thing", Some(json!({})));
    assert_eq!(custom.expect("custom"), json!({"method": "custom/thing"}));
    drop(client);
    let closed = loop {
        match receiver.recv_timeout(WAIT) {
            Ok(Seen::Closed(_)) => break true,
            Ok(_) => continue,
            Err(_) => break false,
        }
    };
    assert!(closed, "the upstream was not closed");
}

// SEP-2322 (2026-07-28): a request of the new era is forwarded with its
// context, and the upstream's input request is an input_required round.
#[test]
fn a_2026_request_is_forwarded_with_input_rounds() {
    let proxy = proxy(Duration::from_secs(60));
    let client = client("new-era")
        .era(Era::V2026_07_28)
        .connect_http(&proxy.url)
        .expect("connect");
    let answer = client.call_tool("ask", json!({})).expect("ask");
    let text = serde_json::to_value(&answer.content[0]).expect("content");
    assert_eq!(text["text"], json!("Ada"));
    let custom = client.request("custom/thing", json!({})).expect("custom");
    assert_eq!(custom["method"], json!("custom/thing"));
}
