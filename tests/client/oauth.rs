//! The client's OAuth login (`tiny_mcp::oauth`) against a fake
//! authorization server and a real tiny-mcp protected resource, both on
//! 127.0.0.1: the login, the token on each request, refresh, step-up, a
//! stored login, concurrent refusals, and hostile or broken servers, each
//! of which must end in `ErrorKind::Authorization` naming the step.
//!
//! Spec: basic/authorization (2025-11-25; 2026-07-28), RFC 6749, RFC 7636,
//! RFC 8414, RFC 8707, RFC 9207, RFC 9728.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::oauth::{FileTokenStore, Headless, OAuth};
use tiny_mcp::{Client, Era, Error, ErrorKind};

use super::fake::{answer, Reply, Request};
use super::oauth_server::{metadata, resource, value_of, AuthServer, Resource};

/// Where the fake authorization server sends the user back (not listened
/// on: `Headless` stops at it).
const REDIRECT: &str = "http://127.0.0.1:1/callback";

fn oauth() -> OAuth {
    OAuth::new(Headless::new(REDIRECT)).client_name("oauth-tests")
}

fn connect(url: &str, oauth: OAuth, era: Option<Era>) -> Result<Client, Error> {
    let builder = Client::builder("oauth-tests", "1")
        .request_timeout(Duration::from_secs(10))
        .oauth(oauth);
    match era {
        Some(era) => builder.era(era).connect_http(url),
        None => builder.connect_http(url),
    }
}

fn echo(client: &Client, text: &str) -> Result<String, Error> {
    let result = client.call_tool("echo", json!({ "text": text }))?;
    let value = serde_json::to_value(&result.content).unwrap();
    Ok(value[0]["text"].as_str().unwrap_or("").to_string())
}

/// An authorization server as `setup` leaves it, and its resource.
fn servers(setup: impl FnOnce(&mut super::oauth_server::Ledger)) -> (AuthServer, Resource) {
    let auth = AuthServer::start();
    setup(&mut auth.ledger());
    let resource = resource(&auth, |p| p);
    (auth, resource)
}

/// The step of an authorization error, or a panic naming what came.
fn step_of(result: Result<Client, Error>) -> (&'static str, String) {
    match result.map(|_| ()).map_err(Error::into_kind) {
        Err(ErrorKind::Authorization { step, message }) => (step, message),
        other => panic!("expected an authorization error, got {:?}", other),
    }
}

// basic/authorization "Authorization Flow Steps", "Access Token Usage"
// (2025-11-25 and 2026-07-28): one login (registration, PKCE S256, state,
// resource of RFC 8707), then the token on every request, in both eras.
#[test]
fn a_login_then_calls_carry_the_token_in_both_eras() {
    for era in [None, Some(Era::V2025_11_25)] {
        let (auth, resource) = servers(|_| ());
        let client = connect(&resource.url, oauth(), era).expect("a login");
        assert_eq!(echo(&client, "one").unwrap(), "one");
        assert_eq!(echo(&client, "two").unwrap(), "two");
        assert!(client.list_tools().unwrap().len() >= 3);
        let ledger = auth.ledger();
        assert_eq!((ledger.authorizations, ledger.registrations), (1, 1));
        assert_eq!(ledger.grants, ["authorization_code"], "{:?}", era);
        let query = &ledger.authorize_queries[0];
        assert_eq!(value_of(query, "code_challenge_method").unwrap(), "S256");
        assert_eq!(value_of(query, "code_challenge").unwrap().len(), 43);
        assert_eq!(value_of(query, "resource").unwrap(), resource.url);
        assert_eq!(value_of(query, "client_id").unwrap(), "client-1");
        assert!(value_of(query, "state").map_or(false, |s| s.len() >= 16));
        // Scope Selection Strategy: the challenge's scope; offline_access
        // because the authorization server lists it.
        assert_eq!(ledger.last_scope(), ["mcp:tools", "offline_access"]);
        // Every request the resource saw carried the one issued token.
        assert!(ledger.presented.len() >= 4, "{:?}", ledger.presented);
        assert!(ledger.presented.iter().all(|t| t == "at-2"), "{:?}", era);
    }
}

// basic/authorization "Refresh Tokens"; RFC 6749 §6: a token about to
// expire is refreshed before the next request, without a new login.
#[test]
fn a_token_about_to_expire_is_refreshed_first() {
    let (auth, resource) = servers(|l| l.expires_in = Some(5));
    let client = connect(&resource.url, oauth(), None).expect("a login");
    let before = auth.ledger().refreshes();
    assert_eq!(echo(&client, "fresh").unwrap(), "fresh");
    let ledger = auth.ledger();
    assert!(ledger.refreshes() > before, "{:?}", ledger.grants);
    assert_eq!(ledger.authorizations, 1);
    let last = ledger.presented.last().unwrap();
    assert_eq!(*last, format!("at-{}", ledger.grants.len() + 1));
}

// RFC 6750 §3.1 invalid_token, RFC 6749 §6: a revoked token's 401 sets off
// a refresh, and the call succeeds without a new authorization.
#[test]
fn a_revoked_token_is_refreshed_on_401() {
    let (auth, resource) = servers(|_| ());
    let client = connect(&resource.url, oauth(), None).expect("a login");
    auth.ledger().revoke_all();
    assert_eq!(echo(&client, "again").unwrap(), "again");
    let ledger = auth.ledger();
    assert_eq!(ledger.grants, ["authorization_code", "refresh_token"]);
    assert_eq!(ledger.authorizations, 1);
}

// RFC 6749 §5.2 invalid_grant: a refused refresh token leads to a new
// authorization, and the call succeeds.
#[test]
fn a_refused_refresh_logs_in_again() {
    let (auth, resource) = servers(|_| ());
    let client = connect(&resource.url, oauth(), Some(Era::V2025_11_25)).expect("a login");
    {
        let mut ledger = auth.ledger();
        ledger.revoke_all();
        ledger.refuse_refresh = true;
    }
    assert_eq!(echo(&client, "relogin").unwrap(), "relogin");
    let ledger = auth.ledger();
    assert_eq!(ledger.refreshes(), 1);
    assert_eq!((ledger.authorizations, ledger.registrations), (2, 1));
}

// basic/authorization "Step-Up Authorization Flow", RFC 6750 §3.1
// insufficient_scope: a new authorization for the union of the scopes
// asked before and the challenge's; the token then works.
#[test]
fn insufficient_scope_steps_up_to_the_union() {
    let (auth, resource) = servers(|_| ());
    let client = connect(&resource.url, oauth(), None).expect("a login");
    let result = client.call_tool("admin", json!({"text": "root"}));
    assert!(result.is_ok(), "{:?}", result);
    client.call_tool("admin", json!({"text": "again"})).unwrap();
    let ledger = auth.ledger();
    assert_eq!(ledger.authorizations, 2);
    let mut asked = ledger.last_scope();
    asked.sort();
    assert_eq!(asked, ["mcp:admin", "mcp:tools", "offline_access"]);
}

// basic/authorization "Step-Up Authorization Flow": a step-up that can ask
// for nothing new is a permanent failure, not a loop.
#[test]
fn a_futile_step_up_stops_without_looping() {
    let (auth, resource) = servers(|l| l.withheld = vec!["mcp:never".into()]);
    let client = connect(&resource.url, oauth(), None).expect("a login");
    let err = client.call_tool("never", json!({})).unwrap_err();
    match err.kind() {
        ErrorKind::Authorization { step, .. } => assert_eq!(*step, "step-up authorization"),
        other => panic!("expected a step-up error, got {:?}", other),
    }
    assert_eq!(auth.ledger().authorizations, 2, "one login, one step-up");
    assert_eq!(echo(&client, "still").unwrap(), "still");
}

// basic/authorization "Client Registration" (a registration kept and used
// again) and "Token Storage": a second client with the same file logs in
// neither again nor registers; the file is its owner's only.
#[test]
fn a_stored_login_is_used_by_the_next_client() {
    let (auth, resource) = servers(|_| ());
    let dir = std::env::temp_dir().join(format!("tiny-mcp-oauth-{}", uuid::Uuid::new_v4()));
    let path = dir.join("tokens.json");
    let first = connect(
        &resource.url,
        oauth().store(FileTokenStore::new(&path)),
        None,
    );
    assert_eq!(echo(&first.expect("a login"), "1").unwrap(), "1");
    let second = connect(
        &resource.url,
        oauth().store(FileTokenStore::new(&path)),
        None,
    );
    assert_eq!(echo(&second.expect("no login"), "2").unwrap(), "2");
    let ledger = auth.ledger();
    assert_eq!((ledger.authorizations, ledger.registrations), (1, 1));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

// basic/authorization "Token Storage"; ErrorKind::Authorization's promise:
// no secret in the Debug output of what is stored.
#[test]
fn debug_output_shows_no_secret() {
    let (_auth, resource) = servers(|l| l.client_secret = Some("s3cret-value".into()));
    let oauth = oauth();
    let client = connect(&resource.url, oauth.clone(), None).expect("a login");
    assert_eq!(echo(&client, "x").unwrap(), "x");
    let login = oauth
        .login_for(&resource.url)
        .unwrap()
        .expect("a login kept");
    let registration = login.registration.as_ref().expect("a registration");
    assert_eq!(registration.client_secret.as_deref(), Some("s3cret-value"));
    for text in [format!("{:?}", login), format!("{:?}", oauth)] {
        assert!(
            !text.contains("s3cret") && !text.contains("at-2"),
            "{}",
            text
        );
        assert!(!text.contains("rt-2"), "{}", text);
    }
}

// basic/authorization "Access Token Usage": two requests refused at once
// (both held by the verifier until both arrived) set off one login.
#[test]
fn two_threads_refused_at_once_log_in_once() {
    let (auth, resource) = servers(|l| l.refresh_tokens = false);
    let client = Arc::new(connect(&resource.url, oauth(), None).expect("a login"));
    {
        let mut ledger = auth.ledger();
        ledger.revoke_all();
        ledger.hold_revoked = 2;
    }
    std::thread::scope(|scope| {
        let calls: Vec<_> = ["a", "b"]
            .iter()
            .map(|text| {
                let client = Arc::clone(&client);
                scope.spawn(move || echo(&client, text))
            })
            .collect();
        for (call, text) in calls.into_iter().zip(["a", "b"]) {
            assert_eq!(call.join().unwrap().unwrap(), text);
        }
    });
    let ledger = auth.ledger();
    assert_eq!(ledger.authorizations, 2, "the first login and one more");
    let revoked = ledger.presented.iter().filter(|t| *t == "at-2").count();
    assert!(
        revoked >= 3,
        "both calls were refused: {:?}",
        ledger.presented
    );
}

/// An authorization server whose metadata answers are `reply(issuer)`.
fn hostile_metadata(reply: impl Fn(&str) -> Reply + Send + Sync + 'static) -> AuthServer {
    AuthServer::with(move |request: &Request| {
        let issuer = format!("http://{}", request.header("host").unwrap_or(""));
        match request.path.starts_with("/.well-known/") {
            true => Some(reply(&issuer)),
            false => None,
        }
    })
}

fn json_reply(value: &Value) -> Reply {
    Reply::Close(answer(200, "application/json", &value.to_string(), ""))
}

// RFC 9728 §3.3: resource metadata naming another resource is refused.
#[test]
fn resource_metadata_for_another_resource_is_refused() {
    let auth = AuthServer::start();
    let other = json!("http://127.0.0.1:1/other");
    let resource = resource(&auth, |p| p.metadata_field("resource", other));
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "protected resource metadata");
    assert!(message.contains("127.0.0.1:1/other"), "{}", message);
    assert_eq!(auth.ledger().authorizations, 0);
}

// RFC 8414 §3.3: metadata whose issuer is not the one asked for is refused.
#[test]
fn server_metadata_with_a_wrong_issuer_is_refused() {
    let auth = hostile_metadata(|_| json_reply(&metadata("http://evil.example")));
    let resource = resource(&auth, |p| p);
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "authorization server metadata");
    assert!(message.contains("evil.example"), "{}", message);
    assert_eq!(auth.ledger().registrations, 0);
}

// RFC 8414 §3.2: a metadata answer that is not JSON.
#[test]
fn malformed_server_metadata_is_an_error() {
    let auth =
        hostile_metadata(|_| Reply::Close(answer(200, "application/json", "{\"issuer\": ", "")));
    let resource = resource(&auth, |p| p);
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "authorization server metadata");
    assert!(message.contains("not JSON"), "{}", message);
}

// OAuth::max_response_bytes: a metadata document over the limit.
#[test]
fn oversized_server_metadata_is_an_error() {
    let auth = hostile_metadata(|issuer| {
        let mut big = metadata(issuer);
        big["padding"] = json!("x".repeat(4096));
        json_reply(&big)
    });
    let resource = resource(&auth, |p| p);
    let oauth = oauth().max_response_bytes(2048);
    let (step, message) = step_of(connect(&resource.url, oauth, None));
    assert_eq!(step, "authorization server metadata");
    assert!(message.contains("2048"), "{}", message);
}

// A metadata URL that redirects forever is given up on.
#[test]
fn endless_metadata_redirects_are_an_error() {
    let auth = hostile_metadata(|issuer| {
        let location = format!("Location: {}/.well-known/loop\r\n", issuer);
        Reply::Close(answer(302, "text/plain", "", &location))
    });
    let resource = resource(&auth, |p| p);
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "authorization server metadata");
    assert!(message.contains("redirects"), "{}", message);
    let asked = auth.fake.requests().len();
    assert!(asked <= 2 * 6, "{} requests: redirects are bounded", asked);
}

// OAuth::request_timeout: a server that accepts and never answers.
#[test]
fn a_silent_server_is_an_error_within_the_request_timeout() {
    let auth = hostile_metadata(|_| Reply::Hold(Vec::new()));
    let resource = resource(&auth, |p| p);
    let oauth = oauth().request_timeout(Duration::from_millis(300));
    let (step, _) = step_of(connect(&resource.url, oauth, None));
    assert_eq!(step, "authorization server metadata");
}

// RFC 6749 §5.2: the token endpoint's invalid_grant ends the login.
#[test]
fn a_refused_code_is_an_error() {
    let auth = AuthServer::with(|request: &Request| match request.path.as_str() {
        "/token" => {
            let body = r#"{"error":"invalid_grant","error_description":"code used"}"#;
            Some(Reply::Close(answer(400, "application/json", body, "")))
        }
        _ => None,
    });
    let resource = resource(&auth, |p| p);
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "token request");
    assert!(message.contains("invalid_grant"), "{}", message);
}

// RFC 6749 §10.12, basic/authorization "Authorization Code Protection":
// an authorization response with another state is refused, and its code
// is never exchanged.
#[test]
fn a_wrong_state_is_refused() {
    let (auth, resource) = servers(|l| l.forged_state = Some("forged".into()));
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "authorization");
    assert!(message.contains("state"), "{}", message);
    assert!(auth.ledger().grants.is_empty());
}

// basic/authorization "Authorization Code Protection": no S256 in
// code_challenge_methods_supported, no login at all.
#[test]
fn a_server_without_s256_is_refused() {
    let auth = hostile_metadata(|issuer| {
        let mut plain = metadata(issuer);
        plain["code_challenge_methods_supported"] = json!(["plain"]);
        json_reply(&plain)
    });
    let resource = resource(&auth, |p| p);
    let (step, message) = step_of(connect(&resource.url, oauth(), None));
    assert_eq!(step, "authorization server metadata");
    assert!(message.contains("S256"), "{}", message);
    let ledger = auth.ledger();
    assert_eq!((ledger.registrations, ledger.authorizations), (0, 0));
}

/// A fake 2025-11-25 MCP server that takes any `at-` token and names the
/// authorization server in `issuer` in its resource metadata.
fn moving_resource(issuer: Arc<parking_lot::Mutex<String>>) -> super::fake::Fake {
    use super::fake::{handshake_2025, json, text_result, Fake};
    Fake::start(move |request: &Request| {
        let url = format!("http://{}/mcp", request.header("host").unwrap_or(""));
        if request
            .path
            .starts_with("/.well-known/oauth-protected-resource")
        {
            let prm = json!({"resource": url, "authorization_servers": [*issuer.lock()]});
            return Reply::Close(json(&prm.to_string(), ""));
        }
        let bearer = request.header("authorization").unwrap_or("");
        if !bearer.starts_with("Bearer at-") {
            let challenge = "WWW-Authenticate: Bearer\r\n";
            return Reply::Close(answer(401, "application/json", "{}", challenge));
        }
        handshake_2025(request)
            .unwrap_or_else(|| Reply::Keep(json(&text_result(request, "ok"), "")))
    })
}

// basic/authorization "Authorization Server Binding" (2026-07-28), RFC 6749
// §10.4: a refresh token is sent only to the authorization server that
// issued it, even when the resource now names another one.
#[test]
fn a_refresh_token_never_goes_to_another_authorization_server() {
    let first = AuthServer::start();
    first.ledger().expires_in = Some(5);
    let second = AuthServer::start();
    let issuer = Arc::new(parking_lot::Mutex::new(first.issuer.clone()));
    let mcp = moving_resource(Arc::clone(&issuer));
    let url = mcp.url("/mcp");
    let client = connect(&url, oauth(), Some(Era::V2025_11_25)).expect("a login");
    assert_eq!(first.ledger().authorizations, 1);
    *issuer.lock() = second.issuer.clone();
    let _ = client.call_tool("echo", json!({}));
    let grants = second.ledger().grants.clone();
    assert!(
        !grants.iter().any(|g| g == "refresh_token"),
        "the second server was sent the first one's refresh token: {:?}",
        grants
    );
}

// OAuth 2.1 §4.3.1 (refresh token rotation), OAuth::store: two clients
// sharing a store; one refreshes (the old refresh token dies), the other,
// refused, takes the stored tokens instead of logging in again.
#[test]
fn clients_sharing_a_store_follow_each_others_refresh() {
    let (auth, resource) = servers(|_| ());
    let oauth = oauth();
    let first = connect(&resource.url, oauth.clone(), None).expect("a login");
    let second = connect(&resource.url, oauth, None).expect("the stored login");
    auth.ledger().revoke_all();
    assert_eq!(echo(&first, "1").unwrap(), "1");
    assert_eq!(echo(&second, "2").unwrap(), "2");
    let ledger = auth.ledger();
    assert_eq!(ledger.authorizations, 1, "{:?}", ledger.grants);
    assert_eq!(ledger.refreshes(), 1);
}
