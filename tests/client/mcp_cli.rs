//! The `mcp` example run as a child process: `--pretty` output, terminal
//! elicitation (under `script`, which gives it a terminal), and the
//! errors of a connection that fails.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::example_path;

/// How long one run of `mcp` may take before the test fails.
const BOUND: Duration = Duration::from_secs(30);

/// Runs `command` with `input` on its stdin; its output, or a failure once
/// it has run for [`BOUND`].
fn run(mut command: Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {}", command, e));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(BOUND) {
        Ok(output) => output.unwrap(),
        Err(_) => panic!("{:?} did not end within {:?}", command, BOUND),
    }
}

fn mcp(args: &[&str]) -> Output {
    let mut command = Command::new(example_path("mcp"));
    command.args(args);
    run(command, "")
}

// server/tools "Structured Content": a result's structuredContent, also
// sent as a text block, is printed once by --pretty.
#[test]
fn pretty_prints_structured_content_once() {
    let server = example_path("typed_tools");
    let server = server.to_str().unwrap();
    let args = [
        "--stdio", server, "call", "convert", "value:=1", "from=km", "to=m",
    ];
    let output = mcp(&[&args[..], &["--pretty"]].concat());
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", out);
    let shown: Value = serde_json::from_str(&out).expect("the structured JSON, once");
    assert_eq!(shown, json!({"unit": "m", "value": 1000.0}));
    assert_eq!(out.matches("\"unit\"").count(), 1, "{}", out);
}

/// A stdio server in `sh` that answers `initialize`, then asks a form
/// (properties not in name order) for any `tools/call`, and answers the
/// call with the client's reply as text.
const FORM_SERVER: &str = r#"
call=
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^.*"id":\([0-9][0-9]*\).*$/\1/p')
  case "$line" in
    *'"method":"server/discover"'*)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "$id" ;;
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"form","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      call=$id
      printf '%s\n' '{"jsonrpc":"2.0","id":"ask","method":"elicitation/create","params":{"message":"who?","requestedSchema":{"type":"object","properties":{"zeta":{"type":"string"},"age":{"type":"integer"},"mid":{"type":"boolean"},"pick":{"type":"string","enum":["red","blue"]},"ratio":{"type":"number"}},"required":["age"]}}}' ;;
    *'"id":"ask"'*)
      text=$(printf '%s' "$line" | sed 's/\\/\\\\/g; s/"/\\"/g')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$call" "$text" ;;
  esac
done
"#;

// client/elicitation (form mode, "Requested Schema"): on a terminal the
// fields are asked in the order the server wrote them, and an answer that
// is not of the field's type (integer, boolean, an enum, number) is asked
// again, never sent as a string.
#[test]
fn terminal_elicitation_follows_the_schema() {
    let server = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-form-server.sh");
    std::fs::write(&server, FORM_SERVER).unwrap();
    let line = format!(
        "'{}' --stdio 'sh {}' call ask",
        example_path("mcp").display(),
        server.display()
    );
    let mut command = Command::new("script");
    command.args(["-qec", &line, "/dev/null"]);
    let answers = "z\nabc\n4.5\n42\nmaybe\nyes\ngreen\n2\nhalf\n0.5\n\n";
    let output = run(command, answers);
    let out = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    assert_eq!(output.status.code(), Some(0), "{}", out);
    let asked: Vec<usize> = [
        "zeta (string)",
        "age (integer",
        "mid (boolean)",
        "pick (string)",
        "ratio (number)",
    ]
    .iter()
    .map(|q| {
        out.find(q)
            .unwrap_or_else(|| panic!("{} never asked: {}", q, out))
    })
    .collect();
    assert!(
        asked.windows(2).all(|w| w[0] < w[1]),
        "not in the schema's order: {}",
        out
    );
    for retry in [
        "\"abc\" is not an integer",
        "\"4.5\" is not an integer",
        "\"maybe\" is not true or false",
        "\"green\" is not one of",
        "\"half\" is not a number",
    ] {
        assert!(out.contains(retry), "{}: {}", retry, out);
    }
    let result = out
        .lines()
        .find(|l| l.contains("{\"content\""))
        .unwrap_or_else(|| panic!("no result: {}", out));
    let result: Value = serde_json::from_str(&result[result.find('{').unwrap()..]).unwrap();
    let reply: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        reply["result"],
        json!({"action": "accept", "content": {"zeta": "z", "age": 42, "mid": true, "pick": "blue", "ratio": 0.5}})
    );
}

// A connection that fails after it was made (closed before the answer, or
// no answer in time): the error names the address, as one refused does.
#[test]
fn connection_failures_name_the_address() {
    let closing = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let (closing_addr, silent_addr) = (closing.local_addr().unwrap(), silent.local_addr().unwrap());
    thread::spawn(move || {
        for stream in closing.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.read(&mut [0; 4096]);
        }
    });
    thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    for (addr, extra) in [(closing_addr, None), (silent_addr, Some("0.5"))] {
        let url = format!("http://{}/mcp", addr);
        let mut args = vec!["--http", &url];
        if let Some(seconds) = extra {
            args.extend(["--timeout", seconds]);
        }
        args.push("info");
        let output = mcp(&args);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{}", err);
        assert!(err.contains(&addr.to_string()), "{}", err);
    }
}

// basic/utilities/tasks (2025-11-25) and SEP-2663: `mcp --task` runs an
// optional-task tool as a task in both eras and shows its status on
// stderr; without it the same call is answered directly.
#[test]
fn task_runs_a_call_as_a_task_and_shows_its_status() {
    let server = example_path("everything");
    let server = server.to_str().unwrap();
    for era in ["2025-11-25", "2026-07-28"] {
        let call = ["call", "slow_compute", "seconds:=0", "label=x"];
        let base = ["--stdio", server, "--era", era];
        let tasked = mcp(&[&base[..], &["--task"], &call[..]].concat());
        let err = String::from_utf8_lossy(&tasked.stderr);
        assert_eq!(tasked.status.code(), Some(0), "{}: {}", era, err);
        assert!(
            err.contains("mcp: task ") && err.contains(" completed"),
            "{}: {}",
            era,
            err
        );
        let plain = mcp(&[&base[..], &call[..]].concat());
        let err = String::from_utf8_lossy(&plain.stderr);
        assert_eq!(plain.status.code(), Some(0), "{}: {}", era, err);
        assert!(!err.contains("mcp: task "), "{}: {}", era, err);
    }
}

// basic/transports "Session Management" (2025-11-25): `mcp` starts a new
// session when the server forgets its own (404), and `--no-reconnect`
// reports the 404 instead (exit 4, connection failure).
#[test]
fn no_reconnect_reports_a_forgotten_session() {
    use super::fake::{self, Fake, Reply};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let inits = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&inits);
    let server = Fake::start(move |request| {
        if request.method != "POST" {
            return Reply::Keep(fake::answer(405, "text/plain", "", ""));
        }
        let session = request.header("mcp-session-id").unwrap_or("").to_string();
        match request.rpc().as_str() {
            "initialize" => {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                fake::initialized(request, &format!("s-{}", n % 2))
            }
            m if m.starts_with("notifications/") => Reply::Keep(fake::accepted()),
            _ if session == "s-1" => Reply::Keep(fake::answer(404, "text/plain", "gone", "")),
            _ => Reply::Keep(fake::json(&fake::text_result(request, "renewed"), "")),
        }
    });
    let url = server.url("/mcp");
    let args = [
        "--http",
        url.as_str(),
        "--era",
        "2025-11-25",
        "call",
        "echo",
    ];
    let renewed = mcp(&args);
    let out = String::from_utf8_lossy(&renewed.stdout);
    assert_eq!(renewed.status.code(), Some(0), "{}", out);
    assert!(out.contains("renewed"), "{}", out);
    let reported = mcp(&[&["--no-reconnect"], &args[..]].concat());
    let err = String::from_utf8_lossy(&reported.stderr);
    assert_eq!(reported.status.code(), Some(4), "{}", err);
    assert!(err.contains("session"), "{}", err);
}
