//! What a program sees of an HTTP request before its body is read (token
//! verifiers, pre-request hooks), and how a hook refuses one.

use std::fmt;
use std::net::SocketAddr;

use serde_json::Value;

use super::wire::{HttpRequest, HttpResponse};
use crate::server::HttpHeaders;

/// The head of an HTTP request: method, path, query, headers and the
/// peer's address, before the body is read. Read-only.
#[derive(Clone, Copy)]
pub struct HttpRequestHead<'a> {
    request: &'a HttpRequest,
}

impl fmt::Debug for HttpRequestHead<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequestHead")
            .field("method", &self.method())
            .field("path", &self.path())
            .field("remote_addr", &self.remote_addr())
            .finish()
    }
}

impl<'a> HttpRequestHead<'a> {
    pub(crate) fn new(request: &'a HttpRequest) -> HttpRequestHead<'a> {
        HttpRequestHead { request }
    }

    /// The method, e.g. `POST`.
    pub fn method(&self) -> &'a str {
        &self.request.method
    }

    /// The path, without the query string.
    pub fn path(&self) -> &'a str {
        &self.request.path
    }

    /// The query string after `?`, if any.
    pub fn query(&self) -> Option<&'a str> {
        self.request.query.as_deref()
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.request.headers.get(name)
    }

    /// Every header, names in lowercase.
    pub fn headers(&self) -> &'a HttpHeaders {
        &self.request.headers
    }

    /// The peer's address (a proxy's, behind one: read its forwarding
    /// header instead).
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.request.remote
    }
}

/// A pre-request hook's refusal: any status from 400 to 599, headers, and
/// a body (see
/// [`HttpServerBuilder::before_request`](crate::HttpServerBuilder::before_request)).
///
/// ```
/// use tiny_mcp::HttpRefusal;
///
/// let slow_down = HttpRefusal::new(429)
///     .header("Retry-After", "2")
///     .json(serde_json::json!({"error": "rate_limited"}));
/// assert_eq!(slow_down.status(), 429);
/// ```
#[derive(Debug, Clone)]
pub struct HttpRefusal {
    status: u16,
    headers: Vec<(String, String)>,
    body: Option<(&'static str, Vec<u8>)>,
}

impl HttpRefusal {
    /// A refusal with `status`; one outside 400–599 is sent as 500. No
    /// body: the reason phrase says it.
    pub fn new(status: u16) -> HttpRefusal {
        HttpRefusal {
            status: if (400..=599).contains(&status) {
                status
            } else {
                500
            },
            headers: Vec::new(),
            body: None,
        }
    }

    /// Adds a header. A name that is not an HTTP token, or a value with a
    /// control character (CR, LF: response splitting), is dropped and
    /// logged; `Content-Length`, `Content-Type`, `Connection` and
    /// `Transfer-Encoding` are the crate's and dropped too.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> HttpRefusal {
        let (name, value) = (name.into(), value.into());
        if !may_add_header(&name, &value, &[]) {
            log::warn!("dropping the refusal header {:?}", name);
        } else {
            self.headers.push((name, value));
        }
        self
    }

    /// Sets a JSON body.
    pub fn json(mut self, body: Value) -> HttpRefusal {
        self.body = Some(("application/json", body.to_string().into_bytes()));
        self
    }

    /// Sets a plain-text body.
    pub fn text(mut self, body: impl Into<String>) -> HttpRefusal {
        self.body = Some(("text/plain; charset=utf-8", body.into().into_bytes()));
        self
    }

    /// The status.
    pub fn status(&self) -> u16 {
        self.status
    }

    pub(crate) fn into_response(self) -> HttpResponse {
        let mut response = HttpResponse::new(self.status);
        if let Some((media_type, body)) = self.body {
            response = response.header("Content-Type", media_type);
            response.body = body;
        }
        response.extra = self.headers;
        response
    }
}

/// `true` if a program may add header `name: value` to a response: `name`
/// is an HTTP token (RFC 9110 §5.6.2), `value` has no control character
/// but tab (no response splitting), and neither the crate's framing
/// headers nor `reserved` are named.
pub(crate) fn may_add_header(name: &str, value: &str, reserved: &[&str]) -> bool {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    let framing = [
        "content-length",
        "content-type",
        "connection",
        "transfer-encoding",
    ];
    let taken = framing
        .iter()
        .chain(reserved)
        .any(|n| name.eq_ignore_ascii_case(n));
    token && !taken && !value.chars().any(|c| c.is_control() && c != '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_headers_cannot_split_the_response() {
        let refusal = HttpRefusal::new(429)
            .header("Retry-After", "1")
            .header("X-Evil", "a\r\nSet-Cookie: x")
            .header("Bad Name", "v")
            .header("content-length", "0");
        let response = refusal.into_response();
        assert_eq!(
            response.extra,
            [("Retry-After".to_string(), "1".to_string())]
        );
        assert_eq!(HttpRefusal::new(200).status(), 500);
    }
}
