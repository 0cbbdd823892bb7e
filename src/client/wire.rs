//! The client's HTTP/1.1 bytes: an endpoint URL, one request on a
//! keep-alive connection, a response head (httparse), its body by
//! `Content-Length` or chunks, and Server-Sent Events (RFC 9112;
//! WHATWG HTML "Server-sent events"). Nothing of MCP.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::lines::{read_line, Line};

/// Headers of a response head at most, and bytes of it.
const MAX_HEADERS: usize = 64;
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Interim (1xx) responses skipped before the real one, at most.
const MAX_INTERIM: usize = 16;

/// An `http://host[:port]/path` or `https://…` endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `https://`: TLS (feature `tls`).
    pub(crate) tls: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
    /// Path and query, starting with `/`.
    pub(crate) path: String,
    /// The `Host` header: host, and port when not 80.
    pub(crate) authority: String,
}

impl Endpoint {
    /// Parses an `http://` or `https://` URL.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else {
            return Err(format!("{}: not an http:// or https:// URL", url));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let path = match path.find('#') {
            Some(i) => path[..i].to_string(),
            None => path,
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("{}: expected http://host[:port]/path", url));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) =
            split_host_port(authority, default_port).ok_or_else(|| format!("{}: bad port", url))?;
        Ok(Endpoint {
            tls,
            host,
            port,
            path,
            authority: authority.to_string(),
        })
    }

    /// Connects, trying each address the host resolves to.
    pub(crate) fn connect(&self, timeout: Duration) -> io::Result<TcpStream> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        let mut last = None;
        for addr in (host, self.port).to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    return Ok(stream);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
    }
}

fn split_host_port(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if let Some(end) = authority.strip_prefix('[').and_then(|a| a.find(']')) {
        let host = &authority[..end + 2];
        return match &authority[end + 2..] {
            "" => Some((host.to_string(), default_port)),
            port => Some((host.to_string(), port.strip_prefix(':')?.parse().ok()?)),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_string(), port.parse().ok()?)),
        None => Some((authority.to_string(), default_port)),
    }
}

/// The bytes under a connection: a socket, or TLS over one, and the
/// deadline every read must meet.
pub(crate) struct Transport {
    stream: Stream,
    /// When set, each read may wait only until then: the call's deadline
    /// holds across every read of a head, a body or an event stream.
    deadline: Option<Instant>,
}

enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<super::tls::TlsStream>),
}

impl Transport {
    pub(crate) fn plain(socket: TcpStream) -> Transport {
        Transport {
            stream: Stream::Plain(socket),
            deadline: None,
        }
    }

    #[cfg(feature = "tls")]
    pub(crate) fn tls(stream: super::tls::TlsStream) -> Transport {
        Transport {
            stream: Stream::Tls(Box::new(stream)),
            deadline: None,
        }
    }

    fn socket(&self) -> &TcpStream {
        match &self.stream {
            Stream::Plain(s) => s,
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.socket(),
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the deadline has passed",
                ));
            }
            self.socket().set_read_timeout(Some(left))?;
        }
        match &mut self.stream {
            Stream::Plain(s) => s.read(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.stream {
            Stream::Plain(s) => s.write(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.stream {
            Stream::Plain(s) => s.flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// One keep-alive connection.
pub(crate) struct Conn {
    pub(crate) reader: BufReader<Transport>,
}

impl Conn {
    pub(crate) fn new(transport: Transport) -> Conn {
        Conn {
            reader: BufReader::with_capacity(16 * 1024, transport),
        }
    }

    /// The socket, for timeouts and shutdown.
    pub(crate) fn stream(&self) -> &TcpStream {
        self.reader.get_ref().socket()
    }

    /// Every later read must end by `deadline` (`None`: no limit but the
    /// socket's own timeout).
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.reader.get_mut().deadline = deadline;
    }

    /// `true` when the server has closed this idle connection (or sent
    /// something unasked on it): it must not carry a request. Peeks
    /// without blocking.
    pub(crate) fn closed_by_peer(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return true;
        }
        let socket = self.stream();
        if socket.set_nonblocking(true).is_err() {
            return true;
        }
        let peeked = socket.peek(&mut [0u8; 1]);
        let restored = socket.set_nonblocking(false).is_ok();
        match peeked {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => !restored,
            _ => true,
        }
    }

    /// Writes one request: `headers` as given, then `Content-Length` and
    /// the body when there is one.
    pub(crate) fn send<N: AsRef<str>>(
        &mut self,
        method: &str,
        endpoint: &Endpoint,
        headers: &[(N, String)],
        body: Option<&[u8]>,
    ) -> io::Result<()> {
        let mut out = Vec::with_capacity(512 + body.map_or(0, |b| b.len()));
        write!(
            out,
            "{} {} HTTP/1.1\r\nHost: {}\r\n",
            method, endpoint.path, endpoint.authority
        )?;
        for (name, value) in headers {
            write!(out, "{}: {}\r\n", name.as_ref(), value)?;
        }
        if let Some(body) = body {
            write!(out, "Content-Length: {}\r\n", body.len())?;
        }
        out.extend_from_slice(b"\r\n");
        if let Some(body) = body {
            out.extend_from_slice(body);
        }
        let stream = self.reader.get_mut();
        stream.write_all(&out)?;
        stream.flush()
    }

    /// Reads a response head; up to 16 interim `1xx` responses are
    /// skipped, more are an error.
    pub(crate) fn head(&mut self) -> io::Result<Head> {
        for _ in 0..=MAX_INTERIM {
            let head = self.one_head()?;
            if !(100..200).contains(&head.status) {
                return Ok(head);
            }
        }
        Err(invalid("more than 16 interim (1xx) responses"))
    }

    fn one_head(&mut self) -> io::Result<Head> {
        let mut raw = Vec::with_capacity(1024);
        loop {
            let before = raw.len();
            let n = self.reader.read_until(b'\n', &mut raw)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection before answering",
                ));
            }
            if raw.len() > MAX_HEAD_BYTES {
                return Err(invalid("a response head over 64 KiB"));
            }
            let line = &raw[before..];
            if (line == b"\r\n" || line == b"\n") && before > 0 {
                break;
            }
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => return Err(invalid("an incomplete response head")),
            Err(e) => return Err(invalid(&format!("a malformed response head: {}", e))),
        }
        Ok(Head {
            status: response.code.unwrap_or(0),
            headers: response
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_ascii_lowercase(),
                        String::from_utf8_lossy(h.value).into_owned(),
                    )
                })
                .collect(),
        })
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the server sent {}", what),
    )
}

/// A response head: status and headers (names in lower case).
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of `name` (lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The media type, lower case, without parameters.
    pub(crate) fn media_type(&self) -> String {
        let value = self.header("content-type").unwrap_or("");
        value
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .map_or(false, |v| v.to_ascii_lowercase().contains("chunked"))
    }

    /// `false` when the server will close the connection after this
    /// response.
    pub(crate) fn keeps_alive(&self) -> bool {
        !self
            .header("connection")
            .map_or(false, |v| v.eq_ignore_ascii_case("close"))
    }

    /// How the body is framed (RFC 9112 §6.3): HEAD-less responses only.
    pub(crate) fn framing(&self) -> Framing {
        if self.status == 204 || self.status == 304 {
            Framing::Length(0)
        } else if self.chunked() {
            Framing::Chunked
        } else if let Some(n) = self
            .header("content-length")
            .and_then(|v| v.trim().parse().ok())
        {
            Framing::Length(n)
        } else {
            Framing::UntilClose
        }
    }
}

/// How a body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// A response body, read from its connection.
pub(crate) struct Body<'a> {
    conn: &'a mut Conn,
    framing: Framing,
    /// Bytes left in the body (`Length`) or in the current chunk.
    left: u64,
    done: bool,
}

impl<'a> Body<'a> {
    pub(crate) fn new(conn: &'a mut Conn, framing: Framing) -> Body<'a> {
        let left = match framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        Body {
            conn,
            framing,
            left,
            done: framing == Framing::Length(0),
        }
    }

    /// Changes the deadline of the connection's reads.
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.conn.set_deadline(deadline);
    }

    /// `true` once the whole body was read, so the connection may carry
    /// another request.
    pub(crate) fn finished(&self) -> bool {
        self.done && self.framing != Framing::UntilClose
    }

    /// The whole body, at most `max` bytes.
    pub(crate) fn read_all(&mut self, max: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = self.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            if out.len() + n > max {
                return Err(invalid(&format!("a body over {} bytes", max)));
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    fn next_chunk(&mut self) -> io::Result<()> {
        let mut line = Vec::new();
        if read_line(&mut self.conn.reader, &mut line, 1024)? != Line::Complete {
            return Err(invalid("a malformed chunk size"));
        }
        let text = String::from_utf8_lossy(&line);
        let size = text.trim().split(';').next().unwrap_or("");
        self.left =
            u64::from_str_radix(size.trim(), 16).map_err(|_| invalid("a malformed chunk size"))?;
        if self.left == 0 {
            // Trailers, up to the empty line.
            loop {
                match read_line(&mut self.conn.reader, &mut line, 8192)? {
                    Line::Complete if line.iter().all(|b| b.is_ascii_whitespace()) => break,
                    Line::Complete => continue,
                    _ => return Err(invalid("a malformed chunked body")),
                }
            }
            self.done = true;
        }
        Ok(())
    }

    fn end_of_chunk(&mut self) -> io::Result<()> {
        let mut crlf = Vec::new();
        match read_line(&mut self.conn.reader, &mut crlf, 2)? {
            Line::Complete if crlf.iter().all(|b| *b == b'\r') => Ok(()),
            _ => Err(invalid("a chunk without its CRLF")),
        }
    }
}

impl Body<'_> {
    /// Reads at most the `left` bytes of the body or chunk.
    fn read_left(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let want = out
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.conn.reader.read(&mut out[..want])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n as u64;
        Ok(n)
    }
}

impl Read for Body<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.done || out.is_empty() {
            return Ok(0);
        }
        match self.framing {
            Framing::UntilClose => {
                let n = self.conn.reader.read(out)?;
                self.done = n == 0;
                Ok(n)
            }
            Framing::Length(_) => {
                let n = self.read_left(out)?;
                self.done = self.left == 0;
                Ok(n)
            }
            Framing::Chunked => {
                if self.left == 0 {
                    self.next_chunk()?;
                    if self.done {
                        return Ok(0);
                    }
                }
                let n = self.read_left(out)?;
                if self.left == 0 {
                    self.end_of_chunk()?;
                }
                Ok(n)
            }
        }
    }
}

/// One Server-Sent Event: its `id`, `retry` and joined `data` lines.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) retry: Option<u64>,
    pub(crate) data: String,
}

/// Reads events from an event-stream body, each at most `max` bytes.
pub(crate) struct Events<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
}

impl<R: BufRead> Events<R> {
    pub(crate) fn new(reader: R, max: usize) -> Events<R> {
        Events {
            reader,
            max,
            line: Vec::new(),
        }
    }

    /// The reader under the events.
    pub(crate) fn reader(&self) -> &R {
        &self.reader
    }

    /// The reader under the events, to change its deadline.
    pub(crate) fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The next event with data or an id, or an empty one for a comment
    /// (such as a keepalive) between events; `None` at the end of the
    /// stream.
    pub(crate) fn next_event(&mut self) -> io::Result<Option<Event>> {
        let mut event = Event::default();
        let mut seen = false;
        // Every line of the event counts, comments and unknown fields too.
        let mut used = 0usize;
        loop {
            match read_line(&mut self.reader, &mut self.line, self.max)? {
                Line::End => return Ok(if seen { Some(event) } else { None }),
                Line::TooLong => return Err(invalid(&format!("an event over {} bytes", self.max))),
                Line::Complete => {}
            }
            used += self.line.len() + 1;
            if used > self.max {
                return Err(invalid(&format!("an event over {} bytes", self.max)));
            }
            let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            if line.is_empty() {
                if seen {
                    return Ok(Some(event));
                }
                continue;
            }
            if line[0] == b':' {
                // A comment (a keepalive): handed up as an empty event when
                // no event is under way, so that the reader can check its
                // deadline between them.
                if !seen {
                    return Ok(Some(Event::default()));
                }
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let (field, value) = match text.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (&*text, ""),
            };
            match field {
                "data" => {
                    if event.data.len() + value.len() > self.max {
                        return Err(invalid(&format!("an event over {} bytes", self.max)));
                    }
                    if seen && !event.data.is_empty() {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    seen = true;
                }
                "id" if !value.contains('\0') => {
                    event.id = Some(value.to_string());
                    seen = true;
                }
                "retry" => event.retry = value.trim().parse().ok(),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("127.0.0.1", 8080, "/mcp")
        );
        assert_eq!(e.authority, "127.0.0.1:8080");
        let e = Endpoint::parse("http://example.com?x=1#frag").unwrap();
        assert_eq!((e.port, e.path.as_str()), (80, "/?x=1"));
        let e = Endpoint::parse("http://[::1]:9/mcp").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("[::1]", 9));
        let e = Endpoint::parse("https://example.com/mcp").unwrap();
        assert_eq!(
            (e.tls, e.port, e.authority.as_str()),
            (true, 443, "example.com")
        );
        assert!(Endpoint::parse("http://user@example.com/").is_err());
        assert!(Endpoint::parse("http://example.com:x/").is_err());
        assert!(Endpoint::parse("ftp://example.com/").is_err());
    }

    fn events(text: &str, max: usize) -> io::Result<Vec<Event>> {
        let mut reader = Events::new(text.as_bytes(), max);
        let mut out = Vec::new();
        while let Some(event) = reader.next_event()? {
            out.push(event);
        }
        Ok(out)
    }

    // SSE framing: id, retry, multi-line data, comments, CRLF.
    #[test]
    fn sse_events() {
        let got = events(": ping\r\nid: 1-1\r\nretry: 500\r\ndata:\r\n\r\nevent: message\ndata: {\"a\":\ndata: 1}\n\n", 1024).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Event::default(), "the comment");
        assert_eq!(got[1].id.as_deref(), Some("1-1"));
        assert_eq!(got[1].retry, Some(500));
        assert_eq!(got[1].data, "");
        assert_eq!(got[2].data, "{\"a\":\n1}");
        assert!(events("data: 0123456789\n\n", 8).is_err());
    }
}
