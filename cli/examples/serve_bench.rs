//! How much `mcp serve` costs a call: the same `tools/call` sent by the
//! crate's `Client` straight to a stdio server, and through `mcp serve`
//! over Streamable HTTP in both eras (scripts/measure/serve-bench.sh runs
//! it on release builds).
//!
//! ```text
//! serve_bench MCP_BINARY CALLS "SERVER ARGS" TOOL '{"arguments":...}'
//! ```
//!
//! Prints one line per route: calls, calls per second, and the median and
//! 99th-percentile latency of one call.

use std::io::{BufRead, BufReader};
use std::process::{self, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_mcp::{Client, Era, Error};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 5 {
        eprintln!("usage: serve_bench MCP_BINARY CALLS \"SERVER ARGS\" TOOL ARGUMENTS_JSON");
        process::exit(2);
    }
    if let Err(e) = run(&args) {
        eprintln!("serve_bench: {}", e);
        process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), Error> {
    let calls: usize = match args[1].parse() {
        Ok(n) if n > 0 => n,
        _ => return Err(Error::msg("CALLS is a positive count")),
    };
    let words: Vec<&str> = args[2].split_whitespace().collect();
    let (program, rest) = words.split_first().ok_or_else(|| Error::msg("no server"))?;
    let arguments: Value = serde_json::from_str(&args[4])?;
    let tool = args[3].as_str();

    let mut command = Command::new(program);
    command.args(rest);
    let direct = Client::builder("serve-bench", "1").connect_stdio(command)?;
    report("stdio, direct", &measure(&direct, tool, &arguments, calls)?);
    drop(direct);

    let mut serving = Command::new(&args[0])
        .args(["serve", "--stdio", &args[2], "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let url = read_url(&mut serving)?;
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let client = Client::builder("serve-bench", "1")
            .era(era)
            .connect_http(&url)?;
        let label = format!("mcp serve, HTTP {}", era.versions()[0]);
        report(&label, &measure(&client, tool, &arguments, calls)?);
    }
    let _ = serving.kill();
    let _ = serving.wait();
    Ok(())
}

/// The URL `mcp serve` prints on stderr once bound.
fn read_url(serving: &mut process::Child) -> Result<String, Error> {
    let stderr = serving
        .stderr
        .take()
        .ok_or_else(|| Error::msg("no stderr"))?;
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line)?;
    line.trim()
        .strip_prefix("mcp serve: listening on ")
        .map(str::to_string)
        .ok_or_else(|| Error::msg(format!("not the URL line: {}", line.trim())))
}

/// The latency of each of `calls` calls, after 100 to warm up.
fn measure(
    client: &Client,
    tool: &str,
    arguments: &Value,
    calls: usize,
) -> Result<Vec<Duration>, Error> {
    for _ in 0..100 {
        client.call_tool(tool, arguments.clone())?;
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        client.call_tool(tool, arguments.clone())?;
        times.push(started.elapsed());
    }
    Ok(times)
}

fn report(label: &str, times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let total: Duration = sorted.iter().sum();
    let at = |q: f64| sorted[((sorted.len() as f64 - 1.0) * q) as usize];
    println!(
        "{:<26} {:>6} calls  {:>8.0} calls/s  median {:>7.1} us  p99 {:>7.1} us",
        label,
        sorted.len(),
        sorted.len() as f64 / total.as_secs_f64(),
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
    );
}
