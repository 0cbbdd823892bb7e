//! Closing a stdio client ends the server and everything it started
//! (basic/lifecycle "Shutdown", stdio, 2025-11-25): its stdin closed,
//! then SIGTERM, then SIGKILL, each after `shutdown_timeout`. The servers
//! are `sh -c` scripts that start a `sleep` grandchild and answer
//! `initialize` with its process id as their version.

use std::process::Command;
use std::time::{Duration, Instant};

use tiny_mcp::{Client, Era, StderrMode};

const STEP: Duration = Duration::from_millis(300);
/// Room for starting and reaping processes on a busy machine.
const SLACK: Duration = Duration::from_millis(1500);

/// Starts a `sleep` grandchild, answers `initialize` with its pid, reads
/// until end of input, then runs `after_input`.
fn script(before: &str, after_input: &str) -> String {
    format!(
        r#"{before}
sleep 300 &
read -r line
printf '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"sh","version":"%s"}}}}}}\n' "$!"
while read -r line; do :; done
{after_input}"#
    )
}

/// The client, the server's pid and its grandchild's.
fn start(before: &str, after_input: &str) -> (Client, u32, u32) {
    let mut command = Command::new("sh");
    command.args(["-c", &script(before, after_input)]);
    let client = Client::builder("shutdown-test", "1")
        .era(Era::V2025_11_25)
        .request_timeout(Duration::from_secs(10))
        .shutdown_timeout(STEP)
        .stderr(StderrMode::Capture)
        .connect_stdio(command)
        .expect("connect to the sh server");
    let server = client.server_pid().expect("the server's pid");
    let grandchild = client
        .server_info()
        .and_then(|info| info.version.parse().ok())
        .expect("the grandchild's pid as the server's version");
    assert!(running(server) && running(grandchild));
    (client, server, grandchild)
}

/// Whether `pid` exists and is not a zombie (an exited process that an
/// init which reaps nothing keeps listed).
fn running(pid: u32) -> bool {
    let stat = match std::fs::read_to_string(format!("/proc/{}/stat", pid)) {
        Ok(stat) => stat,
        Err(_) => return false,
    };
    let state = stat[stat.rfind(')').map_or(0, |i| i + 1)..]
        .split_whitespace()
        .next()
        .unwrap_or("");
    state != "Z" && state != "X"
}

/// Starts a server, ends the client with `end`, and checks that the
/// server and its grandchild are gone within `at_most`; how long it took.
fn ends_within(before: &str, after_input: &str, end: fn(Client), at_most: Duration) -> Duration {
    let (client, server, grandchild) = start(before, after_input);
    let began = Instant::now();
    end(client);
    let took = began.elapsed();
    assert!(!running(server), "the server {} still runs", server);
    assert!(
        !running(grandchild),
        "the grandchild {} still runs",
        grandchild
    );
    assert!(took <= at_most, "closing took {:?}", took);
    took
}

// basic/lifecycle "Shutdown" (stdio): a server that ignores both the end
// of its input and SIGTERM, as does its grandchild, is killed with
// SIGKILL, the whole group, after two waits.
#[test]
fn a_server_that_ignores_sigterm_is_killed_with_its_children() {
    let took = ends_within(
        "trap '' TERM",
        "exec sleep 300",
        Client::close,
        STEP * 2 + SLACK,
    );
    assert!(took >= STEP * 2, "SIGKILL came after {:?}", took);
}

// basic/lifecycle "Shutdown" (stdio): a server that ignores the end of
// its input ends with SIGTERM, and so does its grandchild.
#[test]
fn a_server_that_ignores_its_closed_input_gets_sigterm() {
    ends_within("", "exec sleep 300", Client::close, STEP + SLACK);
}

// basic/lifecycle "Shutdown" (stdio): a server that exits when its input
// closes but leaves a process behind: the leftover is ended too.
#[test]
fn what_an_exited_server_left_running_is_ended() {
    ends_within("", "exit 0", Client::close, STEP + SLACK);
}

// basic/lifecycle "Shutdown" (stdio): dropping the client does what close
// does.
#[test]
fn dropping_the_client_ends_the_server_group() {
    ends_within("trap '' TERM", "exec sleep 300", drop, STEP * 2 + SLACK);
}

// basic/lifecycle "Shutdown" (stdio): a server that exits at the end of
// its input, leaving nothing, is not waited for.
#[test]
fn a_server_that_exits_at_once_is_not_waited_for() {
    let mut command = Command::new("sh");
    command.args(["-c", &script("", "exit 0").replace("sleep 300 &", "true &")]);
    let client = Client::builder("shutdown-test", "1")
        .era(Era::V2025_11_25)
        .shutdown_timeout(Duration::from_secs(30))
        .connect_stdio(command)
        .expect("connect to the sh server");
    let server = client.server_pid().expect("the server's pid");
    let began = Instant::now();
    client.close();
    assert!(!running(server));
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
}
