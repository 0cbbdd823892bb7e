//! Throughput, latency and CPU of the blocking client, `tiny_mcp::Client`:
//! pipelined `tools/call echo` from N threads sharing one client.
//!
//! ```text
//! cargo build --release --examples                   # the server it drives
//! cargo bench --bench client                         # stdio + HTTP, both eras, 1/8/32 threads
//! cargo bench --bench client -- --threads 1,8 --seconds 5 --runs 5
//! cargo bench --bench client -- --transports http --eras v2025 --raw
//! cargo bench --bench client -- --help               # every option
//! scripts/measure/bench-client.sh                            # next to the Python SDK client
//! ```
//!
//! This is a benchmark, not a timed test: it asserts nothing about speed and
//! fails only when the server answers wrongly or not at all.
//!
//! # The server
//!
//! The `everything` example (`target/release/examples/everything`, or
//! `--server PATH`) as a child process: over stdio the client starts it
//! (`ClientBuilder::connect_stdio`), over HTTP this bench starts it with
//! `--http 127.0.0.1:0` and reads the address it prints. Not an in-process
//! server, so that the comparison with the Python SDK client
//! (`tests/interop/python/bench_client.py`, which starts the very same
//! binary the same way) is fair: both clients face the same server in its
//! own process, and the client's CPU is its process alone, the server's
//! measured apart.
//!
//! # What is measured
//!
//! For each transport (`stdio`, `http`), era (`2026-07-28`: the client's
//! default negotiation, `server/discover`; `2025-11-25`: pinned with
//! `ClientBuilder::era`) and N in `--threads` (1, 8, 32), a fresh server
//! and a fresh client: the client lists the tools once, then N threads
//! share it, each calling `echo` with a text of its own (`t<thread>-<i>`)
//! as fast as it answers and checking the echo. After `--warmup` (0.5 s)
//! the calls that end within the next `--seconds` (3) are counted.
//!
//! Columns: `calls/s`; `p50`/`p99` latency of those calls (from before
//! `call_tool` to its return); `cli CPU/call`: CPU time of this whole
//! process over the window (`/proc/self/stat` utime + stime, every thread,
//! in 10 ms ticks) per call; `srv CPU/call`: the same for the server child
//! (`/proc/<pid>/stat`); `busy`: the share of all CPUs busy during the
//! 300 ms before the run, while nothing of the bench runs. On a 2-core
//! machine client and server share the CPUs, so CPU per call is the
//! steadier figure.
//!
//! Each (transport, era, N) is run `--runs` (3) times, the order reversed
//! every other run so that a change of load hits all alike; the summary
//! gives the median of each figure over the runs. `--raw` adds one
//! `raw key=value …` line per run (read by `scripts/measure/bench-client.sh`).
//!
//! Run without `--bench` (as `cargo test --all-targets` does), the binary
//! only smoke-tests every path with a few calls, if the example is built
//! for that profile (`cargo build --examples`).

use std::env;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{self, Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use tiny_mcp::{CallToolResult, Client, ContentBlock, Era, StderrMode};

const EXAMPLE: &str = "everything";
/// Longest wait for the HTTP server to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for one call.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// `/proc/<pid>/stat` counts CPU time in USER_HZ ticks, 100 a second on Linux.
const TICK: Duration = Duration::from_millis(10);
/// What the summary of `/proc/<pid>/stat` splits on: the end of `(comm)`.
const COMM_END: char = ')';

type Res<T> = Result<T, String>;

const USAGE: &str = "\
usage: cargo bench --bench client [-- OPTIONS]

  --threads LIST      client threads sharing one client, comma-separated (default 1,8,32)
  --transports LIST   stdio,http (default both)
  --eras LIST         2026-07-28 (or v2026: the default negotiation),
                      2025-11-25 (or v2025: pinned) (default both)
  --seconds S         measured seconds per run (default 3)
  --warmup S          unmeasured seconds before each run (default 0.5)
  --runs N            runs per (transport, era, threads) (default 3)
  --server PATH       the server binary (default target/release/examples/everything,
                      built by `cargo build --release --examples`)
  --wait-idle S       before each run, wait up to S seconds for the machine to be
                      idle (under 10% CPU busy over 300 ms); default 0 (no wait)
  --raw               also print one `raw key=value ...` line per run
  --help              this text

Without `--bench` (which `cargo bench` passes) it only smoke-tests every path.";

fn main() {
    let options = match Options::parse(env::args().skip(1)) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("client bench: {}\n\n{}", e, USAGE);
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
        eprintln!("client bench: error: {}", e);
        process::exit(1);
    }
}

// ---------------------------------------------------------------------------
// Options

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }

    fn parse(text: &str) -> Option<Transport> {
        match text {
            "stdio" => Some(Transport::Stdio),
            "http" => Some(Transport::Http),
            _ => None,
        }
    }
}

/// The era of a run: the client's default (which reaches 2026-07-28 with
/// this server) or 2025-11-25 pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EraPick {
    V2026,
    V2025,
}

impl EraPick {
    fn name(self) -> &'static str {
        match self {
            EraPick::V2026 => "2026-07-28",
            EraPick::V2025 => "2025-11-25",
        }
    }

    fn era(self) -> Era {
        match self {
            EraPick::V2026 => Era::V2026_07_28,
            EraPick::V2025 => Era::V2025_11_25,
        }
    }

    fn parse(text: &str) -> Option<EraPick> {
        match text {
            "2026-07-28" | "v2026" => Some(EraPick::V2026),
            "2025-11-25" | "v2025" => Some(EraPick::V2025),
            _ => None,
        }
    }
}

#[derive(Debug)]
struct Options {
    bench: bool,
    help: bool,
    threads: Vec<usize>,
    transports: Vec<Transport>,
    eras: Vec<EraPick>,
    seconds: f64,
    warmup: f64,
    runs: usize,
    server: Option<PathBuf>,
    wait_idle: Duration,
    raw: bool,
}

/// `text` split at commas, each part parsed by `parse`.
fn list<T>(name: &str, text: Option<String>, parse: impl Fn(&str) -> Option<T>) -> Res<Vec<T>> {
    let text = text.ok_or_else(|| format!("{} needs a value", name))?;
    text.split(',')
        .map(|part| parse(part.trim()).ok_or_else(|| format!("{}: bad value {:?}", name, part)))
        .collect()
}

fn seconds(name: &str, text: Option<String>) -> Res<f64> {
    let text = text.ok_or_else(|| format!("{} needs a value", name))?;
    match text.parse::<f64>() {
        Ok(s) if s >= 0.0 && s.is_finite() => Ok(s),
        _ => Err(format!("{} needs seconds, not {:?}", name, text)),
    }
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Res<Options> {
        let mut o = Options {
            bench: false,
            help: false,
            threads: vec![1, 8, 32],
            transports: vec![Transport::Stdio, Transport::Http],
            eras: vec![EraPick::V2026, EraPick::V2025],
            seconds: 3.0,
            warmup: 0.5,
            runs: 3,
            server: None,
            wait_idle: Duration::ZERO,
            raw: false,
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--bench" => o.bench = true,
                "--help" | "-h" => o.help = true,
                "--raw" => o.raw = true,
                "--threads" => {
                    o.threads = list(&arg, args.next(), |t| t.parse().ok().filter(|&n| n > 0))?
                }
                "--transports" => o.transports = list(&arg, args.next(), Transport::parse)?,
                "--eras" => o.eras = list(&arg, args.next(), EraPick::parse)?,
                "--seconds" => o.seconds = seconds(&arg, args.next())?,
                "--warmup" => o.warmup = seconds(&arg, args.next())?,
                "--runs" => {
                    let text = args.next().ok_or("--runs needs a value")?;
                    o.runs = text
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("--runs needs a number, not {:?}", text))?;
                }
                "--server" => {
                    let path = args.next().ok_or("--server needs a path")?;
                    o.server = Some(PathBuf::from(path));
                }
                "--wait-idle" => o.wait_idle = Duration::from_secs_f64(seconds(&arg, args.next())?),
                // libtest flags that cargo may pass to any bench target.
                "--nocapture" | "--quiet" | "-q" => {}
                other if other.starts_with('-') => return Err(format!("unknown option {}", other)),
                other => eprintln!("client bench: ignoring filter {:?}", other),
            }
        }
        if o.seconds == 0.0 {
            return Err("--seconds must be more than 0".into());
        }
        Ok(o)
    }
}

// ---------------------------------------------------------------------------
// The server

/// What one run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    transport: Transport,
    era: EraPick,
    threads: usize,
}

/// The HTTP server child; killed and reaped when dropped.
struct HttpChild {
    child: Child,
    url: String,
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `server --http 127.0.0.1:0` and waits for the line that says
/// where it serves; the rest of its stderr is read and dropped.
fn start_http(server: &Path) -> Res<HttpChild> {
    let child = Command::new(server)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {}", server.display(), e))?;
    let mut running = HttpChild {
        child,
        url: String::new(),
    };
    let stderr = running
        .child
        .stderr
        .take()
        .ok_or("the server has no stderr")?;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut found = false;
        for line in BufReader::new(stderr).lines() {
            let line = match line {
                Ok(line) => line,
                Err(_) => break,
            };
            if !found {
                if let Some(url) = served_url(&line) {
                    found = true;
                    let _ = tx.send(url);
                }
            }
        }
    });
    running.url = rx
        .recv_timeout(START_TIMEOUT)
        .map_err(|_| format!("{} did not say where it serves", server.display()))?;
    Ok(running)
}

/// The URL of `everything: serving MCP on http://ADDR/mcp`.
fn served_url(line: &str) -> Option<String> {
    const SAYS: &str = "serving MCP on ";
    let at = line.find(SAYS)?;
    let url = line[at + SAYS.len()..].trim();
    if url.starts_with("http://") {
        Some(url.to_string())
    } else {
        None
    }
}

/// A client for `cell` on `http` (or a stdio child of `server`), checked
/// to speak the era wanted, with the tools listed once (as the Python
/// client does before its first call).
fn connect(cell: Cell, server: &Path, http: Option<&HttpChild>) -> Res<Client> {
    let mut builder = Client::builder("tiny-mcp-client-bench", "1.0.0")
        .request_timeout(CALL_TIMEOUT)
        .stderr(StderrMode::Null);
    if cell.era == EraPick::V2025 {
        builder = builder.era(Era::V2025_11_25);
    }
    let connected = match http {
        Some(http) => builder.connect_http(&http.url),
        None => builder.connect_stdio(Command::new(server)),
    };
    let client = connected.map_err(|e| format!("connect over {}: {}", cell.transport.name(), e))?;
    if client.era() != cell.era.era() {
        return Err(format!(
            "{} client negotiated {}, not {}",
            cell.transport.name(),
            client.protocol_version(),
            cell.era.name()
        ));
    }
    let tools = client
        .list_tools()
        .map_err(|e| format!("tools/list: {}", e))?;
    if !tools.iter().any(|t| t.name == "echo") {
        return Err("the server has no echo tool".into());
    }
    Ok(client)
}

// ---------------------------------------------------------------------------
// One run

/// One run's figures.
struct RunResult {
    cell: Cell,
    calls: u64,
    window: Duration,
    /// Sorted.
    latencies: Vec<Duration>,
    client_cpu: Option<Duration>,
    server_cpu: Option<Duration>,
    busy: Option<f64>,
}

impl RunResult {
    fn rate(&self) -> f64 {
        self.calls as f64 / self.window.as_secs_f64()
    }

    fn percentile(&self, p: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let rank = (p / 100.0 * (self.latencies.len() - 1) as f64).round() as usize;
        self.latencies[rank.min(self.latencies.len() - 1)]
    }

    /// CPU per call, in µs.
    fn per_call(&self, cpu: Option<Duration>) -> Option<f64> {
        if self.calls == 0 {
            return None;
        }
        cpu.map(|cpu| micros(cpu) / self.calls as f64)
    }
}

/// Timings of one thread's calls: when each ended, and how long it took.
type Samples = Vec<(Instant, Duration)>;

/// Calls `echo` until `stop`, checking every answer; sets `stop` on a
/// failure so that the run ends at once.
fn worker(client: &Client, index: usize, stop: &AtomicBool) -> Res<Samples> {
    let mut samples = Vec::with_capacity(1 << 16);
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let text = format!("t{}-{}", index, i);
        let arguments = json!({ "text": text });
        let started = Instant::now();
        let answer = client.call_tool("echo", arguments);
        let ended = Instant::now();
        let checked = answer
            .map_err(|e| format!("tools/call echo: {}", e))
            .and_then(|result| check_echo(&result, &text));
        if let Err(e) = checked {
            stop.store(true, Ordering::SeqCst);
            return Err(e);
        }
        samples.push((ended, ended - started));
        i += 1;
    }
    Ok(samples)
}

fn check_echo(result: &CallToolResult, want: &str) -> Res<()> {
    match result.content.first() {
        Some(ContentBlock::Text(t)) if t.text == want && result.is_error != Some(true) => Ok(()),
        _ => Err(format!(
            "echo of {:?} answered {}",
            want,
            serde_json::to_string(&result.content).unwrap_or_default()
        )),
    }
}

/// Sleeps until `deadline`, or until `stop` is set.
fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Runs `threads` workers on `client`: warm-up, then the measured window,
/// with the CPU of this process and of `server_pid` around it.
fn drive(client: Client, cell: Cell, server_pid: Option<u32>, o: &Options) -> Res<RunResult> {
    let client = Arc::new(client);
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for index in 0..cell.threads {
        let (shared, flag) = (Arc::clone(&client), Arc::clone(&stop));
        let spawned = thread::Builder::new()
            .name(format!("bench-client-{}", index))
            .spawn(move || worker(&shared, index, &flag));
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(e) => {
                stop.store(true, Ordering::SeqCst);
                return Err(format!("cannot start a client thread: {}", e));
            }
        }
    }
    sleep_until(Instant::now() + Duration::from_secs_f64(o.warmup), &stop);
    let (t0, cli0) = (Instant::now(), process_cpu(process::id()));
    let srv0 = server_pid.and_then(process_cpu);
    sleep_until(t0 + Duration::from_secs_f64(o.seconds), &stop);
    let (t1, cli1) = (Instant::now(), process_cpu(process::id()));
    let srv1 = server_pid.and_then(process_cpu);
    stop.store(true, Ordering::SeqCst);
    let mut latencies = Vec::new();
    let mut failure = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(samples)) => latencies.extend(
                samples
                    .into_iter()
                    .filter(|&(end, _)| end >= t0 && end <= t1)
                    .map(|(_, took)| took),
            ),
            Ok(Err(e)) => failure = Some(e),
            Err(_) => failure = Some("a client thread panicked".to_string()),
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    latencies.sort_unstable();
    Ok(RunResult {
        cell,
        calls: latencies.len() as u64,
        window: t1 - t0,
        latencies,
        client_cpu: since(cli0, cli1),
        server_cpu: since(srv0, srv1),
        busy: None,
    })
}

/// One run of `cell`: a fresh server and client, driven, then closed.
fn run_cell(cell: Cell, server: &Path, o: &Options) -> Res<RunResult> {
    let busy = if o.bench {
        wait_idle(o.wait_idle)
    } else {
        None
    };
    let http = match cell.transport {
        Transport::Http => Some(start_http(server)?),
        Transport::Stdio => None,
    };
    let client = connect(cell, server, http.as_ref())?;
    let server_pid = match &http {
        Some(http) => Some(http.child.id()),
        None => client.server_pid(),
    };
    let mut result = drive(client, cell, server_pid, o)?;
    result.busy = busy;
    Ok(result)
}

// ---------------------------------------------------------------------------
// Machine figures

/// utime + stime of every thread of process `pid`, the ended ones
/// included (`/proc/<pid>/stat`, fields 14 and 15).
fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{}/stat", pid)).ok()?;
    let after = &stat[stat.rfind(COMM_END)? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state): utime is field 14, stime 15.
    let utime: u32 = fields.get(11)?.parse().ok()?;
    let stime: u32 = fields.get(12)?.parse().ok()?;
    Some(TICK * (utime + stime))
}

fn since(before: Option<Duration>, after: Option<Duration>) -> Option<Duration> {
    Some(after?.saturating_sub(before?))
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
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some((total, idle))
    }
    let (total0, idle0) = sample()?;
    thread::sleep(window);
    let (total1, idle1) = sample()?;
    let total = total1.checked_sub(total0).filter(|&t| t > 0)?;
    Some(1.0 - idle1.saturating_sub(idle0) as f64 / total as f64)
}

/// Waits up to `limit` for the machine to be under 10% busy; the last
/// share measured.
fn wait_idle(limit: Duration) -> Option<f64> {
    let deadline = Instant::now() + limit;
    loop {
        let busy = cpu_busy(Duration::from_millis(300))?;
        if busy < 0.10 || Instant::now() >= deadline {
            return Some(busy);
        }
        thread::sleep(Duration::from_millis(700));
    }
}

// ---------------------------------------------------------------------------
// Output

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn fmt_opt(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(|| "n/a".into(), |v| format!("{:.1}{}", v, unit))
}

fn print_header(first: &str) {
    println!(
        "{:<5} {:<10} {:>3} {:>4} {:>9} {:>9} {:>9} {:>12} {:>12} {:>5}",
        "via",
        "era",
        "N",
        first,
        "calls/s",
        "p50 µs",
        "p99 µs",
        "cli CPU/call",
        "srv CPU/call",
        "busy"
    );
}

fn print_run(r: &RunResult, run: usize) {
    println!(
        "{:<5} {:<10} {:>3} {:>4} {:>9.0} {:>9.1} {:>9.1} {:>12} {:>12} {:>5}",
        r.cell.transport.name(),
        r.cell.era.name(),
        r.cell.threads,
        run,
        r.rate(),
        micros(r.percentile(50.0)),
        micros(r.percentile(99.0)),
        fmt_opt(r.per_call(r.client_cpu), " µs"),
        fmt_opt(r.per_call(r.server_cpu), " µs"),
        fmt_opt(r.busy.map(|b| b * 100.0), "%"),
    );
}

/// The line `scripts/measure/bench-client.sh` reads.
fn print_raw(r: &RunResult, run: usize) {
    println!(
        "raw impl=tiny-mcp transport={} era={} threads={} run={} calls={} seconds={:.4} \
         rate={:.1} p50_us={:.1} p99_us={:.1} cli_cpu_us={} srv_cpu_us={} busy={}",
        r.cell.transport.name(),
        r.cell.era.name(),
        r.cell.threads,
        run,
        r.calls,
        r.window.as_secs_f64(),
        r.rate(),
        micros(r.percentile(50.0)),
        micros(r.percentile(99.0)),
        r.per_call(r.client_cpu)
            .map_or_else(|| "nan".into(), |v| format!("{:.2}", v)),
        r.per_call(r.server_cpu)
            .map_or_else(|| "nan".into(), |v| format!("{:.2}", v)),
        r.busy.map_or_else(|| "nan".into(), |b| format!("{:.3}", b)),
    );
}

/// The median of `values` (the upper one of an even count); `None` if
/// any is missing.
fn median(mut values: Vec<Option<f64>>) -> Option<f64> {
    if values.is_empty() || values.iter().any(Option::is_none) {
        return None;
    }
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    values[values.len() / 2]
}

/// One line per cell: the median of each figure over its runs.
fn print_summary(cells: &[Cell], results: &[RunResult]) {
    println!();
    println!("medians over the runs:");
    print_header("runs");
    for &cell in cells {
        let runs: Vec<&RunResult> = results.iter().filter(|r| r.cell == cell).collect();
        let figure =
            |f: &dyn Fn(&RunResult) -> Option<f64>| median(runs.iter().map(|r| f(r)).collect());
        println!(
            "{:<5} {:<10} {:>3} {:>4} {:>9} {:>9} {:>9} {:>12} {:>12} {:>5}",
            cell.transport.name(),
            cell.era.name(),
            cell.threads,
            runs.len(),
            fmt_opt(figure(&|r| Some(r.rate())), ""),
            fmt_opt(figure(&|r| Some(micros(r.percentile(50.0)))), ""),
            fmt_opt(figure(&|r| Some(micros(r.percentile(99.0)))), ""),
            fmt_opt(figure(&|r| r.per_call(r.client_cpu)), " µs"),
            fmt_opt(figure(&|r| r.per_call(r.server_cpu)), " µs"),
            fmt_opt(figure(&|r| r.busy.map(|b| b * 100.0)), "%"),
        );
    }
}

// ---------------------------------------------------------------------------
// Orchestration

/// The `everything` example next to this binary's profile:
/// `<target>/<profile>/examples/everything` for `<target>/<profile>/deps/client-<hash>`.
fn example_path() -> Res<PathBuf> {
    let exe = env::current_exe().map_err(|e| format!("cannot find this binary: {}", e))?;
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("unexpected bench path {}", exe.display()))?;
    Ok(profile
        .join("examples")
        .join(format!("{}{}", EXAMPLE, env::consts::EXE_SUFFIX)))
}

fn cells(o: &Options) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &transport in &o.transports {
        for &era in &o.eras {
            for &threads in &o.threads {
                cells.push(Cell {
                    transport,
                    era,
                    threads,
                });
            }
        }
    }
    cells
}

fn bench(o: &Options) -> Res<()> {
    let server = match &o.server {
        Some(path) => path.clone(),
        None => example_path()?,
    };
    if !server.exists() {
        return Err(format!(
            "{} not found: build it with `cargo build --release --examples`",
            server.display()
        ));
    }
    let cells = cells(o);
    println!(
        "client bench: tiny_mcp::Client, tools/call echo against {}; {} s measured after \
         {} s warm-up, {} run(s) per cell; machine: {} cores",
        server.display(),
        o.seconds,
        o.warmup,
        o.runs,
        thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    print_header("run");
    let mut results = Vec::new();
    for run in 1..=o.runs {
        let order: Vec<Cell> = if run % 2 == 1 {
            cells.clone()
        } else {
            cells.iter().rev().copied().collect()
        };
        for cell in order {
            let result = run_cell(cell, &server, o)?;
            print_run(&result, run);
            if o.raw {
                print_raw(&result, run);
            }
            results.push(result);
        }
    }
    print_summary(&cells, &results);
    Ok(())
}

/// Without `--bench`: a short run of every cell with 1 and 4 threads, if
/// the example is built for this profile.
fn smoke() -> Res<()> {
    let server = example_path()?;
    if !server.exists() {
        println!(
            "client bench smoke: {} not built (`cargo build --examples`); skipped",
            server.display()
        );
        return Ok(());
    }
    let o = Options {
        bench: false,
        help: false,
        threads: vec![1, 4],
        transports: vec![Transport::Stdio, Transport::Http],
        eras: vec![EraPick::V2026, EraPick::V2025],
        seconds: 0.2,
        warmup: 0.05,
        runs: 1,
        server: None,
        wait_idle: Duration::ZERO,
        raw: false,
    };
    for cell in cells(&o) {
        let result = run_cell(cell, &server, &o)?;
        if result.calls == 0 {
            return Err(format!("{:?}: no call answered", cell));
        }
        println!(
            "client bench smoke: {} {} N={}: {} calls answered",
            cell.transport.name(),
            cell.era.name(),
            cell.threads,
            result.calls
        );
    }
    println!("client bench smoke: ok (run `cargo bench --bench client` to measure)");
    Ok(())
}
