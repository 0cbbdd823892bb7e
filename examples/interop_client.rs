//! `interop_client`: drives an MCP server that nobody here wrote (the
//! official Python and TypeScript SDKs' servers in tests/interop) with
//! [`tiny_mcp::Client`] and checks every method against it.
//!
//! ```text
//! interop_client --stdio "python3 tests/interop/python/server.py --stdio"
//! interop_client --stdio "node 'my dir/server.mjs' --stdio"
//! interop_client --http http://127.0.0.1:8000/mcp --era 2025-11-25
//! ```
//!
//! Options: `--stdio "CMD ARGS"` (start the server as a child) or `--http
//! URL` (a Streamable HTTP endpoint); `--era 2025-11-25|2026-07-28` speaks
//! only that era (default: try 2026-07-28, fall back to 2025-11-25);
//! `--timeout SECONDS` per request (default 20).
//!
//! The server must offer the tools `echo {text}`, `add {a, b}`, `progress
//! {steps}` (one progress notification per step when asked), `elicit
//! {question}` (a form with a `name` field), `sample {prompt}`, `fail`
//! (isError), `route {region}` and `route_zone {zone}` (the argument marked
//! `x-mcp-header` `Region` and `Geo.Zone` where the SDK knows it), the resource `interop://greeting` and the prompt `greet
//! {name}`, as tests/interop/python/server.py and tests/interop/ts/server.mjs
//! do.
//!
//! Prints `note era: …` and `note server: …`, one `ok CHECK` or `FAIL
//! CHECK: REASON` line per check, and `N passed, M failed` last; exits 1 on
//! any failure, 2 on bad usage.

use std::process::{self, Command};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, CallToolResult, Client, ContentBlock, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, Era, Error, JsonObject,
    ResourceContents, StderrMode,
};

const USAGE: &str = "usage: interop_client (--stdio \"CMD ARGS\" | --http URL) \
[--era 2025-11-25|2026-07-28] [--timeout SECONDS]";

/// The name the elicitation closure fills in.
const NAME: &str = "Ada";

struct Args {
    stdio: Option<String>,
    http: Option<String>,
    era: Option<Era>,
    timeout: Duration,
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
    let asked = Arc::new(Mutex::new(Asked::default()));
    let mut tally = Tally::default();
    match connect(&args, &asked) {
        Ok(client) => {
            tally.check("connect", Ok(()));
            run_checks(&client, &asked, &mut tally);
            if tally.failed > 0 {
                print_stderr(&client);
            }
            client.close();
        }
        Err(e) => tally.check("connect", Err(e.to_string())),
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    process::exit(if tally.failed == 0 { 0 } else { 1 });
}

fn parse_args(raw: Vec<String>) -> Result<Args, String> {
    let mut args = Args {
        stdio: None,
        http: None,
        era: None,
        timeout: Duration::from_secs(20),
    };
    let mut it = raw.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{} needs a value", flag));
        match flag.as_str() {
            "--stdio" => args.stdio = Some(value()?),
            "--http" => args.http = Some(value()?),
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
    Ok(args)
}

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

/// The elicitation closure: fills every string field of a form with
/// [`NAME`]; declines URL mode.
fn elicit(asked: &Mutex<Asked>, request: ElicitRequestParams) -> Result<ElicitResult, Error> {
    let form = match request {
        ElicitRequestParams::Form(form) => form,
        _ => return Ok(ElicitResult::decline()),
    };
    asked.lock().elicitations.push(form.message.clone());
    let mut values = JsonObject::new();
    if let Some(properties) = form
        .requested_schema
        .get("properties")
        .and_then(Value::as_object)
    {
        for (key, schema) in properties {
            if schema.get("type").and_then(Value::as_str) == Some("string") {
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

fn run_checks(client: &Client, asked: &Mutex<Asked>, tally: &mut Tally) {
    print_notes(client);
    tally.check("server_info", check_server_info(client));
    tally.check("list_tools", check_list_tools(client));
    tally.check("call_tool echo", check_echo(client));
    tally.check("call_tool add", check_add(client));
    tally.check("call_tool isError", check_fail(client));
    tally.check("call_tool x-mcp-header", check_route(client));
    tally.check(
        "call_tool x-mcp-header token name",
        expect_text(client, "route_zone", json!({"zone": "z1"}), "routed to z1"),
    );
    tally.check("progress", check_progress(client));
    tally.check("elicitation", check_elicitation(client, asked));
    tally.check("sampling", check_sampling(client, asked));
    tally.check("list_resources", check_list_resources(client));
    tally.check("read_resource", check_read_resource(client));
    tally.check("list_prompts", check_list_prompts(client));
    tally.check("get_prompt", check_get_prompt(client));
    tally.check("ping", client.ping().map_err(|e| e.to_string()));
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::V2026_07_28 => "2026-07-28",
        _ => "2025-11-25",
    }
}

fn print_notes(client: &Client) {
    println!(
        "note era: {} (protocol version {}{})",
        era_name(client.era()),
        client.protocol_version(),
        client
            .session_id()
            .map_or_else(String::new, |_| ", with a session".to_string())
    );
    if let Some(info) = client.server_info() {
        println!("note server: {} {}", info.name, info.version);
    }
}

fn check_server_info(client: &Client) -> Result<(), String> {
    let info = client
        .server_info()
        .ok_or("the server gave no serverInfo")?;
    if info.name.is_empty() {
        return Err("serverInfo has an empty name".into());
    }
    if client.server_capabilities().tools.is_none() {
        return Err("the server declares no tools capability".into());
    }
    Ok(())
}

fn check_list_tools(client: &Client) -> Result<(), String> {
    let tools = client.list_tools().map_err(|e| e.to_string())?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let wanted = [
        "echo",
        "add",
        "progress",
        "elicit",
        "sample",
        "fail",
        "route",
        "route_zone",
    ];
    for want in wanted {
        if !names.contains(&want) {
            return Err(format!("no tool {:?} in {:?}", want, names));
        }
    }
    let echo = tools.iter().find(|t| t.name == "echo");
    let has_text = echo
        .and_then(|t| t.input_schema.get("properties"))
        .and_then(|p| p.get("text"))
        .is_some();
    if !has_text {
        return Err("echo's inputSchema has no `text` property".into());
    }
    Ok(())
}

/// The text of a result's first block.
fn first_text(result: &CallToolResult) -> Result<&str, String> {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => Ok(&text.text),
        Some(other) => Err(format!("the first block is not text: {:?}", other)),
        None => Err("the result has no content".into()),
    }
}

/// Calls `tool` and expects a successful result whose text is `want`.
fn expect_text(client: &Client, tool: &str, arguments: Value, want: &str) -> Result<(), String> {
    let result = client
        .call_tool(tool, arguments)
        .map_err(|e| e.to_string())?;
    if result.is_error == Some(true) {
        return Err(format!("isError: {:?}", first_text(&result)));
    }
    let got = first_text(&result)?;
    if got != want {
        return Err(format!("got {:?}, want {:?}", got, want));
    }
    Ok(())
}

fn check_echo(client: &Client) -> Result<(), String> {
    expect_text(
        client,
        "echo",
        json!({"text": "hé, interop ✓"}),
        "hé, interop ✓",
    )
}

fn check_add(client: &Client) -> Result<(), String> {
    expect_text(client, "add", json!({"a": 2, "b": 3.5}), "5.5")?;
    expect_text(client, "add", json!({"a": -7, "b": 4}), "-3")
}

fn check_fail(client: &Client) -> Result<(), String> {
    let result = client
        .call_tool("fail", json!({"reason": "on purpose"}))
        .map_err(|e| e.to_string())?;
    if result.is_error != Some(true) {
        return Err(format!("isError is {:?}", result.is_error));
    }
    let text = first_text(&result)?;
    if !text.contains("on purpose") {
        return Err(format!("the error text {:?} lacks the reason", text));
    }
    Ok(())
}

/// `route`'s argument is marked `x-mcp-header: Region`: over 2026-07-28
/// HTTP the client must mirror it in `Mcp-Param-Region` (a non-ASCII value
/// in the `=?base64?…?=` form), which the Python SDK checks.
fn check_route(client: &Client) -> Result<(), String> {
    expect_text(
        client,
        "route",
        json!({"region": "eu-west-1"}),
        "routed to eu-west-1",
    )?;
    expect_text(
        client,
        "route",
        json!({"region": "Zürich"}),
        "routed to Zürich",
    )
}

fn check_progress(client: &Client) -> Result<(), String> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let options = CallOptions::new().on_progress(move |p| s.lock().push((p.progress, p.total)));
    let result = client
        .call_tool_with("progress", json!({"steps": 3}), &options)
        .map_err(|e| e.to_string())?;
    let got = first_text(&result)?;
    if got != "did 3 steps" {
        return Err(format!("got {:?}", got));
    }
    let seen = seen.lock().clone();
    let want = vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))];
    if seen != want {
        return Err(format!(
            "progress (progress, total) seen {:?}, want {:?}",
            seen, want
        ));
    }
    Ok(())
}

fn check_elicitation(client: &Client, asked: &Mutex<Asked>) -> Result<(), String> {
    asked.lock().elicitations.clear();
    let want = format!("hello {}", NAME);
    expect_text(client, "elicit", json!({"question": "who are you?"}), &want)?;
    let elicitations = asked.lock().elicitations.clone();
    if elicitations != ["who are you?"] {
        return Err(format!("the closure was asked {:?}", elicitations));
    }
    Ok(())
}

fn check_sampling(client: &Client, asked: &Mutex<Asked>) -> Result<(), String> {
    asked.lock().samplings.clear();
    let result = expect_text(
        client,
        "sample",
        json!({"prompt": "say hi"}),
        "model said: echo of say hi",
    );
    let samplings = asked.lock().samplings.clone();
    result?;
    if samplings != ["say hi"] {
        return Err(format!("the closure was asked {:?}", samplings));
    }
    Ok(())
}

fn check_list_resources(client: &Client) -> Result<(), String> {
    let resources = client.list_resources().map_err(|e| e.to_string())?;
    let found = resources.iter().find(|r| r.uri == "interop://greeting");
    match found {
        Some(r) if r.mime_type.as_deref() == Some("text/plain") => Ok(()),
        Some(r) => Err(format!("mimeType {:?}", r.mime_type)),
        None => Err(format!(
            "no interop://greeting in {:?}",
            resources.iter().map(|r| &r.uri).collect::<Vec<_>>()
        )),
    }
}

fn check_read_resource(client: &Client) -> Result<(), String> {
    let read = client
        .read_resource("interop://greeting")
        .map_err(|e| e.to_string())?;
    match read.contents.as_slice() {
        [ResourceContents::Text { uri, text, .. }] => {
            if uri != "interop://greeting" || !text.starts_with("hello from ") {
                return Err(format!("uri {:?}, text {:?}", uri, text));
            }
            Ok(())
        }
        other => Err(format!("want one text content, got {:?}", other)),
    }
}

fn check_list_prompts(client: &Client) -> Result<(), String> {
    let prompts = client.list_prompts().map_err(|e| e.to_string())?;
    let greet = prompts
        .iter()
        .find(|p| p.name == "greet")
        .ok_or_else(|| format!("no prompt greet in {} prompts", prompts.len()))?;
    let takes_name = greet
        .arguments
        .as_ref()
        .map_or(false, |args| args.iter().any(|a| a.name == "name"));
    if !takes_name {
        return Err(format!("greet's arguments: {:?}", greet.arguments));
    }
    Ok(())
}

fn check_get_prompt(client: &Client) -> Result<(), String> {
    let prompt = client
        .get_prompt("greet", &[("name", NAME)])
        .map_err(|e| e.to_string())?;
    let want = format!("Please greet {}.", NAME);
    match prompt.messages.first().map(|m| &m.content) {
        Some(ContentBlock::Text(text)) if text.text == want => Ok(()),
        other => Err(format!("first message {:?}, want {:?}", other, want)),
    }
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
fn split_words(line: &str) -> Result<Vec<String>, String> {
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
