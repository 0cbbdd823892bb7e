//! The HTTP+SSE transport of 2024-11-05, for servers that speak only it
//! (basic/transports (2025-11-25) "Backwards Compatibility"; 2024-11-05
//! basic/transports "HTTP with SSE").
//!
//! The client opens a GET event stream on the server's URL. Its first
//! event (`endpoint`) names the URI, on the same origin, to POST each
//! JSON-RPC message to; the server's messages all arrive as events on the
//! stream. That is a duplex link whose input is the stream and whose
//! output is one POST per message, so it is one: [`Duplex`] runs on a
//! reader that hands it each event as a line ([`Lines`], fed by the
//! thread that reads the stream) and a writer that POSTs each line
//! ([`Poster`], on the duplex writer thread). A refused POST ends the
//! connection: the stream is shut down and every waiting call fails with
//! the reason.
//!
//! The endpoint is the first event named `endpoint`; after it, events
//! named `message` (or unnamed, which the event-stream parser reads as
//! `message`) carry the server's messages, and other events are passed
//! over.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};
use parking_lot::Mutex;
use serde_json::Value;

use super::duplex::{Duplex, DuplexLimits};
use super::http::HttpSettings;
use super::inbox::Inbox;
use super::link::{Link, Outgoing, Wait};
use super::sse::Events;
use super::wire::{Body, Conn, Endpoint, Head, Transport};
use crate::challenge::BearerChallenge;
use crate::error::{Error, ErrorKind};
use crate::protocol::Era;

/// Bytes of a refused answer's body kept for the error, at most.
const ERROR_BODY: usize = 64 * 1024;
/// Messages read from the stream and not yet routed, at most.
const LINE_QUEUE: usize = 64;

/// Why the connection ended, when the stream or a POST failed.
type Why = Arc<Mutex<Option<String>>>;

/// `true` for the statuses with which a server that does not serve
/// Streamable HTTP at a URL refuses the POST of `initialize` there:
/// `400`, `404`, `405`.
pub(crate) fn refused_post(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Http {
            status: 400 | 404 | 405,
            ..
        }
    )
}

/// Connects to `url` over the 2024-11-05 transport, after the POST of
/// `initialize` there failed with `refused`: the GET stream, its endpoint
/// event (within the connect timeout), then a duplex link. Each POST may
/// take `post_timeout`.
///
/// # Errors
///
/// A `401`/`403` to the GET as is; an endpoint on another origin; else an
/// error that names both attempts.
pub(crate) fn connect(
    url: &str,
    refused: &Error,
    settings: &HttpSettings,
    post_timeout: Duration,
    inbox: Arc<Inbox>,
    limits: DuplexLimits,
) -> Result<SseLink, Error> {
    let base = Endpoint::parse(url).map_err(Error::msg)?;
    let (stream, uri) = match open_stream(&base, settings) {
        Ok(opened) => opened,
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::Http {
                    status: 401 | 403,
                    ..
                }
            ) =>
        {
            return Err(e)
        }
        Err(e) => return Err(neither(url, refused, &e)),
    };
    let endpoint = match resolve(&base, &uri) {
        Ok(endpoint) => endpoint,
        Err(why) => {
            let _ = stream.socket.shutdown(Shutdown::Both);
            return Err(Error::new(ErrorKind::Protocol(format!(
                "the endpoint event of {} names {:?}, which {}; refused",
                url, uri, why
            ))));
        }
    };
    log::debug!(
        "{}: the 2024-11-05 HTTP+SSE transport, messages to {}",
        url,
        uri
    );
    let poster = Poster {
        endpoint,
        settings: settings.clone(),
        timeout: post_timeout,
        conn: None,
        queued: Vec::new(),
        why: Arc::clone(&stream.why),
        stream: stream.socket.try_clone()?,
    };
    let why = Arc::clone(&stream.why);
    let lines = Lines {
        queue: stream.lines,
        line: Vec::new(),
        at: 0,
    };
    let duplex = Duplex::start(
        Box::new(lines),
        Box::new(poster),
        inbox,
        limits,
        Box::new(move || {
            why.lock()
                .clone()
                .unwrap_or_else(|| "the server ended its event stream".to_string())
        }),
    )?;
    Ok(SseLink {
        duplex,
        socket: stream.socket,
    })
}

/// The duplex link and the GET stream's socket, which closing shuts down
/// so that the thread reading the stream ends with it.
pub(crate) struct SseLink {
    duplex: Duplex,
    socket: TcpStream,
}

impl Link for SseLink {
    fn request(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error> {
        self.duplex.request(out, wait)
    }

    fn request_uncancelled(&self, out: &Outgoing, wait: &Wait<'_>) -> Result<Value, Error> {
        self.duplex.request_uncancelled(out, wait)
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.duplex.notify(method, params)
    }

    fn settle(&self, era: Era, version: &str) {
        self.duplex.settle(era, version);
    }

    fn close(&self) {
        let _ = self.socket.shutdown(Shutdown::Both);
        self.duplex.close();
    }
}

/// The error of a server that answered neither transport.
fn neither(url: &str, refused: &Error, get: &Error) -> Error {
    Error::new(ErrorKind::Protocol(format!(
        "{} speaks neither MCP transport over HTTP: the POST of initialize got {} \
         (not Streamable HTTP), and the GET for the 2024-11-05 HTTP+SSE transport's \
         endpoint event failed: {}",
        url,
        briefly(refused),
        briefly(get)
    )))
}

/// An error as said within another: an HTTP status without its body.
fn briefly(e: &Error) -> String {
    match e.kind() {
        ErrorKind::Http { status, .. } => format!("HTTP {}", status),
        _ => e.to_string(),
    }
}

/// The GET stream, read by its own thread from here on.
struct Stream {
    /// The stream's socket, to shut it down.
    socket: TcpStream,
    /// Each message on the stream, as one line.
    lines: Receiver<Vec<u8>>,
    why: Why,
}

/// Opens the GET stream on `base` and waits, until the connect timeout,
/// for its first event: the endpoint's URI.
fn open_stream(base: &Endpoint, settings: &HttpSettings) -> Result<(Stream, String), Error> {
    let mut conn = open(base, settings)?;
    conn.set_deadline(Some(Instant::now() + settings.connect_timeout));
    let mut headers = vec![("Accept", "text/event-stream".to_string())];
    headers.extend(authorization(settings));
    conn.send("GET", base, &headers, &settings.headers, None)?;
    let head = conn.head()?;
    if head.status != 200 {
        let body = Body::new(&mut conn, head.framing()).read_all(ERROR_BODY)?;
        return Err(http_error(&head, &body));
    }
    if head.media_type() != "text/event-stream" {
        return Err(Error::new(ErrorKind::Protocol(format!(
            "the GET answered {:?}, not an event stream",
            head.media_type()
        ))));
    }
    let socket = conn.stream().try_clone()?;
    let (found, endpoint) = bounded(1);
    let (lines, queue) = bounded(LINE_QUEUE);
    let why: Why = Arc::default();
    let pump = Pump {
        found,
        lines,
        why: Arc::clone(&why),
        socket: socket.try_clone()?,
        max: settings.max_message_bytes,
    };
    thread::Builder::new()
        .name("tiny-mcp-client-sse".into())
        .spawn(move || pump.run(conn, &head))?;
    // The socket's deadline ends the thread's wait first; this one is
    // only a bound.
    let uri = match endpoint.recv_timeout(settings.connect_timeout + Duration::from_secs(1)) {
        Ok(Ok(uri)) => Ok(uri),
        Ok(Err(why)) => Err(why),
        Err(_) => Err("no endpoint event within the connect timeout".to_string()),
    };
    match uri {
        Ok(uri) => Ok((
            Stream {
                socket,
                lines: queue,
                why,
            },
            uri,
        )),
        Err(why) => {
            let _ = socket.shutdown(Shutdown::Both);
            Err(Error::new(ErrorKind::Protocol(why)))
        }
    }
}

/// The thread that reads the GET stream: the endpoint event first, then
/// every message, each as a line for the duplex reader.
struct Pump {
    found: Sender<Result<String, String>>,
    lines: Sender<Vec<u8>>,
    why: Why,
    socket: TcpStream,
    max: usize,
}

impl Pump {
    fn run(self, mut conn: Conn, head: &Head) {
        let body = Body::new(&mut conn, head.framing());
        let mut events = Events::new(BufReader::new(body), self.max);
        let first = endpoint_event(&mut events);
        let found = first.is_ok();
        if self.found.send(first).is_err() || !found {
            return;
        }
        // From here on the stream stays open as long as the server keeps it.
        events.reader_mut().get_mut().set_deadline(None);
        if let Err(e) = self.socket.set_read_timeout(None) {
            log::warn!("cannot clear the event stream's timeout: {}", e);
        }
        loop {
            match events.next_event() {
                Ok(Some(event)) if event.kind != "message" || event.data.trim().is_empty() => {
                    continue
                }
                Ok(Some(event)) => {
                    if self.lines.send(as_line(&event.data)).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    self.why.lock().get_or_insert_with(|| {
                        format!("reading the server's event stream failed: {}", e)
                    });
                    return;
                }
            }
        }
        // Dropping `lines` is end of input for the duplex reader.
    }
}

/// The data of the first `endpoint` event: the endpoint's URI. Events
/// before it without data (keepalives, a lone `id`) are passed over; a
/// message before it is a server that does not speak this transport.
fn endpoint_event<R: BufRead>(events: &mut Events<R>) -> Result<String, String> {
    loop {
        match events.next_event() {
            Ok(Some(event)) if event.kind.is_empty() => continue,
            Ok(Some(event)) if event.kind == "endpoint" => {
                return Ok(event.data.trim().to_string())
            }
            Ok(Some(event)) => {
                return Err(format!(
                    "the stream's first event is {:?}, not an endpoint",
                    event.kind
                ))
            }
            Ok(None) => return Err("the stream ended before an endpoint event".into()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                return Err("no endpoint event within the connect timeout".into())
            }
            Err(e) => return Err(format!("reading the stream failed: {}", e)),
        }
    }
}

/// An event's data as one line: its line breaks (between JSON tokens,
/// since a JSON string holds none) become spaces.
fn as_line(data: &str) -> Vec<u8> {
    let mut line: Vec<u8> = data
        .bytes()
        .map(|b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect();
    line.push(b'\n');
    line
}

/// The duplex reader's input: the lines the stream's thread queues; end
/// of input when that thread ends.
struct Lines {
    queue: Receiver<Vec<u8>>,
    line: Vec<u8>,
    at: usize,
}

impl Read for Lines {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(out.len());
            out[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Lines {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at >= self.line.len() {
            match self.queue.recv() {
                Ok(line) => {
                    self.line = line;
                    self.at = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.line[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.line.len());
    }
}

/// The duplex writer's output: each whole line is POSTed to the endpoint
/// on a kept-alive connection. A POST that fails ends the connection.
struct Poster {
    endpoint: Endpoint,
    settings: HttpSettings,
    timeout: Duration,
    conn: Option<Conn>,
    /// Bytes of a line not yet whole.
    queued: Vec<u8>,
    why: Why,
    /// The GET stream's socket.
    stream: TcpStream,
}

impl Write for Poster {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.queued.extend_from_slice(bytes);
        while let Some(end) = self.queued.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.queued.drain(..=end).collect();
            if let Err(e) = self.post(&line[..end]) {
                let reason = format!(
                    "the server refused a message (POST {}): {}",
                    self.endpoint.path, e
                );
                self.why.lock().get_or_insert_with(|| reason.clone());
                // Ends the stream, so every waiting call fails with the reason.
                let _ = self.stream.shutdown(Shutdown::Both);
                return Err(io::Error::new(io::ErrorKind::Other, reason));
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Poster {
    /// One message; `202 Accepted` (any 2xx) expected, the answer comes
    /// on the stream.
    fn post(&mut self, message: &[u8]) -> Result<(), Error> {
        let mut conn = match self.conn.take() {
            Some(conn) if !conn.closed_by_peer() => conn,
            _ => open(&self.endpoint, &self.settings)?,
        };
        conn.set_deadline(Some(Instant::now() + self.timeout));
        let mut headers = vec![("Content-Type", "application/json".to_string())];
        headers.extend(authorization(&self.settings));
        conn.send(
            "POST",
            &self.endpoint,
            &headers,
            &self.settings.headers,
            Some(message),
        )?;
        let head = conn.head()?;
        let mut reply = Body::new(&mut conn, head.framing());
        let body = reply.read_all(ERROR_BODY)?;
        let reusable = reply.finished() && head.keeps_alive();
        if !(200..300).contains(&head.status) {
            return Err(http_error(&head, &body));
        }
        if reusable {
            conn.set_deadline(None);
            conn.reader.get_mut().idle_since = Some(Instant::now());
            self.conn = Some(conn);
        }
        Ok(())
    }
}

/// `Authorization: Bearer …` when there is a token.
fn authorization(settings: &HttpSettings) -> Option<(&'static str, String)> {
    let token = settings.credentials.as_ref().and_then(|c| c.token())?;
    Some(("Authorization", format!("Bearer {}", token)))
}

/// A status that is not the one expected, with its challenge on `401`
/// and `403`.
fn http_error(head: &Head, body: &[u8]) -> Error {
    let challenge = match head.status {
        401 | 403 => head
            .header("www-authenticate")
            .and_then(BearerChallenge::parse),
        _ => None,
    };
    Error::new(ErrorKind::Http {
        status: head.status,
        challenge,
        body: String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned(),
    })
}

/// A new connection to `endpoint`'s origin, under TLS for `https://`.
fn open(endpoint: &Endpoint, settings: &HttpSettings) -> Result<Conn, Error> {
    let socket = endpoint.connect(settings.connect_timeout).map_err(|e| {
        let what = format!(
            "cannot connect to {}:{}: {}",
            endpoint.host, endpoint.port, e
        );
        Error::from(io::Error::new(e.kind(), what))
    })?;
    if !endpoint.tls {
        return Ok(Conn::new(Transport::plain(socket)));
    }
    #[cfg(feature = "tls")]
    {
        let tls = settings
            .tls
            .as_ref()
            .ok_or_else(|| Error::msg("no TLS configuration"))?;
        Ok(Conn::new(Transport::tls(tls.wrap(&endpoint.host, socket)?)))
    }
    #[cfg(not(feature = "tls"))]
    {
        drop(socket);
        Err(Error::msg("https:// needs tiny-mcp's `tls` feature"))
    }
}

/// The endpoint `uri` names, resolved against `base` (RFC 3986 §5.2, dot
/// segments left as sent); `Err` says why it is refused: on another
/// origin (RFC 6454: scheme, host, port), or not a URI a request line can
/// carry.
fn resolve(base: &Endpoint, uri: &str) -> Result<Endpoint, String> {
    if uri.is_empty() || uri.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err("is not a URI".into());
    }
    let scheme = if base.tls { "https" } else { "http" };
    let origin = format!("{}://{}", scheme, base.authority);
    let absolute = if uri.starts_with("//") {
        format!("{}:{}", scheme, uri)
    } else if uri.starts_with('/') {
        format!("{}{}", origin, uri)
    } else if has_scheme(uri) {
        uri.to_string()
    } else {
        let path = base.path.split('?').next().unwrap_or("/");
        if uri.starts_with('?') {
            format!("{}{}{}", origin, path, uri)
        } else {
            let directory = &path[..path.rfind('/').map_or(0, |i| i + 1)];
            format!("{}{}{}", origin, directory, uri)
        }
    };
    let target = Endpoint::parse(&absolute).map_err(|_| "is not an http(s) URL".to_string())?;
    let same = target.tls == base.tls
        && target.host.eq_ignore_ascii_case(&base.host)
        && target.port == base.port;
    if !same {
        return Err(format!("is not on the origin {}", origin));
    }
    Ok(target)
}

/// `true` when `uri` starts with a scheme (RFC 3986 §3.1).
fn has_scheme(uri: &str) -> bool {
    let scheme = match uri.find(':') {
        Some(i) => &uri[..i],
        None => return false,
    };
    let mut chars = scheme.chars();
    chars.next().map_or(false, |c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Endpoint {
        Endpoint::parse("http://127.0.0.1:8080/mcp/sse?x=1").unwrap()
    }

    fn resolved(uri: &str) -> Result<String, String> {
        resolve(&base(), uri).map(|e| format!("{}{}", e.authority, e.path))
    }

    // RFC 3986 §5.2 (references resolved against the stream's URL) and
    // RFC 6454 (same origin: scheme, host, port); 2024-11-05 transports
    // "Security Warning".
    #[test]
    fn endpoints_resolve_on_the_same_origin_only() {
        let here = "127.0.0.1:8080";
        let ok = |path: &str| Ok(format!("{}{}", here, path));
        assert_eq!(
            resolved("/messages?sessionId=a"),
            ok("/messages?sessionId=a")
        );
        assert_eq!(resolved("messages?s=1"), ok("/mcp/messages?s=1"));
        assert_eq!(resolved("?s=1"), ok("/mcp/sse?s=1"));
        assert_eq!(resolved("http://127.0.0.1:8080/m"), ok("/m"));
        assert_eq!(resolved("//127.0.0.1:8080/m"), ok("/m"));
        for refused in [
            "http://127.0.0.1:8081/m",
            "http://localhost:8080/m",
            "https://127.0.0.1:8080/m",
            "//evil.example/m",
            "javascript:alert(1)",
            "/m\r\nX-Injected: 1",
            "/m n",
            "",
        ] {
            assert!(resolve(&base(), refused).is_err(), "{:?}", refused);
        }
    }

    // 2024-11-05 transports: the first event names the endpoint, later
    // ones carry messages; a JSON first event is no endpoint.
    #[test]
    fn the_endpoint_is_the_first_endpoint_event() {
        // 2024-11-05 basic/transports "HTTP with SSE": the first event is
        // `endpoint`; comments and data-less blocks before it are passed over.
        let text = ": hello\n\nid: 3\n\nevent: endpoint\ndata: /m?s=1\n\n";
        let mut events = Events::new(text.as_bytes(), 1024);
        assert_eq!(endpoint_event(&mut events), Ok("/m?s=1".to_string()));
        let text = "data: /looks-like-a-path\n\n";
        let mut events = Events::new(text.as_bytes(), 1024);
        assert!(endpoint_event(&mut events).is_err());
        assert_eq!(as_line("{\"a\":\n1}"), b"{\"a\": 1}\n".to_vec());
    }
}
