//! Authorization, request context and hooks on the real HTTP server
//! (127.0.0.1:0), in both eras: basic/authorization (2025-11-25) AUTH-1 to
//! AUTH-7, RFC 9728 (metadata), RFC 6750 §3 (challenges), RFC 8707
//! (audience).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, CompleteRequestParams, CompleteResult, ElicitRequestFormParams, Error,
    HandlerOutcome, HttpRefusal, HttpRequestHead, HttpServer, InputRequest, Interceptor,
    JsonObject, Principal, ProtectedResource, ReadResourceResult, RequestContext, RequestOutcome,
    ResourceContents, ResourceTemplate, Server, TemplateVariables, TokenError, Tool,
};

use crate::support::http::{initialize_body, notification, rpc, send, Conn, Req, LATEST};
use crate::support::Example;

const V2026: &str = "2026-07-28";

/// The verifier of these tests: `user` (alice, mcp:tools), `admin` (root,
/// mcp:tools mcp:admin), `bob` (bob, mcp:tools), `bare` (no scope),
/// `expired`, `elsewhere` (another audience), `down` (the verifier cannot
/// decide); anything else is unknown.
fn verify(resource: String) -> impl Fn(&str, &HttpRequestHead) -> Result<Principal, TokenError> {
    move |token: &str, head: &HttpRequestHead| {
        assert_eq!(head.path(), "/mcp", "the verifier sees the head");
        let hour = Duration::from_secs(3600);
        let tools = ["mcp:tools"];
        let principal = match token {
            "user" => Principal::new("alice").with_scopes(tools),
            "admin" => Principal::new("root").with_scopes(["mcp:tools", "mcp:admin"]),
            "bob" => Principal::new("bob").with_scopes(tools),
            "bare" => Principal::new("alice"),
            "expired" => Principal::new("alice")
                .with_scopes(tools)
                .with_expires_at(SystemTime::now() - hour),
            "elsewhere" => Principal::new("alice")
                .with_scopes(tools)
                .with_audience(["https://other.example.com/mcp"]),
            "down" => return Err(TokenError::unavailable("introspection is down")),
            _ => return Err(TokenError::invalid("unknown token")),
        };
        let principal = principal.with_client_id("c1");
        if principal.audience.is_empty() {
            return Ok(principal.with_audience([resource.as_str()]));
        }
        Ok(principal)
    }
}

/// What the hooks and interceptors saw.
#[derive(Default)]
struct Seen {
    outcomes: Vec<RequestOutcome>,
    after: Vec<String>,
}

/// Short-circuits the tool `blocked`; records every outcome.
struct Gatekeeper(Arc<Mutex<Seen>>);

impl Interceptor for Gatekeeper {
    fn before(&self, _: &RequestContext, params: Option<&Value>) -> Option<Result<Value, Error>> {
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        if name == Some("blocked") {
            return Some(Ok(
                json!({"content": [{"type": "text", "text": "intercepted"}]}),
            ));
        }
        None
    }

    fn after(&self, ctx: &RequestContext, outcome: HandlerOutcome<'_>) {
        let who = ctx.principal().map_or("-", |p| p.subject.as_str());
        let ok = matches!(outcome, HandlerOutcome::Result(_));
        self.0
            .lock()
            .unwrap()
            .after
            .push(format!("{} {} {}", ctx.method(), who, ok));
    }
}

/// `whoami`: the principal, a header of the POST and the trace context.
fn whoami(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    let principal = ctx
        .principal()
        .map(|p| json!({"subject": p.subject, "scopes": p.scopes}));
    let header = ctx.http_headers().and_then(|h| h.get("X-Test"));
    let trace = ctx.trace().and_then(|t| t.traceparent.clone());
    let text = json!({"principal": principal, "header": header, "trace": trace});
    Ok(CallToolResult::text(text.to_string()))
}

/// `ask`: one round of input (an elicitation), then the answer.
fn ask(ctx: &RequestContext, _: JsonObject) -> Result<CallToolResult, Error> {
    let form = ElicitRequestFormParams::new("name?", json!({"type": "object"}));
    let answers = ctx.request_inputs(vec![("who".into(), InputRequest::elicit(form))])?;
    let answer = answers.elicit_result("who")?;
    Ok(CallToolResult::text(format!("{:?}", answer.action)))
}

struct Fixture {
    http: HttpServer,
    addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    /// A message each time the `on_request_finished` hook has run.
    finished: crossbeam_channel::Receiver<()>,
}

impl Fixture {
    /// The first finished request that `matches`. The hook runs after the
    /// response is sent, so this waits for it (at most 10 s per outcome).
    fn outcome(&self, matches: impl Fn(&RequestOutcome) -> bool) -> RequestOutcome {
        loop {
            let seen = self.seen.lock().unwrap();
            if let Some(outcome) = seen.outcomes.iter().find(|o| matches(o)) {
                return outcome.clone();
            }
            drop(seen);
            self.finished
                .recv_timeout(Duration::from_secs(10))
                .expect("the outcome of a finished request");
        }
    }
}

/// A protected server on 127.0.0.1:0 whose resource is its own URL.
/// Requests with `X-Flood: 1` are refused by a hook with 429.
fn serve(filter_lists: bool) -> Fixture {
    serve_with(filter_lists, 100)
}

/// [`serve`] with at most `per_principal` sessions per principal.
fn serve_with(filter_lists: bool, per_principal: usize) -> Fixture {
    // The resource must name the port, which binding chooses: bind once to
    // learn a free port, then serve there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let resource = format!("http://127.0.0.1:{}/mcp", port);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let outcomes = Arc::clone(&seen);
    let (finished_tx, finished) = crossbeam_channel::unbounded();
    let any = json!({"type": "object"});
    let server = Server::builder("auth-tests", "1")
        .tool(Tool::new("whoami", any.clone()), whoami)
        .tool(Tool::new("admin", any.clone()), whoami)
        .tool(Tool::new("blocked", any.clone()), whoami)
        .tool(Tool::new("ask", any), ask)
        .resource_template(
            ResourceTemplate::new("secret://doc/{id}", "secret"),
            |_: &RequestContext, uri: &str, _: &TemplateVariables| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "s",
                )]))
            },
        )
        .completion(|_: &RequestContext, _: CompleteRequestParams| {
            Ok(CompleteResult::new(vec!["secret-value".into()]))
        })
        .require_scopes(["mcp:tools"])
        .tool_scopes("admin", ["mcp:admin"])
        .template_scopes("secret://doc/{id}", ["mcp:admin"])
        .list_only_permitted(filter_lists)
        .intercept(Gatekeeper(Arc::clone(&seen)))
        .on_request_finished(move |o: &RequestOutcome| {
            outcomes.lock().unwrap().outcomes.push(o.clone());
            let _ = finished_tx.send(());
        })
        .build();
    let protected = ProtectedResource::new(resource.as_str(), verify(resource.clone()))
        .authorization_server("https://auth.example.com");
    let http = server
        .http()
        .protect(protected)
        .max_sessions_per_principal(per_principal)
        .before_request(|head: &HttpRequestHead, principal: Option<&Principal>| {
            assert!(principal.is_some(), "hooks run after authorization");
            match head.header("x-flood") {
                Some("1") => Err(HttpRefusal::new(429)
                    .header("Retry-After", "7")
                    .json(json!({"error": "slow down"}))),
                _ => Ok(()),
            }
        })
        .serve(("127.0.0.1", port))
        .expect("serve");
    let addr = http.local_addr();
    Fixture {
        http,
        addr,
        seen,
        finished,
    }
}

fn metadata_url(addr: SocketAddr) -> String {
    format!("http://{}/.well-known/oauth-protected-resource/mcp", addr)
}

fn bearer(req: Req, token: &str) -> Req {
    req.header("Authorization", &format!("Bearer {}", token))
}

/// The `WWW-Authenticate` challenge of a refusal, with its status checked.
fn challenge(f: &Fixture, req: &Req, status: u16, what: &str) -> String {
    let response = send(f.addr, req, what);
    response.expect_status(status, what);
    let body = response.json();
    assert!(
        body["error"].is_string(),
        "{}: a JSON error body: {}",
        what,
        body
    );
    match response.header("www-authenticate") {
        Some(challenge) => challenge.to_string(),
        None => panic!("{}: no WWW-Authenticate: {:?}", what, response.head),
    }
}

/// Opens a 2025-11-25 session with `token`; returns its id.
fn session(f: &Fixture, token: &str) -> String {
    let mut conn = Conn::open(f.addr);
    let init = bearer(
        Req::post(initialize_body(json!(0), LATEST, json!({}))),
        token,
    );
    let response = conn.request(&init, "initialize");
    response.expect_status(200, "initialize");
    let id = response
        .header("mcp-session-id")
        .expect("a session")
        .to_string();
    let done = bearer(
        Req::post(notification("notifications/initialized", json!({}))),
        token,
    )
    .session(&id);
    conn.request(&done, "initialized")
        .expect_status(202, "initialized");
    id
}

/// A 2026-07-28 `tools/call` of `tool`, with its routing headers.
fn call_2026(tool: &str, meta: Value) -> Req {
    call_2026_with(tool, json!({}), meta)
}

/// The same with `arguments`.
fn call_2026_with(tool: &str, arguments: Value, meta: Value) -> Req {
    let mut envelope = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (k, v) in meta.as_object().into_iter().flatten() {
        envelope[k] = v.clone();
    }
    let params = json!({"name": tool, "arguments": arguments, "_meta": envelope});
    Req::post(rpc(json!(1), "tools/call", params))
        .header("MCP-Protocol-Version", V2026)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
}

/// The text of a tool result in a JSON (or one-event SSE) response.
fn tool_text(response: &crate::support::http::Response) -> Value {
    let message = response.rpc();
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no tool text in {}", message));
    serde_json::from_str(text).unwrap_or_else(|_| Value::from(text))
}

// AUTH-2, AUTH-3, RFC 6750 §3.1: no token is 401 with the exact challenge:
// quoted values, comma-separated, no error code.
#[test]
fn no_token_is_a_challenge_naming_the_metadata_and_scope() {
    let f = serve(false);
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let got = challenge(&f, &init, 401, "initialize without a token");
    let want = format!(
        r#"Bearer resource_metadata="{}", scope="mcp:tools""#,
        metadata_url(f.addr)
    );
    assert_eq!(got, want);
    // 2026-07-28 on the same endpoint: the same rule.
    let got = challenge(
        &f,
        &call_2026("whoami", json!({})),
        401,
        "a 2026-07-28 call",
    );
    assert_eq!(got, want);
    // Another scheme is no bearer token.
    let basic = init.clone().header("Authorization", "Basic dXNlcjpwYXNz");
    assert_eq!(challenge(&f, &basic, 401, "Basic credentials"), want);
}

// AUTH-6, RFC 6750 §3.1: malformed authorization requests are 400
// invalid_request; AUTH-7: never a token in the query string.
#[test]
fn malformed_authorization_is_400_invalid_request() {
    let f = serve(false);
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let cases = [
        (
            "Bearer with nothing",
            init.clone().header("Authorization", "Bearer"),
        ),
        (
            "two Authorization headers",
            bearer(init.clone(), "user").also("Authorization", "Bearer admin"),
        ),
        (
            "a token in the query string",
            bearer(init.clone(), "user").at("/mcp?access_token=user"),
        ),
        (
            "a percent-encoded token in the query string",
            bearer(init.clone(), "user").at("/mcp?x=1&access%5Ftoken=user"),
        ),
    ];
    for (what, req) in cases.iter() {
        let got = challenge(&f, req, 400, what);
        assert!(
            got.starts_with(r#"Bearer error="invalid_request", error_description=""#),
            "{}: {}",
            what,
            got
        );
        assert!(got.contains(&metadata_url(f.addr)), "{}: {}", what, got);
    }
    let spaced = init.header("Authorization", "Bearer a b");
    let got = challenge(&f, &spaced, 401, "a token that is not b64token syntax");
    assert!(got.contains(r#"error="invalid_token""#), "{}", got);
}

// AUTH-4: unknown, expired and other-audience tokens are 401
// invalid_token, in both eras; a verifier that cannot decide is 503.
#[test]
fn invalid_expired_and_foreign_tokens_are_401_invalid_token() {
    let f = serve(false);
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    for token in ["nonsense", "expired", "elsewhere"].iter() {
        for (era, req) in [
            ("2025-11-25", init.clone()),
            (V2026, call_2026("whoami", json!({}))),
        ]
        .iter()
        {
            let what = format!("token {} in {}", token, era);
            let got = challenge(&f, &bearer(req.clone(), token), 401, &what);
            assert!(
                got.starts_with(r#"Bearer error="invalid_token", error_description=""#),
                "{}: {}",
                what,
                got
            );
            assert!(got.contains(r#"scope="mcp:tools""#), "{}: {}", what, got);
        }
    }
    let response = send(f.addr, &bearer(init, "down"), "an undecided token");
    response.expect_status(503, "an undecided token");
    assert_eq!(response.json()["error"], "temporarily_unavailable");
}

// AUTH-5: a missing scope is 403 with the scopes needed, so that the
// client can step up: server-wide before the body, per tool after it,
// in both eras.
#[test]
fn insufficient_scope_is_403_with_the_needed_scopes() {
    let f = serve(false);
    let init = Req::post(initialize_body(json!(0), LATEST, json!({})));
    let got = challenge(&f, &bearer(init, "bare"), 403, "a token without mcp:tools");
    assert!(
        got.starts_with(&format!(
            r#"Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="{}", error_description=""#,
            metadata_url(f.addr)
        )),
        "{}",
        got
    );
    let id = session(&f, "user");
    let call = bearer(
        Req::post(rpc(json!(2), "tools/call", json!({"name": "admin"}))),
        "user",
    );
    let got = challenge(&f, &call.session(&id), 403, "admin as a user (2025-11-25)");
    assert!(
        got.contains(r#"error="insufficient_scope", scope="mcp:tools mcp:admin""#),
        "{}",
        got
    );
    let v2026 = bearer(call_2026("admin", json!({})), "user");
    let got = challenge(&f, &v2026, 403, "admin as a user (2026-07-28)");
    assert!(got.contains(r#"scope="mcp:tools mcp:admin""#), "{}", got);
    let allowed = send(
        f.addr,
        &bearer(call_2026("admin", json!({})), "admin"),
        "admin",
    );
    allowed.expect_status(200, "admin as root");
    assert_eq!(tool_text(&allowed)["principal"]["subject"], "root");
}

// DESIGN.md §15: a session belongs to the principal that opened it; with
// another principal's token it does not exist (404), for POST, GET and
// DELETE, and a refreshed token of the same caller still works.
#[test]
fn a_session_cannot_be_used_with_another_principal_s_token() {
    let f = serve(false);
    let id = session(&f, "user");
    let list = Req::post(rpc(json!(3), "tools/list", json!({}))).session(&id);
    send(f.addr, &bearer(list.clone(), "bob"), "bob's POST").expect_status(404, "bob's POST");
    let get = bearer(Req::get(&id), "bob");
    send(f.addr, &get, "bob's GET").expect_status(404, "bob's GET");
    let delete = bearer(Req::delete(&id), "bob");
    send(f.addr, &delete, "bob's DELETE").expect_status(404, "bob's DELETE");
    // Still alice's: her request works, and her DELETE ends it.
    send(f.addr, &bearer(list, "user"), "alice's POST").expect_status(200, "alice's POST");
    send(f.addr, &bearer(Req::delete(&id), "user"), "alice's DELETE")
        .expect_status(200, "alice's DELETE");
}

// AUTH-1, AUTH-2, RFC 9728 §3: the metadata document at both paths,
// public, behind the same Host check as the endpoint.
#[test]
fn metadata_document_at_both_paths() {
    let f = serve(false);
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ]
    .iter()
    {
        let response = send(f.addr, &Req::to("GET", path), path);
        response.expect_status(200, path);
        let doc = response.json();
        assert_eq!(doc["resource"], format!("http://{}/mcp", f.addr));
        assert_eq!(
            doc["authorization_servers"],
            json!(["https://auth.example.com"])
        );
        assert_eq!(doc["scopes_supported"], json!(["mcp:admin", "mcp:tools"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
    let path = "/.well-known/oauth-protected-resource/mcp";
    let post = send(f.addr, &Req::to("POST", path), "POST to the metadata");
    post.expect_status(405, "POST to the metadata");
    let head = Conn::open(f.addr).start(&Req::to("HEAD", path), "HEAD of the metadata");
    assert_eq!(head.status, 200, "RFC 9110 §9.3.2");
    let options = send(f.addr, &Req::to("OPTIONS", path), "OPTIONS");
    options.expect_status(204, "OPTIONS of the metadata");
    assert_eq!(options.header("allow"), Some("GET, HEAD, OPTIONS"));
    let evil = Req::to("GET", path).header("Host", "evil.example");
    send(f.addr, &evil, "another Host").expect_status(403, "another Host");
    // RFC 9112 §3.2.2: an absolute-form target's authority is the host.
    let absolute = Req::to("GET", &format!("http://evil.example{}", path));
    send(f.addr, &absolute, "a foreign absolute-form target")
        .expect_status(403, "a foreign absolute-form target");
    let dotted = Req::to("GET", path).header("Host", &format!("{}.evil.example", f.addr));
    send(f.addr, &dotted, "a Host whose port is not a port")
        .expect_status(403, "a Host whose port is not a port");
    let other = "/.well-known/oauth-protected-resource/other";
    send(f.addr, &Req::to("GET", other), other).expect_status(404, other);
}

// Item 5: the handler reads the principal, the POST's headers and the
// trace context of `_meta` (SEP-414), in both eras.
#[test]
fn handlers_see_principal_headers_and_trace() {
    let f = serve(false);
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let v2026 = bearer(call_2026("whoami", json!({"traceparent": trace})), "user")
        .header("X-Test", "hello");
    let response = send(f.addr, &v2026, "whoami (2026-07-28)");
    response.expect_status(200, "whoami");
    let seen = tool_text(&response);
    assert_eq!(
        seen["principal"],
        json!({"subject": "alice", "scopes": ["mcp:tools"]})
    );
    assert_eq!(seen["header"], "hello");
    assert_eq!(seen["trace"], trace);
    let id = session(&f, "admin");
    let params = json!({"name": "whoami", "_meta": {"traceparent": trace}});
    let v2025 = bearer(Req::post(rpc(json!(4), "tools/call", params)), "admin")
        .session(&id)
        .header("X-Test", "legacy");
    let response = send(f.addr, &v2025, "whoami (2025-11-25)");
    let seen = tool_text(&response);
    assert_eq!(seen["principal"]["subject"], "root");
    assert_eq!(
        (seen["header"].as_str(), seen["trace"].as_str()),
        (Some("legacy"), Some(trace))
    );
    // The finished-request hook saw the principal and the trace too.
    let call = f.outcome(|o| {
        o.method == "tools/call" && o.principal.as_ref().map(|p| p.subject.as_str()) == Some("root")
    });
    assert_eq!(
        call.trace.as_ref().and_then(|t| t.traceparent.as_deref()),
        Some(trace)
    );
}

// Item 6: the pre-request hook refuses with its own status and headers,
// after authorization; interceptors short-circuit and see outcomes.
#[test]
fn hooks_and_interceptors_in_order() {
    let f = serve(false);
    let flood = call_2026("whoami", json!({})).header("X-Flood", "1");
    let got = challenge(&f, &flood, 401, "a flood without a token");
    assert!(
        got.starts_with("Bearer resource_metadata="),
        "authorization first: {}",
        got
    );
    let response = send(f.addr, &bearer(flood, "user"), "a flood with a token");
    response.expect_status(429, "the hook's refusal");
    assert_eq!(response.header("retry-after"), Some("7"));
    assert_eq!(response.json()["error"], "slow down");
    let blocked = send(
        f.addr,
        &bearer(call_2026("blocked", json!({})), "user"),
        "blocked",
    );
    assert_eq!(tool_text(&blocked), "intercepted");
    send(
        f.addr,
        &bearer(call_2026("whoami", json!({})), "user"),
        "whoami",
    )
    .expect_status(200, "whoami");
    let after = f.seen.lock().unwrap().after.clone();
    assert_eq!(after, ["tools/call alice true", "tools/call alice true"]);
}

// Item 3: with list filtering on, each principal sees only what it may
// call; calls are checked either way.
#[test]
fn lists_show_only_what_the_principal_may_use() {
    let f = serve(true);
    let list = |token: &str| {
        let id = session(&f, token);
        let req = bearer(Req::post(rpc(json!(5), "tools/list", json!({}))), token).session(&id);
        let names: Vec<String> = send(f.addr, &req, "tools/list").rpc()["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or("").to_string())
            .collect();
        names
    };
    assert_eq!(list("user"), ["whoami", "blocked", "ask"]);
    assert_eq!(list("admin"), ["whoami", "admin", "blocked", "ask"]);
}

// A refused request's body is skipped, so the connection carries the
// next request (keep-alive); nothing of the MCP layer ran for it.
#[test]
fn a_refused_request_keeps_the_connection() {
    let f = serve(false);
    let mut conn = Conn::open(f.addr);
    let call = Req::post(rpc(json!(1), "tools/call", json!({"name": "whoami"})));
    conn.request(&call, "unauthorized")
        .expect_status(401, "unauthorized");
    let init = bearer(
        Req::post(initialize_body(json!(0), LATEST, json!({}))),
        "user",
    );
    conn.request(&init, "then initialize")
        .expect_status(200, "initialize");
    assert!(
        f.seen
            .lock()
            .unwrap()
            .outcomes
            .iter()
            .all(|o| o.method != "tools/call"),
        "the refused call never reached the dispatcher"
    );
    f.http.shutdown();
}

// Item 1: `serve` refuses a protected resource that cannot work.
#[test]
fn a_protected_resource_needs_an_authorization_server() {
    let server = Server::builder("t", "1").build();
    let protected = ProtectedResource::new("http://127.0.0.1:1/mcp", verify(String::new()));
    let error = server
        .http()
        .protect(protected)
        .serve("127.0.0.1:0")
        .unwrap_err();
    assert!(
        error.to_string().contains("authorization server"),
        "{}",
        error
    );
}

/// Calls `tool` with `arguments` in the 2026-07-28 era with `token`.
fn call_example(
    addr: SocketAddr,
    token: &str,
    tool: &str,
    arguments: Value,
) -> crate::support::http::Response {
    send(
        addr,
        &bearer(call_2026_with(tool, arguments, json!({})), token),
        tool,
    )
}

// Item 7: the example's demo tokens, scopes and metadata.
#[test]
fn example_with_demo_tokens() {
    let example = Example::start(&["--auth-demo", "--auth-issuer", "http://127.0.0.1:9999"]);
    let addr = example.addr;
    let info = call_example(addr, "user-token", "session_info", json!({}));
    info.expect_status(200, "session_info as alice");
    let principal = &tool_text(&info)["principal"];
    assert_eq!(
        (principal["subject"].as_str(), &principal["scopes"]),
        (Some("alice"), &json!(["mcp:tools"]))
    );
    let refused = call_example(addr, "user-token", "admin_echo", json!({"text": "x"}));
    refused.expect_status(403, "admin_echo as alice");
    let challenge = refused.header("www-authenticate").unwrap_or("");
    assert!(
        challenge.contains(r#"scope="mcp:tools mcp:admin""#),
        "{}",
        challenge
    );
    let echoed = call_example(addr, "admin-token", "admin_echo", json!({"text": "x"}));
    assert_eq!(tool_text(&echoed), "x (for root)");
    for token in ["other-audience-token", "expired-token", "made-up"].iter() {
        let response = call_example(addr, token, "session_info", json!({}));
        response.expect_status(401, token);
        let challenge = response.header("www-authenticate").unwrap_or("");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{}: {}",
            token,
            challenge
        );
    }
    let path = "/.well-known/oauth-protected-resource/mcp";
    let doc = send(addr, &Req::to("GET", path), "metadata").json();
    assert_eq!(
        doc["authorization_servers"],
        json!(["http://127.0.0.1:9999"])
    );
    assert_eq!(doc["resource"], format!("http://{}/mcp", addr));
}

// Item 7: `--introspect URL` asks an RFC 7662 endpoint (here a tiny_http
// one in the test) about each token.
#[test]
fn example_with_introspection() {
    let introspection = tiny_http::Server::http("127.0.0.1:0").expect("an introspection server");
    let url = format!(
        "http://{}/introspect",
        introspection.server_addr().to_ip().expect("ip")
    );
    let introspection = Arc::new(introspection);
    let answering = Arc::clone(&introspection);
    let example_resource = Arc::new(Mutex::new(String::new()));
    let resource = Arc::clone(&example_resource);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let asked_by = Arc::clone(&asked);
    std::thread::spawn(move || {
        for mut request in answering.incoming_requests() {
            let mut form = String::new();
            let _ = std::io::Read::read_to_string(request.as_reader(), &mut form);
            asked_by.lock().unwrap().push(form.clone());
            let aud = resource.lock().unwrap().clone();
            let exp = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                + 600;
            let token = form.split('&').find_map(|p| p.strip_prefix("token="));
            let answer = match token.unwrap_or("") {
                "good%2Btoken" => json!({"active": true, "sub": "carol", "client_id": "c",
                    "scope": "mcp:tools", "aud": aud, "exp": exp}),
                "foreign" => json!({"active": true, "sub": "carol", "scope": "mcp:tools",
                    "aud": "https://elsewhere.example/mcp", "exp": exp}),
                _ => json!({"active": false}),
            };
            let header = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
            // No length: tiny_http sends the answer chunked (the Python
            // interop test's server sends a Content-Length).
            let body = std::io::Cursor::new(answer.to_string().into_bytes());
            let response = tiny_http::Response::new(200.into(), vec![header], body, None, None);
            let _ = request.respond(response);
        }
    });
    let example = Example::start(&["--introspect", &url]);
    *example_resource.lock().unwrap() = format!("http://{}/mcp", example.addr);
    let info = call_example(example.addr, "good+token", "session_info", json!({}));
    info.expect_status(200, "an active token");
    assert_eq!(tool_text(&info)["principal"]["subject"], "carol");
    for token in ["foreign", "revoked"].iter() {
        call_example(example.addr, token, "session_info", json!({})).expect_status(401, token);
    }
    assert_eq!(
        asked.lock().unwrap().len(),
        3,
        "one introspection per request"
    );
    introspection.unblock();
}

// Item 5: off HTTP there is no principal and no headers; the trace
// context still comes from `_meta`.
#[test]
fn in_memory_there_is_no_principal() {
    let server = Server::builder("t", "1")
        .tool(Tool::new("whoami", json!({"type": "object"})), whoami)
        .build();
    let mut client = crate::support::connect(&server, json!({}));
    let params = json!({"name": "whoami", "_meta": {"traceparent": "00-ab-cd-01"}});
    let result = client.request("tools/call", Some(params)).expect("whoami");
    let text = result["content"][0]["text"].as_str().expect("text");
    let seen: Value = serde_json::from_str(text).expect("json");
    assert_eq!(
        seen,
        json!({"principal": null, "header": null, "trace": "00-ab-cd-01"})
    );
    // A test may act as a principal: the handler sees it.
    client.set_principal(Some(Principal::new("tess").with_scopes(["s"])));
    let result = client
        .request("tools/call", Some(json!({"name": "whoami"})))
        .expect("whoami as tess");
    let text = result["content"][0]["text"].as_str().expect("text");
    let seen: Value = serde_json::from_str(text).expect("json");
    assert_eq!(
        seen["principal"],
        json!({"subject": "tess", "scopes": ["s"]})
    );
}

// AUTH-5 for what a request reaches indirectly: a completion of a scoped
// template or prompt, and a 2026-07-28 listen stream subscribing to a
// scoped resource, need its scopes too (found by a hostile trial).
#[test]
fn completions_and_listen_streams_need_the_scopes_of_what_they_name() {
    let f = serve(false);
    let id = session(&f, "user");
    let complete = json!({"ref": {"type": "ref/resource", "uri": "secret://doc/{id}"},
        "argument": {"name": "id", "value": ""}});
    let req = bearer(
        Req::post(rpc(json!(8), "completion/complete", complete)),
        "user",
    )
    .session(&id);
    let got = challenge(&f, &req, 403, "a completion of a scoped template");
    assert!(got.contains(r#"scope="mcp:tools mcp:admin""#), "{}", got);
    let read = json!({"uri": "secret://doc/7"});
    let req = bearer(Req::post(rpc(json!(9), "resources/read", read)), "user").session(&id);
    challenge(&f, &req, 403, "a read of a scoped template's resource");
    let params = json!({"notifications": {"resourceSubscriptions": ["secret://doc/7"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientCapabilities": {}}});
    let listen = bearer(
        Req::post(rpc(json!(1), "subscriptions/listen", params)),
        "user",
    )
    .header("MCP-Protocol-Version", V2026)
    .header("Mcp-Method", "subscriptions/listen");
    let got = challenge(&f, &listen, 403, "a listen stream on a scoped resource");
    assert!(got.contains(r#"error="insufficient_scope""#), "{}", got);
    // With the scope, the completion is answered.
    let id = session(&f, "admin");
    let complete = json!({"ref": {"type": "ref/resource", "uri": "secret://doc/{id}"},
        "argument": {"name": "id", "value": ""}});
    let req = bearer(
        Req::post(rpc(json!(10), "completion/complete", complete)),
        "admin",
    )
    .session(&id);
    let answer = send(f.addr, &req, "root's completion").rpc();
    assert_eq!(
        answer["result"]["completion"]["values"],
        json!(["secret-value"]),
        "{}",
        answer
    );
}

// DESIGN.md §6: a refusal does not wait for (or buffer) a body the
// client has not sent: the 401 comes at once, and a large body closes
// the connection (a hostile trial held a thread 60 s and 4 MiB per
// connection before).
#[test]
fn a_refusal_does_not_wait_for_a_large_body() {
    let f = serve(false);
    let mut conn = Conn::open(f.addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: 4000000\r\n\r\n{{",
        f.addr
    );
    conn.send_raw(head.as_bytes());
    let response = conn.read_head("a 401 before the body");
    assert_eq!(response.status, 401);
    assert_eq!(response.header("connection"), Some("close"));
    // HTTP/1.0 with Transfer-Encoding is faulty framing (RFC 9112 §6.1):
    // refused, and the connection closed.
    let mut conn = Conn::open(f.addr);
    let faulty = format!(
        "POST /mcp HTTP/1.0\r\nHost: {}\r\nConnection: keep-alive\r\n\
         Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        f.addr
    );
    conn.send_raw(faulty.as_bytes());
    let response = conn.read_head("HTTP/1.0 with Transfer-Encoding");
    assert_eq!(response.status, 400);
    assert_eq!(response.header("connection"), Some("close"));
}

// DESIGN.md §6: one principal cannot fill the session table; past its
// limit its own oldest session ends, and nobody else's.
#[test]
fn a_principal_s_sessions_are_bounded_by_its_own_oldest() {
    let f = serve_with(false, 2);
    let bob = session(&f, "bob");
    let first = session(&f, "user");
    let second = session(&f, "user");
    let third = session(&f, "user");
    let list = |id: &str, token: &str| {
        let req = bearer(Req::post(rpc(json!(1), "tools/list", json!({}))), token).session(id);
        send(f.addr, &req, "tools/list").status()
    };
    assert_eq!(list(&first, "user"), 404, "alice's oldest session ended");
    assert_eq!((list(&second, "user"), list(&third, "user")), (200, 200));
    assert_eq!(list(&bob, "bob"), 200, "bob's session is untouched");
}

// DESIGN-NOTES §11, MRTR-5: a requestState is bound to the principal it
// was minted for; another principal's retry with it is -32602.
#[test]
fn request_state_is_bound_to_its_principal() {
    let f = serve(false);
    let caps = json!({"elicitation": {"form": {}}});
    let first = json!({"io.modelcontextprotocol/clientCapabilities": caps});
    let asked = send(f.addr, &bearer(call_2026("ask", first), "user"), "ask");
    let result = asked.rpc()["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{}", result);
    let state = result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_string();
    let retry = |token: &str| {
        let envelope = json!({
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        });
        let params = json!({"name": "ask", "arguments": {}, "_meta": envelope,
            "requestState": state,
            "inputResponses": {"who": {"action": "decline"}}});
        let req = Req::post(rpc(json!(2), "tools/call", params))
            .header("MCP-Protocol-Version", V2026)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "ask");
        send(f.addr, &bearer(req, token), "the retry").rpc()
    };
    let stolen = retry("bob");
    assert_eq!(stolen["error"]["code"], -32602, "{}", stolen);
    let text = stolen["error"]["message"].as_str().unwrap_or("");
    assert!(
        !text.contains("alice"),
        "the refusal reveals nothing: {}",
        text
    );
    let own = retry("user");
    assert_eq!(own["result"]["content"][0]["text"], "Decline", "{}", own);
}
