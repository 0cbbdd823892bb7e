//! Throughput and latency of the stdio server, against a hand-written ceiling.
//!
//! ```text
//! cargo bench --bench stdio                     # throughput, latency, stripped size
//! cargo bench --bench stdio -- --wait-idle 60   # the same, each run on a quiet machine
//! cargo bench --bench stdio -- --build-time     # also a clean release build of the example
//! cargo bench --bench stdio -- --help           # every option
//! ```
//!
//! This is a benchmark, not a timed test: it asserts nothing about speed and
//! only fails when a server answers wrongly or not at all.
//!
//! Two servers are driven the same way, each as a child process speaking
//! newline-delimited JSON-RPC on stdin/stdout:
//!
//! - `sdk`: the `everything` example (`target/release/examples/everything`),
//!   built by this bench with `cargo build --release --example everything`
//!   unless `--no-build` is given (`--sdk PATH` drives another binary);
//! - `ceiling`: this very bench binary, re-executed with
//!   `TINY_MCP_BENCH_ROLE=ceiling`, running a hand-written single-threaded
//!   loop that parses each line with serde_json into a `Value`, builds the
//!   answer and writes it to a `BufWriter` (flushed when no more input is
//!   buffered): the least work a server must do per request.
//!
//! The driver performs the `initialize` handshake, sends a warm-up batch,
//! then sends `--requests` (20,000) `tools/call` requests to the `echo` tool
//! with at most `--window` (64) in flight: a writer thread sends whenever the
//! window allows (flushing only when it must wait), a reader thread matches
//! answers by id, checks them and records each request's latency from send to
//! receipt. Each server is run `--runs` (3) times, alternating servers so that
//! a change of load hits both alike; the table gives every run, then the best
//! and the median run of each server, and the ratio SDK/ceiling.
//!
//! Columns besides req/s and latency: `srv CPU/req` is the CPU time of the
//! server process's threads during the measured phase (from
//! `/proc/<pid>/task/*/schedstat`) per request, `cli CPU/req` the same for
//! the driver's two threads; on a busy machine these are steadier than req/s.
//! `busy` is the share of all CPUs busy over the 300 ms before the run
//! (`/proc/stat`), `loadavg` the 1/5/15-minute load average after the
//! warm-up. Numbers from runs with a high `busy` are not worth comparing.
//!
//! Run without `--bench` (as `cargo test --benches` or `--all-targets` do),
//! the binary only smoke-tests both servers with a few hundred requests
//! (the SDK only if the example is built for that profile).

use std::env;
use std::fmt;
use std::fs;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{self, Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

/// The environment variable that turns this binary into the ceiling server.
const ROLE_VAR: &str = "TINY_MCP_BENCH_ROLE";
const EXAMPLE: &str = "everything";
/// Protocol version the driver asks for; any version the server answers is accepted.
const PROTOCOL_VERSION: &str = "2025-11-25";
/// Longest a single phase (warm-up or measured) may take before the server is killed.
const PHASE_TIMEOUT: Duration = Duration::from_secs(120);
/// The issue's targets, printed next to the figures (not asserted).
const TARGET_RATIO: f64 = 0.80;
const TARGET_STRIPPED_BYTES: u64 = 1_200_000;

fn main() {
    if env::var_os(ROLE_VAR).map_or(false, |v| v == "ceiling") {
        if let Err(e) = ceiling_server() {
            eprintln!("ceiling server: {}", e);
            process::exit(1);
        }
        return;
    }
    let options = match Options::parse(env::args().skip(1)) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("stdio bench: {}\n\n{}", e, USAGE);
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
        eprintln!("stdio bench: error: {}", e);
        process::exit(1);
    }
}

const USAGE: &str = "\
usage: cargo bench --bench stdio [-- OPTIONS]

  --requests N   measured tools/call requests per run (default 20000)
  --window N     most requests in flight at once (default 64)
  --warmup N     unmeasured requests sent first in each run (default 1000)
  --runs N       runs per server (default 3)
  --only WHICH   run only `sdk` or only `ceiling`
  --no-build     do not run `cargo build --release --example everything` first
  --sdk PATH     drive this server binary as `sdk` instead of the example
                 (implies --no-build), e.g. to compare two builds
  --wait-idle S  before each run, wait up to S seconds for the machine to be
                 idle (under 10% CPU busy over 300 ms); default 0 (no wait)
  --build-time   also time a clean release build of the example, in a
                 separate target directory (target/bench-build); slow
  --help         this text

Without `--bench` (which `cargo bench` passes) it only smoke-tests both servers.";

// ---------------------------------------------------------------------------
// Options

#[derive(Debug)]
struct Options {
    bench: bool,
    help: bool,
    requests: usize,
    window: usize,
    warmup: usize,
    runs: usize,
    only: Option<Which>,
    build: bool,
    build_time: bool,
    sdk: Option<PathBuf>,
    wait_idle: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Sdk,
    Ceiling,
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut o = Options {
            bench: false,
            help: false,
            requests: 20_000,
            window: 64,
            warmup: 1_000,
            runs: 3,
            only: None,
            build: true,
            build_time: false,
            sdk: None,
            wait_idle: Duration::ZERO,
        };
        fn number(name: &str, value: Option<String>) -> Result<usize, String> {
            let value = value.ok_or_else(|| format!("{} needs a value", name))?;
            value
                .replace('_', "")
                .parse()
                .map_err(|_| format!("{} needs a number, not {:?}", name, value))
        }
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--bench" => o.bench = true,
                "--help" | "-h" => o.help = true,
                "--requests" => o.requests = number(&arg, args.next())?,
                "--window" => o.window = number(&arg, args.next())?,
                "--warmup" => o.warmup = number(&arg, args.next())?,
                "--runs" => o.runs = number(&arg, args.next())?,
                "--only" => {
                    o.only = match args.next().as_deref() {
                        Some("sdk") => Some(Which::Sdk),
                        Some("ceiling") => Some(Which::Ceiling),
                        other => {
                            return Err(format!("--only takes sdk or ceiling, not {:?}", other))
                        }
                    }
                }
                "--no-build" => o.build = false,
                "--sdk" => {
                    let path = args.next().ok_or("--sdk needs a path")?;
                    o.sdk = Some(PathBuf::from(path));
                    o.build = false;
                }
                "--build-time" => o.build_time = true,
                "--wait-idle" => {
                    o.wait_idle = Duration::from_secs(number(&arg, args.next())? as u64)
                }
                // libtest flags that cargo may pass to any bench target.
                "--nocapture" | "--quiet" | "-q" | "--color" => {}
                other if other.starts_with('-') => {
                    return Err(format!("unknown option {}", other));
                }
                other => eprintln!("stdio bench: ignoring filter {:?}", other),
            }
        }
        if o.requests == 0 || o.window == 0 || o.runs == 0 {
            return Err("--requests, --window and --runs must be at least 1".into());
        }
        Ok(o)
    }
}

// ---------------------------------------------------------------------------
// The ceiling server: parse each line into a Value, answer, nothing else.

fn ceiling_server() -> io::Result<()> {
    let stdin = io::stdin();
    // StdinLock's own buffer is bypassed for reads this large.
    let mut input = BufReader::with_capacity(64 * 1024, stdin.lock());
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        let text = line.trim();
        if !text.is_empty() {
            let answer = match serde_json::from_str::<Value>(text) {
                Ok(mut message) => ceiling_answer(&mut message),
                Err(e) => Some(json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": { "code": -32700, "message": e.to_string() }
                })),
            };
            if let Some(answer) = answer {
                serde_json::to_writer(&mut out, &answer)?;
                out.write_all(b"\n")?;
            }
        }
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}

fn ceiling_answer(message: &mut Value) -> Option<Value> {
    let id = message.get_mut("id").map(Value::take)?; // notifications: no answer
    let result = match message.get("method").and_then(Value::as_str) {
        Some("tools/call") => {
            let text = message
                .pointer_mut("/params/arguments/text")
                .map(Value::take)
                .unwrap_or_else(|| Value::String(String::new()));
            json!({ "content": [{ "type": "text", "text": text }] })
        }
        Some("initialize") => json!({
            "protocolVersion": message
                .pointer("/params/protocolVersion")
                .cloned()
                .unwrap_or_else(|| PROTOCOL_VERSION.into()),
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "ceiling", "version": "0" }
        }),
        Some("ping") => json!({}),
        _ => {
            return Some(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": { "code": -32601, "message": "method not found" }
            }))
        }
    };
    Some(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

// ---------------------------------------------------------------------------
// The driver

/// What the reader needs from each line the server writes.
#[derive(Deserialize)]
struct Incoming {
    id: Option<Value>,
    method: Option<String>,
    result: Option<CallResult>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(default)]
    content: Vec<Content>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
    #[serde(default, rename = "protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    text: Option<String>,
}

/// One server to drive: how to start it.
struct ServerSpec {
    name: &'static str,
    program: PathBuf,
    env: Option<(&'static str, &'static str)>,
}

/// The figures of one run.
struct RunResult {
    requests: usize,
    wall: Duration,
    /// Per-request latencies in nanoseconds, sorted.
    latencies: Vec<u64>,
    /// CPU time of the server's threads during the measured phase, if known.
    server_cpu: Option<Duration>,
    /// CPU time of the driver's writer and reader threads, if known.
    client_cpu: Option<Duration>,
    load_before: String,
}

impl RunResult {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.wall.as_secs_f64()
    }
    fn percentile(&self, p: f64) -> Duration {
        // Nearest rank.
        let n = self.latencies.len();
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
        Duration::from_nanos(self.latencies[rank.min(n) - 1])
    }
    fn per_request(&self, cpu: Option<Duration>) -> String {
        cpu.map_or_else(
            || "n/a".into(),
            |cpu| format!("{:.2} µs", micros(cpu / self.requests as u32)),
        )
    }
}

struct Failure(String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure(e.to_string())
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure(message.into()))
}

/// Starts the server, performs the handshake, runs the warm-up and the
/// measured phase, then closes stdin and waits for the server to exit.
fn run_once(
    spec: &ServerSpec,
    requests: usize,
    window: usize,
    warmup: usize,
    log_dir: &Path,
) -> Result<RunResult, Failure> {
    fs::create_dir_all(log_dir)?;
    let log_path = log_dir.join(format!("{}.stderr.log", spec.name));
    let mut command = Command::new(&spec.program);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&log_path)?);
    if let Some((key, value)) = spec.env {
        command.env(key, value);
    }
    let mut child = command
        .spawn()
        .map_err(|e| Failure(format!("cannot start {}: {}", spec.program.display(), e)))?;
    let result = drive(&mut child, requests, window, warmup);
    if result.is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
    result.map_err(|Failure(e)| {
        let log = fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Failure(format!(
            "{} server: {}\n  its stderr ({}):\n    {}",
            spec.name,
            e,
            log_path.display(),
            tail.join("\n    ")
        ))
    })
}

fn drive(
    child: &mut Child,
    requests: usize,
    window: usize,
    warmup: usize,
) -> Result<RunResult, Failure> {
    let mut stdin = BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("piped"));
    let mut stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped"));
    guarded(child, || handshake(&mut stdin, &mut stdout))?;
    let mut next_id = 1u64;
    if warmup > 0 {
        phase(child, &mut stdin, &mut stdout, next_id, warmup, window)?;
        next_id += warmup as u64;
    }
    let load_before = loadavg();
    let cpu_before = process_cpu(child.id());
    let measured = phase(child, &mut stdin, &mut stdout, next_id, requests, window)?;
    let cpu_after = process_cpu(child.id());
    // End of input: the server must finish and exit by itself.
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait()? {
            Some(status) if status.success() => break,
            Some(status) => return fail(format!("exited with {} after stdin closed", status)),
            None if Instant::now() > deadline => {
                return fail("did not exit within 10 s of stdin closing")
            }
            None => thread::sleep(Duration::from_millis(5)),
        }
    }
    let server_cpu = match (cpu_before, cpu_after) {
        (Some(a), Some(b)) if b >= a => Some(b - a),
        _ => None,
    };
    Ok(RunResult {
        requests,
        wall: measured.wall,
        latencies: measured.latencies,
        server_cpu,
        client_cpu: measured.client_cpu,
        load_before,
    })
}

fn handshake(
    stdin: &mut BufWriter<ChildStdin>,
    stdout: &mut BufReader<ChildStdout>,
) -> Result<(), Failure> {
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "tiny-mcp-stdio-bench", "version": "0" }
        }
    });
    serde_json::to_writer(&mut *stdin, &initialize)?;
    stdin.write_all(b"\n")?;
    stdin.flush()?;
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            return fail("closed stdout before answering initialize");
        }
        let message: Incoming = serde_json::from_str(&line)
            .map_err(|e| Failure(format!("bad JSON {:?}: {}", line.trim_end(), e)))?;
        if message.method.is_some() {
            continue; // a notification or request of the server's: not ours
        }
        if message.id != Some(json!(0)) {
            return fail(format!(
                "unexpected answer to initialize: {}",
                line.trim_end()
            ));
        }
        if let Some(error) = message.error {
            return fail(format!("initialize failed: {}", error));
        }
        if message.result.and_then(|r| r.protocol_version).is_none() {
            return fail(format!(
                "initialize result has no protocolVersion: {}",
                line.trim_end()
            ));
        }
        break;
    }
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
    stdin.flush()?;
    Ok(())
}

/// The text sent to `echo` in request `id`; delimited so that one id's text
/// is never a substring of another's.
fn echo_text(id: u64) -> String {
    format!("bench<{}>", id)
}

/// What one phase measured.
struct Phase {
    wall: Duration,
    /// Sorted, in nanoseconds.
    latencies: Vec<u64>,
    client_cpu: Option<Duration>,
}

/// Sends `count` requests with ids `first..first+count`, at most `window` in
/// flight, and returns the wall time and the sorted latencies.
fn phase(
    child: &mut Child,
    stdin: &mut BufWriter<ChildStdin>,
    stdout: &mut BufReader<ChildStdout>,
    first: u64,
    count: usize,
    window: usize,
) -> Result<Phase, Failure> {
    // Nanoseconds since `t0` at which each request was written.
    let sent_at: Vec<AtomicU64> = (0..count).map(|_| AtomicU64::new(0)).collect();
    let (token_tx, token_rx) = mpsc::channel::<()>();
    for _ in 0..window.min(count) {
        token_tx.send(()).expect("receiver alive");
    }
    let t0 = Instant::now();
    let sent_at = &sent_at;
    guarded(child, move || {
        thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<Option<Duration>, Failure> {
                let cpu_before = thread_cpu();
                let mut line = Vec::with_capacity(256);
                for (i, sent_at) in sent_at.iter().enumerate() {
                    match token_rx.try_recv() {
                        Ok(()) => {}
                        Err(TryRecvError::Empty) => {
                            // The window is full: what is buffered must go out now.
                            stdin.flush()?;
                            if token_rx.recv_timeout(PHASE_TIMEOUT).is_err() {
                                return fail("writer: the reader stopped");
                            }
                        }
                        Err(TryRecvError::Disconnected) => {
                            return fail("writer: the reader stopped")
                        }
                    }
                    let id = first + i as u64;
                    line.clear();
                    writeln!(
                        line,
                        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":\
                         {{\"name\":\"echo\",\"arguments\":{{\"text\":\"{}\"}}}}}}",
                        id,
                        echo_text(id)
                    )?;
                    sent_at.store(t0.elapsed().as_nanos() as u64, Ordering::Release);
                    stdin.write_all(&line)?;
                }
                stdin.flush()?;
                Ok(cpu_since(cpu_before))
            });
            // The reader runs here; returning drops `token_tx`, which stops
            // a writer still waiting for room.
            let cpu_before = thread_cpu();
            let read = read_answers(stdout, first, count, t0, sent_at, token_tx);
            let reader_cpu = cpu_since(cpu_before);
            let written = writer.join().expect("writer thread panicked");
            let (wall, latencies) = read?;
            let writer_cpu = written?;
            Ok(Phase {
                wall,
                latencies,
                client_cpu: reader_cpu.and_then(|r| writer_cpu.map(|w| r + w)),
            })
        })
    })
}

/// Runs `f` (which talks to `child`), killing `child` if `f` takes longer
/// than [`PHASE_TIMEOUT`]: its reads then end and `f` returns.
fn guarded<T: Send>(
    child: &mut Child,
    f: impl FnOnce() -> Result<T, Failure> + Send,
) -> Result<T, Failure> {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    thread::scope(|scope| {
        let worker = scope.spawn(move || {
            let result = f();
            let _ = done_tx.send(());
            result
        });
        let timed_out = matches!(
            done_rx.recv_timeout(PHASE_TIMEOUT),
            Err(RecvTimeoutError::Timeout)
        );
        if timed_out {
            let _ = child.kill();
        }
        let result = worker.join().expect("driver thread panicked");
        if timed_out {
            return fail(format!("no complete answer within {:?}", PHASE_TIMEOUT));
        }
        result
    })
}

fn read_answers(
    stdout: &mut BufReader<ChildStdout>,
    first: u64,
    count: usize,
    t0: Instant,
    sent_at: &[AtomicU64],
    token_tx: mpsc::Sender<()>,
) -> Result<(Duration, Vec<u64>), Failure> {
    let mut latencies = vec![u64::MAX; count];
    let mut received = 0usize;
    let mut line = String::with_capacity(256);
    while received < count {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            return fail(format!(
                "closed stdout after {} of {} answers",
                received, count
            ));
        }
        let now = t0.elapsed().as_nanos() as u64;
        let message: Incoming = serde_json::from_str(&line)
            .map_err(|e| Failure(format!("bad JSON {:?}: {}", line.trim_end(), e)))?;
        if message.method.is_some() {
            continue; // a notification or request of the server's: not ours
        }
        let id = match message.id.as_ref().and_then(Value::as_u64) {
            Some(id) if id >= first && id < first + count as u64 => id,
            _ => return fail(format!("answer with an unexpected id: {}", line.trim_end())),
        };
        let index = (id - first) as usize;
        if latencies[index] != u64::MAX {
            return fail(format!("second answer to id {}", id));
        }
        if let Some(error) = message.error {
            return fail(format!("request {} failed: {}", id, error));
        }
        let result = match message.result {
            Some(result) => result,
            None => return fail(format!("answer without result: {}", line.trim_end())),
        };
        let expected = echo_text(id);
        let echoed = result.is_error != Some(true)
            && result.content.len() == 1
            && result.content[0]
                .text
                .as_deref()
                .map_or(false, |t| t.contains(&expected));
        if !echoed {
            return fail(format!("echo {} answered {}", id, line.trim_end()));
        }
        latencies[index] = now.saturating_sub(sent_at[index].load(Ordering::Acquire));
        received += 1;
        let _ = token_tx.send(());
    }
    let wall = t0.elapsed();
    latencies.sort_unstable();
    Ok((wall, latencies))
}

// ---------------------------------------------------------------------------
// Machine figures

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            let fields: Vec<&str> = s.split_whitespace().take(3).collect();
            if fields.len() == 3 {
                Some(fields.join(" "))
            } else {
                None
            }
        })
        .unwrap_or_else(|| "n/a".into())
}

/// The share of all CPUs that was busy over `window` (from /proc/stat).
fn cpu_busy(window: Duration) -> Option<f64> {
    fn sample() -> Option<(u64, u64)> {
        let stat = fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let total: u64 = fields.iter().take(8).sum();
        // idle + iowait
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some((total, idle))
    }
    let (total0, idle0) = sample()?;
    thread::sleep(window);
    let (total1, idle1) = sample()?;
    let total = total1.checked_sub(total0)?;
    if total == 0 {
        return None;
    }
    Some(1.0 - (idle1.saturating_sub(idle0)) as f64 / total as f64)
}

/// Waits up to `limit` for the machine to be (nearly) idle; returns the
/// last busy share measured.
fn wait_for_idle(limit: Duration) -> Option<f64> {
    let deadline = Instant::now() + limit;
    loop {
        let busy = cpu_busy(Duration::from_millis(300))?;
        if busy < 0.10 || Instant::now() >= deadline {
            return Some(busy);
        }
    }
}

/// Time on CPU of the calling thread (Linux only).
fn thread_cpu() -> Option<Duration> {
    let text = fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn cpu_since(before: Option<Duration>) -> Option<Duration> {
    Some(thread_cpu()?.saturating_sub(before?))
}

/// Total time on CPU of every live thread of process `pid` (Linux only).
fn process_cpu(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    for entry in fs::read_dir(format!("/proc/{}/task", pid)).ok()? {
        let path = entry.ok()?.path().join("schedstat");
        let mut text = String::new();
        fs::File::open(path).ok()?.read_to_string(&mut text).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

// ---------------------------------------------------------------------------
// Orchestration

struct Paths {
    manifest_dir: PathBuf,
    /// target/<profile> of this binary, e.g. target/release.
    profile_dir: PathBuf,
    /// The target directory, e.g. target.
    target_dir: PathBuf,
}

impl Paths {
    fn find() -> Result<Paths, Failure> {
        let exe = env::current_exe()?;
        // <target>/<profile>/deps/stdio-<hash>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .ok_or_else(|| Failure(format!("unexpected bench path {}", exe.display())))?
            .to_path_buf();
        let target_dir = profile_dir
            .parent()
            .ok_or_else(|| Failure(format!("unexpected bench path {}", exe.display())))?
            .to_path_buf();
        Ok(Paths {
            manifest_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            profile_dir,
            target_dir,
        })
    }

    fn example(&self) -> PathBuf {
        self.profile_dir
            .join("examples")
            .join(format!("{}{}", EXAMPLE, env::consts::EXE_SUFFIX))
    }

    fn scratch(&self) -> PathBuf {
        self.target_dir.join("bench-stdio")
    }
}

fn cargo() -> Command {
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.env_remove("CARGO_TARGET_DIR");
    command
}

fn build_example(paths: &Paths, target_dir: &Path, quiet: bool) -> Result<Duration, Failure> {
    let started = Instant::now();
    let mut command = cargo();
    command
        .current_dir(&paths.manifest_dir)
        .args(["build", "--release", "--example", EXAMPLE, "--target-dir"])
        .arg(target_dir);
    if quiet {
        command.arg("--quiet");
    }
    let status = command
        .status()
        .map_err(|e| Failure(format!("cannot run cargo: {}", e)))?;
    if !status.success() {
        return fail(format!(
            "`cargo build --release --example {}` failed ({})",
            EXAMPLE, status
        ));
    }
    Ok(started.elapsed())
}

fn stripped_size(binary: &Path, scratch: &Path) -> Result<(u64, u64), Failure> {
    fs::create_dir_all(scratch)?;
    let copy = scratch.join(format!("{}.stripped", EXAMPLE));
    fs::copy(binary, &copy)?;
    let status = Command::new("strip")
        .arg(&copy)
        .status()
        .map_err(|e| Failure(format!("cannot run strip: {}", e)))?;
    if !status.success() {
        return fail(format!("strip failed ({})", status));
    }
    Ok((fs::metadata(binary)?.len(), fs::metadata(&copy)?.len()))
}

fn bench(options: &Options) -> Result<(), Failure> {
    let paths = Paths::find()?;
    let wants = |which| options.only.map_or(true, |only| only == which);
    let ceiling = ServerSpec {
        name: "ceiling",
        program: env::current_exe()?,
        env: Some((ROLE_VAR, "ceiling")),
    };
    let sdk = ServerSpec {
        name: "sdk",
        program: options.sdk.clone().unwrap_or_else(|| paths.example()),
        env: None,
    };
    if wants(Which::Sdk) {
        if options.build {
            eprintln!("stdio bench: cargo build --release --example {}", EXAMPLE);
            build_example(&paths, &paths.target_dir, false)?;
        }
        if !sdk.program.exists() {
            return fail(format!(
                "{} not found: build it with `cargo build --release --example {}`",
                sdk.program.display(),
                EXAMPLE
            ));
        }
    }

    println!(
        "stdio bench: {} tools/call `echo` requests per run, at most {} in flight, \
         {} warm-up requests first, {} run(s) per server",
        options.requests, options.window, options.warmup, options.runs
    );
    println!(
        "machine: {} cores",
        thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "{:<8} {:>3} {:>10} {:>9} {:>9} {:>9} {:>12} {:>12} {:>6}  loadavg",
        "server",
        "run",
        "req/s",
        "p50 µs",
        "p99 µs",
        "wall ms",
        "srv CPU/req",
        "cli CPU/req",
        "busy"
    );
    let mut results: Vec<(&ServerSpec, Vec<RunResult>)> = Vec::new();
    if wants(Which::Ceiling) {
        results.push((&ceiling, Vec::new()));
    }
    if wants(Which::Sdk) {
        results.push((&sdk, Vec::new()));
    }
    for run in 0..options.runs {
        // Alternate the order so that neither server always goes first.
        let order: Vec<usize> = if run % 2 == 0 {
            (0..results.len()).collect()
        } else {
            (0..results.len()).rev().collect()
        };
        for i in order {
            let spec = results[i].0;
            let busy = wait_for_idle(options.wait_idle);
            let result = run_once(
                spec,
                options.requests,
                options.window,
                options.warmup,
                &paths.scratch(),
            )?;
            println!(
                "{:<8} {:>3} {:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>12} {:>12} {:>6}  {}",
                spec.name,
                run + 1,
                result.rate(),
                micros(result.percentile(50.0)),
                micros(result.percentile(99.0)),
                result.wall.as_secs_f64() * 1e3,
                result.per_request(result.server_cpu),
                result.per_request(result.client_cpu),
                busy.map_or_else(|| "n/a".into(), |b| format!("{:.0}%", b * 100.0)),
                result.load_before
            );
            results[i].1.push(result);
        }
    }

    println!();
    println!(
        "{:<8} {:>12} {:>9} {:>9} {:>14} {:>9} {:>9}",
        "server", "best req/s", "p50 µs", "p99 µs", "median req/s", "p50 µs", "p99 µs"
    );
    let mut summaries = Vec::new();
    for (spec, runs) in &mut results {
        runs.sort_by(|a, b| b.rate().total_cmp(&a.rate()));
        let best = &runs[0];
        let median = &runs[runs.len() / 2];
        println!(
            "{:<8} {:>12.0} {:>9.1} {:>9.1} {:>14.0} {:>9.1} {:>9.1}",
            spec.name,
            best.rate(),
            micros(best.percentile(50.0)),
            micros(best.percentile(99.0)),
            median.rate(),
            micros(median.percentile(50.0)),
            micros(median.percentile(99.0)),
        );
        summaries.push((spec.name, best.rate(), median.rate()));
    }
    if let [(_, c_best, c_median), (_, s_best, s_median)] = summaries[..] {
        println!();
        println!(
            "ratio sdk/ceiling: best {:.2}, median {:.2} (target: at least {:.2})",
            s_best / c_best,
            s_median / c_median,
            TARGET_RATIO
        );
    }

    if wants(Which::Sdk) {
        let (size, stripped) = stripped_size(&sdk.program, &paths.scratch())?;
        println!();
        println!(
            "size of {}: {} bytes, {} bytes stripped ({:.2} MB, {:.2} MiB; target: under 1.2 MB)",
            sdk.program.display(),
            size,
            stripped,
            stripped as f64 / 1e6,
            stripped as f64 / (1024.0 * 1024.0)
        );
        if stripped >= TARGET_STRIPPED_BYTES {
            println!("  (above the target)");
        }
    }

    if options.build_time {
        let dir = paths.target_dir.join("bench-build");
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        let load = loadavg();
        eprintln!(
            "stdio bench: clean `cargo build --release --example {}` in {}",
            EXAMPLE,
            dir.display()
        );
        let took = build_example(&paths, &dir, true)?;
        println!(
            "clean release build of the example (dependencies included): {:.1} s \
             (loadavg before: {}, after: {})",
            took.as_secs_f64(),
            load,
            loadavg()
        );
    }
    Ok(())
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Without `--bench`: a few hundred requests to each server, to show that
/// the driver and both servers work. The SDK is skipped if the example has
/// not been built for this profile.
fn smoke() -> Result<(), Failure> {
    let paths = Paths::find()?;
    let mut specs = vec![ServerSpec {
        name: "ceiling",
        program: env::current_exe()?,
        env: Some((ROLE_VAR, "ceiling")),
    }];
    let example = paths.example();
    if example.exists() {
        specs.push(ServerSpec {
            name: "sdk",
            program: example,
            env: None,
        });
    } else {
        println!(
            "stdio bench smoke: {} not built; sdk skipped",
            example.display()
        );
    }
    for spec in &specs {
        let result = run_once(spec, 300, 16, 20, &paths.scratch())?;
        println!(
            "stdio bench smoke: {}: {} requests answered (run `cargo bench --bench stdio` to measure)",
            spec.name, result.requests
        );
    }
    Ok(())
}
