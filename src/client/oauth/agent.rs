//! The user's part of a login: sending the user to the authorization URL
//! and getting the redirect back (OAuth 2.1 §4.1; RFC 8252 §7.3, loopback
//! redirects for native apps). A [`UserAgent`] does it: the crate has
//! [`LoopbackBrowser`] for programs run by a person and [`Headless`] for
//! tests and authorization servers that approve without a person.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::fetch::{failed, shown, Fetcher};
use crate::error::Error;

const STEP: &str = "authorization";

/// Sends the user to the authorization server and brings the answer back.
pub trait UserAgent: Send + Sync {
    /// The redirect URI the authorization server sends the user back to;
    /// registered with it, and sent in the authorization and token
    /// requests. Asked once per login, before [`authorize`](Self::authorize).
    fn redirect_uri(&self) -> Result<String, Error>;

    /// Sends the user to `url` (the authorization request, RFC 6749
    /// §4.1.1) and waits for the authorization server's redirect to the
    /// redirect URI: returns that whole URL, its query holding `code` and
    /// `state` (or `error`), and `iss` (RFC 9207).
    fn authorize(&self, url: &str) -> Result<String, Error>;
}

type ShowFn = dyn Fn(&str) + Send + Sync;

/// A loopback redirect for a program a person runs (RFC 8252 §7.3): a
/// listener on `127.0.0.1` with a port of the system's choosing, the
/// authorization URL shown to the user (on standard error by default),
/// and the browser's redirect to `http://127.0.0.1:PORT/callback` taken
/// as the answer. Other requests to the listener get `404`.
///
/// Waits at most 5 minutes for the user by default.
pub struct LoopbackBrowser {
    port: u16,
    timeout: Duration,
    show: Arc<ShowFn>,
    listener: Mutex<Option<TcpListener>>,
}

impl Default for LoopbackBrowser {
    fn default() -> LoopbackBrowser {
        LoopbackBrowser::new()
    }
}

impl std::fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackBrowser {
    /// A listener on a free port, the URL printed on standard error.
    pub fn new() -> LoopbackBrowser {
        LoopbackBrowser {
            port: 0,
            timeout: Duration::from_secs(300),
            show: Arc::new(|url: &str| {
                eprintln!("Open this URL in a browser to log in:\n\n    {}\n", url)
            }),
            listener: Mutex::new(None),
        }
    }

    /// Listens on this port instead (for an authorization server that
    /// allows only a registered port). Default: 0, any free port.
    pub fn port(mut self, port: u16) -> LoopbackBrowser {
        self.port = port;
        self
    }

    /// How long to wait for the browser's redirect. Default: 5 minutes.
    pub fn timeout(mut self, timeout: Duration) -> LoopbackBrowser {
        self.timeout = timeout;
        self
    }

    /// How the authorization URL reaches the user: printed, or given to
    /// a program that opens a browser. Default: printed on standard error.
    pub fn on_url(mut self, show: impl Fn(&str) + Send + Sync + 'static) -> LoopbackBrowser {
        self.show = Arc::new(show);
        self
    }

    fn bound_port(&self) -> Result<u16, Error> {
        let mut listener = self.listener.lock();
        if listener.is_none() {
            let bound = TcpListener::bind(("127.0.0.1", self.port))
                .map_err(|e| failed(STEP, format!("cannot listen on 127.0.0.1: {}", e)))?;
            *listener = Some(bound);
        }
        match listener.as_ref().map(TcpListener::local_addr) {
            Some(Ok(addr)) => Ok(addr.port()),
            _ => Err(failed(STEP, "the loopback listener has no address")),
        }
    }
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> Result<String, Error> {
        Ok(format!("http://127.0.0.1:{}/callback", self.bound_port()?))
    }

    fn authorize(&self, url: &str) -> Result<String, Error> {
        let port = self.bound_port()?;
        (self.show)(url);
        let deadline = Instant::now() + self.timeout;
        let guard = self.listener.lock();
        let listener = guard
            .as_ref()
            .ok_or_else(|| failed(STEP, "the loopback listener is gone"))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| failed(STEP, e.to_string()))?;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((stream, _)) => {
                    if let Some(target) = callback(stream) {
                        return Ok(format!("http://127.0.0.1:{}{}", port, target));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    // Waiting for a person: a tenth of a second is soon enough.
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(failed(STEP, format!("the loopback listener: {}", e))),
            }
        }
        Err(failed(
            STEP,
            format!("no redirect came back within {} s", self.timeout.as_secs()),
        ))
    }
}

/// Reads one request to the loopback listener: the target of a
/// `GET /callback?…`, answered with a page saying the login is done;
/// anything else gets `404` and `None`.
fn callback(mut stream: TcpStream) -> Option<String> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.lines().next().unwrap_or("").split(' ');
    let target = match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with("/callback?") => target.to_string(),
        _ => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return None;
        }
    };
    let page = "<!doctype html><title>Logged in</title>\
                <p>The login is complete. You can close this window.</p>";
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{}",
        page.len(),
        page
    );
    Some(target)
}

/// A user agent without a user: fetches the authorization URL and follows
/// the authorization server's redirects until one leads to the redirect
/// URI, which it returns without requesting it. For tests, and for
/// authorization servers that approve a known client at once; a server
/// that shows a login page stops it with an error.
pub struct Headless {
    redirect_uri: String,
    fetcher: Fetcher,
}

impl std::fmt::Debug for Headless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Headless")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl Headless {
    /// Answers with redirects to `redirect_uri` (not listened on).
    pub fn new(redirect_uri: impl Into<String>) -> Headless {
        Headless {
            redirect_uri: redirect_uri.into(),
            fetcher: Fetcher::standalone(),
        }
    }
}

impl UserAgent for Headless {
    fn redirect_uri(&self) -> Result<String, Error> {
        Ok(self.redirect_uri.clone())
    }

    fn authorize(&self, url: &str) -> Result<String, Error> {
        let mut next = url.to_string();
        for _ in 0..10 {
            let reply = self.fetcher.get_once(STEP, &next)?;
            let location = match (reply.status, reply.header("location")) {
                (301 | 302 | 303 | 307 | 308, Some(location)) => location.to_string(),
                (status, _) => {
                    return Err(failed(
                        STEP,
                        format!(
                            "{} answered {} without a redirect: it wants a person",
                            shown(&next),
                            status
                        ),
                    ))
                }
            };
            if location.starts_with(&self.redirect_uri) {
                return Ok(location);
            }
            next = self.fetcher.resolve(STEP, &next, &location)?;
        }
        Err(failed(
            STEP,
            "more than 10 redirects before the redirect URI",
        ))
    }
}
