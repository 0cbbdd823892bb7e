//! The cost of sealing and of verifying one `requestState` with
//! `SealedStateCodec` (feature `sealed-state`), next to the in-memory
//! `ServerStateStore`, in microseconds per operation.
//!
//! ```text
//! cargo bench --features sealed-state --bench sealed
//! cargo bench --features sealed-state --bench sealed -- --runs 9 --ops 20000
//! ```
//!
//! The state is the shape the core seals for a `tools/call` that asked
//! for one elicitation: method, tool name, a few arguments, one answer, a
//! small handler state and the principal. Each codec encodes `--ops`
//! (10,000) times, then decodes its tokens, `--runs` (7) times, codecs
//! alternating; the median run is reported. A benchmark, not a timed test:
//! it fails only if a token does not decode to its state. Without `--bench`
//! (which `cargo bench` passes) it only smoke-tests, with 100 operations.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{RequestStateCodec, SealedStateCodec, ServerStateStore};

fn state() -> Value {
    json!({
        "method": "tools/call",
        "target": "book_flight",
        "arguments": {"from": "CDG", "to": "NRT", "date": "2026-12-24", "seats": 2},
        "answers": {"confirm": {"action": "accept", "content": {"ok": true}}},
        "user": {"step": 2, "quote": "EUR 1830"},
        "principal": ["alice", "cli-1"],
    })
}

/// (µs per encode, µs per decode) of one run.
fn run(codec: &dyn RequestStateCodec, ops: usize) -> Result<(f64, f64), String> {
    let state = state();
    let started = Instant::now();
    let mut tokens = Vec::with_capacity(ops);
    for _ in 0..ops {
        tokens.push(codec.encode(&state).map_err(|e| e.to_string())?);
    }
    let encode = started.elapsed();
    let started = Instant::now();
    for token in &tokens {
        let decoded = codec.decode(token).map_err(|e| e.to_string())?;
        if decoded != state {
            return Err("a token decoded to another state".into());
        }
    }
    let decode = started.elapsed();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / ops as f64;
    Ok((per(encode), per(decode)))
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Without `--bench` (`cargo test --all-targets`): a small smoke run.
    let full = args.iter().any(|a| a == "--bench");
    let (default_runs, default_ops) = if full { (7, 10_000) } else { (1, 100) };
    let runs = option(&args, "--runs", default_runs).max(1);
    let ops = option(&args, "--ops", default_ops).max(1);
    let keys = vec![vec![0x5a; 32], vec![0x3c; 32]];
    let sealed = match SealedStateCodec::from_keys(keys) {
        Ok(codec) => codec,
        Err(e) => return eprintln!("sealed: {}", e),
    };
    // One caller encodes every state here: its share is the whole store.
    let store = ServerStateStore::new(Duration::from_secs(600), ops * 2)
        .with_max_entries_per_caller(ops * 2);
    let codecs: [(&str, &dyn RequestStateCodec); 2] = [("sealed", &sealed), ("in-memory", &store)];
    let mut results = vec![(Vec::new(), Vec::new()); codecs.len()];
    for _ in 0..runs {
        for (i, (name, codec)) in codecs.iter().enumerate() {
            match run(*codec, ops) {
                Ok((encode, decode)) => {
                    results[i].0.push(encode);
                    results[i].1.push(decode);
                }
                Err(e) => {
                    eprintln!("{}: {}", name, e);
                    std::process::exit(1);
                }
            }
        }
    }
    let token = sealed.encode(&state()).map(|t| t.len()).unwrap_or(0);
    println!(
        "requestState codecs, median of {} runs of {} operations",
        runs, ops
    );
    println!("{:<10} {:>12} {:>12}", "codec", "encode µs", "decode µs");
    for (i, (name, _)) in codecs.iter().enumerate() {
        let (encode, decode) = (median(results[i].0.clone()), median(results[i].1.clone()));
        println!("{:<10} {:>12.2} {:>12.2}", name, encode, decode);
    }
    println!("sealed token: {} bytes", token);
}
