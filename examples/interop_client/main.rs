//! `interop_client`: drives an MCP server that nobody here wrote (the
//! official SDKs' servers and reference servers run by
//! scripts/interop/interop-client.sh) with [`tiny_mcp::Client`] and checks what
//! that server offers.
//!
//! ```text
//! interop_client --stdio "python3 tests/interop/python/server.py --stdio"
//! interop_client --stdio "node 'my dir/server.mjs' --stdio"
//! interop_client --http http://127.0.0.1:8000/mcp --era 2025-11-25
//! interop_client --profile core --serve "rmcp-interop-server --http 8123" \
//!     --http http://127.0.0.1:8123/mcp
//! ```
//!
//! Options: `--stdio "CMD ARGS"` (start the server as a child) or `--http
//! URL` (a Streamable HTTP endpoint); `--serve "CMD ARGS"` with `--http`:
//! the driver starts that HTTP server itself (its output into a temporary
//! log, shown on failure), waits (up to 20 s) until the URL's port accepts
//! connections, and adds the check `session expiry`: it stops the server
//! mid-session, starts it again on the same port, and expects the next
//! call to succeed (`--no-expiry` leaves that check out); `--era 2025-11-25|2026-07-28` speaks only that era
//! (default: try 2026-07-28, fall back to 2025-11-25); `--timeout SECONDS`
//! per request (default 20); `--profile NAME` which server this is and so
//! which checks apply (default `fixture`; see [`Profile`]); `--dir PATH`
//! the directory the `filesystem` profile lists (it must hold `hello.txt`
//! with the text `hello from the filesystem`).
//!
//! Prints `note era: …` and `note server: …`, one `ok CHECK` or `FAIL
//! CHECK: REASON` line per check, and `N passed, M failed` last; exits 1 on
//! any failure, 2 on bad usage.

mod checks;
mod fixture;
mod lifecycle;
mod servers;

use std::process::{self, Command};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{
    Client, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Era, Error, JsonObject, StderrMode,
};

use lifecycle::Served;

const USAGE: &str =
    "usage: interop_client (--stdio \"CMD ARGS\" | --http URL [--serve \"CMD ARGS\" [--no-expiry]]) \
[--era 2025-11-25|2026-07-28] [--timeout SECONDS] \
[--profile fixture|core|everything|filesystem|memory|stateless] [--dir PATH]";

/// The name the elicitation closure fills in.
const NAME: &str = "Ada";

/// Which server the driver talks to, and so which checks apply.
#[derive(Clone, Copy, PartialEq)]
enum Profile {
    /// tests/interop/python/server.py and tests/interop/ts/server.mjs:
    /// every tool, elicitation, sampling, `x-mcp-header`.
    Fixture,
    /// The same Python server in stateless JSON mode: no server-to-client
    /// requests and no notifications on 2025-11-25 (see servers.rs).
    Stateless,
    /// tests/interop/rmcp and tests/interop/fastmcp: `echo`, `add`,
    /// `progress`, `slow` + `cancelled` (cancellation seen by the server),
    /// `fail`, the resource `interop://greeting`, the prompt `greet`.
    Core,
    /// @modelcontextprotocol/server-everything.
    Everything,
    /// @modelcontextprotocol/server-filesystem on `--dir`.
    Filesystem,
    /// @modelcontextprotocol/server-memory.
    Memory,
}

struct Args {
    stdio: Option<String>,
    http: Option<String>,
    serve: Option<String>,
    expiry: bool,
    era: Option<Era>,
    timeout: Duration,
    profile: Profile,
    dir: Option<String>,
}

/// What the server asked of the client's closures.
#[derive(Default)]
struct Asked {
    elicitations: Vec<String>,
    samplings: Vec<String>,
}

/// Counts and prints the checks.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    fn check(&mut self, name: &str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                self.passed += 1;
                println!("ok {}", name);
            }
            Err(reason) => {
                self.failed += 1;
                println!("FAIL {}: {}", name, one_line(&reason));
            }
        }
    }
}

fn main() {
    let args = match parse_args(std::env::args().skip(1).collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("interop_client: {}\n{}", message, USAGE);
            process::exit(2);
        }
    };
    let mut tally = Tally::default();
    let mut served = None;
    if let (Some(line), Some(url)) = (&args.serve, &args.http) {
        match Served::start(line, url) {
            Ok(s) => served = Some(s),
            Err(e) => tally.check("start the server", Err(e)),
        }
    }
    if tally.failed == 0 {
        run(&args, served.as_mut(), &mut tally);
    }
    if let Some(s) = served {
        if tally.failed > 0 {
            s.print_log();
        }
        s.stop();
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    process::exit(if tally.failed == 0 { 0 } else { 1 });
}

/// Connects, runs the profile's checks, and, with a served HTTP server, the
/// session expiry check.
fn run(args: &Args, served: Option<&mut Served>, tally: &mut Tally) {
    let asked = Arc::new(Mutex::new(Asked::default()));
    let client = match connect(args, &asked) {
        Ok(client) => client,
        Err(e) => return tally.check("connect", Err(e.to_string())),
    };
    tally.check("connect", Ok(()));
    checks::print_notes(&client);
    match args.profile {
        Profile::Fixture => fixture::run(&client, &asked, tally),
        Profile::Stateless => servers::stateless(&client, &asked, tally),
        Profile::Core => servers::core(&client, tally),
        Profile::Everything => servers::everything(&client, &asked, tally),
        Profile::Filesystem => servers::filesystem(&client, args.dir.as_deref(), tally),
        Profile::Memory => servers::memory(&client, tally),
    }
    if let Some(served) = served.filter(|_| args.expiry) {
        let outcome = lifecycle::check_expiry(&client, served, args.profile);
        tally.check("session expiry", outcome);
    }
    if tally.failed > 0 {
        print_stderr(&client);
    }
    client.close();
}

fn parse_profile(name: &str) -> Result<Profile, String> {
    Ok(match name {
        "fixture" => Profile::Fixture,
        "stateless" => Profile::Stateless,
        "core" => Profile::Core,
        "everything" => Profile::Everything,
        "filesystem" => Profile::Filesystem,
        "memory" => Profile::Memory,
        other => return Err(format!("unknown profile {:?}", other)),
    })
}

fn parse_args(raw: Vec<String>) -> Result<Args, String> {
    let mut args = Args {
        stdio: None,
        http: None,
        serve: None,
        expiry: true,
        era: None,
        timeout: Duration::from_secs(20),
        profile: Profile::Fixture,
        dir: None,
    };
    let mut it = raw.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{} needs a value", flag));
        match flag.as_str() {
            "--stdio" => args.stdio = Some(value()?),
            "--http" => args.http = Some(value()?),
            "--serve" => args.serve = Some(value()?),
            "--no-expiry" => args.expiry = false,
            "--profile" => args.profile = parse_profile(&value()?)?,
            "--dir" => args.dir = Some(value()?),
            "--era" => {
                args.era = Some(match value()?.as_str() {
                    "2025-11-25" => Era::V2025_11_25,
                    "2026-07-28" => Era::V2026_07_28,
                    other => return Err(format!("unknown era {:?}", other)),
                })
            }
            "--timeout" => {
                let seconds: u64 = value()?
                    .parse()
                    .map_err(|_| "--timeout takes whole seconds".to_string())?;
                args.timeout = Duration::from_secs(seconds.max(1));
            }
            "-h" | "--help" => {
                println!("{}", USAGE);
                process::exit(0);
            }
            other => return Err(format!("unknown argument {:?}", other)),
        }
    }
    if args.stdio.is_some() == args.http.is_some() {
        return Err("give exactly one of --stdio and --http".into());
    }
    if args.serve.is_some() && args.http.is_none() {
        return Err("--serve needs --http".into());
    }
    Ok(args)
}

/// The client: session recovery on (a 2025-11-25 server's 404 on the
/// session id starts a new session), the closures that answer
/// elicitation and sampling, the stdio server's stderr captured.
fn connect(args: &Args, asked: &Arc<Mutex<Asked>>) -> Result<Client, Error> {
    let on_elicit = Arc::clone(asked);
    let on_sample = Arc::clone(asked);
    let mut builder = Client::builder("tiny-mcp-interop", env!("CARGO_PKG_VERSION"))
        .request_timeout(args.timeout)
        .connect_timeout(args.timeout)
        .stderr(StderrMode::Capture)
        .on_elicitation(move |request| elicit(&on_elicit, request))
        .on_sampling(move |request| sample(&on_sample, request));
    if let Some(era) = args.era {
        builder = builder.era(era);
    }
    match (&args.stdio, &args.http) {
        (Some(line), _) => {
            let words = split_words(line).map_err(Error::invalid_params)?;
            let (program, rest) = words
                .split_first()
                .ok_or_else(|| Error::invalid_params("--stdio needs a command"))?;
            let mut command = Command::new(program);
            command.args(rest);
            builder.connect_stdio(command)
        }
        (None, Some(url)) => builder.connect_http(url),
        (None, None) => Err(Error::invalid_params("no server")),
    }
}

/// The elicitation closure: fills every required string field of a form
/// (every string field when the schema lists none as required) with
/// [`NAME`]; declines URL mode.
fn elicit(asked: &Mutex<Asked>, request: ElicitRequestParams) -> Result<ElicitResult, Error> {
    let form = match request {
        ElicitRequestParams::Form(form) => form,
        _ => return Ok(ElicitResult::decline()),
    };
    asked.lock().elicitations.push(form.message.clone());
    let mut values = JsonObject::new();
    let required = form
        .requested_schema
        .get("required")
        .and_then(Value::as_array);
    let wanted = |key: &str| required.map_or(true, |r| r.iter().any(|k| k == key));
    if let Some(properties) = form
        .requested_schema
        .get("properties")
        .and_then(Value::as_object)
    {
        for (key, schema) in properties {
            if wanted(key) && schema.get("type").and_then(Value::as_str) == Some("string") {
                values.insert(key.clone(), json!(NAME));
            }
        }
    }
    Ok(ElicitResult::accept(Some(values)))
}

/// The sampling closure: answers `echo of <the last message's text>`.
fn sample(
    asked: &Mutex<Asked>,
    request: CreateMessageRequestParams,
) -> Result<CreateMessageResult, Error> {
    let text = request
        .messages
        .last()
        .and_then(|m| m.content.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    asked.lock().samplings.push(text.clone());
    Ok(CreateMessageResult::assistant_text(
        format!("echo of {}", text),
        "interop-model",
    ))
}

/// A stdio server's captured stderr, to explain failures.
fn print_stderr(client: &Client) {
    let stderr = client.stderr();
    if stderr.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(&stderr);
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(30)..];
    eprintln!("interop_client: the server's stderr (last lines):");
    for line in tail {
        eprintln!("  {}", line);
    }
}

/// The words of `--stdio`: split on whitespace, `'…'` and `"…"` quoting.
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'') | (None, '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("unbalanced quote in --stdio {:?}", line));
    }
    words.extend(word);
    Ok(words)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
