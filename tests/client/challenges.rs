//! The client reads every `WWW-Authenticate` field line of a 401 or 403
//! and every challenge in each (RFC 9110 §11.6.1, §11.2), and hands back
//! the Bearer one (RFC 6750 §3, RFC 9728 §5.1). The server is a fake on a
//! loopback socket that answers every request with one fixed refusal.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use tiny_mcp::{BearerChallenge, Client, ErrorKind};

/// Serves `answer` (a whole HTTP response) to every request, closing each
/// connection after it; the URL to connect to.
fn refusing_server(answer: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = match stream {
                Ok(stream) => stream,
                Err(_) => return,
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                let lower = line.to_ascii_lowercase();
                if let Some(value) = lower.strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// The challenge in the client's error when connecting to a server that
/// answers `status` with these `WWW-Authenticate` field lines.
fn challenge_of(status: u16, fields: &[&str]) -> BearerChallenge {
    let mut answer = format!("HTTP/1.1 {} Refused\r\n", status);
    for field in fields {
        answer.push_str(&format!("WWW-Authenticate: {}\r\n", field));
    }
    answer.push_str("Content-Length: 0\r\nConnection: close\r\n\r\n");
    let url = refusing_server(answer);
    let err = Client::builder("challenge-test", "1")
        .request_timeout(Duration::from_secs(20))
        .connect_http(&url)
        .unwrap_err();
    match err.kind() {
        ErrorKind::Http {
            status: got,
            challenge: Some(challenge),
            ..
        } if *got == status => challenge.clone(),
        other => panic!(
            "expected a {} with a Bearer challenge, got {:?}",
            status, other
        ),
    }
}

// RFC 9110 §11.6.1: two WWW-Authenticate field lines, Bearer in the second.
#[test]
fn the_bearer_challenge_of_a_second_field_line() {
    let c = challenge_of(
        401,
        &[
            r#"Basic realm="x""#,
            r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp""#,
        ],
    );
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("http://127.0.0.1/.well-known/oauth-protected-resource/mcp")
    );
}

// RFC 9110 §11.2: several challenges in one field line, a token68 one
// among them, commas inside quoted strings; a 403's scope (RFC 6750 §3.1).
#[test]
fn the_bearer_challenge_among_several_in_one_line() {
    let c = challenge_of(
        401,
        &[
            r#"Basic realm="x", Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#,
        ],
    );
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("http://127.0.0.1/.well-known/oauth-protected-resource")
    );
    let c = challenge_of(
        403,
        &[
            r#"Negotiate abc==, Basic realm="a, Bearer scope=wrong""#,
            r#"bearer error="insufficient_scope", SCOPE="files:read, files:write""#,
        ],
    );
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("files:read, files:write"));
}
