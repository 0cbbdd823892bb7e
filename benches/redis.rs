//! Several instances on Redis (issue 30, benchmark item), in one run:
//!
//! - **Change fan-out**: instance A calls `notify_tools_list_changed`;
//!   instance B, served over Streamable HTTP on 127.0.0.1, has a 2026-07-28
//!   `subscriptions/listen` stream open; the time from the call on A to the
//!   `notifications/tools/list_changed` event read off B's stream, `--changes`
//!   (1,000) times, one at a time: p50, p99 and the largest.
//! - **`tasks/get` throughput**: one finished 2026-07-28 task on a server
//!   whose store is `RedisTaskStore`, and one on a server with the default
//!   in-memory store; `--ops` (5,000) `tasks/get` on an in-memory client of
//!   each, alternating, `--runs` (7) runs; the medians and their ratio. The
//!   same with `--clients` (8) threads at once.
//!
//! ```text
//! cargo bench --bench redis --features redis
//! cargo bench --bench redis --features redis -- --changes 2000 --ops 10000 --runs 9
//! ```
//!
//! It starts Debian's `redis-server` on a free loopback port (no
//! persistence) and stops it at the end. A benchmark, not a timed test: it
//! fails only if a request fails. Without `--bench` (which `cargo bench`
//! passes) it only smoke-tests, with small counts.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, Error, JsonObject, MemoryClient, RedisChangeBus, RedisTaskStore,
    RequestContext, Server, TaskSupport, Tool,
};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// A redis-server of our own, stopped on drop.
struct Redis {
    child: Child,
    url: String,
}

impl Redis {
    fn start() -> Result<Redis, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("redis-server (apt-get install redis-server): {}", e))?;
        let redis = Redis {
            child,
            url: format!("redis://127.0.0.1:{}/", port),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err("redis-server did not listen within 10 s".into());
            }
            std::thread::yield_now();
        }
        Ok(redis)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The 2026-07-28 envelope, declaring the tasks extension.
fn env(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": { EXT: {} }},
        "io.modelcontextprotocol/clientInfo": {"name": "redis-bench", "version": "0"},
    });
    params
}

fn task_server(store: Option<RedisTaskStore>) -> Server {
    let builder = Server::builder("redis-bench", "1").tool(
        Tool::without_arguments("quick").with_task_support(TaskSupport::Optional),
        |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
            Ok(CallToolResult::text("done: the job finished"))
        },
    );
    match store {
        Some(store) => builder.task_store(store).build(),
        None => builder.build(),
    }
}

/// A finished task's id, made by `client` (a memory connection owns its
/// tasks: only it may read them).
fn finished_task(client: &mut MemoryClient) -> Result<String, String> {
    let call = env(json!({"name": "quick", "arguments": {}}));
    let created = client
        .request("tools/call", Some(call))
        .map_err(|e| format!("tools/call: {:?}", e))?;
    let id = created["taskId"].as_str().ok_or("no taskId")?.to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let task = client
            .request("tasks/get", Some(env(json!({ "taskId": id }))))
            .map_err(|e| format!("tasks/get: {:?}", e))?;
        if task["status"] == "completed" {
            return Ok(id);
        }
        if Instant::now() > deadline {
            return Err(format!("task stayed {}", task));
        }
        std::thread::yield_now();
    }
}

/// `clients` memory connections to `server`, each with a finished task of
/// its own.
fn clients_with_tasks(
    server: &Server,
    clients: usize,
) -> Result<Vec<(MemoryClient, Value)>, String> {
    (0..clients)
        .map(|_| {
            let mut client = server.connect_memory();
            let id = finished_task(&mut client)?;
            Ok((client, env(json!({ "taskId": id }))))
        })
        .collect()
}

/// `tasks/get` per second over `memory.len()` threads, `ops` each.
fn rate(memory: &mut [(MemoryClient, Value)], ops: usize) -> Result<f64, String> {
    let clients = memory.len();
    let started = Instant::now();
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let running: Vec<_> = memory
            .iter_mut()
            .map(|(client, params)| {
                let params = &*params;
                scope.spawn(move || {
                    for _ in 0..ops {
                        client
                            .request("tasks/get", Some(params.clone()))
                            .map_err(|e| format!("tasks/get: {:?}", e))?;
                    }
                    Ok(())
                })
            })
            .collect();
        running
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect()
    });
    outcomes.into_iter().collect::<Result<(), String>>()?;
    Ok((clients * ops) as f64 / started.elapsed().as_secs_f64())
}

/// A 2026-07-28 listen stream for tools/list_changed on `addr`, read up to
/// its acknowledgement.
fn listen(addr: &str) -> Result<BufReader<TcpStream>, String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": env(json!({"notifications": {"toolsListChanged": true}}))})
    .to_string();
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{}",
        addr,
        body.len(),
        body
    );
    stream
        .write_all(head.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    wait_for(&mut reader, "notifications/subscriptions/acknowledged")?;
    Ok(reader)
}

/// Reads SSE lines until a `data:` line holding `method`.
fn wait_for(reader: &mut BufReader<TcpStream>, method: &str) -> Result<(), String> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err(format!("the stream ended before {}", method));
        }
        if line.starts_with("data:") && line.contains(method) {
            return Ok(());
        }
    }
}

/// Milliseconds from `notify_tools_list_changed` on A to the event on B's
/// listen stream, `changes` times.
fn fan_out(url: &str, changes: usize) -> Result<Vec<f64>, String> {
    let bus = |url: &str| RedisChangeBus::new(url).map_err(|e| e.to_string());
    // Tools offered: a listen stream is acknowledged for what is offered.
    let a = Server::builder("a", "1")
        .offer_tools()
        .change_bus(bus(url)?)
        .build();
    let b = Server::builder("b", "1")
        .offer_tools()
        .change_bus(bus(url)?)
        .build();
    let http = b.http().serve("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = http.local_addr().to_string();
    let mut stream = listen(&addr)?;
    let mut times = Vec::with_capacity(changes);
    for _ in 0..changes {
        let started = Instant::now();
        a.handle().notify_tools_list_changed();
        wait_for(&mut stream, "notifications/tools/list_changed")?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(times)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    values[values.len() / 2]
}

fn option(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let scale = |n: usize| if bench { n } else { n / 100 + 1 };
    let changes = option(&args, "--changes", scale(1000));
    let ops = option(&args, "--ops", scale(5000));
    let runs = option(&args, "--runs", if bench { 7 } else { 1 });
    let clients = option(&args, "--clients", 8);
    let redis = Redis::start()?;

    let mut times = fan_out(&redis.url, changes)?;
    times.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "fan-out A -> Redis -> B's listen stream: p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms ({} changes)",
        at(0.5),
        at(0.99),
        at(1.0),
        changes
    );

    let on_redis = task_server(Some(
        RedisTaskStore::new(&redis.url).map_err(|e| e.to_string())?,
    ));
    let in_memory = task_server(None);
    for threads in [1, clients] {
        let mut redis_clients = clients_with_tasks(&on_redis, threads)?;
        let mut memory_clients = clients_with_tasks(&in_memory, threads)?;
        let (mut on, mut off) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            on.push(rate(&mut redis_clients, ops / threads.max(1))?);
            off.push(rate(&mut memory_clients, ops / threads.max(1))?);
        }
        let (on, off) = (median(on), median(off));
        println!(
            "tasks/get, {} client(s): Redis {:>9.0} req/s   memory {:>9.0} req/s   ratio {:.3} (median of {} runs of {})",
            threads, on, off, on / off, runs, ops
        );
    }
    Ok(())
}
