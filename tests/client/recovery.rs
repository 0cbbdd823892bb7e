//! A 2025-11-25 session the server forgot is replaced by default
//! (basic/transports "Session Management", 2025-11-25: "The client MUST
//! start a new session by sending a new InitializeRequest"), against the
//! crate's own server on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver};
use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CallToolResult, Client, Era, ErrorKind, HttpServer, JsonObject, LoggingLevel,
    Notification, ReadResourceResult, RequestContext, Resource, Server, ServerHandle, Tool,
};

use super::delete_session;
use crate::support::WAIT;

const URI: &str = "mem://watched";

/// A server with a counting `echo`, a `log` tool (info, then error) and
/// one resource; its handle, its HTTP server and the calls so far.
struct Fixture {
    handle: ServerHandle,
    http: HttpServer,
    calls: Arc<AtomicUsize>,
}

impl Fixture {
    fn start() -> Fixture {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let server = Server::builder("recovery", "1.0.0")
            .tool(
                Tool::new("echo", json!({"type": "object"})),
                move |_: &RequestContext, args: JsonObject| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                    Ok(CallToolResult::text(text))
                },
            )
            .tool(
                Tool::new("log", json!({"type": "object"})),
                |ctx: &RequestContext, _: JsonObject| {
                    ctx.log(LoggingLevel::Info, "info line");
                    ctx.log(LoggingLevel::Error, "error line");
                    Ok(CallToolResult::text("logged"))
                },
            )
            .resource(
                Resource::new(URI, "watched"),
                |_: &RequestContext, uri: &str| Ok(ReadResourceResult::text(uri, "now")),
            )
            .build();
        let http = server
            .http()
            .endpoint("/mcp")
            .serve("127.0.0.1:0")
            .expect("serve on 127.0.0.1");
        Fixture {
            handle: server.handle(),
            http,
            calls,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.http.local_addr()
    }

    /// A 2025-11-25 client whose notifications arrive on the receiver.
    fn client(&self) -> (Client, Receiver<Notification>) {
        let (tx, rx) = unbounded();
        let client = Client::builder("recovery-test", "1.0.0")
            .era(Era::V2025_11_25)
            .request_timeout(Duration::from_secs(20))
            .on_notification(move |n| {
                let _ = tx.send(n.clone());
            })
            .connect_http(&format!("http://{}/mcp", self.addr()))
            .expect("connect");
        (client, rx)
    }
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Waits for the first notification named `method`.
fn wait_for(rx: &Receiver<Notification>, method: &str) -> Notification {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(n) if n.method == method => return n,
            Ok(_) => continue,
            Err(_) => panic!("{} never arrived (waited {:?})", method, WAIT),
        }
    }
}

// basic/transports "Session Management" (2025-11-25): a 404 on the session
// starts a new one, by default; the call goes through, the subscription
// is made again on the new session, and the GET stream reopens there (the
// update reaches the client on it).
#[test]
fn a_forgotten_session_is_replaced_with_its_subscriptions_and_stream() {
    let fixture = Fixture::start();
    let (client, rx) = fixture.client();
    client.subscribe(URI).expect("subscribe");
    let old = client.session_id().expect("a session");
    delete_session(fixture.addr(), &old);
    let answer = client
        .call_tool("echo", json!({"text": "again"}))
        .expect("the call goes through on a new session");
    assert_eq!(text(&answer), "again");
    let new = client.session_id().expect("a new session");
    assert_ne!(old, new);
    // The GET stream reopens on its own thread, after the new session; an
    // update sent before it is open reaches nobody, so the update is sent
    // again until one arrives.
    let deadline = std::time::Instant::now() + WAIT;
    let update = loop {
        fixture.handle.notify_resource_updated(URI);
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(n) if n.method == "notifications/resources/updated" => break n,
            _ if std::time::Instant::now() < deadline => continue,
            _ => panic!("no resources/updated on the new session's GET stream"),
        }
    };
    assert_eq!(update.params.as_ref().unwrap()["uri"], URI);
}

// The log level set with logging/setLevel (server/utilities/logging) holds
// on the new session too: an info line stays filtered after the renewal.
#[test]
fn the_log_level_carries_over_to_the_new_session() {
    let fixture = Fixture::start();
    let (client, rx) = fixture.client();
    client
        .set_logging_level(LoggingLevel::Error)
        .expect("setLevel");
    delete_session(fixture.addr(), &client.session_id().unwrap());
    client.call_tool("log", json!({})).expect("the call");
    let first = wait_for(&rx, "notifications/message");
    assert_eq!(
        first.params.as_ref().unwrap()["level"],
        "error",
        "{:?}",
        first
    );
}

// A tools/call whose program opted out of the retry fails with
// SessionExpired and does not run; the client still starts the new
// session, so the next call works.
#[test]
fn an_opted_out_call_is_not_sent_again_but_the_session_is_renewed() {
    let fixture = Fixture::start();
    let (client, _rx) = fixture.client();
    let old = client.session_id().unwrap();
    delete_session(fixture.addr(), &old);
    let once = CallOptions::new().retry_on_new_session(false);
    let err = client
        .call_tool_with("echo", json!({"text": "x"}), &once)
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::SessionExpired), "{:?}", err);
    assert_eq!(fixture.calls.load(Ordering::SeqCst), 0);
    assert_ne!(client.session_id().as_deref(), Some(old.as_str()));
    let answer = client.call_tool("echo", json!({"text": "y"})).unwrap();
    assert_eq!(text(&answer), "y");
    assert_eq!(fixture.calls.load(Ordering::SeqCst), 1);
}

// ClientBuilder::reinitialize_on_expiry(false) keeps the old behaviour:
// SessionExpired, and no new session.
#[test]
fn renewal_can_be_turned_off() {
    let fixture = Fixture::start();
    let client = Client::builder("recovery-test", "1.0.0")
        .era(Era::V2025_11_25)
        .reinitialize_on_expiry(false)
        .connect_http(&format!("http://{}/mcp", fixture.addr()))
        .unwrap();
    delete_session(fixture.addr(), &client.session_id().unwrap());
    for _ in 0..2 {
        let err = client.call_tool("echo", json!({})).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::SessionExpired), "{:?}", err);
    }
}

// Some servers answer an id they do not know with 400 instead of the 404
// of basic/transports "Session Management" (the TypeScript
// server-everything after a restart: "Bad Request: No valid session ID
// provided"); a 400 that speaks of the session is its end too. A 400 that
// says something else stays the server's error.
#[test]
fn a_400_about_the_session_is_its_end_too() {
    use super::fake::{self, Fake, Reply};
    let inits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&inits);
    let server = Fake::start(move |request| {
        if request.method == "GET" {
            return Reply::Keep(fake::answer(405, "text/plain", "", ""));
        }
        let session = request.header("mcp-session-id").unwrap_or("").to_string();
        match request.rpc().as_str() {
            "initialize" => {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                fake::initialized(request, &format!("s-{}", n))
            }
            m if m.starts_with("notifications/") => Reply::Keep(fake::accepted()),
            "ping" => Reply::Keep(fake::answer(
                400,
                "application/json",
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: malformed"},"id":null}"#,
                "",
            )),
            _ if session == "s-1" => Reply::Keep(fake::answer(
                400,
                "application/json",
                r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
                "",
            )),
            _ => Reply::Keep(fake::json(&fake::text_result(request, "renewed"), "")),
        }
    });
    let client = Client::builder("recovery-test", "1.0.0")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .expect("connect");
    let answer = client.call_tool("echo", json!({})).expect("a new session");
    assert_eq!(text(&answer), "renewed");
    assert_eq!(inits.load(Ordering::SeqCst), 2);
    assert_eq!(client.session_id().as_deref(), Some("s-2"));
    let err = client.ping().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Peer(_)), "{:?}", err);
    assert_eq!(inits.load(Ordering::SeqCst), 2);
}

// basic/transports "Session Management": when the new initialize fails
// (the server is still starting: 503), the call fails with that, and the
// next call starts the session again instead of going out without one.
#[test]
fn a_failed_renewal_is_tried_again_by_the_next_call() {
    use super::fake::{self, Fake, Reply};
    let inits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&inits);
    let server = Fake::start(move |request| {
        if request.method == "GET" {
            return Reply::Keep(fake::answer(405, "text/plain", "", ""));
        }
        let session = request.header("mcp-session-id").unwrap_or("").to_string();
        match request.rpc().as_str() {
            "initialize" => {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                if n == 2 {
                    return Reply::Keep(fake::answer(503, "text/plain", "starting", ""));
                }
                fake::initialized(request, &format!("s-{}", n))
            }
            m if m.starts_with("notifications/") => Reply::Keep(fake::accepted()),
            _ if session == "s-3" => {
                Reply::Keep(fake::json(&fake::text_result(request, "back"), ""))
            }
            _ if session.is_empty() => Reply::Keep(fake::answer(400, "text/plain", "no id", "")),
            _ => Reply::Keep(fake::answer(404, "text/plain", "gone", "")),
        }
    });
    let client = Client::builder("recovery-test", "1.0.0")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .connect_http(&server.url("/mcp"))
        .expect("connect");
    let err = client.call_tool("echo", json!({})).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Http { status: 503, .. }),
        "{:?}",
        err
    );
    let answer = client
        .call_tool("echo", json!({}))
        .expect("the session is back");
    assert_eq!(text(&answer), "back");
    assert_eq!(inits.load(Ordering::SeqCst), 3);
}
