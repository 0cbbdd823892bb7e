//! The MCP endpoint mounted in a program's own tiny_http server (feature
//! `tiny_http`, issue 13): a real `tiny_http::Server` on 127.0.0.1:0
//! serving its own page at `/` and [`TinyHttpMount`] at `/mcp`, spoken
//! to with raw HTTP/1.1.
//!
//! Spec: basic/transports "Streamable HTTP" (2025-11-25, HTTP-*, and
//! 2026-07-28, cited "(2026-07-28)").

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, HttpServerBuilder, JsonObject, RequestContext, Server, TinyHttpMount, Tool,
};

use crate::support::example_path;
use crate::support::http::{
    initialize_body, is_method, is_response, notification, open_session, open_session_on, rpc,
    send, Conn, Req, LATEST, WAIT,
};

const V2026: &str = "2026-07-28";
const PAGE: &str = "<!doctype html><title>the program's page</title>";

/// A tiny_http program: its page at `/`, 404 for other paths, and the
/// mount for what it matches, each MCP request on a thread of its own.
struct Site {
    addr: SocketAddr,
    web: Arc<::tiny_http::Server>,
    mount: Arc<TinyHttpMount>,
    serving: Option<JoinHandle<()>>,
}

impl Site {
    fn start(server: &Server, settings: fn(HttpServerBuilder) -> HttpServerBuilder) -> Site {
        let web = match ::tiny_http::Server::http("127.0.0.1:0") {
            Ok(web) => Arc::new(web),
            Err(e) => panic!("cannot start tiny_http on 127.0.0.1:0: {}", e),
        };
        let addr = match web.server_addr().to_ip() {
            Some(addr) => addr,
            None => panic!("tiny_http is not on an IP address"),
        };
        let mount = match settings(server.http().endpoint("/mcp")).mount(&web) {
            Ok(mount) => Arc::new(mount),
            Err(e) => panic!("cannot mount the endpoint: {}", e),
        };
        let (loop_web, loop_mount) = (Arc::clone(&web), Arc::clone(&mount));
        let serving = thread::spawn(move || {
            for request in loop_web.incoming_requests() {
                if loop_mount.matches(&request) {
                    let mount = Arc::clone(&loop_mount);
                    thread::spawn(move || mount.handle(request));
                } else if request.url() == "/" {
                    let page = ::tiny_http::Response::from_string(PAGE);
                    let _ = request.respond(page);
                } else {
                    let missing = ::tiny_http::Response::from_string("not the program's");
                    let _ = request.respond(missing.with_status_code(404));
                }
            }
        });
        Site {
            addr,
            web,
            mount,
            serving: Some(serving),
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.mount.shutdown();
        self.web.unblock();
        if let Some(serving) = self.serving.take() {
            let _ = serving.join();
        }
    }
}

/// `echo` returns `{"message"}`; `steps` reports progress 1 of 2, waits
/// until the test sends on `release` (at most [`WAIT`]), then returns
/// "done".
fn server(release: Receiver<()>) -> Server {
    let echo_schema = json!({"type": "object",
        "properties": {"message": {"type": "string"}}, "required": ["message"]});
    Server::builder("tiny-http-tests", "1.0.0")
        .tool(
            Tool::new("echo", echo_schema),
            |_: &RequestContext, args: JsonObject| {
                let message = args.get("message").and_then(Value::as_str);
                Ok(CallToolResult::text(message.unwrap_or_default()))
            },
        )
        .tool(
            Tool::new("steps", json!({"type": "object"})),
            move |ctx: &RequestContext, _: JsonObject| {
                ctx.notify_progress(1.0, Some(2.0), Some("first"));
                match release.recv_timeout(WAIT) {
                    Ok(()) => Ok(CallToolResult::text("done")),
                    Err(_) => Ok(CallToolResult::error("the test never released the tool")),
                }
            },
        )
        .build()
}

fn echo_body(id: Value, message: &str) -> String {
    let params = json!({"name": "echo", "arguments": {"message": message}});
    rpc(id, "tools/call", params)
}

fn steps_body(id: Value, meta: Value) -> String {
    rpc(
        id,
        "tools/call",
        json!({"name": "steps", "arguments": {}, "_meta": meta}),
    )
}

/// The text of the first content block of a `tools/call` response.
fn text_of(response: &Value) -> &str {
    match response["result"]["content"][0]["text"].as_str() {
        Some(text) => text,
        None => panic!("no text result in {}", response),
    }
}

/// A 2026-07-28 `_meta` envelope (META-1 (2026-07-28)), with `extra`.
fn envelope(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tiny-http-tests", "version": "0"}
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// A 2026-07-28 `tools/call` POST with its routing headers (HTTP-2
/// (2026-07-28)).
fn call_2026(body: String, tool: &str) -> Req {
    Req::post(body)
        .header("MCP-Protocol-Version", V2026)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
}

// HTTP-2, HTTP-4, HTTP-5, HTTP-16 to HTTP-19: on the mount, initialize is
// answered with JSON and a session id, a tools/call as an SSE stream (a
// priming event, then the response) or as JSON for a client that takes
// only JSON, on one kept-alive connection; DELETE ends the session, whose
// id then gets 404.
#[test]
fn mounted_endpoint_answers_json_and_sse() {
    let (_release, waiting) = crossbeam_channel::bounded(1);
    let site = Site::start(&server(waiting), |http| http);
    let mut conn = Conn::open(site.addr);
    let session = open_session_on(&mut conn, LATEST, json!({}));
    let call = Req::post(echo_body(json!(2), "over sse")).session(&session);
    let streamed = conn.request(&call, "the SSE tools/call");
    streamed.expect_status(200, "tools/call");
    assert!(streamed.head.is_sse(), "{:?}", streamed.head);
    let events = streamed.events();
    assert!(events[0].is_priming(), "HTTP-5: {:?}", events);
    assert_eq!(text_of(&streamed.rpc()), "over sse");
    let whole = conn.request(
        &Req::post(echo_body(json!(3), "as json"))
            .header("Accept", "application/json")
            .session(&session),
        "the JSON tools/call",
    );
    whole.expect_status(200, "JSON tools/call");
    assert_eq!(whole.header("content-type"), Some("application/json"));
    assert_eq!(text_of(&whole.json()), "as json");
    let ended = conn.request(&Req::delete(&session), "the DELETE");
    ended.expect_status(200, "DELETE");
    let gone = conn.request(&call, "a POST on the ended session");
    gone.expect_status(404, "HTTP-18: an ended session");
}

// HTTP-1, SEC-1: the program's own answers are its own (its page at `/`,
// its 404 elsewhere), the endpoint matches with a query string too, and
// DNS-rebinding protection holds on the mount (a foreign Host gets 403).
#[test]
fn the_programs_pages_are_untouched() {
    let (_release, waiting) = crossbeam_channel::bounded(1);
    let site = Site::start(&server(waiting), |http| http);
    let page = send(site.addr, &Req::to("GET", "/"), "the program's page");
    page.expect_status(200, "GET /");
    assert_eq!(page.text(), PAGE);
    let other = send(site.addr, &Req::to("GET", "/mcp2"), "another path");
    other.expect_status(404, "GET /mcp2");
    assert_eq!(other.text(), "not the program's");
    let init = Req::post(initialize_body(json!(1), LATEST, json!({}))).at("/mcp?from=test");
    let answered = send(site.addr, &init, "initialize with a query string");
    answered.expect_status(200, "initialize at /mcp?from=test");
    assert!(answered.header("mcp-session-id").is_some());
    let rebound = send(
        site.addr,
        &init.clone().header("Host", "evil.example"),
        "initialize for a foreign Host",
    );
    rebound.expect_status(403, "SEC-1: a foreign Host");
}

// HTTP-4, HTTP-7 (and docs/STYLE.md §4, "SSE must actually stream"): each
// event of an SSE answer reaches the client when it is produced. The tool
// sends its progress, then waits until the test has read that event, so
// an adapter that buffered the stream would never show it.
#[test]
fn sse_events_arrive_one_by_one() {
    let (release, waiting) = crossbeam_channel::bounded(1);
    let site = Site::start(&server(waiting), |http| http);
    let session = open_session(site.addr, LATEST, json!({}));
    let mut conn = Conn::open(site.addr);
    let call = Req::post(steps_body(json!(7), json!({"progressToken": "p"}))).session(&session);
    let head = conn.start(&call, "the head of the steps stream");
    head.expect_status(200, "tools/call steps");
    assert!(head.is_sse(), "{:?}", head);
    let progress = conn.next_message("the progress event, before the tool goes on");
    assert!(
        is_method(&progress, "notifications/progress"),
        "{}",
        progress
    );
    assert_eq!(progress["params"]["progress"], 1);
    release_tool(&release);
    let response = conn.next_message("the response, after the release");
    assert_eq!(text_of(&response), "done");
    assert!(conn.rest("the end of the stream").is_empty());
}

fn release_tool(release: &Sender<()>) {
    if release.send_timeout((), WAIT).is_err() {
        panic!("the tool was not waiting to be released");
    }
}

// HTTP-1, HTTP-2, HTTP-8 (2026-07-28), MHTTP-3, MHTTP-4: a 2026-07-28
// POST on the mount is answered without a session: JSON when the response
// comes first, an SSE stream of events without ids when a notification
// comes before it.
#[test]
fn requests_2026_work_on_the_mount() {
    let (release, waiting) = crossbeam_channel::bounded(1);
    let site = Site::start(&server(waiting), |http| http);
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "modern"}, "_meta": envelope(json!({}))}),
    );
    let answered = send(site.addr, &call_2026(body, "echo"), "a 2026-07-28 call");
    answered.expect_status(200, "2026-07-28 tools/call");
    assert_eq!(answered.header("content-type"), Some("application/json"));
    assert!(answered.header("mcp-session-id").is_none(), "no session");
    let message = answered.json();
    assert_eq!(text_of(&message), "modern");
    assert_eq!(message["result"]["resultType"], "complete", "{}", message);
    let mut conn = Conn::open(site.addr);
    let steps = steps_body(json!(2), envelope(json!({"progressToken": 9})));
    let head = conn.start(&call_2026(steps, "steps"), "the 2026-07-28 stream head");
    assert!(head.is_sse(), "MHTTP-4: {:?}", head);
    let event = match conn.next_event("the progress event (2026-07-28)") {
        Some(event) => event,
        None => panic!("the 2026-07-28 stream ended at once"),
    };
    assert_eq!(event.id, None, "MHTTP-6: no event ids");
    let progress = event.message().unwrap_or(Value::Null);
    assert!(
        is_method(&progress, "notifications/progress"),
        "{:?}",
        event
    );
    release_tool(&release);
    let response = conn.next_message("the 2026-07-28 response");
    assert!(is_response(&response), "{}", response);
    assert_eq!(text_of(&response), "done");
}

// HTTP-8, HTTP-10, HTTP-18: shutting the mount down ends a session's open
// GET stream (the program's `handle` returns), and later requests get 503,
// while the program's own pages are still served.
#[test]
fn shutdown_ends_streams_and_refuses_requests() {
    stopping_ends_streams(|site, _| {
        let mount = Arc::clone(&site.mount);
        thread::spawn(move || mount.shutdown().is_ok())
    });
}

// HTTP-8, HTTP-18 (DESIGN.md §19): `Server::close` stops the mount as it
// stops the crate's own HTTP server.
#[test]
fn server_close_stops_the_mount() {
    stopping_ends_streams(|_, server| {
        server.close();
        thread::spawn(|| true)
    });
}

/// Opens a GET stream, stops the mount with `stop` (which returns a thread
/// that says whether stopping succeeded), and checks what stopping does.
fn stopping_ends_streams(stop: fn(&Site, &Server) -> JoinHandle<bool>) {
    let (_release, waiting) = crossbeam_channel::bounded(1);
    let server = server(waiting);
    let site = Site::start(&server, |http| http);
    let session = open_session(site.addr, LATEST, json!({}));
    let mut conn = Conn::open(site.addr);
    let head = conn.start(&Req::get(&session), "the GET stream head");
    head.expect_status(200, "GET stream");
    assert!(conn.next_event("the GET stream's priming event").is_some());
    let stopped = stop(&site, &server);
    assert!(conn.rest("the end of the GET stream").is_empty());
    assert!(!conn.was_cut(), "the GET stream ended with its last chunk");
    assert!(matches!(stopped.join(), Ok(true)), "stopping failed");
    let late = Req::post(notification("notifications/initialized", json!({}))).session(&session);
    send(site.addr, &late, "a POST after stopping").expect_status(503, "after stopping");
    let page = send(site.addr, &Req::to("GET", "/"), "the page after stopping");
    page.expect_status(200, "the program's page after stopping");
}

/// The example as a child process, killed when dropped.
struct Example {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `examples/tiny_http_mount.rs` on 127.0.0.1:0 and reads the
/// address it prints.
fn start_example() -> Example {
    let path = example_path("tiny_http_mount");
    assert!(
        path.exists(),
        "{} not found: build it with `cargo build --features tiny_http --example tiny_http_mount`",
        path.display()
    );
    let mut child = Command::new(&path)
        .arg("127.0.0.1:0")
        // An abort ends the process at once, without a backtrace to print.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {}", path.display(), e));
    let stderr = child.stderr.take().expect("stderr was piped");
    let (found, addr) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let addr = line
                .strip_prefix("serving http://")
                .and_then(|rest| rest.split('/').next())
                .and_then(|addr| addr.parse::<SocketAddr>().ok());
            if let Some(addr) = addr {
                let _ = found.send(addr);
            }
        }
    });
    let mut example = Example {
        child,
        addr: ([127, 0, 0, 1], 0).into(),
    };
    example.addr = match addr.recv_timeout(WAIT) {
        Ok(addr) => addr,
        Err(_) => panic!("the example never printed `serving http://<addr>/`"),
    };
    example
}

// HTTP-1, HTTP-4, LC-1: the example program serves its page at `/` and,
// beside it, an MCP endpoint at `/mcp` whose `echo` tool returns the
// message.
#[test]
fn the_example_serves_its_page_and_the_endpoint() {
    let example = start_example();
    let page = send(example.addr, &Req::to("GET", "/"), "the example's page");
    page.expect_status(200, "GET /");
    assert!(page.text().contains("<code>/mcp</code>"), "{}", page.text());
    let mut conn = Conn::open(example.addr);
    let session = open_session_on(&mut conn, LATEST, json!({}));
    let call = Req::post(echo_body(json!(2), "hello")).session(&session);
    let answer = conn.request(&call, "the example's echo");
    answer.expect_status(200, "echo");
    assert_eq!(text_of(&answer.rpc()), "hello");
}

// DESIGN.md §6, §26 (issue 27 item 8): a request announcing an enormous
// body is answered 413 and disposed of without letting tiny_http allocate
// the announced size, so the program lives on and serves the next one.
#[test]
fn an_enormous_content_length_is_413_and_the_program_lives_on() {
    use std::io::{Read, Write};
    let mut example = start_example();
    let mut conn = std::net::TcpStream::connect(example.addr).expect("connect to the example");
    conn.set_read_timeout(Some(WAIT)).expect("a read timeout");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         Content-Length: 4611686018427387904\r\n\r\n",
        example.addr
    );
    conn.write_all(head.as_bytes()).expect("send the head");
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("HTTP/1.1 413") {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    let seen = String::from_utf8_lossy(&seen).into_owned();
    assert!(seen.contains("HTTP/1.1 413"), "no 413 answer: {:?}", seen);
    // tiny_http's allocation would come right after the answer is written,
    // on another thread: later requests, one after another, follow it.
    for n in 0..20 {
        let page = send(example.addr, &Req::to("GET", "/"), "the page after the 413");
        page.expect_status(
            200,
            &format!("GET / {} after the enormous Content-Length", n),
        );
    }
    assert!(
        matches!(example.child.try_wait(), Ok(None)),
        "the example exited"
    );
}
