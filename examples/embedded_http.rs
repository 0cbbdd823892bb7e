//! An existing synchronous program, a tiny job runner, that embeds an MCP
//! endpoint over Streamable HTTP and changes its tools while it runs.
//!
//! ```text
//! cargo run --example embedded_http                  # 127.0.0.1, any free port
//! cargo run --example embedded_http -- 127.0.0.1:8080
//! ```
//!
//! The program reads commands on stdin, as it did before it spoke MCP:
//!
//! - `enable NAME...` offers each job as a tool `NAME` (one
//!   `notifications/tools/list_changed` for them all);
//! - `disable NAME...` withdraws them;
//! - `quit` (or end of input) stops the endpoint, then the runner.
//!
//! Jobs run one at a time on the runner's own thread; a tool call queues
//! its job there and waits for the outcome. Every finished job is logged
//! to all connected clients (`notifications/message`), outside any
//! request. The tool `status` is always there.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::json;
use tiny_mcp::{
    CallToolResult, Error, JsonObject, LoggingLevel, RequestContext, Server, ServerHandle, Tool,
    ToolHandler, WeakServerHandle,
};

/// One queued run of a job, and where its outcome goes.
struct Run {
    job: String,
    done: SyncSender<String>,
}

fn main() -> Result<(), Error> {
    let addr = std::env::args().nth(1);
    let addr = addr.as_deref().unwrap_or("127.0.0.1:0");
    let enabled = Arc::new(Mutex::new(BTreeSet::<String>::new()));
    let (queue, runs) = mpsc::sync_channel::<Run>(16);

    let status_of = Arc::clone(&enabled);
    let server = Server::builder("job-runner", "1.0.0")
        .instructions("Runs the program's jobs. Call `status` to see which are enabled.")
        .tool(
            Tool::new("status", json!({"type": "object"})).with_description("The enabled jobs"),
            move |_: &RequestContext, _: JsonObject| {
                let enabled: Vec<String> = lock(&status_of).iter().cloned().collect();
                Ok(CallToolResult::text(format!(
                    "enabled: [{}]",
                    enabled.join(", ")
                )))
            },
        )
        .build();
    // A weak handle: the runner does not keep the server (and so the job
    // tools, which hold senders of its own queue) alive.
    let weak = server.handle().downgrade();
    let runner = thread::Builder::new()
        .name("job-runner".into())
        .spawn(move || run_jobs(runs, weak))?;

    let http = server.http().endpoint("/mcp").serve(addr)?;
    eprintln!("serving {}", http.url());

    let handle = server.handle();
    // A read error ends the input, as end of file does.
    for line in io::stdin().lock().lines().map_while(Result::ok) {
        let mut words = line.split_whitespace();
        match (words.next(), words.collect::<Vec<_>>()) {
            (Some("enable"), names) if !names.is_empty() => {
                handle.edit(|edit| {
                    for name in &names {
                        edit.add_tool(job_tool(name), job_handler(name, &queue));
                    }
                });
                lock(&enabled).extend(names.iter().map(|name| name.to_string()));
                announce(&handle, format!("enabled {}", names.join(" ")));
            }
            (Some("disable"), names) if !names.is_empty() => {
                handle.edit(|edit| {
                    for name in &names {
                        edit.remove_tool(name);
                    }
                });
                lock(&enabled).retain(|job| !names.contains(&job.as_str()));
                announce(&handle, format!("disabled {}", names.join(" ")));
            }
            (Some("quit"), _) => break,
            (None, _) => {}
            _ => eprintln!("commands: enable NAME..., disable NAME..., quit"),
        }
    }

    // Closing drops the job tools and the queue senders they own; the
    // runner ends once the last sender, ours, is gone too.
    server.close();
    http.join()?;
    drop(queue);
    if runner.join().is_err() {
        eprintln!("the job runner panicked");
    }
    eprintln!("stopped");
    Ok(())
}

/// The tool of job `name`.
fn job_tool(name: &str) -> Tool {
    Tool::new(name, json!({"type": "object"})).with_description(format!("Runs the job {}", name))
}

/// Queues a run of job `name` and waits for its outcome.
fn job_handler(name: &str, queue: &SyncSender<Run>) -> impl ToolHandler {
    let (name, queue) = (name.to_string(), queue.clone());
    move |_: &RequestContext, _: JsonObject| {
        let (done, outcome) = mpsc::sync_channel(1);
        let job = name.clone();
        let stopped = || Error::msg("the job runner has stopped");
        queue.send(Run { job, done }).map_err(|_| stopped())?;
        let outcome = outcome.recv().map_err(|_| stopped())?;
        Ok(CallToolResult::text(outcome))
    }
}

/// The runner's thread: runs each queued job and tells every client.
fn run_jobs(runs: Receiver<Run>, server: WeakServerHandle) {
    let mut counts = BTreeMap::<String, u64>::new();
    for run in runs {
        let count = counts.entry(run.job.clone()).or_insert(0);
        *count += 1;
        let outcome = format!("{} finished (run {})", run.job, count);
        if let Some(server) = server.upgrade() {
            server.log(LoggingLevel::Info, Some("jobs"), outcome.as_str());
        }
        let _ = run.done.send(outcome); // The caller may have been cancelled.
    }
}

/// Says `what` on stderr, for the operator, and to every client.
fn announce(server: &ServerHandle, what: String) {
    eprintln!("{}", what);
    server.log(LoggingLevel::Notice, Some("runner"), what);
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
