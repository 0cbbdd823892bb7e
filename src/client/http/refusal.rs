//! What an answer other than a `200` with a result means: the server's
//! JSON-RPC error, the end of the session (`404`), or an HTTP refusal
//! with its `Bearer` challenge (RFC 6750 §3, RFC 9728 §5.1).

use super::HttpLink;
use crate::challenge::BearerChallenge;
use crate::client::wire::Head;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::Message;
use serde_json::Value;

impl HttpLink {
    /// An answer that is not a 200 with a result: a JSON-RPC error body
    /// as the server's error, 404 on a session as its end, 401/403 with
    /// their challenge.
    pub(super) fn refusal(&self, head: &Head, body: &[u8], with_session: bool) -> Error {
        if with_session && self.state.lock().session.is_some() && session_ended(head, body) {
            return Error::new(ErrorKind::SessionExpired);
        }
        let challenge = challenge(head);
        let authorization = head.status == 401 || challenge.is_some();
        if let (false, Ok(Message::Response(response))) = (authorization, Message::parse(body)) {
            if let Err(error) = response.outcome {
                return Error::new(ErrorKind::Peer(error));
            }
        }
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        Error::new(ErrorKind::Http {
            status: head.status,
            challenge,
            body: text,
        })
    }

    /// The server's refusal of a response the client POSTed (HTTP-3): the
    /// status and the server's message, or the end of the session.
    pub(super) fn answer_refused(&self, head: &Head, body: &[u8]) -> Error {
        if head.status == 404 && self.state.lock().session.is_some() {
            return Error::new(ErrorKind::SessionExpired);
        }
        Error::new(ErrorKind::Http {
            status: head.status,
            challenge: challenge(head),
            body: format!(
                "the server refused the answer to its request: {}",
                server_message(body)
            ),
        })
    }
}

/// The `Bearer` challenge of a `401` or `403`.
fn challenge(head: &Head) -> Option<BearerChallenge> {
    match head.status {
        // Every field line, each with any number of challenges (RFC 9110 §11.6.1).
        401 | 403 => BearerChallenge::from_values(
            head.headers
                .iter()
                .filter(|(name, _)| name == "www-authenticate")
                .map(|(_, value)| value.as_str()),
        ),
        _ => None,
    }
}

/// Whether a refusal of a request that carried a session id says the
/// session is gone: `404`, as the spec has it (2025-11-25 transports,
/// "Session Management": the server MUST answer `404`), or a `400` whose
/// body speaks of the session, which some servers send for an id they do
/// not know (the TypeScript `server-everything` after a restart: "Bad
/// Request: No valid session ID provided", with id `null`). Any other
/// `400`, and one that answers the request by its id, is the server's
/// error.
fn session_ended(head: &Head, body: &[u8]) -> bool {
    match head.status {
        404 => true,
        400 if answers_a_request(body) => false,
        400 => String::from_utf8_lossy(&body[..body.len().min(1024)])
            .to_ascii_lowercase()
            .contains("session"),
        _ => false,
    }
}

/// A JSON-RPC response with an id: the server read the request and
/// answered it, so its error is about the request, not the session.
fn answers_a_request(body: &[u8]) -> bool {
    match Message::parse(body) {
        Ok(Message::Response(response)) => response.id.is_some(),
        _ => false,
    }
}

/// What a refusal's body says: the message of a JSON-RPC error (with its
/// code), an `{"error": "…"}`'s text, or the body's first 300 characters.
fn server_message(body: &[u8]) -> String {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let message = match value.get("error") {
        Some(Value::String(text)) => Some(text.clone()),
        Some(error) => {
            error
                .get("message")
                .and_then(Value::as_str)
                .map(|m| match error.get("code") {
                    Some(code) => format!("{} ({})", m, code),
                    None => m.to_string(),
                })
        }
        None => None,
    };
    let text = message.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    text.chars().take(300).collect()
}
