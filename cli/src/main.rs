//! `mcp`: a small command-line MCP client built on [`tiny_mcp::Client`].
//!
//! ```text
//! mcp --stdio "my-server --flag" tools
//! mcp --http http://127.0.0.1:8080/mcp --token TOKEN call echo text=hi
//! mcp --http URL call add a:=1 b:=2          # key:=JSON, key=string
//! mcp --http URL call add --json '{"a":1,"b":2}'
//! mcp --stdio "server" --pretty read test://static-text
//! mcp login https://mcp.example.com/mcp      # then: mcp --http URL tools
//! mcp logout https://mcp.example.com/mcp
//! mcp serve --stdio "my-server" --http 127.0.0.1:8080   # serve/: a stdio server over HTTP
//! ```
//!
//! Commands: `info`, `ping`, `tools`, `call NAME [ARGS]`, `resources`,
//! `read URI`, `prompts`, `prompt NAME [ARGS]`, `complete prompt|resource
//! NAME|URI ARGUMENT VALUE`. A 2025-11-25 HTTP session the server forgot is
//! replaced and the request sent again (`--no-reconnect` reports it
//! instead); `--task` runs a call as a task, its status on stderr. Output is one line of JSON (the result as
//! the server sent it, in the crate's types) unless `--pretty` asks for a
//! readable form (a tool's `structuredContent` shown once, indented).
//! Progress goes to stderr while a call runs. When stdin is a terminal,
//! elicitation requests are answered there: a form's fields in the order
//! the server wrote them (`ElicitRequestFormParams::property_names`), each
//! asked again until the answer has the field's type (`integer`,
//! `number`, `boolean`, a choice of an enum); otherwise the client
//! declares no elicitation capability. A connection failure names the
//! URL or the command.
//!
//! An HTTP server that answers `401` gets a login (OAuth, `login.rs`): the
//! URL to open goes to stderr and to `$BROWSER`, and the tokens are kept
//! in `$XDG_CONFIG_HOME/tiny-mcp/tokens.json` (else
//! `%APPDATA%\tiny-mcp\tokens.json` on Windows, else
//! `~/.config/tiny-mcp/tokens.json`; mode 0600 on Unix) for the next run. `login`
//! logs in afresh, `logout` forgets. `--token` sends a token of its own
//! instead. stdio servers never log in.
//!
//! Exit codes: 0 success; 1 the tool reported an error (`isError`); 2
//! usage; 3 the server answered with a JSON-RPC error or broke the
//! protocol; 4 the connection failed (cannot start or reach the server,
//! timeout, HTTP status, session ended).
//!
//! Build it as one static binary like the server: see the README.

use std::io::{self, Write};
use std::process::{self, Command};
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{
    CallOptions, Client, ClientBuilder, Era, Error, ErrorKind, JsonObject, Reference, Root,
};

/// `eprintln!` that does not panic when stderr is closed: a local client
/// of `mcp bridge` may ignore the bridge's stderr by closing its end.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod bridge;
mod elicit;
mod login;
mod serve;

pub(crate) const USAGE: &str = "\
usage: mcp (--stdio \"CMD ARGS\" | --http URL) [OPTIONS] COMMAND [ARGS]
       mcp [OPTIONS] login URL | mcp [OPTIONS] logout URL
       mcp bridge --to URL [--header \"Name: value\"]... [--token TOKEN] [--era VERSION]
                  [--timeout SECONDS] [LOGIN OPTIONS]
       mcp serve --stdio \"CMD ARGS\" --http ADDR [OPTIONS]   (mcp serve --help)
       mcp --version
(options come before the command; --pretty, --task and --no-reconnect anywhere)

connection:
  --stdio \"CMD ARGS\"   start the server as a child and speak over its stdio
  --http URL          a Streamable HTTP endpoint (http://host:port/path)
  --token TOKEN       send Authorization: Bearer TOKEN (HTTP); no OAuth login
  --era VERSION       speak only 2025-11-25 or 2026-07-28 (default: try 2026-07-28, fall back)
  --timeout SECONDS   per request (default 60)
  --root PATH         expose a root (file://PATH); repeatable
  --no-reconnect      when a 2025-11-25 HTTP server forgets the session, report it
                      (exit 4) instead of starting a new one and sending again
options:
  --task              run `call` as a task when the tool allows one (a tool that
                      requires one always is); its status goes to stderr
  --pretty            a readable form instead of one line of JSON
login (HTTP; OAuth when the server answers 401, for any command):
  --token-file PATH   where logins are kept (default $XDG_CONFIG_HOME/tiny-mcp/tokens.json,
                      else %APPDATA%\tiny-mcp\tokens.json on Windows,
                      else $HOME/.config/tiny-mcp/tokens.json)
  --client-id ID      a client registered beforehand with the authorization server
  --client-secret S   that client's secret
  --client-metadata-url URL
                      this client's Client ID Metadata Document (https://)
  --login-timeout SECONDS
                      how long to wait for the browser to come back (default 300)
  BROWSER             environment: a command to open the login URL with (its words,
                      then the URL); unset: xdg-open or open where installed; empty:
                      none. The URL is printed on stderr either way
commands:
  info | ping | tools | resources | prompts
  call NAME [key=value | key:=JSON ...] | call NAME --json '{...}'
  read URI
  prompt NAME [key=value ...]
  complete prompt NAME ARGUMENT VALUE [k=v ...] | complete resource URI ARGUMENT VALUE [k=v ...]
    (k=v: arguments already chosen, sent as context)
  login URL           forget the login kept for URL, log in afresh, and say with what
  logout URL          forget the login kept for URL

bridge (a stdio server for a local client, forwarding to a Streamable HTTP server):
  --to URL            the remote server; it logs in as above when the server asks
  --header \"N: V\"     send this header on every request to it; repeatable
  --token TOKEN       send Authorization: Bearer TOKEN instead of logging in
  --era VERSION       speak only this era to the remote server
  --timeout SECONDS   per request (default 3600; the local client's cancellation
                      comes first)
  in a client's config: {\"command\": \"mcp\", \"args\": [\"bridge\", \"--to\", \"URL\"]}

serve (a stdio server served over Streamable HTTP, a child per session):
  --stdio \"CMD ARGS\"   the server to start;  --http ADDR  where to listen (127.0.0.1:8080)
  --shared            one child for every session;  more: mcp serve --help

elicitation requests are asked on the terminal when stdin is one; otherwise,
and for sampling, the client declares no such capability

exit codes: 0 ok, 1 tool error, 2 usage, 3 protocol error, 4 connection failure";

/// Exit codes.
const TOOL_ERROR: i32 = 1;
const USAGE_ERROR: i32 = 2;
const PROTOCOL_ERROR: i32 = 3;
const CONNECTION_ERROR: i32 = 4;

struct Args {
    stdio: Option<String>,
    http: Option<String>,
    token: Option<String>,
    era: Option<Era>,
    timeout: Duration,
    roots: Vec<String>,
    pretty: bool,
    no_reconnect: bool,
    task: bool,
    login: login::Options,
    command: Vec<String>,
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if matches!(raw.first().map(String::as_str), Some("--version" | "-V")) {
        println!("mcp {}", env!("CARGO_PKG_VERSION"));
        process::exit(0);
    }
    if raw.first().map(String::as_str) == Some("serve") {
        process::exit(serve::main(raw[1..].to_vec()));
    }
    if raw.first().map(String::as_str) == Some("bridge") {
        match bridge::args::parse(raw.into_iter().skip(1)) {
            Ok(options) => process::exit(bridge::run(options)),
            Err(message) => {
                eprintln!("mcp: {}\n\n{}", message, USAGE);
                process::exit(USAGE_ERROR);
            }
        }
    }
    let args = match parse_args(raw) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("mcp: {}\n\n{}", message, USAGE);
            process::exit(USAGE_ERROR);
        }
    };
    let code = match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp: {}{}{}", place(&args, &e), e, hint(&e));
            exit_code(&e)
        }
    };
    process::exit(code);
}

/// A word of help for errors whose cause is usually the command line.
fn hint(e: &Error) -> &'static str {
    match e.kind() {
        ErrorKind::Http { status: 404, .. } => " (is the endpoint path right? it is often /mcp)",
        ErrorKind::Authorization { .. } => " (`mcp login URL` starts the login afresh)",
        ErrorKind::Peer(o) if o.code.0 == -32021 => {
            " (mcp answers elicitation only when stdin is a terminal, and never sampling)"
        }
        _ => "",
    }
}

/// `URL: ` or `COMMAND: ` before a connection failure that does not
/// already name where it happened (a timeout, a closed connection).
fn place(args: &Args, e: &Error) -> String {
    if exit_code(e) != CONNECTION_ERROR {
        return String::new();
    }
    let (target, name) = match (&args.http, &args.stdio) {
        (Some(url), _) => {
            let url = shown_url(url);
            let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
            let rest = rest.rsplit('@').next().unwrap_or(rest);
            let name = rest.split('/').next().unwrap_or(rest).to_string();
            (url, name)
        }
        (None, Some(line)) => {
            let name = line.split_whitespace().next().unwrap_or(line).to_string();
            (line.clone(), name)
        }
        (None, None) => return String::new(),
    };
    if e.to_string().contains(&name) {
        String::new()
    } else {
        format!("{}: ", target)
    }
}

/// `url` as it is shown: without its query and fragment (the query may
/// hold a key), and without user information (`user:password@`), as the
/// crate's own errors show it.
fn shown_url(url: &str) -> String {
    let bare = url.split(['?', '#']).next().unwrap_or(url);
    match (bare.find("://"), bare.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &bare[..scheme], &bare[at + 1..])
        }
        _ => bare.to_string(),
    }
}

/// The value of `name` in seconds: a positive number.
pub(crate) fn seconds(name: &str, text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!("{} needs seconds, not {}", name, text)),
    }
}

/// Which exit code an error gets.
fn exit_code(e: &Error) -> i32 {
    match e.kind() {
        ErrorKind::Peer(_) | ErrorKind::Protocol(_) | ErrorKind::Json(_) => PROTOCOL_ERROR,
        ErrorKind::InvalidParams(_) => USAGE_ERROR,
        _ => CONNECTION_ERROR,
    }
}

fn parse_args(raw: Vec<String>) -> Result<Args, String> {
    let mut args = Args {
        stdio: None,
        http: None,
        token: None,
        era: None,
        timeout: Duration::from_secs(60),
        roots: Vec::new(),
        pretty: false,
        no_reconnect: false,
        task: false,
        login: login::Options::default(),
        command: Vec::new(),
    };
    // The switches may come anywhere, also after the command.
    let switch = |name: &str| raw.iter().any(|a| a == name);
    args.pretty = switch("--pretty");
    args.task = switch("--task");
    args.no_reconnect = switch("--no-reconnect");
    let switches = ["--pretty", "--task", "--no-reconnect"];
    let mut raw = raw.into_iter().filter(|a| !switches.contains(&a.as_str()));
    while let Some(arg) = raw.next() {
        let mut value = |name: &str| raw.next().ok_or_else(|| format!("{} needs a value", name));
        match arg.as_str() {
            "--stdio" => args.stdio = Some(value("--stdio")?),
            "--http" => args.http = Some(value("--http")?),
            "--token" => args.token = Some(value("--token")?),
            "--era" => args.era = Some(era(&value("--era")?)?),
            "--timeout" => args.timeout = seconds("--timeout", &value("--timeout")?)?,
            "--root" => args.roots.push(value("--root")?),
            name if login::OPTIONS.contains(&name) => args.login.set(name, value(name)?)?,
            "-h" | "--help" => {
                println!("{}", USAGE);
                process::exit(0);
            }
            _ => {
                args.command.push(arg);
                args.command.extend(raw);
                break;
            }
        }
    }
    checked(args)
}

/// The value of `--era`.
pub(crate) fn era(text: &str) -> Result<Era, String> {
    match text {
        "2025-11-25" => Ok(Era::V2025_11_25),
        "2026-07-28" => Ok(Era::V2026_07_28),
        other => Err(format!(
            "--era takes 2025-11-25 or 2026-07-28, not {}",
            other
        )),
    }
}

/// The arguments, if they go together: one server, a command; `login URL`
/// and `logout URL` name an HTTP server, without `--token`.
fn checked(mut args: Args) -> Result<Args, String> {
    args.login.check()?;
    let login = matches!(
        args.command.first().map(String::as_str),
        Some("login" | "logout")
    );
    if login && args.command.len() == 2 && args.http.is_none() && args.stdio.is_none() {
        args.http = args.command.pop();
    }
    if login && args.command.len() > 1 {
        return Err(format!("{} takes one URL", args.command[0]));
    }
    match (&args.stdio, &args.http) {
        (Some(_), Some(_)) => return Err("give --stdio or --http, not both".into()),
        (Some(_), None) if login => return Err("login and logout are for HTTP servers".into()),
        (None, None) if login => return Err(format!("{} needs a URL", args.command[0])),
        (None, None) => return Err("give --stdio \"CMD ARGS\" or --http URL".into()),
        _ => {}
    }
    if login && args.token.is_some() {
        return Err("login and logout are for OAuth; --token sends a token of its own".into());
    }
    if args.command.is_empty() {
        return Err("no command".into());
    }
    Ok(args)
}

fn run(args: &Args) -> Result<i32, Error> {
    let command: Vec<&str> = args.command.iter().map(String::as_str).collect();
    match (command.as_slice(), &args.http) {
        (["login"], Some(url)) => return login::login(builder(args), url, &args.login).map(|_| 0),
        (["logout"], Some(url)) => return login::logout(url, &args.login).map(|_| 0),
        _ => {}
    }
    let client = &connect(args)?;
    let output = match command.as_slice() {
        ["info"] => info(client),
        ["ping"] => client.ping().map(|_| json!({})),
        ["tools"] => to_json(client.list_tools()?),
        ["resources"] => Ok(json!({
            "resources": to_json(client.list_resources()?)?,
            "resourceTemplates": to_json(client.list_resource_templates()?)?,
        })),
        ["prompts"] => to_json(client.list_prompts()?),
        ["read", uri] => to_json(client.read_resource(uri)?),
        ["prompt", name, rest @ ..] => prompt(client, name, rest),
        ["call", name, rest @ ..] => return call(client, name, rest, args),
        ["call"] => Err(Error::invalid_params(
            "call needs a tool name: call NAME [ARGS]",
        )),
        ["complete", kind, target, argument, value, context @ ..] => {
            complete(client, kind, target, (argument, value), context)
        }
        _ => Err(Error::invalid_params(format!(
            "unknown command: {}",
            command.join(" ")
        ))),
    }?;
    print(&command, &output, args.pretty);
    Ok(0)
}

/// A client as the options say, before its server and credentials.
fn builder(args: &Args) -> ClientBuilder {
    let mut builder: ClientBuilder = Client::builder("mcp", env!("CARGO_PKG_VERSION"))
        .request_timeout(args.timeout)
        .reinitialize_on_expiry(!args.no_reconnect);
    if let Some(era) = args.era {
        builder = builder.era(era);
    }
    if !args.roots.is_empty() {
        let roots = args
            .roots
            .iter()
            .map(|p| Root::new(format!("file://{}", p)))
            .collect();
        builder = builder.roots(roots);
    }
    if elicit::stdin_is_terminal() {
        builder = builder.on_elicitation(elicit::elicit_on_terminal);
    }
    builder
}

/// Connects to the server: over HTTP with `--token`, or else logging in
/// when the server asks for it (`login.rs`).
fn connect(args: &Args) -> Result<Client, Error> {
    let builder = builder(args);
    match (&args.stdio, &args.http) {
        (Some(line), _) => {
            let words = split_command(line).map_err(Error::invalid_params)?;
            let (program, rest) = words
                .split_first()
                .ok_or_else(|| Error::invalid_params("--stdio needs a command"))?;
            let mut command = Command::new(program);
            command.args(rest);
            builder.connect_stdio(command)
        }
        (None, Some(url)) => match args.token.clone() {
            Some(token) => builder
                .bearer_token(move || Some(token.clone()))
                .connect_http(url),
            None => builder.oauth(args.login.oauth()).connect_http(url),
        },
        (None, None) => Err(Error::invalid_params("no server")),
    }
}

fn to_json<T: serde::Serialize>(value: T) -> Result<Value, Error> {
    Ok(serde_json::to_value(value)?)
}

fn info(client: &Client) -> Result<Value, Error> {
    Ok(json!({
        "era": match client.era() { Era::V2026_07_28 => "2026-07-28", _ => "2025-11-25" },
        "protocolVersion": client.protocol_version(),
        "serverInfo": client.server_info(),
        "capabilities": client.server_capabilities(),
        "instructions": client.instructions(),
        "sessionId": client.session_id(),
    }))
}

fn call(client: &Client, name: &str, rest: &[&str], args: &Args) -> Result<i32, Error> {
    let arguments = arguments(rest)?;
    let options = CallOptions::new()
        .task(args.task)
        .on_task_status(|task| {
            let message = task.status_message.as_deref().unwrap_or("");
            let status = serde_json::to_value(task.status).unwrap_or(Value::Null);
            let status = status.as_str().unwrap_or("?");
            eprintln!("mcp: task {} {}{}", task.task_id, status, spaced(message));
        })
        .on_progress(|p| {
            let total = p.total.map_or_else(String::new, |t| format!("/{}", t));
            let message = p.message.as_deref().unwrap_or("");
            eprintln!("mcp: progress {}{}{}", p.progress, total, spaced(message));
        });
    let result = client.call_tool_with(name, Value::Object(arguments), &options)?;
    let output = to_json(&result)?;
    print(&["call"], &output, args.pretty);
    Ok(if result.is_error == Some(true) {
        TOOL_ERROR
    } else {
        0
    })
}

/// ` message`, or nothing for an empty message.
fn spaced(message: &str) -> String {
    match message {
        "" => String::new(),
        _ => format!(" {}", message),
    }
}

fn prompt(client: &Client, name: &str, rest: &[&str]) -> Result<Value, Error> {
    let arguments = arguments(rest)?;
    let mut pairs = Vec::new();
    for (key, value) in &arguments {
        match value {
            Value::String(s) => pairs.push((key.as_str(), s.as_str())),
            _ => {
                return Err(Error::invalid_params(
                    "prompt arguments are strings: use key=value",
                ))
            }
        }
    }
    to_json(client.get_prompt(name, &pairs)?)
}

fn complete(
    client: &Client,
    kind: &str,
    target: &str,
    (argument, value): (&str, &str),
    context: &[&str],
) -> Result<Value, Error> {
    let reference = match kind {
        "prompt" => Reference::Prompt {
            name: target.into(),
        },
        "resource" => Reference::Resource { uri: target.into() },
        _ => return Err(Error::invalid_params("complete takes prompt or resource")),
    };
    let mut pairs = Vec::new();
    for item in context {
        let pair = item
            .split_once('=')
            .ok_or_else(|| Error::invalid_params(format!("{}: context is key=value", item)))?;
        pairs.push(pair);
    }
    to_json(client.complete(reference, argument, value, &pairs)?)
}

/// `key=value` (a string), `key:=JSON`, or `--json '{…}'`.
fn arguments(rest: &[&str]) -> Result<JsonObject, Error> {
    if let ["--json", text] = rest {
        return match serde_json::from_str(text) {
            Ok(Value::Object(object)) => Ok(object),
            _ => Err(Error::invalid_params("--json needs a JSON object")),
        };
    }
    let mut object = JsonObject::new();
    for item in rest {
        if let Some((key, json)) = item.split_once(":=") {
            let value = serde_json::from_str(json)
                .map_err(|e| Error::invalid_params(format!("{}: not JSON: {}", item, e)))?;
            object.insert(key.to_string(), value);
        } else if let Some((key, value)) = item.split_once('=') {
            object.insert(key.to_string(), Value::from(value));
        } else {
            return Err(Error::invalid_params(format!(
                "{}: expected key=value or key:=JSON",
                item
            )));
        }
    }
    Ok(object)
}

fn print(command: &[&str], output: &Value, pretty: bool) {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let _ = if pretty {
        writeln!(
            out,
            "{}",
            readable(command.first().copied().unwrap_or(""), output)
        )
    } else {
        writeln!(out, "{}", output)
    };
}

/// The readable form: names and descriptions for lists, text for results.
fn readable(command: &str, output: &Value) -> String {
    let line = |item: &Value, key: &str| {
        let name = format!("{}{}", item[key].as_str().unwrap_or("?"), parameters(item));
        match item["description"].as_str() {
            Some(d) => format!("{}  {}", name, d),
            None => name,
        }
    };
    let list = |items: &Value, key: &str| {
        items.as_array().map_or_else(Vec::new, |a| {
            a.iter().map(|i| line(i, key)).collect::<Vec<_>>()
        })
    };
    match command {
        "tools" | "prompts" => list(output, "name").join("\n"),
        "resources" => {
            let mut lines = list(&output["resources"], "uri");
            lines.extend(list(&output["resourceTemplates"], "uriTemplate"));
            lines.join("\n")
        }
        "call" | "read" | "prompt" => contents(output),
        _ => serde_json::to_string_pretty(output).unwrap_or_default(),
    }
}

/// `(a, b?)`: a tool's arguments from its `inputSchema`, or a prompt's,
/// optional ones marked with `?`; empty for anything else.
fn parameters(item: &Value) -> String {
    let mut names: Vec<String> = Vec::new();
    if let Some(properties) = item["inputSchema"]["properties"].as_object() {
        let required = item["inputSchema"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for name in properties.keys() {
            let needed = required.iter().any(|r| r.as_str() == Some(name.as_str()));
            names.push(format!("{}{}", name, if needed { "" } else { "?" }));
        }
    } else if let Some(arguments) = item["arguments"].as_array() {
        for argument in arguments {
            let needed = argument["required"].as_bool() == Some(true);
            let name = argument["name"].as_str().unwrap_or("?");
            names.push(format!("{}{}", name, if needed { "" } else { "?" }));
        }
    } else {
        return String::new();
    }
    format!("({})", names.join(", "))
}

/// The text of content blocks (call, prompt messages) or resource contents.
/// A call's `structuredContent` is shown once, indented: in place of the
/// text block that carries the same JSON (server/tools "Structured
/// Content": a tool SHOULD send both), or after the blocks when none does.
fn contents(output: &Value) -> String {
    let structured = output.get("structuredContent");
    let shown = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let mut parts = Vec::new();
    let mut carried = false;
    let mut push = |block: &Value| match block["text"].as_str() {
        Some(text) => match structured {
            Some(value)
                if !carried && serde_json::from_str::<Value>(text).ok().as_ref() == Some(value) =>
            {
                carried = true;
                parts.push(shown(value));
            }
            _ => parts.push(text.to_string()),
        },
        None => parts.push(format!(
            "[{}]",
            block["type"]
                .as_str()
                .or_else(|| block["mimeType"].as_str())
                .unwrap_or("data")
        )),
    };
    for key in ["content", "contents"] {
        for block in output[key].as_array().into_iter().flatten() {
            push(block);
        }
    }
    for message in output["messages"].as_array().into_iter().flatten() {
        push(&message["content"]);
    }
    match structured {
        Some(value) if !carried => parts.push(shown(value)),
        _ => {}
    }
    parts.join("\n")
}

/// Words of `--stdio`, split on spaces, with '…' and "…" quoting.
fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'') | (None, '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unbalanced quote in --stdio {:?}", line));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}
