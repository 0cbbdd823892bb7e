//! Throughput, latency and memory of the Streamable HTTP transport, next to
//! a bare tiny_http server (the ceiling of this stack).
//!
//! ```text
//! cargo bench --bench http                         # everything, defaults below
//! cargo bench --bench http -- --wait-idle 60       # each run on a quiet machine
//! cargo bench --bench http -- --no-memory --clients 16 --runs 5
//! cargo bench --bench http -- --help               # every option
//! ```
//!
//! This is a benchmark, not a timed test: it asserts nothing about speed and
//! fails only when a server answers wrongly or not at all.
//!
//! # Throughput and latency
//!
//! Four servers run in this process, one at a time, each started afresh
//! for every run:
//!
//! - `ceiling`: a bare tiny_http 0.12 server with `--ceiling-threads` (4)
//!   threads calling `recv()`; each reads the body, parses it with
//!   serde_json into a `Value`, and answers a JSON-RPC result with the echo
//!   content as `application/json`. No MCP: the least work per request on
//!   this stack (blocking sockets, a thread per connection, serde_json).
//!   It receives byte for byte the requests the `sse-2025` server gets.
//! - `sse-2025`: tiny-mcp with one `echo` tool, 2025-11-25 flow: each
//!   client connection first POSTs `initialize` (its own session) and
//!   `notifications/initialized`, then `tools/call` with `Mcp-Session-Id`,
//!   `MCP-Protocol-Version: 2025-11-25` and `Accept: application/json,
//!   text/event-stream`, answered as an SSE stream (priming event, result
//!   event, last chunk).
//! - `json-2026`: the same server, 2026-07-28 flow: no handshake;
//!   `tools/call` with `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method`,
//!   `Mcp-Name` and the `_meta` envelope, answered as `application/json`.
//! - `json-2025` (a diagnostic): the `sse-2025` flow with `Accept:
//!   application/json` only, so the same session path answers with one
//!   JSON response: the difference to `sse-2025` is the cost of the SSE
//!   framing and of writing it.
//! - `auth-2026`: the `json-2026` flow on a protected endpoint
//!   (`HttpServerBuilder::protect`, a verifier accepting one static token,
//!   a server-wide scope), with `Authorization: Bearer …` on every request.
//!   `json-2026` sends a header of the same length under another name,
//!   so the two differ only by authorization: its cost per request is the
//!   difference of their `srv CPU/req`.
//! - `jwt-2026` (feature `jwt`; only with `--only`): the `auth-2026`
//!   flow with a real RS256 JWT checked by `JwtVerifier` against a JWKS
//!   served in this process (fetched once, then cached): its ratio to
//!   `json-2026` is what verifying a signed token costs (issue 29: at
//!   least 0.9). `cargo bench --bench http --features jwt -- --only
//!   json-2026,unmetered-2026,jwt-2026`.
//! - `unmetered-2026`: the `json-2026` flow on a server that counts no
//!   metrics (`ServerBuilder::collect_metrics(false)`); every other
//!   tiny-mcp server here counts them (the default), so the ratio of
//!   `json-2026` to it is what the metrics cost (issue 29: at least 0.9).
//!
//! For N in `--clients` (1, 16, 64), N client threads each hold one
//! keep-alive `TcpStream` (TCP_NODELAY) and send one request at a time with
//! a small raw HTTP/1.1 client: write the request, read the head, read the
//! whole body (Content-Length or chunked; for SSE up to the last chunk,
//! after the result event). Latency is from the write to the end of the
//! response. Connections are opened and set up one after the other (each
//! answered before the next connects: tiny_http's pool can strand
//! simultaneous connects, DESIGN.md section 1), then all clients warm up for
//! `--warmup` seconds and are measured for `--seconds` (3) or until
//! `--max-requests` in total, whichever comes first. Every answer is checked
//! (status, content type, id, echoed text; the first of each connection is
//! fully parsed).
//!
//! Each (N, server) is run `--runs` (3) times, servers alternating so that a
//! change of load hits all alike; the summary gives the median run (and the
//! best rate), its ratio to the ceiling's median run at the same N, and
//! whether `sse-2025` reaches 80% of it. Columns: `srv CPU/req` is the CPU time of
//! every thread of this process except the clients and the main thread
//! (`/proc/self/task/*/schedstat`), per request; `cli CPU/req` the same for
//! the client threads. On this 2-core machine clients and server share the
//! CPUs, so the CPU per request is the steadier figure. `busy` is the share
//! of all CPUs busy during the 300 ms before the run (`/proc/stat`), while
//! the bench itself is idle: runs with a high `busy` are not worth comparing
//! (use `--wait-idle`). `load` is `/proc/loadavg` before the run; the
//! bench's own threads (up to 130 runnable at N = 64) raise it too.
//!
//! # Memory
//!
//! The tiny-mcp server runs in a child process (this binary re-executed
//! with `TINY_MCP_HTTP_BENCH_ROLE=server`), so the client's allocations and
//! threads never count; the figures are differences of the child's `VmRSS`
//! (and `RssAnon`) from `/proc/<pid>/status`, each read once the child's
//! RSS and thread count have stopped changing:
//!
//! 1. `--sessions` (1,000) idle sessions: each `initialize` +
//!    `notifications/initialized` on a fresh connection, then closed;
//! 2. `--used-sessions` (200) sessions that made `--calls` (100) tools/calls
//!    each before their connection closed: idle sessions as they are after
//!    some use;
//! 3. `--connections` (500) idle keep-alive connections, answered once (a
//!    404) and held open: a reference, the floor of any open stream;
//! 4. `--streams` (500) open GET streams of the sessions of step 1, each on
//!    its own connection held open (the priming event read);
//! 5. `--listens` (1,000) open `subscriptions/listen` streams (2026-07-28),
//!    each on its own connection (the acknowledgement read).
//!
//! Each figure is per item, over the state before that step; code paths are
//! warmed up first (and a few streams of each kind kept open throughout).
//! The per-item figure is split by kind of mapping (`/proc/<pid>/smaps`):
//! thread stacks (the mappings that hold a thread's stack pointer, from
//! `/proc/<pid>/task/*/syscall`), other anonymous memory (malloc), and
//! file-backed pages. With the streams open, the child's CPU use while
//! nothing happens is also reported.
//!
//! Run without `--bench` (as `cargo test --benches` does), the binary only
//! smoke-tests every path with a few requests, sessions and streams.

use std::env;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{self, Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, HttpRequestHead, HttpServer, JsonObject, Principal, ProtectedResource,
    RequestContext, Server, TokenError, Tool,
};

/// The environment variable that turns this binary into the memory server.
const ROLE_VAR: &str = "TINY_MCP_HTTP_BENCH_ROLE";
const V2025: &str = "2025-11-25";
const V2026: &str = "2026-07-28";
const ECHO_TEXT: &str = "hello, bench";
/// The `Accept` of every POST but `json-2025`'s.
const BOTH: &str = "application/json, text/event-stream";
/// How the echoed text appears in every answer's JSON.
const ECHO_NEEDLE: &[u8] = br#""text":"hello, bench""#;
/// Longest wait for any single read or write of the client.
const IO_TIMEOUT: Duration = Duration::from_secs(15);
/// The issue's targets, printed next to the figures (not asserted).
const TARGET_RATIO: f64 = 0.80;
const TARGET_SESSION_KIB: f64 = 16.0;
const TARGET_STREAM_KIB: f64 = 40.0;

type Res<T> = Result<T, String>;

fn main() {
    if env::var_os(ROLE_VAR).map_or(false, |v| v == "server") {
        if let Err(e) = child_server() {
            eprintln!("http bench server: {}", e);
            process::exit(1);
        }
        return;
    }
    let options = match Options::parse(env::args().skip(1)) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("http bench: {}\n\n{}", e, USAGE);
            process::exit(2);
        }
    };
    if options.help {
        println!("{}", USAGE);
        return;
    }
    let outcome = if options.bench {
        bench(&options)
    } else {
        smoke()
    };
    if let Err(e) = outcome {
        eprintln!("http bench: error: {}", e);
        process::exit(1);
    }
}

const USAGE: &str = "\
usage: cargo bench --bench http [-- OPTIONS]

  --clients LIST      concurrent keep-alive clients, comma-separated (default 1,16,64)
  --only LIST         servers to drive: ceiling,sse-2025,json-2026,json-2025,auth-2026,
                      unmetered-2026
                      (v2025 = sse-2025, v2026 = json-2026)
                      (default all; json-2025 is a diagnostic)
  --seconds S         measured seconds per run (default 3)
  --warmup S          unmeasured seconds before each run (default 0.5)
  --max-requests N    stop a run after N requests in total (default 2000000)
  --runs N            runs per (clients, server) (default 3)
  --ceiling-threads N tiny_http threads calling recv() (default 4)
  --sessions N        idle sessions for the memory figure (default 1000)
  --used-sessions N   sessions that make --calls tools/calls, then idle (default 200)
  --calls N           tools/calls of each used session (default 100)
  --connections N     idle keep-alive connections, a reference figure (default 500)
  --streams N         open GET streams for the memory figure (default 500)
  --listens N         open listen streams for the memory figure (default 1000)
  --no-throughput     skip throughput and latency
  --no-memory         skip the memory figures
  --wait-idle S       before each run, wait up to S seconds for the machine to be
                      idle (under 10% CPU busy over 300 ms); default 0 (no wait)
  --at NAME=ADDR      also drive a server already running at ADDR (host:port, path
                      /mcp) with the json-2026 flow, under NAME; repeatable. With
                      --at and no --only, only these run; without the ceiling, ratios
                      are to the first --at server (scripts/check/multi-instance.sh
                      --bench: nginx next to one instance)
  --at-json-2025 NAME=ADDR
                      as --at, with the json-2025 flow (a session, JSON answers):
                      for a 2025-11-25 server such as ../shared/tools/bench's
                      `ref-server --http ADDR --json`, as the base of the ratios
                      (scripts/measure/http-reference.sh)
  --help              this text

Without `--bench` (which `cargo bench` passes) it only smoke-tests every path.";

// ---------------------------------------------------------------------------
// Options

#[derive(Debug)]
struct Options {
    bench: bool,
    help: bool,
    clients: Vec<usize>,
    targets: Vec<Target>,
    seconds: f64,
    warmup: f64,
    max_requests: u64,
    runs: usize,
    ceiling_threads: usize,
    sessions: usize,
    used_sessions: usize,
    calls: u64,
    connections: usize,
    streams: usize,
    listens: usize,
    /// `--at`: servers this bench does not start, by name.
    external: Vec<(&'static str, SocketAddr)>,
    /// For each of `external`: `true` when it takes the json-2025 flow.
    external_v2025: Vec<bool>,
    only: bool,
    throughput: bool,
    memory: bool,
    wait_idle: Duration,
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut o = Options {
            bench: false,
            help: false,
            clients: vec![1, 16, 64],
            targets: Target::ALL.to_vec(),
            seconds: 3.0,
            warmup: 0.5,
            max_requests: 2_000_000,
            runs: 3,
            ceiling_threads: 4,
            sessions: 1000,
            used_sessions: 200,
            calls: 100,
            connections: 500,
            streams: 500,
            listens: 1000,
            external: Vec::new(),
            external_v2025: Vec::new(),
            only: false,
            throughput: true,
            memory: true,
            wait_idle: Duration::ZERO,
        };
        fn value(name: &str, value: Option<String>) -> Result<String, String> {
            value.ok_or_else(|| format!("{} needs a value", name))
        }
        fn number(name: &str, text: Option<String>) -> Result<usize, String> {
            let text = value(name, text)?;
            text.replace('_', "")
                .parse()
                .map_err(|_| format!("{} needs a number, not {:?}", name, text))
        }
        fn seconds(name: &str, text: Option<String>) -> Result<f64, String> {
            let text = value(name, text)?;
            match text.parse::<f64>() {
                Ok(s) if s >= 0.0 && s.is_finite() => Ok(s),
                _ => Err(format!("{} needs seconds, not {:?}", name, text)),
            }
        }
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--bench" => o.bench = true,
                "--help" | "-h" => o.help = true,
                "--clients" => {
                    let text = value(&arg, args.next())?;
                    o.clients = text
                        .split(',')
                        .map(|n| n.trim().parse::<usize>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| format!("--clients needs numbers, not {:?}", text))?;
                }
                "--only" => {
                    o.only = true;
                    let text = value(&arg, args.next())?;
                    o.targets = text
                        .split(',')
                        .map(|t| {
                            Target::parse(t.trim()).ok_or_else(|| {
                                format!(
                                    "--only takes ceiling, sse-2025, json-2026, json-2025, auth-2026, \
                                     unmetered-2026 or jwt-2026, not {:?}",
                                    t
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--seconds" => o.seconds = seconds(&arg, args.next())?,
                "--warmup" => o.warmup = seconds(&arg, args.next())?,
                "--max-requests" => o.max_requests = number(&arg, args.next())? as u64,
                "--runs" => o.runs = number(&arg, args.next())?,
                "--ceiling-threads" => o.ceiling_threads = number(&arg, args.next())?,
                "--sessions" => o.sessions = number(&arg, args.next())?,
                "--used-sessions" => o.used_sessions = number(&arg, args.next())?,
                "--calls" => o.calls = number(&arg, args.next())? as u64,
                "--connections" => o.connections = number(&arg, args.next())?,
                "--streams" => o.streams = number(&arg, args.next())?,
                "--listens" => o.listens = number(&arg, args.next())?,
                "--no-throughput" => o.throughput = false,
                "--no-memory" => o.memory = false,
                "--wait-idle" => o.wait_idle = Duration::from_secs_f64(seconds(&arg, args.next())?),
                "--at" | "--at-json-2025" => {
                    o.external.push(external(&value(&arg, args.next())?)?);
                    o.external_v2025.push(arg == "--at-json-2025");
                }
                // libtest flags that cargo may pass to any bench target.
                "--nocapture" | "--quiet" | "-q" | "--color" => {}
                other if other.starts_with('-') => return Err(format!("unknown option {}", other)),
                other => eprintln!("http bench: ignoring filter {:?}", other),
            }
        }
        if o.clients.is_empty() || o.clients.contains(&0) {
            return Err("--clients must list numbers of at least 1".into());
        }
        if o.runs == 0 || o.max_requests == 0 || o.ceiling_threads == 0 {
            return Err("--runs, --max-requests and --ceiling-threads must be at least 1".into());
        }
        if o.seconds == 0.0 {
            return Err("--seconds must be more than 0".into());
        }
        if !o.only && !o.external.is_empty() {
            o.targets.clear();
        }
        for (index, &(name, _)) in o.external.iter().enumerate() {
            let v2025 = o.external_v2025[index];
            o.targets.push(Target::External { name, index, v2025 });
        }
        Ok(o)
    }
}

/// `NAME=HOST:PORT` of `--at`; the name lives as long as the bench.
fn external(text: &str) -> Result<(&'static str, SocketAddr), String> {
    let bad = || format!("--at takes NAME=HOST:PORT, not {:?}", text);
    let (name, addr) = text.split_once('=').ok_or_else(bad)?;
    let addr = addr
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .map_err(|_| bad())?;
    if name.is_empty() {
        return Err(bad());
    }
    Ok((Box::leak(name.to_string().into_boxed_str()), addr))
}

// ---------------------------------------------------------------------------
// The servers

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Ceiling,
    Sse2025,
    Json2026,
    /// Diagnostic: the `sse-2025` flow with `Accept: application/json` only,
    /// answered as JSON: `sse-2025` minus the SSE framing and writes.
    Json2025,
    /// `json-2026` on a protected endpoint: a verifier that accepts one
    /// static token, and `Authorization: Bearer` on every request. Its
    /// difference to `json-2026` is the cost of authorization.
    Auth2026,
    /// `json-2026` on a server that counts no metrics
    /// (`ServerBuilder::collect_metrics(false)`); `json-2026` counts them
    /// (the default), so their ratio is what the metrics cost.
    Unmetered2026,
    /// `auth-2026` with a signed JWT and `JwtVerifier` (feature `jwt`).
    Jwt2026,
    /// `json-2026` against a server already running (`--at`), such as
    /// nginx in front of several instances: its `index` in `--at` order;
    /// `v2025`: the `json-2025` flow instead (`--at-json-2025`).
    External {
        name: &'static str,
        index: usize,
        v2025: bool,
    },
}

impl Target {
    const ALL: [Target; 6] = [
        Target::Ceiling,
        Target::Sse2025,
        Target::Json2026,
        Target::Json2025,
        Target::Auth2026,
        Target::Unmetered2026,
    ];

    fn name(self) -> &'static str {
        match self {
            Target::Ceiling => "ceiling",
            Target::Sse2025 => "sse-2025",
            Target::Json2026 => "json-2026",
            Target::Json2025 => "json-2025",
            Target::Auth2026 => "auth-2026",
            Target::Unmetered2026 => "unmetered-2026",
            Target::Jwt2026 => "jwt-2026",
            Target::External { name, .. } => name,
        }
    }

    fn parse(text: &str) -> Option<Target> {
        match text {
            "ceiling" => Some(Target::Ceiling),
            "v2025" | "sse-2025" => Some(Target::Sse2025),
            "v2026" | "json-2026" => Some(Target::Json2026),
            "json-2025" => Some(Target::Json2025),
            "auth-2026" => Some(Target::Auth2026),
            "unmetered-2026" => Some(Target::Unmetered2026),
            "jwt-2026" => Some(Target::Jwt2026),
            _ => None,
        }
    }
}

/// The MCP server under test: one `echo` tool returning one text block.
fn sdk_server() -> Server {
    sdk_server_metered(true)
}

/// [`sdk_server`], counting metrics (the default) or not
/// (`unmetered-2026`).
fn sdk_server_metered(metrics: bool) -> Server {
    Server::builder("http-bench", "0.1.0")
        .collect_metrics(metrics)
        .max_listen_streams(1 << 20)
        .tool(
            Tool::new(
                "echo",
                json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"]
                }),
            )
            .with_description("Returns its text"),
            |_ctx: &RequestContext, args: JsonObject| {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                Ok(CallToolResult::text(text))
            },
        )
        .build()
}

/// The token of `auth-2026`.
const BENCH_TOKEN: &str = "Bearer bench-token-0123456789";

fn serve_sdk() -> Res<HttpServer> {
    serve_sdk_on(sdk_server().http())
}

/// The same server, protected: the verifier accepts one static token.
fn serve_protected() -> Res<HttpServer> {
    let verify = |token: &str, _: &HttpRequestHead| {
        if Some(token) == BENCH_TOKEN.strip_prefix("Bearer ") {
            Ok(Principal::new("bench").with_scopes(["mcp:tools"]))
        } else {
            Err(TokenError::invalid("unknown token"))
        }
    };
    let protected = ProtectedResource::new("http://127.0.0.1/mcp", verify)
        .authorization_server("http://127.0.0.1:9");
    serve_sdk_on(sdk_server().http().protect(protected))
}

// The verifier tests' key maker and JWKS stub, for `jwt-2026`.
#[cfg(feature = "jwt")]
#[allow(dead_code)]
#[path = "../tests/verify/keys.rs"]
mod jwt_keys;
#[cfg(feature = "jwt")]
#[allow(dead_code)]
#[path = "../tests/verify/stub.rs"]
mod jwt_stub;

/// `jwt-2026`: an RS256 key (made by `openssl`, as the verifier tests
/// make theirs), its JWKS served by the tests' stub, a token for `alice`
/// with `mcp:tools`, and the server protected by `JwtVerifier`.
#[cfg(feature = "jwt")]
mod jwt_target {
    use super::{serve_sdk_on, Res};
    use parking_lot::Mutex;
    use tiny_mcp::{HttpServer, JwtVerifier, ProtectedResource, Server};

    use super::{jwt_keys as keys, jwt_stub as stub};

    const RESOURCE: &str = "http://127.0.0.1/mcp";

    /// `Bearer <token>` of the last server started.
    static BEARER: Mutex<String> = parking_lot::const_mutex(String::new());

    pub(super) fn serve(server: Server) -> Res<HttpServer> {
        let signer = keys::Signer::rsa("bench-key", "RS256");
        let jwks = keys::jwks(&[&signer]);
        let jwks_server = stub::Stub::serve(move |_| stub::Reply::Json(200, jwks.clone()));
        let mut claims = keys::claims(RESOURCE);
        claims["exp"] = (keys::now() + 3600).into();
        *BEARER.lock() = format!("Bearer {}", signer.token(&claims));
        let verifier = JwtVerifier::builder(keys::ISSUER)
            .jwks_url(jwks_server.url("/jwks"))
            .build()
            .map_err(|e| e.to_string())?;
        // The stub's thread serves until the process ends (a benchmark).
        std::mem::forget(jwks_server);
        let protected =
            ProtectedResource::new(RESOURCE, verifier).authorization_server(keys::ISSUER);
        serve_sdk_on(server.http().protect(protected))
    }

    pub(super) fn bearer() -> String {
        BEARER.lock().clone()
    }
}

/// Without the `jwt` feature, `jwt-2026` says how to get it.
#[cfg(not(feature = "jwt"))]
mod jwt_target {
    use super::Res;
    use tiny_mcp::{HttpServer, Server};

    pub(super) fn serve(_: Server) -> Res<HttpServer> {
        Err("jwt-2026 needs the jwt feature: cargo bench --bench http --features jwt".into())
    }

    pub(super) fn bearer() -> String {
        String::new()
    }
}

fn serve_sdk_on(http: tiny_mcp::HttpServerBuilder) -> Res<HttpServer> {
    http.max_connections(1 << 20)
        .serve("127.0.0.1:0")
        .map_err(|e| format!("cannot start the tiny-mcp server: {}", e))
}

/// The memory role: serve until stdin closes, then shut down.
fn child_server() -> Res<()> {
    let server = serve_sdk()?;
    println!("listening {}", server.local_addr());
    io::stdout().flush().map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    let _ = io::stdin().read_to_end(&mut sink);
    server.shutdown();
    Ok(())
}

/// The ceiling: tiny_http, a few threads, serde_json, no MCP.
struct Ceiling {
    server: Arc<tiny_http::Server>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Ceiling {
    fn start(threads: usize) -> Res<Ceiling> {
        let server = tiny_http::Server::http("127.0.0.1:0")
            .map_err(|e| format!("cannot start the tiny_http server: {}", e))?;
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        for i in 0..threads {
            let server = Arc::clone(&server);
            let stop = Arc::clone(&stop);
            let handle = thread::Builder::new()
                .name(format!("ceiling-{}", i))
                .spawn(move || ceiling_loop(&server, &stop))
                .map_err(|e| format!("cannot start a ceiling thread: {}", e))?;
            handles.push(handle);
        }
        Ok(Ceiling {
            server,
            stop,
            threads: handles,
        })
    }

    fn addr(&self) -> Res<SocketAddr> {
        self.server
            .server_addr()
            .to_ip()
            .ok_or_else(|| "the tiny_http server has no IP address".to_string())
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        for handle in self.threads {
            let _ = handle.join();
        }
    }
}

fn ceiling_loop(server: &tiny_http::Server, stop: &AtomicBool) {
    let content_type =
        tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
            .expect("a valid header");
    let mut body = Vec::new();
    while !stop.load(Ordering::Acquire) {
        let mut request = match server.recv_timeout(Duration::from_millis(50)) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(_) => break,
        };
        body.clear();
        if request.as_reader().read_to_end(&mut body).is_err() {
            continue;
        }
        let answer = match serde_json::from_slice::<Value>(&body) {
            Ok(mut message) => {
                let id = message.get_mut("id").map_or(Value::Null, Value::take);
                let text = message
                    .pointer_mut("/params/arguments/text")
                    .map_or_else(|| Value::from(""), Value::take);
                json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "result": { "content": [{ "type": "text", "text": text }] }
                })
            }
            Err(e) => json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": { "code": -32700, "message": e.to_string() }
            }),
        };
        let bytes = serde_json::to_vec(&answer).unwrap_or_default();
        let response = tiny_http::Response::from_data(bytes).with_header(content_type.clone());
        let _ = request.respond(response);
    }
}

enum Running {
    Sdk(HttpServer),
    Ceiling(Ceiling),
    /// Started by somebody else (`--at`): left running.
    External(SocketAddr),
}

impl Running {
    fn start(target: Target, settings: &Settings) -> Res<Running> {
        match target {
            Target::Ceiling => Ceiling::start(settings.ceiling_threads).map(Running::Ceiling),
            Target::Sse2025 | Target::Json2026 | Target::Json2025 => serve_sdk().map(Running::Sdk),
            Target::Auth2026 => serve_protected().map(Running::Sdk),
            Target::Jwt2026 => jwt_target::serve(sdk_server()).map(Running::Sdk),
            Target::Unmetered2026 => {
                serve_sdk_on(sdk_server_metered(false).http()).map(Running::Sdk)
            }
            Target::External { index, .. } => settings
                .external
                .get(index)
                .map(|&(_, addr)| Running::External(addr))
                .ok_or_else(|| format!("no --at server number {}", index)),
        }
    }

    fn addr(&self) -> Res<SocketAddr> {
        match self {
            Running::Sdk(server) => Ok(server.local_addr()),
            Running::Ceiling(ceiling) => ceiling.addr(),
            Running::External(addr) => Ok(*addr),
        }
    }

    fn stop(self) {
        match self {
            Running::Sdk(server) => server.shutdown(),
            Running::Ceiling(ceiling) => ceiling.stop(),
            Running::External(_) => {}
        }
    }
}

// ---------------------------------------------------------------------------
// A small HTTP/1.1 client on one keep-alive connection

/// What the client needs from a response head.
#[derive(Debug, Default)]
struct Head {
    status: u16,
    length: Option<usize>,
    chunked: bool,
    event_stream: bool,
    session: Option<String>,
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Conn {
    fn connect(addr: SocketAddr) -> Res<Conn> {
        let stream =
            TcpStream::connect(addr).map_err(|e| format!("cannot connect to {}: {}", addr, e))?;
        let setup = stream
            .set_nodelay(true)
            .and_then(|_| stream.set_read_timeout(Some(IO_TIMEOUT)))
            .and_then(|_| stream.set_write_timeout(Some(IO_TIMEOUT)));
        setup.map_err(|e| format!("cannot set up a connection: {}", e))?;
        Ok(Conn {
            stream,
            buf: vec![0; 16 * 1024],
            start: 0,
            end: 0,
        })
    }

    /// Reads more bytes into the buffer.
    fn fill(&mut self) -> io::Result<()> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let len = self.buf.len();
                self.buf.resize(len * 2, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        self.end += n;
        Ok(())
    }

    fn head(&mut self) -> io::Result<Head> {
        loop {
            if self.end > self.start {
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut response = httparse::Response::new(&mut headers);
                let parsed = response
                    .parse(&self.buf[self.start..self.end])
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                if let httparse::Status::Complete(n) = parsed {
                    let mut head = Head {
                        status: response.code.unwrap_or(0),
                        ..Head::default()
                    };
                    for header in response.headers.iter() {
                        let value = std::str::from_utf8(header.value).unwrap_or("").trim();
                        let name = header.name;
                        if name.eq_ignore_ascii_case("content-length") {
                            head.length = value.parse().ok();
                        } else if name.eq_ignore_ascii_case("transfer-encoding") {
                            head.chunked = value.to_ascii_lowercase().contains("chunked");
                        } else if name.eq_ignore_ascii_case("content-type") {
                            head.event_stream = value.starts_with("text/event-stream");
                        } else if name.eq_ignore_ascii_case("mcp-session-id") {
                            head.session = Some(value.to_string());
                        }
                    }
                    self.start += n;
                    return Ok(head);
                }
            }
            self.fill()?;
        }
    }

    /// The next line, without its line end: (start, end) in `buf`, valid
    /// until the next read.
    fn line(&mut self) -> io::Result<(usize, usize)> {
        loop {
            if let Some(i) = self.buf[self.start..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                let from = self.start;
                let mut to = from + i;
                self.start = to + 1;
                if to > from && self.buf[to - 1] == b'\r' {
                    to -= 1;
                }
                return Ok((from, to));
            }
            self.fill()?;
        }
    }

    /// Appends the next `n` bytes to `out`.
    fn take(&mut self, mut n: usize, out: &mut Vec<u8>) -> io::Result<()> {
        while n > 0 {
            if self.start == self.end {
                self.fill()?;
            }
            let k = n.min(self.end - self.start);
            out.extend_from_slice(&self.buf[self.start..self.start + k]);
            self.start += k;
            n -= k;
        }
        Ok(())
    }

    /// Appends the next chunk's data to `out`; `false` after the last chunk
    /// (and its trailers).
    fn chunk(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_string());
        let (from, to) = self.line()?;
        let text = std::str::from_utf8(&self.buf[from..to]).map_err(|_| bad("chunk size"))?;
        let size_text = text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad("bad chunk size"))?;
        if size == 0 {
            loop {
                let (from, to) = self.line()?;
                if from == to {
                    return Ok(false);
                }
            }
        }
        self.take(size, out)?;
        let (from, to) = self.line()?;
        if from != to {
            return Err(bad("no line end after a chunk"));
        }
        Ok(true)
    }

    /// Reads a whole body into `out` (cleared first).
    fn body(&mut self, head: &Head, out: &mut Vec<u8>) -> io::Result<()> {
        out.clear();
        if head.chunked {
            while self.chunk(out)? {}
        } else if let Some(n) = head.length {
            self.take(n, out)?;
        } else if !(head.status == 204 || head.status == 304 || head.status < 200) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a response without Content-Length or chunked coding",
            ));
        }
        Ok(())
    }

    /// Writes `request`, then reads the whole response.
    fn exchange(&mut self, request: &[u8], body: &mut Vec<u8>) -> io::Result<Head> {
        self.stream.write_all(request)?;
        let head = self.head()?;
        self.body(&head, body)?;
        Ok(head)
    }
}

// ---------------------------------------------------------------------------
// Requests

/// A POST to `/mcp` whose body differs only by its numeric JSON-RPC id.
struct Template {
    /// Request line and headers up to the `Content-Length` value.
    head: Vec<u8>,
    before_id: Vec<u8>,
    after_id: Vec<u8>,
}

impl Template {
    fn new(host: &str, headers: &[(&str, &str)], before_id: &str, after_id: &str) -> Template {
        Template::accepting(BOTH, host, headers, before_id, after_id)
    }

    fn accepting(
        accept: &str,
        host: &str,
        headers: &[(&str, &str)],
        before_id: &str,
        after_id: &str,
    ) -> Template {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: {}\r\n",
            host, accept
        );
        for (name, value) in headers {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        head.push_str("Content-Length: ");
        Template {
            head: head.into_bytes(),
            before_id: before_id.as_bytes().to_vec(),
            after_id: after_id.as_bytes().to_vec(),
        }
    }

    /// `tools/call` of `echo` for `target`; `session` for the 2025-11-25 flows.
    fn tools_call(target: Target, host: &str, session: Option<&str>) -> Template {
        let before = r#"{"jsonrpc":"2.0","id":"#;
        match target {
            Target::Ceiling
            | Target::Sse2025
            | Target::Json2025
            | Target::External { v2025: true, .. } => {
                let session = session.unwrap_or("ceiling-has-no-sessions");
                let accept = match target {
                    Target::Json2025 | Target::External { .. } => "application/json",
                    _ => BOTH,
                };
                Template::accepting(
                    accept,
                    host,
                    &[("Mcp-Session-Id", session), ("MCP-Protocol-Version", V2025)],
                    before,
                    r#","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, bench"}}}"#,
                )
            }
            Target::Json2026
            | Target::Auth2026
            | Target::Unmetered2026
            | Target::Jwt2026
            | Target::External { .. } => {
                let (name, value) = match target {
                    Target::Auth2026 => ("Authorization", BENCH_TOKEN.to_string()),
                    Target::Jwt2026 => ("Authorization", jwt_target::bearer()),
                    _ => ("X-No-Authorization", BENCH_TOKEN.to_string()),
                };
                Template::new(
                    host,
                    &[
                        ("MCP-Protocol-Version", V2026),
                        ("Mcp-Method", "tools/call"),
                        ("Mcp-Name", "echo"),
                        (name, &value),
                    ],
                    before,
                    r#","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, bench"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
                )
            }
        }
    }

    fn render(&self, id: u64, out: &mut Vec<u8>) {
        let mut digits = [0u8; 20];
        let id = itoa(id, &mut digits);
        out.clear();
        out.extend_from_slice(&self.head);
        let mut length = [0u8; 20];
        let len = self.before_id.len() + id.len() + self.after_id.len();
        out.extend_from_slice(itoa(len as u64, &mut length));
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&self.before_id);
        out.extend_from_slice(id);
        out.extend_from_slice(&self.after_id);
    }
}

fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// A one-off POST (handshake, listen) with a fixed body.
fn one_off(host: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut out = Vec::new();
    Template::new(host, headers, body, "").render_fixed(&mut out);
    out
}

impl Template {
    fn render_fixed(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.head);
        let len = self.before_id.len() + self.after_id.len();
        out.extend_from_slice(len.to_string().as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&self.before_id);
        out.extend_from_slice(&self.after_id);
    }
}

fn show(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut short: String = text.chars().take(300).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// `initialize` and `notifications/initialized` (2025-11-25) on `conn`;
/// returns the session id.
fn open_session(conn: &mut Conn, host: &str, body: &mut Vec<u8>) -> Res<String> {
    let initialize = one_off(
        host,
        &[],
        &format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"http-bench","version":"0"}}}}}}"#,
            V2025
        ),
    );
    let head = conn
        .exchange(&initialize, body)
        .map_err(|e| format!("initialize: {}", e))?;
    let session = match (&head.session, head.status) {
        (Some(session), 200) => session.clone(),
        _ => {
            return Err(format!(
                "initialize: status {}, session {:?}: {}",
                head.status,
                head.session,
                show(body)
            ))
        }
    };
    let answer = json_of(&head, body)?;
    if answer.pointer("/result/protocolVersion") != Some(&Value::from(V2025)) {
        return Err(format!("initialize: unexpected answer {}", answer));
    }
    let initialized = one_off(
        host,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", V2025),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let head = conn
        .exchange(&initialized, body)
        .map_err(|e| format!("notifications/initialized: {}", e))?;
    if head.status != 202 {
        return Err(format!(
            "notifications/initialized: status {}: {}",
            head.status,
            show(body)
        ));
    }
    Ok(session)
}

/// The JSON-RPC message of a JSON body, or of the last SSE event with data.
fn json_of(head: &Head, body: &[u8]) -> Res<Value> {
    let text = std::str::from_utf8(body).map_err(|_| "a body that is not UTF-8".to_string())?;
    let json = if head.event_stream {
        let mut last = None;
        for event in text.split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            let data = data.join("\n");
            if !data.trim().is_empty() {
                last = Some(data);
            }
        }
        last.ok_or_else(|| format!("an SSE body without data: {}", show(body)))?
    } else {
        text.to_string()
    };
    serde_json::from_str(&json).map_err(|e| format!("bad JSON ({}): {}", e, show(body)))
}

/// `true` when `body` holds `"id":<id>` as a whole number.
fn has_id(body: &[u8], id: u64) -> bool {
    let needle = b"\"id\":";
    let mut from = 0;
    while let Some(at) = find(&body[from..], needle) {
        let mut i = from + at + needle.len();
        let mut value: u64 = 0;
        let mut digits = 0;
        while i < body.len() && body[i].is_ascii_digit() {
            value = value.wrapping_mul(10).wrapping_add((body[i] - b'0') as u64);
            digits += 1;
            i += 1;
        }
        if digits > 0 && value == id {
            return true;
        }
        from = from + at + needle.len();
    }
    false
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Checks one `tools/call` answer: cheaply, or `full` (parsed) for the
/// first answer of each connection.
fn check_answer(target: Target, head: &Head, body: &[u8], id: u64, full: bool) -> Res<()> {
    if head.status != 200 {
        return Err(format!("status {}: {}", head.status, show(body)));
    }
    match target {
        Target::Sse2025 if !(head.event_stream && head.chunked) => {
            return Err(format!("expected a chunked SSE answer: {:?}", head));
        }
        Target::Ceiling
        | Target::Json2026
        | Target::Json2025
        | Target::Auth2026
        | Target::Jwt2026
        | Target::External { .. }
            if head.event_stream =>
        {
            return Err(format!("expected a JSON answer: {}", show(body)));
        }
        _ => {}
    }
    if full {
        let answer = json_of(head, body)?;
        let ok = answer.get("id") == Some(&Value::from(id))
            && answer.pointer("/result/content/0/text") == Some(&Value::from(ECHO_TEXT));
        if !ok {
            return Err(format!("unexpected answer to request {}: {}", id, answer));
        }
    } else if find(body, ECHO_NEEDLE).is_none() || !has_id(body, id) {
        return Err(format!(
            "unexpected answer to request {}: {}",
            id,
            show(body)
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Throughput and latency

struct Settings {
    seconds: Duration,
    warmup: Duration,
    max_requests: u64,
    ceiling_threads: usize,
    external: Vec<(&'static str, SocketAddr)>,
}

/// One client's connection and requests.
struct Client {
    conn: Conn,
    template: Template,
    target: Target,
    next_id: u64,
    request: Vec<u8>,
    body: Vec<u8>,
}

impl Client {
    fn call(&mut self, full: bool) -> Res<()> {
        let id = self.next_id;
        self.next_id += 1;
        self.template.render(id, &mut self.request);
        let head = self
            .conn
            .exchange(&self.request, &mut self.body)
            .map_err(|e| format!("request {}: {}", id, e))?;
        check_answer(self.target, &head, &self.body, id, full)
    }
}

struct ClientOut {
    count: u64,
    latencies: Vec<u64>,
    start: Instant,
    end: Instant,
    error: Option<String>,
}

struct Barriers {
    warm: Barrier,
    measure: Barrier,
    done: Barrier,
    /// Passed once the main thread has read the threads' CPU times: a
    /// thread that ended earlier would take its CPU time with it.
    release: Barrier,
}

fn client_loop(
    mut client: Client,
    barriers: &Barriers,
    settings: &Settings,
    quota: u64,
) -> ClientOut {
    let mut error = None;
    barriers.warm.wait();
    let warm_end = Instant::now() + settings.warmup;
    while error.is_none() && Instant::now() < warm_end {
        error = client.call(false).err();
    }
    barriers.measure.wait();
    let start = Instant::now();
    let deadline = start + settings.seconds;
    let mut latencies = Vec::with_capacity(quota.min(1 << 20) as usize);
    let mut count = 0;
    let mut now = start;
    while error.is_none() && count < quota && now < deadline {
        if let Err(e) = client.call(false) {
            error = Some(e);
            break;
        }
        let done = Instant::now();
        latencies.push((done - now).as_nanos() as u64);
        count += 1;
        now = done;
    }
    let end = Instant::now();
    barriers.done.wait();
    barriers.release.wait();
    ClientOut {
        count,
        latencies,
        start,
        end,
        error,
    }
}

struct RunResult {
    target: Target,
    clients: usize,
    requests: u64,
    wall: Duration,
    /// Sorted, in nanoseconds.
    latencies: Vec<u64>,
    server_cpu: Option<Duration>,
    client_cpu: Option<Duration>,
    busy: Option<f64>,
    load: String,
}

impl RunResult {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.wall.as_secs_f64()
    }

    fn percentile(&self, p: f64) -> Duration {
        // Nearest rank.
        let n = self.latencies.len();
        if n == 0 {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
        Duration::from_nanos(self.latencies[rank.min(n) - 1])
    }

    fn per_request(&self, cpu: Option<Duration>) -> Option<f64> {
        cpu.map(|cpu| cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64)
    }
}

fn run_throughput(target: Target, clients: usize, settings: &Settings) -> Res<RunResult> {
    let server = Running::start(target, settings)?;
    let result = drive(&server, target, clients, settings);
    server.stop();
    result.map_err(|e| format!("{} with {} clients: {}", target.name(), clients, e))
}

fn drive(server: &Running, target: Target, clients: usize, settings: &Settings) -> Res<RunResult> {
    let addr = server.addr()?;
    let host = addr.to_string();
    // One connection at a time, each answered before the next connects.
    let mut prepared = Vec::with_capacity(clients);
    for _ in 0..clients {
        let mut conn = Conn::connect(addr)?;
        let mut body = Vec::new();
        let session = match target {
            Target::Sse2025 | Target::Json2025 | Target::External { v2025: true, .. } => {
                Some(open_session(&mut conn, &host, &mut body)?)
            }
            _ => None,
        };
        let mut client = Client {
            conn,
            template: Template::tools_call(target, &host, session.as_deref()),
            target,
            next_id: 1,
            request: Vec::new(),
            body,
        };
        client.call(true)?;
        prepared.push(client);
    }
    let busy = cpu_busy(Duration::from_millis(300));
    let load = loadavg();
    let barriers = Arc::new(Barriers {
        warm: Barrier::new(clients + 1),
        measure: Barrier::new(clients + 1),
        done: Barrier::new(clients + 1),
        release: Barrier::new(clients + 1),
    });
    let settings = Arc::new(Settings {
        seconds: settings.seconds,
        warmup: settings.warmup,
        max_requests: settings.max_requests,
        ceiling_threads: settings.ceiling_threads,
        external: Vec::new(),
    });
    let quota = (settings.max_requests + clients as u64 - 1) / clients as u64;
    let mut handles = Vec::with_capacity(clients);
    for (i, client) in prepared.into_iter().enumerate() {
        let barriers = Arc::clone(&barriers);
        let settings = Arc::clone(&settings);
        let handle = thread::Builder::new()
            .name(format!("{}{}", CLIENT_THREAD, i))
            .spawn(move || client_loop(client, &barriers, &settings, quota))
            .map_err(|e| format!("cannot start a client thread: {}", e))?;
        handles.push(handle);
    }
    barriers.warm.wait();
    barriers.measure.wait();
    let cpu_before = task_cpu();
    barriers.done.wait();
    let cpu_after = task_cpu();
    barriers.release.wait();
    let mut outs = Vec::with_capacity(clients);
    for handle in handles {
        outs.push(
            handle
                .join()
                .map_err(|_| "a client thread panicked".to_string())?,
        );
    }
    if let Some(error) = outs.iter().find_map(|o| o.error.clone()) {
        return Err(error);
    }
    let start = outs.iter().map(|o| o.start).min().expect("clients");
    let end = outs.iter().map(|o| o.end).max().expect("clients");
    let mut latencies: Vec<u64> = Vec::with_capacity(outs.iter().map(|o| o.latencies.len()).sum());
    for out in &outs {
        latencies.extend_from_slice(&out.latencies);
    }
    latencies.sort_unstable();
    let (server_cpu, client_cpu) = match (cpu_before, cpu_after) {
        // Another process's CPU is not ours to read.
        (Some(before), Some(after)) if !matches!(target, Target::External { .. }) => {
            let (server, client) = cpu_split(&before, &after);
            (Some(server), Some(client))
        }
        _ => (None, None),
    };
    Ok(RunResult {
        target,
        clients,
        requests: outs.iter().map(|o| o.count).sum(),
        wall: end - start,
        latencies,
        server_cpu,
        client_cpu,
        busy,
        load,
    })
}

/// Name prefix of the client threads (15 bytes at most are kept by Linux).
const CLIENT_THREAD: &str = "hb-client-";

/// One thread of this process: id, name, nanoseconds on a CPU.
struct TaskCpu {
    tid: u32,
    name: String,
    nanos: u64,
}

fn task_cpu() -> Option<Vec<TaskCpu>> {
    let mut tasks = Vec::new();
    for entry in fs::read_dir("/proc/self/task").ok()? {
        let path = entry.ok()?.path();
        let tid = match path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse().ok())
        {
            Some(tid) => tid,
            None => continue,
        };
        // A thread may end between listing and reading: skip it.
        let schedstat = match fs::read_to_string(path.join("schedstat")) {
            Ok(s) => s,
            Err(_) => continue,
        };
        let nanos = match schedstat
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
        {
            Some(n) => n,
            None => continue,
        };
        let name = fs::read_to_string(path.join("comm")).unwrap_or_default();
        tasks.push(TaskCpu {
            tid,
            name: name.trim().to_string(),
            nanos,
        });
    }
    Some(tasks)
}

/// CPU used between two snapshots by the server threads and by the client
/// threads (the main thread counts as neither).
fn cpu_split(before: &[TaskCpu], after: &[TaskCpu]) -> (Duration, Duration) {
    let main = process::id();
    let (mut server, mut client) = (0u64, 0u64);
    for task in after {
        if task.tid == main {
            continue;
        }
        let start = before
            .iter()
            .find(|b| b.tid == task.tid)
            .map_or(0, |b| b.nanos);
        let used = task.nanos.saturating_sub(start);
        if task.name.starts_with(CLIENT_THREAD) {
            client += used;
        } else {
            server += used;
        }
    }
    (Duration::from_nanos(server), Duration::from_nanos(client))
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

/// The share of all CPUs that was busy over `window` (from /proc/stat).
fn cpu_busy(window: Duration) -> Option<f64> {
    fn sample() -> Option<(u64, u64)> {
        let stat = fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().next()?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        if fields.len() < 5 {
            return None;
        }
        let total: u64 = fields.iter().take(8).sum();
        let idle = fields[3] + fields[4];
        Some((total, idle))
    }
    let (total0, idle0) = sample()?;
    thread::sleep(window);
    let (total1, idle1) = sample()?;
    let total = total1.checked_sub(total0)?;
    if total == 0 {
        return None;
    }
    let idle = idle1.saturating_sub(idle0);
    Some(1.0 - idle as f64 / total as f64)
}

/// Waits up to `limit` for the machine to be under 10% busy.
fn wait_idle(limit: Duration) {
    if limit == Duration::ZERO {
        return;
    }
    let deadline = Instant::now() + limit;
    loop {
        match cpu_busy(Duration::from_millis(300)) {
            Some(busy) if busy < 0.10 => return,
            None => return,
            Some(busy) => {
                if Instant::now() >= deadline {
                    eprintln!(
                        "http bench: still {:.0}% busy after waiting {:?}; running anyway",
                        busy * 100.0,
                        limit
                    );
                    return;
                }
            }
        }
        thread::sleep(Duration::from_millis(700));
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn fmt_opt(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(|| "n/a".into(), |v| format!("{:.1}{}", v, unit))
}

fn print_run_header() {
    println!(
        "{:>4} {:<12} {:>9} {:>9} {:>9} {:>11} {:>11} {:>8} {:>6}  load",
        "N", "server", "req/s", "p50 µs", "p99 µs", "srv CPU/req", "cli CPU/req", "vs ceil", "busy"
    );
}

fn print_run(r: &RunResult, ceiling: Option<&RunResult>) {
    let ratio = ceiling
        .filter(|c| r.target != Target::Ceiling && c.requests > 0)
        .map_or_else(
            || "".into(),
            |c| format!("{:.0}%", 100.0 * r.rate() / c.rate()),
        );
    println!(
        "{:>4} {:<12} {:>9.0} {:>9.1} {:>9.1} {:>11} {:>11} {:>8} {:>6}  {}",
        r.clients,
        r.target.name(),
        r.rate(),
        micros(r.percentile(50.0)),
        micros(r.percentile(99.0)),
        fmt_opt(r.per_request(r.server_cpu), " µs"),
        fmt_opt(r.per_request(r.client_cpu), " µs"),
        ratio,
        fmt_opt(r.busy.map(|b| b * 100.0), "%"),
        r.load
    );
}

/// The run with the median rate, and the best rate.
fn median_and_best<'a>(runs: &[&'a RunResult]) -> Option<(&'a RunResult, f64)> {
    let mut sorted: Vec<&RunResult> = runs.to_vec();
    sorted.sort_by(|a, b| {
        a.rate()
            .partial_cmp(&b.rate())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let best = sorted.last()?.rate();
    Some((sorted[(sorted.len() - 1) / 2], best))
}

fn throughput(o: &Options) -> Res<()> {
    let settings = Settings {
        seconds: Duration::from_secs_f64(o.seconds),
        warmup: Duration::from_secs_f64(o.warmup),
        max_requests: o.max_requests,
        ceiling_threads: o.ceiling_threads,
        external: o.external.clone(),
    };
    println!(
        "== tools/call throughput and latency: {} s per run (after {} s warm-up), at most {} requests, {} runs",
        o.seconds, o.warmup, o.max_requests, o.runs
    );
    print_run_header();
    let mut results: Vec<RunResult> = Vec::new();
    for _ in 0..o.runs {
        for &clients in &o.clients {
            let mut ceiling: Option<usize> = None;
            for &target in &o.targets {
                wait_idle(o.wait_idle);
                let r = run_throughput(target, clients, &settings)?;
                print_run(&r, ceiling.map(|i| &results[i]));
                if target == Target::Ceiling {
                    ceiling = Some(results.len());
                }
                results.push(r);
            }
        }
    }
    println!();
    println!(
        "== summary: median run of {} (best req/s in brackets); ratios are median/median",
        o.runs
    );
    println!(
        "{:>4} {:<12} {:>18} {:>9} {:>9} {:>11} {:>9} {:>11}  target (sse-2025 >= {:.0}% of ceiling)",
        "N",
        "server",
        "req/s [best]",
        "p50 µs",
        "p99 µs",
        "srv CPU/req",
        "vs ceil",
        "CPU vs ceil",
        TARGET_RATIO * 100.0
    );
    // Ratios are to the ceiling; without it, to the first `--at` server
    // (the reference), else to the first server.
    let first_external = o
        .targets
        .iter()
        .find(|t| matches!(t, Target::External { .. }));
    let base = match first_external.or_else(|| o.targets.first()) {
        Some(&first) if !o.targets.contains(&Target::Ceiling) => first,
        _ => Target::Ceiling,
    };
    if base != Target::Ceiling {
        println!("   (no ceiling run: `vs ceil` is to {})", base.name());
    }
    for &clients in &o.clients {
        let of = |t: Target| -> Vec<&RunResult> {
            results
                .iter()
                .filter(|r| r.clients == clients && r.target == t)
                .collect()
        };
        let ceiling = median_and_best(&of(base));
        for &target in &o.targets {
            let (median, best) = match median_and_best(&of(target)) {
                Some(m) => m,
                None => continue,
            };
            let (ratio, cpu_ratio) = match ceiling {
                Some((c, _)) if target != base => (
                    Some(median.rate() / c.rate()),
                    match (
                        median.per_request(median.server_cpu),
                        c.per_request(c.server_cpu),
                    ) {
                        (Some(m), Some(c)) if m > 0.0 => Some(c / m),
                        _ => None,
                    },
                ),
                _ => (None, None),
            };
            let verdict = match (target, ratio) {
                (Target::Sse2025, Some(r)) if r >= TARGET_RATIO => "met",
                (Target::Sse2025, Some(_)) => "NOT met",
                _ => "",
            };
            println!(
                "{:>4} {:<12} {:>18} {:>9.1} {:>9.1} {:>11} {:>9} {:>11}  {}",
                clients,
                target.name(),
                format!("{:.0} [{:.0}]", median.rate(), best),
                micros(median.percentile(50.0)),
                micros(median.percentile(99.0)),
                fmt_opt(median.per_request(median.server_cpu), " µs"),
                ratio.map_or_else(String::new, |r| format!("{:.0}%", r * 100.0)),
                cpu_ratio.map_or_else(String::new, |r| format!("{:.0}%", r * 100.0)),
                verdict
            );
        }
    }
    println!(
        "   (`CPU vs ceil`: ceiling's server CPU per request over this server's; \
         100% = as cheap as the ceiling)"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Memory, in a child process

/// The server of the memory figures, as a child process.
struct ServerChild {
    child: Child,
    stdin: Option<ChildStdin>,
    addr: SocketAddr,
}

impl ServerChild {
    fn spawn() -> Res<ServerChild> {
        let exe = env::current_exe().map_err(|e| format!("cannot find this binary: {}", e))?;
        let mut child = Command::new(exe)
            .env(ROLE_VAR, "server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the server process: {}", e))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let addr = match read {
            Ok(_) => line
                .trim()
                .strip_prefix("listening ")
                .and_then(|a| a.parse().ok()),
            Err(_) => None,
        };
        match addr {
            Some(addr) => Ok(ServerChild { child, stdin, addr }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("the server process said {:?}", line))
            }
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes its stdin (it shuts down) and waits for it to exit.
    fn finish(mut self) -> Res<()> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("the server process ended with {}", status))
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err("the server process did not shut down within 30 s".into());
                }
            }
        }
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What `/proc/<pid>/status` says, in KiB.
#[derive(Debug, Clone, Copy)]
struct ProcStatus {
    rss: u64,
    anon: u64,
    threads: u64,
}

fn proc_status(pid: u32) -> Res<ProcStatus> {
    let text = fs::read_to_string(format!("/proc/{}/status", pid))
        .map_err(|e| format!("cannot read /proc/{}/status: {}", pid, e))?;
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Ok(ProcStatus {
        rss: field("VmRSS:"),
        anon: field("RssAnon:"),
        threads: field("Threads:"),
    })
}

/// Waits until the child's RSS and thread count hold still (at most 5 s).
fn settle(pid: u32) -> Res<ProcStatus> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut last = proc_status(pid)?;
    let mut still = 0;
    loop {
        thread::sleep(Duration::from_millis(100));
        let now = proc_status(pid)?;
        if now.rss == last.rss && now.threads == last.threads {
            still += 1;
        } else {
            still = 0;
        }
        last = now;
        if still >= 3 || Instant::now() >= deadline {
            return Ok(last);
        }
    }
}

/// CPU time of all of the child's threads.
fn process_cpu(pid: u32) -> Option<Duration> {
    let mut nanos = 0u64;
    for entry in fs::read_dir(format!("/proc/{}/task", pid)).ok()? {
        let path = entry.ok()?.path().join("schedstat");
        if let Ok(text) = fs::read_to_string(path) {
            nanos += text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Some(Duration::from_nanos(nanos))
}

/// The child's CPU use over `window`, as a share of one CPU.
fn idle_cpu(pid: u32, window: Duration) -> Option<f64> {
    let before = process_cpu(pid)?;
    let start = Instant::now();
    thread::sleep(window);
    let after = process_cpu(pid)?;
    Some(after.saturating_sub(before).as_secs_f64() / start.elapsed().as_secs_f64())
}

/// A session opened on its own connection, which is then closed.
fn idle_session(addr: SocketAddr, host: &str) -> Res<String> {
    let mut conn = Conn::connect(addr)?;
    let mut body = Vec::new();
    open_session(&mut conn, host, &mut body)
}

/// A GET stream of `session`, its priming event read.
fn open_get_stream(addr: SocketAddr, host: &str, session: &str) -> Res<Conn> {
    let mut conn = Conn::connect(addr)?;
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {}\r\nMCP-Protocol-Version: {}\r\n\r\n",
        host, session, V2025
    );
    conn.stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("GET stream: {}", e))?;
    let head = conn.head().map_err(|e| format!("GET stream: {}", e))?;
    let mut first = Vec::new();
    if head.status != 200 || !head.event_stream || !head.chunked {
        let _ = conn.body(&head, &mut first);
        return Err(format!("GET stream: {:?}: {}", head, show(&first)));
    }
    let more = conn
        .chunk(&mut first)
        .map_err(|e| format!("GET stream: {}", e))?;
    if !more || !first.starts_with(b"id: ") {
        return Err(format!(
            "GET stream: expected a priming event, got {}",
            show(&first)
        ));
    }
    Ok(conn)
}

/// A `subscriptions/listen` stream (2026-07-28), its acknowledgement read.
fn open_listen_stream(addr: SocketAddr, host: &str, id: u64) -> Res<Conn> {
    let mut conn = Conn::connect(addr)?;
    let request = one_off(
        host,
        &[
            ("MCP-Protocol-Version", V2026),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        &format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#,
            id, V2026
        ),
    );
    conn.stream
        .write_all(&request)
        .map_err(|e| format!("listen stream: {}", e))?;
    let head = conn.head().map_err(|e| format!("listen stream: {}", e))?;
    let mut first = Vec::new();
    if head.status != 200 || !head.event_stream || !head.chunked {
        let _ = conn.body(&head, &mut first);
        return Err(format!("listen stream: {:?}: {}", head, show(&first)));
    }
    let more = conn
        .chunk(&mut first)
        .map_err(|e| format!("listen stream: {}", e))?;
    if !more || find(&first, b"notifications/subscriptions/acknowledged").is_none() {
        return Err(format!(
            "listen stream: expected the acknowledgement, got {}",
            show(&first)
        ));
    }
    Ok(conn)
}

/// Some tools/calls of both eras on one connection, then closed.
fn warm_calls(addr: SocketAddr, host: &str, n: u64) -> Res<()> {
    let mut conn = Conn::connect(addr)?;
    let mut body = Vec::new();
    let session = open_session(&mut conn, host, &mut body)?;
    for target in [Target::Sse2025, Target::Json2026] {
        let mut client = Client {
            conn,
            template: Template::tools_call(target, host, Some(&session)),
            target,
            next_id: 1,
            request: Vec::new(),
            body: Vec::new(),
        };
        for i in 0..n {
            client.call(i == 0)?;
        }
        conn = client.conn;
    }
    Ok(())
}

/// A session that made `calls` tools/calls, its connection then closed.
fn used_session(addr: SocketAddr, host: &str, calls: u64) -> Res<String> {
    let mut conn = Conn::connect(addr)?;
    let mut body = Vec::new();
    let session = open_session(&mut conn, host, &mut body)?;
    let mut client = Client {
        conn,
        template: Template::tools_call(Target::Sse2025, host, Some(&session)),
        target: Target::Sse2025,
        next_id: 1,
        request: Vec::new(),
        body,
    };
    for i in 0..calls {
        client.call(i == 0)?;
    }
    Ok(session)
}

/// A keep-alive connection that was answered once (404) and stays open
/// without a stream: the floor of any open stream.
fn idle_connection(addr: SocketAddr, host: &str) -> Res<Conn> {
    let mut conn = Conn::connect(addr)?;
    let request = format!("GET /not-mcp HTTP/1.1\r\nHost: {}\r\n\r\n", host);
    let mut body = Vec::new();
    let head = conn
        .exchange(request.as_bytes(), &mut body)
        .map_err(|e| format!("idle connection: {}", e))?;
    if head.status != 404 {
        return Err(format!("idle connection: status {}", head.status));
    }
    Ok(conn)
}

/// Resident KiB of the child by kind of mapping (`/proc/<pid>/smaps`).
#[derive(Debug, Clone, Copy, Default)]
struct Breakdown {
    /// Mappings that hold a thread's stack pointer (thread stacks, with
    /// glibc's thread descriptor and TLS at their top), and `[stack]`.
    stacks: i64,
    /// Every other anonymous mapping: malloc arenas, `[heap]`.
    heap: i64,
    /// File-backed mappings (code, data of the binary and libraries).
    files: i64,
}

/// The stack pointers of the child's threads that wait in a system call
/// (`/proc/<pid>/task/<tid>/syscall`: number, six arguments, sp, pc).
fn stack_pointers(pid: u32) -> Vec<u64> {
    let mut sps = Vec::new();
    let tasks = match fs::read_dir(format!("/proc/{}/task", pid)) {
        Ok(t) => t,
        Err(_) => return sps,
    };
    for entry in tasks.flatten() {
        let text = fs::read_to_string(entry.path().join("syscall")).unwrap_or_default();
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() == 9 {
            if let Ok(sp) = u64::from_str_radix(fields[7].trim_start_matches("0x"), 16) {
                sps.push(sp);
            }
        }
    }
    sps
}

fn breakdown(pid: u32) -> Option<Breakdown> {
    let sps = stack_pointers(pid);
    let smaps = fs::read_to_string(format!("/proc/{}/smaps", pid)).ok()?;
    let mut out = Breakdown::default();
    let mut class = 0;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if let Some((from, to)) = first.split_once('-') {
            if let (Ok(from), Ok(to)) = (u64::from_str_radix(from, 16), u64::from_str_radix(to, 16))
            {
                let path = fields.nth(4).unwrap_or("");
                class = if path == "[stack]" || sps.iter().any(|&sp| from <= sp && sp < to) {
                    0
                } else if path.is_empty() || path == "[heap]" || path.starts_with("[anon") {
                    1
                } else {
                    2
                };
                continue;
            }
        }
        if first == "Rss:" {
            let kib: i64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            match class {
                0 => out.stacks += kib,
                1 => out.heap += kib,
                _ => out.files += kib,
            }
        }
    }
    Some(out)
}

/// The child's state at one point: status and breakdown.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    status: ProcStatus,
    parts: Option<Breakdown>,
}

fn snapshot(pid: u32) -> Res<Snapshot> {
    let status = settle(pid)?;
    Ok(Snapshot {
        status,
        parts: breakdown(pid),
    })
}

struct MemoryFigure {
    what: &'static str,
    count: usize,
    before: Snapshot,
    after: Snapshot,
    /// `None`: a reference figure, no target.
    target_kib: Option<f64>,
    load: String,
}

impl MemoryFigure {
    fn per_item(&self, total: fn(&ProcStatus) -> u64) -> f64 {
        (total(&self.after.status) as f64 - total(&self.before.status) as f64)
            / self.count.max(1) as f64
    }

    fn parts_per_item(&self) -> Option<(f64, f64, f64)> {
        let (a, b) = (self.after.parts?, self.before.parts?);
        let n = self.count.max(1) as f64;
        Some((
            (a.stacks - b.stacks) as f64 / n,
            (a.heap - b.heap) as f64 / n,
            (a.files - b.files) as f64 / n,
        ))
    }
}

struct MemoryReport {
    baseline: ProcStatus,
    figures: Vec<MemoryFigure>,
    /// Child CPU while idle, with the GET streams open, then with the
    /// listen streams too.
    idle_get: Option<f64>,
    idle_all: Option<f64>,
}

struct MemoryPlan {
    sessions: usize,
    used_sessions: usize,
    calls_per_used_session: u64,
    connections: usize,
    streams: usize,
    listens: usize,
    idle_window: Duration,
}

fn memory(plan: &MemoryPlan) -> Res<MemoryReport> {
    let server = ServerChild::spawn()?;
    let pid = server.pid();
    let addr = server.addr;
    let host = addr.to_string();
    // Warm up every code path; a few streams of each kind stay open so that
    // the first-stream costs are out of the figures.
    warm_calls(addr, &host, 200)?;
    let mut held: Vec<Conn> = Vec::new();
    for i in 0..8 {
        let session = used_session(addr, &host, 70)?;
        held.push(open_get_stream(addr, &host, &session)?);
        held.push(open_listen_stream(addr, &host, 1_000_000 + i)?);
        held.push(idle_connection(addr, &host)?);
    }
    for _ in 0..50 {
        idle_session(addr, &host)?;
    }
    let mut figures = Vec::new();
    let mut before = snapshot(pid)?;
    let baseline = before.status;
    let mut figure = |what, count, target_kib, before: &mut Snapshot| -> Res<()> {
        let after = snapshot(pid)?;
        figures.push(MemoryFigure {
            what,
            count,
            before: *before,
            after,
            target_kib,
            load: loadavg(),
        });
        *before = after;
        Ok(())
    };

    // 1. Idle sessions, their connections closed.
    let mut ids = Vec::with_capacity(plan.sessions.max(plan.streams));
    for _ in 0..plan.sessions {
        ids.push(idle_session(addr, &host)?);
    }
    figure(
        "idle sessions",
        plan.sessions,
        Some(TARGET_SESSION_KIB),
        &mut before,
    )?;

    // 2. Sessions that were used, then left idle (connections closed).
    for _ in 0..plan.used_sessions {
        used_session(addr, &host, plan.calls_per_used_session)?;
    }
    figure(
        "used idle sessions",
        plan.used_sessions,
        Some(TARGET_SESSION_KIB),
        &mut before,
    )?;

    // 3. Idle keep-alive connections: what any open stream costs at least.
    for _ in 0..plan.connections {
        held.push(idle_connection(addr, &host)?);
    }
    figure("idle connections", plan.connections, None, &mut before)?;

    // 4. Open GET streams, one connection each, on the sessions of step 1.
    if ids.len() < plan.streams {
        while ids.len() < plan.streams {
            ids.push(idle_session(addr, &host)?);
        }
        before = snapshot(pid)?;
    }
    for id in ids.iter().take(plan.streams) {
        held.push(open_get_stream(addr, &host, id)?);
    }
    figure(
        "open GET streams",
        plan.streams,
        Some(TARGET_STREAM_KIB),
        &mut before,
    )?;
    let idle_get = idle_cpu(pid, plan.idle_window);

    // 5. Open listen streams (2026-07-28), one connection each.
    before = snapshot(pid)?;
    for i in 0..plan.listens {
        held.push(open_listen_stream(addr, &host, i as u64 + 1)?);
    }
    figure(
        "open listen streams",
        plan.listens,
        Some(TARGET_STREAM_KIB),
        &mut before,
    )?;
    let idle_all = idle_cpu(pid, plan.idle_window);

    drop(held);
    server.finish()?;
    Ok(MemoryReport {
        baseline,
        figures,
        idle_get,
        idle_all,
    })
}

fn print_memory(report: &MemoryReport, plan: &MemoryPlan) {
    println!(
        "== resident memory of the tiny-mcp server (child process; warmed up: {} KiB VmRSS, {} threads)",
        report.baseline.rss, report.baseline.threads
    );
    println!(
        "{:<20} {:>5} {:>10} {:>10} {:>9} {:>8} {:>26} {:>7} {:>4}  load",
        "KiB",
        "count",
        "RSS before",
        "RSS after",
        "per item",
        "anon/it.",
        "= stacks + heap + files",
        "target",
        "met"
    );
    for f in &report.figures {
        let per = f.per_item(|s| s.rss);
        let anon = f.per_item(|s| s.anon);
        let parts = f.parts_per_item().map_or_else(
            || "n/a".to_string(),
            |(s, h, o)| format!("{:.1} + {:.1} + {:.1}", s, h, o),
        );
        let (target, met) = match f.target_kib {
            Some(t) => (format!("{:.0}", t), if per <= t { "yes" } else { "NO" }),
            None => ("-".to_string(), ""),
        };
        println!(
            "{:<20} {:>5} {:>10} {:>10} {:>9.1} {:>8.1} {:>26} {:>7} {:>4}  {}",
            f.what,
            f.count,
            f.before.status.rss,
            f.after.status.rss,
            per,
            anon,
            parts,
            target,
            met,
            f.load
        );
    }
    let threads: Vec<String> = report
        .figures
        .iter()
        .map(|f| {
            format!(
                "{} {:+}",
                f.what,
                f.after.status.threads as i64 - f.before.status.threads as i64
            )
        })
        .collect();
    println!("   threads: {}", threads.join(", "));
    println!(
        "   used idle sessions made {} tools/calls each; idle connections were answered once (404) and kept open",
        plan.calls_per_used_session
    );
    println!(
        "   server CPU while nothing happens: {} of one CPU with the GET streams open, {} with the listen streams too",
        fmt_opt(report.idle_get.map(|c| c * 100.0), "%"),
        fmt_opt(report.idle_all.map(|c| c * 100.0), "%")
    );
}

// ---------------------------------------------------------------------------
// Entry points

fn bench(o: &Options) -> Res<()> {
    let cpus = thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "http bench: {} CPUs, load {} at start; tiny-mcp {} vs tiny_http 0.12 ceiling",
        cpus,
        loadavg(),
        env!("CARGO_PKG_VERSION")
    );
    if o.throughput {
        throughput(o)?;
        println!();
    }
    if o.memory {
        wait_idle(o.wait_idle);
        let plan = MemoryPlan {
            sessions: o.sessions,
            used_sessions: o.used_sessions,
            calls_per_used_session: o.calls,
            connections: o.connections,
            streams: o.streams,
            listens: o.listens,
            idle_window: Duration::from_secs(2),
        };
        let report = memory(&plan)?;
        print_memory(&report, &plan);
    }
    Ok(())
}

/// Without `--bench`: every path once, small, checked.
fn smoke() -> Res<()> {
    // `--at`: a server this bench does not start or stop.
    let running = serve_sdk()?;
    let settings = Settings {
        seconds: Duration::from_secs(10),
        warmup: Duration::ZERO,
        max_requests: 60,
        ceiling_threads: 2,
        external: vec![("external", running.local_addr())],
    };
    let external = |v2025| Target::External {
        name: "external",
        index: 0,
        v2025,
    };
    for clients in [1, 3] {
        let externals = [external(false), external(true)];
        for target in Target::ALL.iter().copied().chain(externals) {
            let r = run_throughput(target, clients, &settings)?;
            if r.requests != 60 {
                return Err(format!(
                    "{} with {} clients: {} requests instead of 60",
                    target.name(),
                    clients,
                    r.requests
                ));
            }
        }
    }
    running.shutdown();
    let plan = MemoryPlan {
        sessions: 10,
        used_sessions: 3,
        calls_per_used_session: 5,
        connections: 5,
        streams: 5,
        listens: 10,
        idle_window: Duration::from_millis(100),
    };
    let report = memory(&plan)?;
    if report.figures.len() != 5 {
        return Err("missing memory figures".into());
    }
    println!("http bench: smoke test passed (run `cargo bench --bench http` for figures)");
    Ok(())
}
