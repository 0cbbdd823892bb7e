//! `ClientBuilder::header`: the program's own headers go on every request
//! to the server (POST, GET, DELETE), and a header that would break the
//! transport or inject another one is refused before anything is sent.

use std::time::Duration;

use serde_json::json;
use tiny_mcp::{Client, ClientBuilder, Era, ErrorKind, SubscriptionFilter};

use super::fake::{self, Fake, Reply, Request};

/// A 2025-11-25 server: the handshake, an echoing tool, a held GET
/// stream, and `DELETE`.
fn serve(request: &Request) -> Reply {
    if let Some(reply) = fake::handshake_2025(request) {
        return reply;
    }
    match request.method.as_str() {
        "GET" => Reply::Hold(format!("{}: open\r\n\r\n", fake::SSE_HEAD).into_bytes()),
        "DELETE" => Reply::Keep(fake::answer(200, "application/json", "", "")),
        _ => Reply::Keep(fake::json(&fake::text_result(request, "ok"), "")),
    }
}

fn builder() -> ClientBuilder {
    Client::builder("header-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(20))
}

#[test]
fn the_programs_headers_go_on_every_request() {
    let server = Fake::start(serve);
    let client = builder()
        .header("X-Api-Key", "key-1")
        .header("X-Tenant", " blue ")
        .connect_http(&server.url("/mcp"))
        .unwrap();
    client.call_tool("t", json!({})).unwrap();
    client.listen(&SubscriptionFilter::new()).unwrap().close();
    client.close();
    let requests = server.requests();
    let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
    assert!(
        methods.contains(&"GET") && methods.contains(&"DELETE"),
        "{:?}",
        methods
    );
    for request in &requests {
        assert_eq!(request.header("x-api-key"), Some("key-1"), "{:?}", request);
        assert_eq!(request.header("x-tenant"), Some("blue"), "{:?}", request);
    }
}

// basic/authorization "Access Token Usage": one Authorization header, the
// client's own token's, when the client sends a token.
#[test]
fn an_authorization_header_gives_way_to_the_clients_token() {
    let server = Fake::start(serve);
    let client = builder()
        .header("Authorization", "Bearer mine")
        .bearer_token(|| Some("theirs".to_string()))
        .connect_http(&server.url("/mcp"))
        .unwrap();
    client.ping().unwrap();
    client.close();
    for request in server.requests() {
        assert_eq!(request.header("authorization"), Some("Bearer theirs"));
    }
    // Without a token of the client's, the program's header is sent.
    let server = Fake::start(serve);
    let client = builder()
        .header("Authorization", "Bearer mine")
        .connect_http(&server.url("/mcp"))
        .unwrap();
    client.ping().unwrap();
    client.close();
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer mine")
    );
}

#[test]
fn headers_that_would_break_the_transport_are_refused_unsent() {
    let server = Fake::start(serve);
    let refused = [
        ("Mcp-Session-Id", "stolen"),
        ("content-length", "0"),
        ("X-Bad\r\nInjected", "1"),
        ("X Space", "1"),
        ("", "1"),
        ("X-Key", "one\r\nInjected: two"),
    ];
    for (name, value) in refused {
        let err = builder()
            .header(name, value)
            .connect_http(&server.url("/mcp"))
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidParams(_)),
            "{:?}: {}",
            name,
            err
        );
        assert!(!err.to_string().contains("Injected: two"), "{}", err);
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
