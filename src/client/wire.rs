//! The client's HTTP/1.1 bytes: an endpoint URL, one request on a
//! keep-alive connection, a response head (httparse), its body by
//! `Content-Length` or chunks, and Server-Sent Events (RFC 9112;
//! WHATWG HTML "Server-sent events"). Nothing of MCP.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
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
        // Errors name the URL without its query or fragment, which may
        // hold a key; and without user information (`user:password@`).
        let shown = || {
            let bare = url.split(['?', '#']).next().unwrap_or("");
            match (bare.find("://"), bare.rfind('@')) {
                (Some(scheme), Some(at)) if at > scheme => {
                    format!("{}://…@{}", &bare[..scheme], &bare[at + 1..])
                }
                _ => bare.to_string(),
            }
        };
        let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else {
            return Err(format!("{}: not an http:// or https:// URL", shown()));
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
            return Err(format!("{}: expected http://host[:port]/path", shown()));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = split_host_port(authority, default_port)
            .ok_or_else(|| format!("{}: bad port", shown()))?;
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
    /// The socket timeouts last set (read, write), so that a timeout is
    /// set again only when the time left has halved: a read or write then
    /// ends at most the time left after the deadline, with a few system
    /// calls per request rather than one per read.
    applied: [Option<Duration>; 2],
    /// When the connection went back to the pool.
    pub(crate) idle_since: Option<Instant>,
    /// Bytes read so far: whether any of an answer arrived.
    received: u64,
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
            applied: [None, None],
            idle_since: None,
            received: 0,
        }
    }

    #[cfg(feature = "tls")]
    pub(crate) fn tls(stream: super::tls::TlsStream) -> Transport {
        Transport {
            stream: Stream::Tls(Box::new(stream)),
            deadline: None,
            applied: [None, None],
            idle_since: None,
            received: 0,
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

impl Transport {
    /// Sets the read (0) or write (1) timeout for what is left before the
    /// deadline; `TimedOut` once it has passed.
    fn meet_deadline(&mut self, which: usize) -> io::Result<()> {
        let deadline = match self.deadline {
            Some(deadline) => deadline,
            None => return Ok(()),
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the deadline has passed",
            ));
        }
        // A timeout longer than what is left could overrun the deadline,
        // one shorter only wakes the read early (it then reads again). Half
        // of what is left is set, so that the reads of the next half need
        // no new timeout and none ends past the deadline; a timeout far
        // shorter than what is left (a new deadline on a pooled
        // connection) is replaced rather than woken by again and again.
        let fits = self.applied[which].map_or(false, |set| set <= left && left <= set * 4);
        if !fits {
            let timeout = (left / 2).max(Duration::from_millis(1)).min(left);
            match which {
                0 => self.socket().set_read_timeout(Some(timeout))?,
                _ => self.socket().set_write_timeout(Some(timeout))?,
            }
            self.applied[which] = Some(timeout);
        }
        Ok(())
    }
}

impl Transport {
    /// A socket timeout that fired before the deadline.
    fn early(&self, e: &io::Error) -> bool {
        let timed_out = matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        );
        timed_out && self.deadline.map_or(false, |d| Instant::now() < d)
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            self.meet_deadline(0)?;
            let read = match &mut self.stream {
                Stream::Plain(s) => s.read(buf),
                #[cfg(feature = "tls")]
                Stream::Tls(s) => s.read(buf),
            };
            match read {
                Err(e) if self.early(&e) => continue,
                Ok(n) => {
                    self.received += n as u64;
                    return Ok(n);
                }
                other => return other,
            }
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            self.meet_deadline(1)?;
            let written = match &mut self.stream {
                Stream::Plain(s) => s.write(buf),
                #[cfg(feature = "tls")]
                Stream::Tls(s) => s.write(buf),
            };
            match written {
                Err(e) if self.early(&e) => continue,
                other => return other,
            }
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
    /// A second handle on the socket, made at the first call that can be
    /// cancelled and kept with the connection: a cancel shuts the socket
    /// down through it. One per connection, not one per call.
    shutter: Option<Arc<TcpStream>>,
}

impl Conn {
    pub(crate) fn new(transport: Transport) -> Conn {
        Conn {
            reader: BufReader::with_capacity(16 * 1024, transport),
            shutter: None,
        }
    }

    /// The handle a cancelled call shuts the socket down with.
    pub(crate) fn shutter(&mut self) -> io::Result<Arc<TcpStream>> {
        if let Some(shutter) = &self.shutter {
            return Ok(Arc::clone(shutter));
        }
        let shutter = Arc::new(self.stream().try_clone()?);
        self.shutter = Some(Arc::clone(&shutter));
        Ok(shutter)
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

    /// Bytes read from the server so far on this connection.
    pub(crate) fn received(&self) -> u64 {
        self.reader.get_ref().received
    }

    /// Forgets the socket timeouts last set (after something else set
    /// them on the socket).
    pub(crate) fn timeouts_changed(&mut self) {
        self.reader.get_mut().applied = [None, None];
    }

    /// `true` when the server has closed this idle connection (or sent
    /// something unasked on it): it must not carry a request. Peeks
    /// without blocking.
    pub(crate) fn closed_by_peer(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return true;
        }
        // Back-to-back requests skip the check: servers close idle
        // connections after seconds, not within one; a request that finds
        // the connection closed anyway, before a byte of its answer, is
        // sent again on a fresh one (`HttpLink::send`).
        let idle = self.reader.get_ref().idle_since.map(|t| t.elapsed());
        if idle.map_or(false, |idle| idle < Duration::from_secs(1)) {
            return false;
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
        extra: &[(String, String)],
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
        for (name, value) in extra {
            write!(out, "{}: {}\r\n", name, value)?;
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
            // One byte past the limit at most, however long the line.
            let room = (MAX_HEAD_BYTES + 1 - before) as u64;
            let n = (&mut self.reader).take(room).read_until(b'\n', &mut raw)?;
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
            minor_version: response.version.unwrap_or(1),
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
    /// The `x` of `HTTP/1.x`: 0 for an HTTP/1.0 answer.
    pub(crate) minor_version: u8,
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
    /// Whether the connection stays open after this answer (RFC 9112
    /// §9.3): an HTTP/1.1 answer unless `Connection` lists `close`; an
    /// HTTP/1.0 one only when it lists `keep-alive`.
    pub(crate) fn keeps_alive(&self) -> bool {
        let lists = |token: &str| {
            self.headers
                .iter()
                .filter(|(name, _)| name == "connection")
                .flat_map(|(_, value)| value.split(','))
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        match self.minor_version {
            0 => lists("keep-alive"),
            _ => !lists("close"),
        }
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
    /// The most bytes the reader still takes ([`read_all`](Self::read_all)):
    /// a chunk announcing more fails at once, not when its bytes came.
    room: u64,
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
            room: u64::MAX,
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

    /// The whole body, at most `max` bytes. A body or a chunk that
    /// announces more fails at once, before its bytes are waited for.
    pub(crate) fn read_all(&mut self, max: usize) -> io::Result<Vec<u8>> {
        if let Framing::Length(n) = self.framing {
            if n > max as u64 {
                return Err(over_limit("a body", n, max));
            }
        }
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            self.room = (max - out.len()) as u64;
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
        if self.left > self.room {
            let room = usize::try_from(self.room).unwrap_or(usize::MAX);
            return Err(over_limit("a chunk", self.left, room));
        }
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

/// The error for a body or chunk announcing `size` bytes with room for
/// `max`.
fn over_limit(what: &str, size: u64, max: usize) -> io::Error {
    invalid(&format!(
        "{} of {} bytes, over the limit of {} bytes",
        what, size, max
    ))
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
}
