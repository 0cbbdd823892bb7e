//! A raw HTTP/1.1 client over `std::net::TcpStream` for the Streamable HTTP
//! tests: exact control over every header sent, and server-sent events read
//! one at a time as they arrive. Response bodies may have a
//! `Content-Length`, be `Transfer-Encoding: chunked`, or end with the
//! connection.
//!
//! Every read is bounded by the socket's read timeout; when it passes, the
//! panic message says what never arrived. Nothing sleeps to synchronize.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{json, Value};

/// How long a read waits for something that should come at once before
/// the test fails.
pub const WAIT: Duration = Duration::from_secs(5);

/// The newest protocol version of the handshake era.
pub const LATEST: &str = "2025-11-25";

/// What `Accept` a well-behaved client sends with a POST (HTTP-2).
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

/// One HTTP request to send. `Host` is added when sending unless set here.
#[derive(Debug, Clone)]
pub struct Req {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Req {
    /// `POST /mcp` with `body`, `Content-Type: application/json` and the
    /// `Accept` a client must send.
    pub fn post(body: impl Into<Vec<u8>>) -> Req {
        Req {
            method: "POST",
            path: "/mcp".into(),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Accept".into(), ACCEPT_BOTH.into()),
            ],
            body: body.into(),
        }
    }

    /// `GET /mcp` with `Accept: text/event-stream` and session `session`.
    pub fn get(session: &str) -> Req {
        Req {
            method: "GET",
            path: "/mcp".into(),
            headers: vec![("Accept".into(), "text/event-stream".into())],
            body: Vec::new(),
        }
        .session(session)
    }

    /// `DELETE /mcp` for session `session`.
    pub fn delete(session: &str) -> Req {
        Req {
            method: "DELETE",
            path: "/mcp".into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
        .session(session)
    }

    /// `method` on `path` (which may carry a query), no headers, no body.
    pub fn to(method: &'static str, path: &str) -> Req {
        Req {
            method,
            path: path.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The same request on another path.
    pub fn at(mut self, path: &str) -> Req {
        self.path = path.into();
        self
    }

    /// Adds header `name` beside any of that name (a repeated header).
    pub fn also(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets header `name` (replacing any header of that name).
    pub fn header(mut self, name: &str, value: &str) -> Req {
        self = self.without(name);
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Removes header `name`.
    pub fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Sets `Mcp-Session-Id`.
    pub fn session(self, id: &str) -> Req {
        self.header("Mcp-Session-Id", id)
    }

    /// The bytes on the wire, with `Host: <addr>` unless a `Host` is set.
    fn to_bytes(&self, addr: SocketAddr) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        if !self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("host"))
        {
            out.push_str(&format!("Host: {}\r\n", addr));
        }
        for (name, value) in &self.headers {
            out.push_str(&format!("{}: {}\r\n", name, value));
        }
        if self.method == "POST" {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// A JSON-RPC request body.
pub fn rpc(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A JSON-RPC notification body.
pub fn notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// An `initialize` request body asking for `version`.
pub fn initialize_body(id: Value, version: &str, capabilities: Value) -> String {
    rpc(
        id,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "tiny-mcp-tests", "version": "0.0.0"}
        }),
    )
}

/// A `tools/call` request body; `token`, when given, is the
/// `_meta.progressToken`.
pub fn call_body(id: Value, tool: &str, token: Option<&str>) -> String {
    let mut params = json!({"name": tool, "arguments": {}});
    if let Some(token) = token {
        params["_meta"] = json!({ "progressToken": token });
    }
    rpc(id, "tools/call", params)
}

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/// A response's status line and headers.
#[derive(Debug, Clone)]
pub struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `true` when the body is an SSE stream.
    pub fn is_sse(&self) -> bool {
        self.header("content-type")
            .map_or(false, |v| v.starts_with("text/event-stream"))
    }

    /// Asserts the status, showing the head on failure.
    pub fn expect_status(&self, status: u16, what: &str) {
        assert_eq!(
            self.status, status,
            "{}: unexpected status in {:?}",
            what, self
        );
    }
}

/// A whole response.
#[derive(Debug, Clone)]
pub struct Response {
    pub head: Head,
    pub body: Vec<u8>,
}

impl Response {
    pub fn status(&self) -> u16 {
        self.head.status
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.header(name)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts the status, showing the whole response on failure.
    pub fn expect_status(&self, status: u16, what: &str) {
        assert_eq!(
            self.head.status,
            status,
            "{}: unexpected status; head {:?}, body {:?}",
            what,
            self.head,
            self.text()
        );
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        match serde_json::from_slice(&self.body) {
            Ok(value) => value,
            Err(e) => panic!("the body is not JSON ({}): {:?}", e, self.text()),
        }
    }

    /// The SSE events of the body.
    pub fn events(&self) -> Vec<Event> {
        let mut parser = EventParser::default();
        let mut events = Vec::new();
        for line in self.text().split('\n') {
            if let Some(event) = parser.line(line.trim_end_matches('\r')) {
                events.push(event);
            }
        }
        events
    }

    /// The JSON-RPC messages in the body: each SSE event's data, or the
    /// JSON body.
    pub fn messages(&self) -> Vec<Value> {
        if self.head.is_sse() {
            self.events().iter().filter_map(Event::message).collect()
        } else if self.body.is_empty() {
            Vec::new()
        } else {
            vec![self.json()]
        }
    }

    /// The one JSON-RPC response in the body (the last message with a
    /// `result` or an `error`).
    pub fn rpc(&self) -> Value {
        match self.messages().into_iter().rev().find(is_response) {
            Some(message) => message,
            None => panic!(
                "no JSON-RPC response in {:?} with body {:?}",
                self.head,
                self.text()
            ),
        }
    }

    /// The code of the JSON-RPC error in the body.
    pub fn error_code(&self) -> i64 {
        let message = self.rpc();
        match message["error"]["code"].as_i64() {
            Some(code) => code,
            None => panic!("expected a JSON-RPC error, got {}", message),
        }
    }
}

/// `true` for a JSON-RPC response (a `result` or an `error`).
pub fn is_response(message: &Value) -> bool {
    message.get("result").is_some() || message.get("error").is_some()
}

/// `true` for a JSON-RPC request or notification named `method`.
pub fn is_method(message: &Value, method: &str) -> bool {
    message["method"] == method
}

/// One SSE event (or a block of comments only).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    pub id: Option<String>,
    pub event: Option<String>,
    /// `None` when the event had no `data` field.
    pub data: Option<String>,
    pub retry: Option<u64>,
    pub comments: Vec<String>,
}

impl Event {
    /// The data as JSON, when it is not empty.
    pub fn message(&self) -> Option<Value> {
        match &self.data {
            Some(data) if !data.is_empty() => match serde_json::from_str(data) {
                Ok(value) => Some(value),
                Err(e) => panic!("event data is not JSON ({}): {:?}", e, self),
            },
            _ => None,
        }
    }

    /// An id and empty data: the priming event (HTTP-5).
    pub fn is_priming(&self) -> bool {
        self.id.is_some() && self.data.as_deref() == Some("")
    }

    /// Only comments (`: keepalive`), no field.
    pub fn is_comment(&self) -> bool {
        self.id.is_none() && self.event.is_none() && self.data.is_none() && self.retry.is_none()
    }
}

/// Builds events from lines (the SSE parsing rules of the HTML standard).
#[derive(Debug, Default)]
struct EventParser {
    current: Event,
    any: bool,
}

impl EventParser {
    /// Feeds one line without its end; returns an event at a blank line.
    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            if !self.any {
                return None;
            }
            self.any = false;
            return Some(std::mem::take(&mut self.current));
        }
        self.any = true;
        if let Some(comment) = line.strip_prefix(':') {
            self.current.comments.push(comment.trim().to_string());
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "id" => self.current.id = Some(value.to_string()),
            "event" => self.current.event = Some(value.to_string()),
            "retry" => self.current.retry = value.parse().ok(),
            "data" => {
                self.current.data = Some(match self.current.data.take() {
                    Some(before) => format!("{}\n{}", before, value),
                    None => value.to_string(),
                })
            }
            _ => {}
        }
        None
    }
}

// ---------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------

/// How the body of the response being read ends.
#[derive(Debug)]
enum Body {
    /// Nothing left to read.
    Done,
    /// This many bytes left.
    Length(usize),
    /// Chunked; this many bytes left in the current chunk.
    Chunked(usize),
    /// Until the server closes the connection.
    UntilClose,
}

/// One client connection, kept alive between requests.
#[derive(Debug)]
pub struct Conn {
    addr: SocketAddr,
    timeout: Duration,
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    body: Body,
    /// Body bytes read and not yet consumed.
    pending: Vec<u8>,
    parser: EventParser,
    /// The body ended because the connection closed inside it.
    cut: bool,
}

impl Conn {
    /// Connects to `addr`; reads wait at most [`WAIT`].
    pub fn open(addr: SocketAddr) -> Conn {
        let stream = match TcpStream::connect_timeout(&addr, WAIT) {
            Ok(stream) => stream,
            Err(e) => panic!("cannot connect to {}: {}", addr, e),
        };
        let _ = stream.set_nodelay(true);
        let reader = match stream.try_clone() {
            Ok(s) => BufReader::new(s),
            Err(e) => panic!("cannot clone a socket: {}", e),
        };
        let mut conn = Conn {
            addr,
            timeout: WAIT,
            writer: stream,
            reader,
            body: Body::Done,
            pending: Vec::new(),
            parser: EventParser::default(),
            cut: false,
        };
        conn.set_timeout(WAIT);
        conn
    }

    /// Sets the read timeout that bounds every wait.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        if let Err(e) = self.writer.set_read_timeout(Some(timeout)) {
            panic!("cannot set a read timeout: {}", e);
        }
    }

    /// Writes `req`.
    pub fn send(&mut self, req: &Req) {
        let bytes = req.to_bytes(self.addr);
        self.send_raw(&bytes);
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        if let Err(e) = self
            .writer
            .write_all(bytes)
            .and_then(|_| self.writer.flush())
        {
            panic!("cannot write a request to {}: {}", self.addr, e);
        }
    }

    /// Sends `req` and reads the whole response.
    pub fn request(&mut self, req: &Req, what: &str) -> Response {
        let head = self.start(req, what);
        let body = self.read_body(what);
        Response { head, body }
    }

    /// Sends `req` and reads the response head; the body is read next.
    pub fn start(&mut self, req: &Req, what: &str) -> Head {
        self.send(req);
        self.read_head(what)
    }

    fn timed_out(&self, what: &str) -> ! {
        panic!("{} never arrived (waited {:?})", what, self.timeout)
    }

    /// Reads some bytes; 0 when the connection closed (or was reset).
    fn read_some(&mut self, buf: &mut [u8], what: &str) -> usize {
        match self.reader.read(buf) {
            Ok(n) => n,
            Err(e) => self.read_failed(e, what),
        }
    }

    fn read_failed(&self, e: io::Error, what: &str) -> usize {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.timed_out(what),
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => 0,
            _ => panic!("reading {} failed: {}", what, e),
        }
    }

    /// One line of the head or of the chunked framing, without its end.
    fn framing_line(&mut self, what: &str) -> Option<String> {
        let mut line = Vec::new();
        let n = match self.reader.read_until(b'\n', &mut line) {
            Ok(n) => n,
            Err(e) => self.read_failed(e, what),
        };
        if n == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        Some(
            text.trim_end_matches('\n')
                .trim_end_matches('\r')
                .to_string(),
        )
    }

    /// Reads a response head (skipping `100 Continue`) and prepares to read
    /// its body.
    pub fn read_head(&mut self, what: &str) -> Head {
        loop {
            let status_line = match self.framing_line(what) {
                Some(line) => line,
                None => panic!(
                    "the connection closed before the response to {} arrived",
                    what
                ),
            };
            let status: u16 = match status_line
                .split(' ')
                .nth(1)
                .and_then(|code| code.parse().ok())
            {
                Some(status) => status,
                None => panic!("not an HTTP status line for {}: {:?}", what, status_line),
            };
            let mut headers = Vec::new();
            loop {
                let line = match self.framing_line(what) {
                    Some(line) => line,
                    None => panic!("the connection closed inside the head for {}", what),
                };
                if line.is_empty() {
                    break;
                }
                match line.split_once(':') {
                    Some((name, value)) => {
                        headers.push((name.trim().to_string(), value.trim().to_string()))
                    }
                    None => panic!("malformed header line for {}: {:?}", what, line),
                }
            }
            let head = Head { status, headers };
            if (100..200).contains(&status) {
                continue;
            }
            self.pending.clear();
            self.parser = EventParser::default();
            self.cut = false;
            let chunked = head
                .header("transfer-encoding")
                .map_or(false, |v| v.to_ascii_lowercase().contains("chunked"));
            self.body = if status == 204 || status == 304 {
                Body::Done
            } else if chunked {
                Body::Chunked(0)
            } else if let Some(length) = head.header("content-length") {
                match length.parse() {
                    Ok(n) => Body::Length(n),
                    Err(_) => panic!("bad Content-Length in {:?}", head),
                }
            } else {
                Body::UntilClose
            };
            return head;
        }
    }

    /// Reads more of the body into `pending`; `false` once it has ended.
    fn fill(&mut self, what: &str) -> bool {
        let mut buf = [0u8; 8192];
        match self.body {
            Body::Done => false,
            Body::Length(0) => {
                self.body = Body::Done;
                false
            }
            Body::Length(left) => {
                let want = left.min(buf.len());
                let n = self.read_some(&mut buf[..want], what);
                if n == 0 {
                    self.cut = true;
                    self.body = Body::Done;
                    return false;
                }
                self.pending.extend_from_slice(&buf[..n]);
                self.body = Body::Length(left - n);
                true
            }
            Body::UntilClose => {
                let n = self.read_some(&mut buf, what);
                if n == 0 {
                    self.body = Body::Done;
                    return false;
                }
                self.pending.extend_from_slice(&buf[..n]);
                true
            }
            Body::Chunked(0) => {
                let line = match self.framing_line(what) {
                    Some(line) => line,
                    None => {
                        self.cut = true;
                        self.body = Body::Done;
                        return false;
                    }
                };
                let size_text = line.split(';').next().unwrap_or("").trim();
                let size = match usize::from_str_radix(size_text, 16) {
                    Ok(size) => size,
                    Err(_) => panic!("bad chunk size line for {}: {:?}", what, line),
                };
                if size == 0 {
                    // Trailers, up to the blank line.
                    loop {
                        match self.framing_line(what) {
                            Some(line) if !line.is_empty() => {}
                            _ => break,
                        }
                    }
                    self.body = Body::Done;
                    return false;
                }
                self.body = Body::Chunked(size);
                self.fill(what)
            }
            Body::Chunked(left) => {
                let want = left.min(buf.len());
                let n = self.read_some(&mut buf[..want], what);
                if n == 0 {
                    self.cut = true;
                    self.body = Body::Done;
                    return false;
                }
                self.pending.extend_from_slice(&buf[..n]);
                if left == n {
                    match self.framing_line(what) {
                        Some(line) if line.is_empty() => {}
                        other => panic!("a chunk did not end with CRLF for {}: {:?}", what, other),
                    }
                }
                self.body = Body::Chunked(left - n);
                true
            }
        }
    }

    /// Reads the rest of the body.
    pub fn read_body(&mut self, what: &str) -> Vec<u8> {
        while self.fill(what) {}
        std::mem::take(&mut self.pending)
    }

    /// The next line of the body without its end; `None` at its end.
    fn body_line(&mut self, what: &str) -> Option<String> {
        loop {
            if let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line).into_owned();
                return Some(
                    text.trim_end_matches('\n')
                        .trim_end_matches('\r')
                        .to_string(),
                );
            }
            if !self.fill(what) {
                return None;
            }
        }
    }

    /// The next SSE block, comments included; `None` when the body ended.
    pub fn next_block(&mut self, what: &str) -> Option<Event> {
        loop {
            let line = self.body_line(what)?;
            if let Some(event) = self.parser.line(&line) {
                return Some(event);
            }
        }
    }

    /// The next SSE event with a field (comments skipped); `None` when the
    /// body ended.
    pub fn next_event(&mut self, what: &str) -> Option<Event> {
        loop {
            let event = self.next_block(what)?;
            if !event.is_comment() {
                return Some(event);
            }
        }
    }

    /// The next JSON-RPC message on the SSE stream, skipping priming
    /// events and comments; panics if the stream ends first.
    pub fn next_message(&mut self, what: &str) -> Value {
        loop {
            match self.next_event(what) {
                Some(event) => {
                    if let Some(message) = event.message() {
                        return message;
                    }
                }
                None => panic!("the stream ended before {} arrived", what),
            }
        }
    }

    /// The remaining JSON-RPC messages, up to the end of the stream.
    pub fn rest(&mut self, what: &str) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(event) = self.next_event(what) {
            if let Some(message) = event.message() {
                messages.push(message);
            }
        }
        messages
    }

    /// `true` when the last body ended because the connection closed
    /// inside it, not with its proper end.
    pub fn was_cut(&self) -> bool {
        self.cut
    }

    /// The socket alone, to read it byte by byte (its read timeout stays).
    /// Panics if bytes were read ahead of what the test took: they would be
    /// lost.
    pub fn into_socket(self) -> TcpStream {
        assert!(
            self.reader.buffer().is_empty() && self.pending.is_empty(),
            "bytes were read ahead on {}",
            self.addr
        );
        self.writer
    }
}

/// Reads the start of a response's status line from `socket`, and nothing
/// more (the rest stays unread in the socket); returns its status.
pub fn read_status(socket: &mut TcpStream, what: &str) -> u16 {
    let mut start = [0u8; 12]; // "HTTP/1.1 200"
    if let Err(e) = socket.read_exact(&mut start) {
        panic!("{} never arrived: {}", what, e);
    }
    let text = String::from_utf8_lossy(&start);
    match text.strip_prefix("HTTP/1.1 ").and_then(|s| s.parse().ok()) {
        Some(status) => status,
        None => panic!("not a status line for {}: {:?}", what, text),
    }
}

/// Closes `socket` with a reset (RST) instead of an orderly close (FIN):
/// a socket closed with bytes unread resets its connection (Linux; std's
/// `set_linger` is not stable). Panics if nothing is waiting unread.
pub fn close_with_reset(socket: TcpStream) {
    let mut byte = [0u8; 1];
    match socket.peek(&mut byte) {
        Ok(n) if n > 0 => drop(socket),
        other => panic!("nothing unread to reset the connection with: {:?}", other),
    }
}

/// Sends `req` on a new connection and reads the whole response.
pub fn send(addr: SocketAddr, req: &Req, what: &str) -> Response {
    Conn::open(addr).request(req, what)
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

/// Opens a session asking for `version` with `capabilities`, and sends
/// `notifications/initialized`; returns the `Mcp-Session-Id`.
pub fn open_session(addr: SocketAddr, version: &str, capabilities: Value) -> String {
    let mut conn = Conn::open(addr);
    open_session_on(&mut conn, version, capabilities)
}

/// As [`open_session`], on an existing connection.
pub fn open_session_on(conn: &mut Conn, version: &str, capabilities: Value) -> String {
    let response = conn.request(
        &Req::post(initialize_body(json!(0), version, capabilities)),
        "the initialize response",
    );
    response.expect_status(200, "initialize");
    let result = response.rpc();
    assert_eq!(
        result["result"]["protocolVersion"], version,
        "initialize negotiated another version: {}",
        result
    );
    let session = match response.header("mcp-session-id") {
        Some(id) => id.to_string(),
        None => panic!("initialize returned no Mcp-Session-Id: {:?}", response.head),
    };
    let initialized = conn.request(
        &Req::post(notification("notifications/initialized", json!({}))).session(&session),
        "the answer to notifications/initialized",
    );
    initialized.expect_status(202, "notifications/initialized");
    session
}

/// `true` for the textual form of a version 4 (random) UUID.
pub fn is_uuid_v4(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    lengths == [8, 4, 4, 4, 12]
        && id
            .chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
        && groups[2].starts_with('4')
        && groups[3].starts_with(&['8', '9', 'a', 'b'][..])
}
