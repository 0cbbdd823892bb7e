//! HTTP/1.1 on a blocking socket: read one request, write one response.
//!
//! Requests are parsed with `httparse`; bodies are read by `Content-Length`
//! or chunked transfer coding, within a size limit. Responses are written
//! whole (JSON, errors) or as a chunked stream of SSE events.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::server::HttpHeaders;

/// Most bytes of request line and headers.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most headers in one request.
const MAX_HEADERS: usize = 64;
/// Largest body of a request answered from its head that is read (into
/// nothing) to keep the connection; a larger one closes it.
pub(crate) const DRAIN_LIMIT: usize = 64 * 1024;

/// One parsed request.
#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    /// The path without the query string.
    pub(crate) path: String,
    /// The query string after `?`, if the target had one.
    pub(crate) query: Option<String>,
    /// Header names are lowercased.
    pub(crate) headers: HttpHeaders,
    pub(crate) body: Vec<u8>,
    /// The client wants the connection kept open after the response.
    pub(crate) keep_alive: bool,
    /// HTTP/1.0, which has no chunked transfer coding.
    pub(crate) http10: bool,
    /// The peer's address, when the socket knows it.
    pub(crate) remote: Option<SocketAddr>,
}

impl HttpRequest {
    /// The first value of header `name` (lowercase).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The peer closed the connection (or it timed out) between requests.
    Closed,
    /// The bytes are not HTTP: answer 400 and close.
    Malformed(&'static str),
    /// The head is too large: answer 431 and close.
    HeadTooLarge,
    /// The body is larger than the limit: answer 413 and close.
    BodyTooLarge,
    /// The head or the body took longer than its deadline: answer 408 and
    /// close.
    TimedOut,
    /// An I/O error in the middle of a request.
    Io(io::Error),
}

impl ReadError {
    /// An I/O error inside a request: a timeout is the peer's slowness.
    fn from_body(error: io::Error) -> ReadError {
        match error.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ReadError::TimedOut,
            _ => ReadError::Io(error),
        }
    }
}

/// A request whose head has been read and whose body has not.
#[derive(Debug)]
pub(crate) struct Head {
    /// The request, with an empty body.
    pub(crate) request: HttpRequest,
    body: Body,
    expects_continue: bool,
}

/// Reads the next request's head from `reader`: the head up to its blank
/// line, its parse, and the body's framing (`limits.max_body` bounds it).
/// The body is read next with [`Head::read_body`], or, when the head
/// alone decided the answer, after it with [`Head::discard_body`].
pub(crate) fn read_head(
    reader: &mut BufReader<Timed<'_>>,
    limits: &Limits,
) -> Result<Head, ReadError> {
    // The head's deadline starts with its first byte (a keep-alive wait
    // before it is bounded by the idle timeout alone).
    reader.get_mut().arm(limits.head_timeout);
    let head = read_head_bytes(reader);
    reader.get_mut().disarm();
    let mut request = parse_head(&head?)?;
    request.remote = reader.get_ref().stream.peer_addr().ok();
    let body = body_framing(&request, limits.max_body)?;
    let expects_continue = request
        .header("expect")
        .map_or(false, |v| v.eq_ignore_ascii_case("100-continue"));
    Ok(Head {
        request,
        body,
        expects_continue,
    })
}

impl Head {
    fn has_body(&self) -> bool {
        match self.body {
            Body::Chunked => true,
            Body::Length(n) => n > 0,
        }
    }

    /// Reads the body within its deadline. When the client sent
    /// `Expect: 100-continue`, the interim `100 Continue` is written first.
    pub(crate) fn read_body(
        self,
        reader: &mut BufReader<Timed<'_>>,
        limits: &Limits,
    ) -> Result<HttpRequest, ReadError> {
        if self.expects_continue && self.has_body() {
            let mut stream = reader.get_ref().stream;
            stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .map_err(ReadError::Io)?;
        }
        let mut request = self.request;
        reader.get_mut().deadline(limits.body_timeout);
        let body = match self.body {
            Body::Chunked => read_chunked(reader, limits.max_body),
            Body::Length(0) => Ok(Vec::new()),
            Body::Length(length) => read_length(reader, length),
        };
        reader.get_mut().disarm();
        request.body = body?;
        Ok(request)
    }

    /// `true` when the body of a request answered from its head is worth
    /// reading after the answer, so that the connection carries the next
    /// request: none, or a `Content-Length` of at most [`DRAIN_LIMIT`]
    /// that the client sends without waiting for `100 Continue` (RFC 9110
    /// §10.1.1). Otherwise the connection closes after the answer.
    pub(crate) fn drains_cheaply(&self) -> bool {
        match self.body {
            Body::Length(0) => true,
            Body::Length(n) => n <= DRAIN_LIMIT && !self.expects_continue,
            Body::Chunked => false,
        }
    }

    /// Reads the body into nothing within its deadline (no buffer holds
    /// it); `false` if it did not arrive whole.
    pub(crate) fn discard_body(self, reader: &mut BufReader<Timed<'_>>, limits: &Limits) -> bool {
        let length = match self.body {
            Body::Length(0) => return true,
            Body::Length(n) => n as u64,
            Body::Chunked => return false,
        };
        reader.get_mut().deadline(limits.body_timeout);
        let copied = io::copy(&mut reader.by_ref().take(length), &mut io::sink());
        reader.get_mut().disarm();
        copied.map_or(false, |n| n == length)
    }
}

/// A body of `length` bytes. The buffer grows with the bytes that arrive,
/// never with the length a peer announces (a head announcing 4 MiB and
/// sending nothing pins no more than the first read).
fn read_length(reader: &mut BufReader<Timed<'_>>, length: usize) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(length.min(16 * 1024));
    let read = reader
        .by_ref()
        .take(length as u64)
        .read_to_end(&mut bytes)
        .map_err(ReadError::from_body)?;
    if read == length {
        Ok(bytes)
    } else {
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "the body ended early");
        Err(ReadError::from_body(eof))
    }
}

/// One request read from `stream` as a connection reads it (head, then
/// body, with the default limits), for the fuzz target `http_request`:
/// the method and the body's length, or `None` where the connection would
/// answer an error.
#[cfg(feature = "fuzzing")]
pub(crate) fn read_one(stream: &TcpStream) -> Option<(String, usize)> {
    let limits = Limits {
        max_body: 64 * 1024,
        head_timeout: Duration::from_secs(5),
        body_timeout: Duration::from_secs(5),
    };
    let mut reader = BufReader::new(Timed::new(stream, Duration::from_secs(5)));
    let head = read_head(&mut reader, &limits).ok()?;
    let request = head.read_body(&mut reader, &limits).ok()?;
    Some((request.method, request.body.len()))
}

/// How long, and how many bytes, a connection closed with a request body
/// still arriving is read into nothing, so that closing it does not reset
/// the answer before the client has read it.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: u64 = 1024 * 1024;

/// Ends our side of the connection (the answer is whole on the wire), then
/// reads what the client still sends, within [`LINGER`] and
/// [`LINGER_BYTES`].
pub(crate) fn linger(reader: &mut BufReader<Timed<'_>>) {
    let _ = reader.get_ref().stream.shutdown(std::net::Shutdown::Write);
    reader.get_mut().deadline(LINGER);
    let _ = io::copy(&mut reader.by_ref().take(LINGER_BYTES), &mut io::sink());
    reader.get_mut().disarm();
}

/// The bounds of one request: body size, and the time its head and its
/// body may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_body: usize,
    pub(crate) head_timeout: Duration,
    pub(crate) body_timeout: Duration,
}

/// The connection's reader: each read waits at most the idle timeout, and
/// no longer than the deadline of the part of a request being read, so a
/// peer that trickles bytes cannot hold the connection past it.
pub(crate) struct Timed<'a> {
    pub(crate) stream: &'a TcpStream,
    idle: Duration,
    /// Armed: a deadline that starts with the next byte read.
    armed: Option<Duration>,
    deadline: Option<Instant>,
    /// The read timeout last set on the socket.
    set: Option<Duration>,
}

impl<'a> Timed<'a> {
    pub(crate) fn new(stream: &'a TcpStream, idle: Duration) -> Timed<'a> {
        Timed {
            stream,
            idle,
            armed: None,
            deadline: None,
            set: None,
        }
    }

    /// A deadline `limit` after the next byte, or a sooner one set before.
    fn arm(&mut self, limit: Duration) {
        self.armed = Some(limit);
    }

    pub(crate) fn deadline(&mut self, limit: Duration) {
        self.armed = None;
        self.deadline = Some(Instant::now() + limit);
    }

    fn disarm(&mut self) {
        self.armed = None;
        self.deadline = None;
    }
}

impl Read for Timed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let timeout = match self.deadline {
            None => self.idle,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "request deadline"));
                }
                left.min(self.idle)
            }
        };
        if self.set != Some(timeout) {
            self.stream.set_read_timeout(Some(timeout))?;
            self.set = Some(timeout);
        }
        let mut stream = self.stream;
        let n = stream.read(buf)?;
        if n > 0 {
            if let Some(limit) = self.armed.take() {
                let by = Instant::now() + limit;
                self.deadline = Some(self.deadline.map_or(by, |d| d.min(by)));
            }
        }
        Ok(n)
    }
}

/// The checks of a head that another HTTP server read (the tiny_http
/// adapter, which passes it as bytes): the same size limits, parse and
/// body framing rules as a head read here, the body left to its reader.
#[cfg(feature = "tiny_http")]
pub(crate) fn check_head(head: &[u8], max_body: usize) -> Result<HttpRequest, ReadError> {
    if head.len() > MAX_HEAD_BYTES {
        return Err(ReadError::HeadTooLarge);
    }
    let request = parse_head(head)?;
    body_framing(&request, max_body)?;
    Ok(request)
}

/// Reads up to the blank line that ends the head, within `MAX_HEAD_BYTES`.
fn read_head_bytes(reader: &mut BufReader<Timed<'_>>) -> Result<Vec<u8>, ReadError> {
    let mut head = Vec::with_capacity(1024);
    loop {
        let before = head.len();
        let n = reader
            .by_ref()
            .take((MAX_HEAD_BYTES + 1 - head.len()) as u64)
            .read_until(b'\n', &mut head)
            .map_err(|e| {
                if head.is_empty() {
                    ReadError::Closed
                } else {
                    ReadError::from_body(e)
                }
            })?;
        if n == 0 {
            return Err(if head.is_empty() {
                ReadError::Closed
            } else {
                ReadError::Malformed("connection closed inside the request head")
            });
        }
        if head.len() > MAX_HEAD_BYTES {
            return Err(ReadError::HeadTooLarge);
        }
        // Tolerate blank lines before a request (RFC 9112 section 2.2).
        if before == 0 && (head == b"\r\n" || head == b"\n") {
            head.clear();
            continue;
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            return Ok(head);
        }
    }
}

/// Parses a head: method, path without the query, headers (names
/// lowercased, values UTF-8), and whether the connection stays open.
fn parse_head(head: &[u8]) -> Result<HttpRequest, ReadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(ReadError::Malformed("incomplete request head"))
        }
        Err(httparse::Error::TooManyHeaders) => return Err(ReadError::HeadTooLarge),
        Err(_) => return Err(ReadError::Malformed("malformed request head")),
    }
    let target = parsed.path.unwrap_or("/");
    let version = parsed.version.unwrap_or(1);
    let mut header_list = Vec::with_capacity(parsed.headers.len());
    for h in parsed.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        let value = match std::str::from_utf8(h.value) {
            Ok(v) => v.trim().to_string(),
            // MCP's own headers are checked against the body, which answers
            // a bad value with the request's id (HTTP-3): keep it, marked by
            // U+FFFD, for that check.
            Err(_) if name.starts_with("mcp-") => {
                String::from_utf8_lossy(h.value).trim().to_string()
            }
            Err(_) => return Err(ReadError::Malformed("a header value is not UTF-8")),
        };
        header_list.push((name, value));
    }
    let had_host = header_list.iter().any(|(n, _)| n == "host");
    if let Some(authority) = absolute_authority(target) {
        // RFC 9112 §3.2.2: the target's authority replaces any Host.
        header_list.retain(|(n, _)| n != "host");
        header_list.push(("host".to_string(), authority.to_string()));
    }
    let mut request = HttpRequest {
        method: parsed.method.unwrap_or("").to_string(),
        path: origin_path(target),
        query: target.split_once('?').map(|(_, q)| q.to_string()),
        headers: HttpHeaders::new(header_list),
        body: Vec::new(),
        keep_alive: false,
        http10: version == 0,
        remote: None,
    };
    let connection = request
        .header("connection")
        .unwrap_or("")
        .to_ascii_lowercase();
    request.keep_alive = if version == 0 {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    if version == 1 && !had_host {
        return Err(ReadError::Malformed("missing Host header"));
    }
    Ok(request)
}

/// The path of a request target without its query: origin-form
/// (`/mcp?x`) or absolute-form (`http://host/mcp`, RFC 9112 §3.2.2, which
/// a server must accept).
pub(crate) fn origin_path(target: &str) -> String {
    let target = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    target.split('?').next().unwrap_or("/").to_string()
}

/// The authority of an absolute-form target (`http://host:port/path`).
fn absolute_authority(target: &str) -> Option<&str> {
    let rest = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))?;
    Some(rest.split(['/', '?']).next().unwrap_or(""))
}

/// How a request's body is framed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Body {
    Chunked,
    /// `Content-Length` (0 without one).
    Length(usize),
}

/// The body's framing. Ambiguous framing is refused rather than guessed
/// (request smuggling): one Host, one Content-Length, and
/// Transfer-Encoding only as exactly `chunked`, never together with
/// Content-Length.
fn body_framing(request: &HttpRequest, max_body: usize) -> Result<Body, ReadError> {
    let count = |name: &str| request.headers.get_all(name).count();
    if count("host") > 1 {
        return Err(ReadError::Malformed("more than one Host header"));
    }
    if count("content-length") > 1 || count("transfer-encoding") > 1 {
        return Err(ReadError::Malformed(
            "repeated Content-Length or Transfer-Encoding",
        ));
    }
    // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing.
    if request.http10 && request.header("transfer-encoding").is_some() {
        return Err(ReadError::Malformed(
            "Transfer-Encoding in an HTTP/1.0 request",
        ));
    }
    let chunked = match request.header("transfer-encoding") {
        None => false,
        Some(v) if v.trim().eq_ignore_ascii_case("chunked") => true,
        Some(_) => return Err(ReadError::Malformed("unsupported Transfer-Encoding")),
    };
    match (chunked, request.header("content-length")) {
        (true, Some(_)) => Err(ReadError::Malformed(
            "both Content-Length and Transfer-Encoding",
        )),
        (true, None) => Ok(Body::Chunked),
        (false, None) => Ok(Body::Length(0)),
        (false, Some(v)) => {
            // RFC 9110 §8.6: 1*DIGIT (Rust's parse would also take `+1`).
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ReadError::Malformed("bad Content-Length"));
            }
            let length = v.parse::<usize>().map_err(|_| ReadError::BodyTooLarge)?;
            if length > max_body {
                Err(ReadError::BodyTooLarge)
            } else {
                Ok(Body::Length(length))
            }
        }
    }
}

fn read_chunked(reader: &mut BufReader<Timed<'_>>, max_body: usize) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        reader
            .by_ref()
            .take(1024)
            .read_until(b'\n', &mut line)
            .map_err(ReadError::from_body)?;
        let text = std::str::from_utf8(&line).map_err(|_| ReadError::Malformed("bad chunk"))?;
        // RFC 9112 §7.1: 1*HEXDIG, optional extensions, CRLF; nothing else
        // (no sign, no bare LF) that another parser could read otherwise.
        let text = text.strip_suffix("\r\n").ok_or(ReadError::Malformed(
            "a chunk-size line does not end with CRLF",
        ))?;
        let size_text = text
            .split(';')
            .next()
            .unwrap_or("")
            .trim_end_matches([' ', '\t']);
        if size_text.is_empty() || !size_text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ReadError::Malformed("bad chunk size"));
        }
        let size = usize::from_str_radix(size_text, 16).map_err(|_| ReadError::BodyTooLarge)?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                let n = reader
                    .by_ref()
                    .take(8 * 1024)
                    .read_until(b'\n', &mut line)
                    .map_err(ReadError::from_body)?;
                if n == 0 || line == b"\r\n" || line == b"\n" {
                    return Ok(body);
                }
            }
        }
        if size > max_body.saturating_sub(body.len()) {
            return Err(ReadError::BodyTooLarge);
        }
        // The body grows with the bytes that arrive, never with the size a
        // peer announces.
        let start = body.len();
        let read = reader
            .by_ref()
            .take(size as u64)
            .read_to_end(&mut body)
            .map_err(ReadError::from_body)?;
        if read != size || body.len() != start + size {
            return Err(ReadError::Malformed("connection closed inside a chunk"));
        }
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).map_err(ReadError::from_body)?;
        if &crlf != b"\r\n" {
            return Err(ReadError::Malformed("a chunk does not end with CRLF"));
        }
    }
}

/// The reason phrase of the statuses this transport sends.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        422 => "Unprocessable Content",
        423 => "Locked",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// A whole response, written in one `write_all`.
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    /// Headers a program named (a pre-request hook's refusal), checked
    /// for CR and LF when they were added.
    pub(crate) extra: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// The answer to `HEAD`: the head of the response, without its body.
    pub(crate) head_only: bool,
}

impl HttpResponse {
    pub(crate) fn new(status: u16) -> HttpResponse {
        HttpResponse {
            status,
            headers: Vec::new(),
            extra: Vec::new(),
            body: Vec::new(),
            head_only: false,
        }
    }

    pub(crate) fn json(status: u16, body: Vec<u8>) -> HttpResponse {
        HttpResponse {
            status,
            headers: vec![("Content-Type", "application/json".to_string())],
            extra: Vec::new(),
            body,
            head_only: false,
        }
    }

    pub(crate) fn header(mut self, name: &'static str, value: impl Into<String>) -> HttpResponse {
        self.headers.push((name, value.into()));
        self
    }

    /// Writes the response; `keep_alive` false adds `Connection: close`.
    pub(crate) fn write_to(
        &self,
        out: &mut impl Write,
        keep_alive: bool,
        common: &[(String, String)],
    ) -> io::Result<()> {
        let mut buf = Vec::with_capacity(160 + self.body.len());
        write!(
            buf,
            "HTTP/1.1 {} {}\r\nContent-Length: {}\r\n",
            self.status,
            reason(self.status),
            self.body.len()
        )?;
        for (name, value) in &self.headers {
            write!(buf, "{}: {}\r\n", name, value)?;
        }
        for (name, value) in self.extra.iter().chain(common) {
            write!(buf, "{}: {}\r\n", name, value)?;
        }
        if !keep_alive {
            buf.extend_from_slice(b"Connection: close\r\n");
        }
        buf.extend_from_slice(b"\r\n");
        if !self.head_only {
            buf.extend_from_slice(&self.body);
        }
        out.write_all(&buf)?;
        out.flush()
    }
}

/// The head of a chunked `text/event-stream` response, to be sent with
/// what follows in one write: the stream's own headers, then `common`
/// (the program's headers of every response).
pub(crate) fn sse_head(
    extra: &[(&'static str, String)],
    common: &[(String, String)],
    keep_alive: bool,
    chunked: bool,
) -> Vec<u8> {
    let mut buf = Vec::with_capacity(512);
    buf.extend_from_slice(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
X-Accel-Buffering: no\r\n",
    );
    if chunked {
        buf.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    let extra = extra.iter().map(|(n, v)| (*n, v.as_str()));
    let common = common.iter().map(|(n, v)| (n.as_str(), v.as_str()));
    for (name, value) in extra.chain(common) {
        buf.extend_from_slice(name.as_bytes());
        buf.extend_from_slice(b": ");
        buf.extend_from_slice(value.as_bytes());
        buf.extend_from_slice(b"\r\n");
    }
    if !keep_alive {
        buf.extend_from_slice(b"Connection: close\r\n");
    }
    buf.extend_from_slice(b"\r\n");
    buf
}

/// Appends `data` as one chunk to `buf`.
pub(crate) fn push_chunk(buf: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    buf.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    buf.extend_from_slice(data);
    buf.extend_from_slice(b"\r\n");
}

/// Appends the end of a chunked body to `buf`.
pub(crate) fn push_last_chunk(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"0\r\n\r\n");
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
