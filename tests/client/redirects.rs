//! Redirects (RFC 9110 §15.4): a same-origin `307` or `308` is followed
//! with the request as sent, at most 5 in a row; `301`, `302` and `303`
//! and any redirect to another origin are errors naming the target, and
//! nothing reaches the other origin (basic/authorization "Token
//! Handling").

use std::time::Duration;

use serde_json::json;
use tiny_mcp::{Client, ClientBuilder, Era, ErrorKind, SubscriptionFilter};

use super::fake::{self, Fake, Reply, Request};

const TOKEN: &str = "secret-token";

fn builder() -> ClientBuilder {
    Client::builder("redirect-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
        .bearer_token(|| Some(TOKEN.to_string()))
}

/// A 2025-11-25 server at `/mcp/`: the handshake, an echoing tool, the
/// GET stream (held open), and `DELETE`.
fn serve(request: &Request) -> Reply {
    if let Some(reply) = fake::handshake_2025(request) {
        return reply;
    }
    match request.method.as_str() {
        "GET" => Reply::Hold(format!("{}: open\r\n\r\n", fake::SSE_HEAD).into_bytes()),
        "DELETE" => Reply::Keep(fake::answer(200, "application/json", "", "")),
        _ => {
            let text = request.json()["params"]["arguments"]["text"].clone();
            let text = text.as_str().unwrap_or("").to_string();
            Reply::Keep(fake::json(&fake::text_result(request, &text), ""))
        }
    }
}

fn redirect(status: u16, location: &str) -> Reply {
    let extra = format!("Location: {}\r\n", location);
    Reply::Keep(fake::answer(status, "text/plain", "moved", &extra))
}

/// What must survive a redirect: method, body, and the headers that
/// carry the session and the token.
fn as_sent(request: &Request) -> (String, String, Option<String>, Option<String>) {
    (
        request.method.clone(),
        request.body.clone(),
        request.header("authorization").map(str::to_string),
        request.header("mcp-session-id").map(str::to_string),
    )
}

/// Connects to a server that moves `/mcp` to `/mcp/` with `status`, makes
/// two calls, opens and closes the GET stream, and closes (DELETE); the
/// requests the server got.
fn moved_with(status: u16) -> Vec<Request> {
    let server = Fake::start(move |request| match request.path.as_str() {
        "/mcp" => redirect(status, "/mcp/"),
        _ => serve(request),
    });
    let client = builder().connect_http(&server.url("/mcp")).unwrap();
    for text in ["one", "two"] {
        let answer = client.call_tool("t", json!({ "text": text })).unwrap();
        let content = serde_json::to_value(&answer.content).unwrap();
        assert_eq!(content[0]["text"], text);
    }
    client.listen(&SubscriptionFilter::new()).unwrap().close();
    client.close();
    server.requests()
}

// RFC 9110 §15.4.8: a 307 is followed with method, body and headers
// intact (Authorization, Mcp-Session-Id), for POST, GET and DELETE, and
// asked again each time.
#[test]
fn a_same_origin_307_is_followed_with_the_request_as_sent() {
    let requests = moved_with(307);
    let (old, new): (Vec<_>, Vec<_>) = requests.iter().partition(|r| r.path == "/mcp");
    let methods: Vec<&str> = new.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["POST", "POST", "POST", "POST", "GET", "DELETE"]);
    assert_eq!(old.len(), new.len(), "each request asked /mcp first");
    for (old, new) in old.iter().zip(&new) {
        assert_eq!(as_sent(old), as_sent(new));
    }
    let call = new.iter().find(|r| r.rpc() == "tools/call").unwrap();
    let bearer = format!("Bearer {}", TOKEN);
    assert_eq!(call.header("authorization"), Some(bearer.as_str()));
    assert_eq!(call.header("mcp-session-id"), Some("s-1"));
}

// RFC 9110 §15.4.9: a 308 is followed the same way, and later requests
// go straight to the new target.
#[test]
fn a_same_origin_308_is_followed_and_remembered() {
    let requests = moved_with(308);
    let old: Vec<&Request> = requests.iter().filter(|r| r.path == "/mcp").collect();
    assert_eq!(old.len(), 1, "{:?}", old);
    let first_new = requests.iter().find(|r| r.path == "/mcp/").unwrap();
    assert_eq!(as_sent(old[0]), as_sent(first_new));
    assert_eq!(requests.len(), 7, "{:?}", requests);
}

/// A server whose `/r<n>` redirects with 307 to `/r<n+1>` until `/r<hops>`.
fn chain(hops: usize) -> Fake {
    Fake::start(move |request| {
        let n: usize = request.path.trim_start_matches("/r").parse().unwrap_or(0);
        if n < hops {
            redirect(307, &format!("/r{}", n + 1))
        } else {
            serve(request)
        }
    })
}

// RFC 9110 §15.4 ("a client SHOULD detect and intervene in cyclical
// redirections"): five redirects in a row are followed, a sixth is an
// error that says so.
#[test]
fn more_than_five_redirects_fail() {
    let five = chain(5);
    builder().connect_http(&five.url("/r0")).expect("5 hops");
    let six = chain(6);
    let err = builder().connect_http(&six.url("/r0")).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Http { status: 307, .. }),
        "{:?}",
        err
    );
    assert!(err.to_string().contains("more than 5 redirects"), "{}", err);
    assert_eq!(six.requests().len(), 6);
}

// RFC 9110 §15.4.3: a 302 may turn a POST into a GET; it is reported,
// naming the status and the Location, and not followed.
#[test]
fn a_302_on_a_post_is_reported() {
    let server = Fake::start(|request| match request.path.as_str() {
        "/mcp" => redirect(302, "/mcp/"),
        _ => serve(request),
    });
    let err = builder().connect_http(&server.url("/mcp")).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Http { status: 302, .. }),
        "{:?}",
        err
    );
    let target = server.url("/mcp/");
    assert!(err.to_string().contains(&target), "{}", err);
    assert!(server.requests().iter().all(|r| r.path == "/mcp"));
}

// basic/authorization "Token Handling" (a token is for its resource
// only): a 307 to another origin (another port) is not followed; the
// error names where the server pointed, without the query or our token,
// and the other origin gets no request at all.
#[test]
fn a_redirect_to_another_origin_is_not_followed() {
    let other = Fake::start(serve);
    let elsewhere = format!("{}?sig=server-secret", other.url("/mcp"));
    let server = Fake::start(move |request| match request.rpc().as_str() {
        "tools/call" => redirect(307, &elsewhere),
        _ => serve(request),
    });
    let client = builder().connect_http(&server.url("/mcp")).unwrap();
    let err = client.call_tool("t", json!({"text": "x"})).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Http { status: 307, .. }),
        "{:?}",
        err
    );
    let message = err.to_string();
    assert!(message.contains(&other.url("/mcp")), "{}", message);
    assert!(!message.contains("server-secret"), "{}", message);
    assert!(!message.contains(TOKEN), "{}", message);
    assert!(other.requests().is_empty(), "{:?}", other.requests());
}
