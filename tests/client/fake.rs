//! A scripted HTTP/1.1 server on 127.0.0.1 for the client's tests: each
//! request (head and `Content-Length` body) is logged with the number of
//! the connection it came on, and the script says what to answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use parking_lot::Mutex;
use serde_json::Value;

/// One request as the fake server read it.
#[derive(Debug, Clone)]
pub(super) struct Request {
    pub(super) method: String,
    pub(super) path: String,
    /// Names in lower case.
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: String,
    /// The connection it came on, counting from 1 in accept order.
    pub(super) conn: usize,
}

impl Request {
    /// The first value of `name` (lower case).
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`null` when it is not).
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the body, `""` for none.
    pub(super) fn rpc(&self) -> String {
        self.json()["method"].as_str().unwrap_or("").to_string()
    }
}

/// What the fake server does with one request.
pub(super) enum Reply {
    /// Writes the bytes, then reads the next request on the connection.
    Keep(Vec<u8>),
    /// Writes the bytes, then closes the connection.
    Close(Vec<u8>),
    /// Writes the bytes, then waits for the client to close.
    Hold(Vec<u8>),
}

type Script = dyn Fn(&Request) -> Reply + Send + Sync;

/// A running fake server; dropping it stops accepting.
pub(super) struct Fake {
    pub(super) addr: SocketAddr,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    closed: crossbeam_channel::Receiver<usize>,
}

impl Fake {
    /// Serves `script` on a new port of 127.0.0.1.
    pub(super) fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let (seen, stopping) = (Arc::clone(&log), Arc::clone(&stop));
        let (closing, closed) = crossbeam_channel::unbounded();
        let count = AtomicUsize::new(0);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let stream = match stream {
                    Ok(stream) => stream,
                    Err(_) => return,
                };
                let conn = count.fetch_add(1, Ordering::SeqCst) + 1;
                let (script, seen) = (Arc::clone(&script), Arc::clone(&seen));
                let closing = closing.clone();
                thread::spawn(move || {
                    serve(stream, conn, &*script, &seen);
                    let _ = closing.send(conn);
                });
            }
        });
        Fake {
            addr,
            log,
            stop,
            closed,
        }
    }

    /// Waits (10 s at most) until the server has closed connection `conn`.
    pub(super) fn wait_closed(&self, conn: usize) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.closed.recv_timeout(left) {
                Ok(closed) if closed == conn => return,
                Ok(_) => continue,
                Err(_) => panic!("the fake server never closed connection {}", conn),
            }
        }
    }

    /// `http://<addr><path>`.
    pub(super) fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The requests so far, in the order they were read.
    pub(super) fn requests(&self) -> Vec<Request> {
        self.log.lock().clone()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the acceptor, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(stream: TcpStream, conn: usize, script: &Script, log: &Mutex<Vec<Request>>) {
    let mut out = match stream.try_clone() {
        Ok(out) => out,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader, conn) {
        log.lock().push(request.clone());
        match script(&request) {
            Reply::Keep(bytes) => {
                if out.write_all(&bytes).is_err() {
                    return;
                }
            }
            Reply::Close(bytes) => {
                let _ = out.write_all(&bytes);
                let _ = out.shutdown(std::net::Shutdown::Both);
                return;
            }
            Reply::Hold(bytes) => {
                let _ = out.write_all(&bytes);
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                return;
            }
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>, conn: usize) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        conn,
    })
}

/// An answer of `status` with a body of media type `media`, and `extra`
/// header lines (each ending in CRLF).
pub(super) fn answer(status: u16, media: &str, body: &str, extra: &str) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 {} Scripted\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n",
        status,
        media,
        body.len(),
        extra
    );
    [head.as_bytes(), body.as_bytes()].concat()
}

/// A `200` with a JSON body and `extra` header lines.
pub(super) fn json(body: &str, extra: &str) -> Vec<u8> {
    answer(200, "application/json", body, extra)
}

/// The head of an event stream that lasts until the connection closes.
pub(super) const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";

/// `202 Accepted`, no body.
pub(super) fn accepted() -> Vec<u8> {
    b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
}

/// The result of `request` as a JSON-RPC response.
pub(super) fn result(request: &Request, result: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        request.json()["id"],
        result
    )
}

/// A 2025-11-25 server's `initialize` (session `s-1`) and notifications;
/// `None` for anything else.
pub(super) fn handshake_2025(request: &Request) -> Option<Reply> {
    match request.rpc().as_str() {
        "initialize" => Some(initialized(request, "s-1")),
        m if m.starts_with("notifications/") => Some(Reply::Keep(accepted())),
        _ => None,
    }
}

/// A 2025-11-25 server's answer to `initialize`, opening `session`.
pub(super) fn initialized(request: &Request, session: &str) -> Reply {
    let body = result(
        request,
        r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}"#,
    );
    Reply::Keep(json(&body, &format!("Mcp-Session-Id: {}\r\n", session)))
}

/// A tool result with one text block.
pub(super) fn text_result(request: &Request, text: &str) -> String {
    result(
        request,
        &format!(r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#, text),
    )
}
