//! What tasks cost: resident memory per stored (finished) task and per
//! running task, and `tasks/get` throughput next to `ping` in one run
//! (issue "Long-running work as tasks", benchmark item).
//!
//! ```text
//! cargo bench --bench tasks
//! cargo bench --bench tasks -- --stored 20000 --running 200 --runs 7 --ops 20000
//! ```
//!
//! - Stored: `--stored` (10,000) 2025-11-25 task calls of a tool that
//!   answers at once with a one-line text result, through the in-memory
//!   dispatcher; resident memory (`/proc/self/statm`) before and after,
//!   divided by the count. The record, its result, its store indexes.
//! - Running: `--running` (100) calls of a tool that blocks until
//!   released; each holds a worker thread (its stack pages and glibc's
//!   per-thread cache) besides its record.
//! - Throughput: on one in-memory 2025-11-25 session, `--ops` (10,000)
//!   `tasks/get` of a finished task, then as many `ping`, alternating, for
//!   `--runs` (7) runs; the median of each and their ratio. Both are
//!   answered on the reading thread.
//!
//! A benchmark, not a timed test: it fails only if a request fails. Without
//! `--bench` (which `cargo bench` passes) it only smoke-tests, with small
//! counts.

use std::time::Instant;

use crossbeam_channel::{unbounded, Receiver};
use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, Error, JsonObject, MemoryClient, RequestContext, Server, TaskLimits,
    TaskSupport, Tool,
};

/// A server with `quick` (answers at once) and `blocked` (waits on the
/// channel), both task-supporting, room for `tasks` tasks and as many
/// workers.
fn server(tasks: usize, release: Receiver<()>) -> Server {
    let limits = TaskLimits {
        max_tasks: tasks + 10,
        max_tasks_per_owner: tasks + 10,
        max_running: tasks + 10,
        ..TaskLimits::default()
    };
    Server::builder("tasks-bench", "1")
        .tool(
            Tool::without_arguments("quick").with_task_support(TaskSupport::Optional),
            |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("done: the job finished"))
            },
        )
        .tool(
            Tool::without_arguments("blocked").with_task_support(TaskSupport::Optional),
            move |_: &RequestContext, _: JsonObject| -> Result<CallToolResult, Error> {
                let _ = release.recv();
                Ok(CallToolResult::text("released"))
            },
        )
        .task_limits(limits)
        .max_workers(tasks + 16)
        .build()
}

fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn start(client: &mut MemoryClient, tool: &str) -> Result<String, String> {
    let params = json!({"name": tool, "arguments": {}, "task": {"ttl": 3_600_000}});
    let created = client
        .request("tools/call", Some(params))
        .map_err(|e| e.to_string())?;
    match created["task"]["taskId"].as_str() {
        Some(id) => Ok(id.to_string()),
        None => Err(format!("no task in {}", created)),
    }
}

/// Bytes per task: `n` tasks of `tool`, resident memory before and after.
fn per_task(tool: &str, n: usize) -> Result<(f64, Vec<String>), String> {
    let (release, released) = unbounded();
    let server = server(n, released);
    let mut client = server.connect_memory();
    client.initialize(json!({})).map_err(|e| e.to_string())?;
    // Warm up allocator and pool with a few tasks not counted.
    for _ in 0..4 {
        start(&mut client, "quick")?;
    }
    let before = resident_bytes();
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        ids.push(start(&mut client, tool)?);
        // The notifications/tasks/status the client does not read.
        client.take_notifications();
    }
    if tool == "quick" {
        let last = ids.last().cloned().unwrap_or_default();
        client
            .request("tasks/result", Some(json!({ "taskId": last })))
            .map_err(|e| e.to_string())?;
    }
    let after = resident_bytes();
    for _ in 0..n {
        let _ = release.send(());
    }
    Ok((after.saturating_sub(before) as f64 / n as f64, ids))
}

/// Requests per second of `ops` calls of `method` with `params`.
fn rate(
    client: &mut MemoryClient,
    method: &str,
    params: &Value,
    ops: usize,
) -> Result<f64, String> {
    let started = Instant::now();
    for _ in 0..ops {
        client
            .request(method, Some(params.clone()))
            .map_err(|e| format!("{}: {}", method, e))?;
    }
    Ok(ops as f64 / started.elapsed().as_secs_f64())
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
    let stored = option(&args, "--stored", scale(10_000));
    let running = option(&args, "--running", scale(100));
    let runs = option(&args, "--runs", if bench { 7 } else { 1 });
    let ops = option(&args, "--ops", scale(10_000));

    let (stored_bytes, _) = per_task("quick", stored)?;
    println!(
        "stored task:  {:>8.0} bytes each ({} finished tasks)",
        stored_bytes, stored
    );
    let (running_bytes, _) = per_task("blocked", running)?;
    println!(
        "running task: {:>8.0} bytes each ({} blocked handlers)",
        running_bytes, running
    );

    let (_release, released) = unbounded();
    let server = server(10, released);
    let mut client = server.connect_memory();
    client.initialize(json!({})).map_err(|e| e.to_string())?;
    let id = start(&mut client, "quick")?;
    client
        .request("tasks/result", Some(json!({ "taskId": id })))
        .map_err(|e| e.to_string())?;
    let get = json!({ "taskId": id });
    let (mut gets, mut pings) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        gets.push(rate(&mut client, "tasks/get", &get, ops)?);
        pings.push(rate(&mut client, "ping", &json!({}), ops)?);
    }
    let (get, ping) = (median(gets), median(pings));
    println!(
        "tasks/get: {:>9.0} req/s   ping: {:>9.0} req/s   ratio {:.2} (median of {} runs of {})",
        get,
        ping,
        get / ping,
        runs,
        ops
    );
    Ok(())
}
