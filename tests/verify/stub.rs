//! A tiny HTTP server on 127.0.0.1:0 playing an authorization server's
//! endpoint (a JWKS, an introspection endpoint): it counts its hits,
//! records each request, and answers as the test says, or drips.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What the stub answers.
pub enum Reply {
    /// A status and a JSON body.
    Json(u16, String),
    /// `200` with a body of this many bytes announced, sent one byte per
    /// 100 ms (an endpoint that never finishes in time).
    Drip(usize),
}

/// One request the stub received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request line and headers, as sent.
    pub head: String,
    pub body: String,
}

impl Seen {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            if n.trim().eq_ignore_ascii_case(name) {
                Some(v.trim().to_string())
            } else {
                None
            }
        })
    }
}

type Answer = dyn Fn(&Seen) -> Reply + Send + Sync;

/// The running stub; its thread lives as long as the test binary.
pub struct Stub {
    pub addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Stub {
    /// Serves every request with `answer`.
    pub fn serve(answer: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stub");
        let addr = listener.local_addr().expect("the stub's address");
        let hits = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer: Arc<Answer> = Arc::new(answer);
        let (count, log) = (Arc::clone(&hits), Arc::clone(&seen));
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (answer, count, log) =
                    (Arc::clone(&answer), Arc::clone(&count), Arc::clone(&log));
                thread::spawn(move || {
                    if let Some(request) = read_request(&stream) {
                        count.fetch_add(1, Ordering::SeqCst);
                        log.lock().unwrap().push(request.clone());
                        write_reply(stream, answer(&request));
                    }
                });
            }
        });
        Stub { addr, hits, seen }
    }

    /// `http://ADDR/PATH`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Requests received so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The requests received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Seen> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let seen = Seen {
        head,
        body: String::new(),
    };
    let length: usize = seen
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        body: String::from_utf8_lossy(&body).into_owned(),
        ..seen
    })
}

fn write_reply(mut stream: TcpStream, reply: Reply) {
    match reply {
        Reply::Json(status, body) => {
            let text = format!(
                "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{}",
                status,
                body.len(),
                body
            );
            let _ = stream.write_all(text.as_bytes());
        }
        Reply::Drip(length) => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", length);
            let _ = stream.write_all(head.as_bytes());
            for _ in 0..length {
                // The behaviour under test, not a synchronization: the
                // endpoint is slow on purpose.
                thread::sleep(Duration::from_millis(100));
                if stream.write_all(b" ").is_err() {
                    return;
                }
            }
        }
    }
}
