//! The `mcp` command (cli/) run as a child process: `--pretty` output, terminal
//! elicitation (under `script`, which gives it a terminal), the errors of
//! a connection that fails, and `login` / `logout` with its token file.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{example_path, mcp_path};

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
    let mut command = Command::new(mcp_path());
    let config = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-config");
    command.args(args).env("XDG_CONFIG_HOME", config);
    run(command, "")
}

/// A new empty directory for one test, under the target's temporary
/// directory: no run reads or writes the user's own token file.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "mcp-{}-{}",
        name,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
        mcp_path().display(),
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

/// A token file's entry in the serde form of `tiny_mcp::oauth::Login`.
fn kept_login(issuer: &str, access_token: &str) -> Value {
    json!({
        "registration": {
            "issuer": issuer,
            "client_id": "client-1",
            "token_endpoint_auth_method": "none",
            "redirect_uris": ["http://127.0.0.1:1/callback"],
        },
        "tokens": {"access_token": access_token, "refresh_token": "rt", "scope": "mcp:tools"},
        "issuer": issuer,
    })
}

fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{:?}: {}", path, e));
    serde_json::from_str(&text).unwrap()
}

// basic/authorization "Canonical Server URI": `mcp logout URL` forgets the
// login kept for URL (found under its canonical form) and keeps the other
// servers' logins; a second logout says there was none. No token printed.
#[test]
fn logout_forgets_one_servers_login() {
    let dir = scratch("logout");
    let file = dir.join("tokens.json");
    let logins = json!({
        "https://mcp.example.com/mcp": kept_login("https://as.example.com", "at-secret-1"),
        "https://other.example.com/mcp": kept_login("https://as.example.com", "at-secret-2"),
    });
    std::fs::write(&file, logins.to_string()).unwrap();
    let token_file = file.to_str().unwrap();
    let logout = ["--token-file", token_file, "logout"];
    let output = mcp(&[&logout[..], &["HTTPS://MCP.Example.com/mcp/"]].concat());
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{}{}", out, err);
    assert!(out.contains("logged out of"), "{}", out);
    assert!(!out.contains("at-secret") && !err.contains("at-secret"));
    let kept = read_json(&file);
    assert_eq!(
        kept,
        json!({"https://other.example.com/mcp": logins["https://other.example.com/mcp"]})
    );
    let again = mcp(&[&logout[..], &["https://mcp.example.com/mcp"]].concat());
    let out = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(0), "{}", out);
    assert!(out.contains("no login kept for"), "{}", out);
    assert_eq!(read_json(&file), kept);
}

// basic/authorization (authorization is optional): `mcp login URL` against
// a server that never answers 401 says it needs no login, and the stale
// login kept for that URL is forgotten first.
#[test]
fn login_to_a_server_without_authorization_says_so() {
    let server = crate::support::Example::start(&[]);
    let url = format!("http://{}/mcp", server.addr);
    let dir = scratch("login-open");
    let file = dir.join("tokens.json");
    let logins = json!({ url.clone(): kept_login("http://127.0.0.1:1", "stale") });
    std::fs::write(&file, logins.to_string()).unwrap();
    let output = mcp(&["--token-file", file.to_str().unwrap(), "login", &url]);
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{}{}", out, err);
    assert!(out.trim().ends_with("needs no login"), "{}", out);
    assert_eq!(out.lines().count(), 1, "{}", out);
    assert_eq!(read_json(&file), json!({}));
}

/// `name`'s value in the query of `target`, percent-decoded.
fn query_value(target: &str, name: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    let raw = query
        .split('&')
        .find_map(|pair| pair.strip_prefix(&format!("{}=", name)))?;
    let bytes = raw.replace('+', " ").into_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = std::str::from_utf8(bytes.get(i + 1..i + 3).unwrap_or(b"")).unwrap_or("");
        match (bytes[i], u8::from_str_radix(hex, 16)) {
            (b'%', Ok(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// `GET url` (`http://`) on a new connection, as a browser would: the
/// answer's head and body.
fn browse(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(BOUND)).unwrap();
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        path, host
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// An MCP server (2025-11-25) that wants `Bearer at-fresh`, and the
/// authorization server it names, on one fake: metadata (RFC 9728, RFC
/// 8414), registration (RFC 7591), an authorization endpoint that
/// approves at once, a token endpoint.
fn protected_fake() -> super::fake::Fake {
    use super::fake::{self, Reply};
    super::fake::Fake::start(|request| {
        let origin = format!("http://{}", request.header("host").unwrap_or(""));
        let path = request.path.as_str();
        let body = match path.split('?').next().unwrap_or("") {
            "/.well-known/oauth-protected-resource/mcp" => json!({
                "resource": format!("{}/mcp", origin), "authorization_servers": [origin],
            }),
            "/.well-known/oauth-authorization-server" => json!({
                "issuer": origin, "response_types_supported": ["code"],
                "authorization_endpoint": format!("{}/authorize", origin),
                "token_endpoint": format!("{}/token", origin),
                "registration_endpoint": format!("{}/register", origin),
                "code_challenge_methods_supported": ["S256"],
            }),
            "/register" => {
                let mut registered = request.json();
                registered["client_id"] = json!("client-1");
                let text = registered.to_string();
                return Reply::Keep(fake::answer(201, "application/json", &text, ""));
            }
            "/authorize" => {
                let back = query_value(path, "redirect_uri").unwrap_or_default();
                let state = query_value(path, "state").unwrap_or_default();
                let location = format!("{}?code=code-1&state={}&iss={}", back, state, origin);
                let extra = format!("Location: {}\r\n", location);
                return Reply::Close(fake::answer(302, "text/plain", "", &extra));
            }
            "/token" => json!({
                "access_token": "at-fresh", "token_type": "Bearer", "expires_in": 3600,
                "refresh_token": "rt-fresh", "scope": "mcp:tools",
            }),
            _ if request.method != "POST" => {
                return Reply::Keep(fake::answer(405, "text/plain", "", ""))
            }
            _ if request.header("authorization") != Some("Bearer at-fresh") => {
                let challenge = format!(
                    "WWW-Authenticate: Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"\r\n",
                    origin
                );
                return Reply::Keep(fake::answer(401, "text/plain", "", &challenge));
            }
            _ => match fake::handshake_2025(request) {
                Some(reply) => return reply,
                None => {
                    return Reply::Keep(fake::json(&fake::result(request, r#"{"tools":[]}"#), ""))
                }
            },
        };
        Reply::Keep(fake::json(&body.to_string(), ""))
    })
}

// basic/authorization "Authorization Flow Steps" and RFC 8252 §7.3: `mcp
// login` shows the authorization URL to the BROWSER command (its words,
// then the URL last), waits on the loopback listener for the redirect,
// and says on one line which server, issuer and scopes, never a token; the
// login is kept, so the next command sends its token without a browser.
#[test]
fn login_hands_the_url_to_browser_and_keeps_the_login() {
    use std::io::BufRead;
    let server = protected_fake();
    let (url, issuer) = (server.url("/mcp"), server.url(""));
    let dir = scratch("login-flow");
    let (file, script) = (dir.join("tokens.json"), dir.join("browser.sh"));
    let echo = "for a in \"$@\"; do printf 'browser-arg: %s\\n' \"$a\" >&2; done\n";
    std::fs::write(&script, echo).unwrap();
    let token_file = file.to_str().unwrap();
    let mut child = Command::new(mcp_path())
        .args(["--token-file", token_file, "--era", "2025-11-25"])
        .args(["--login-timeout", "20", "login", &url])
        .env("BROWSER", format!("sh {} first-word", script.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, seen) = crossbeam_channel::unbounded();
    thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line);
        }
    });
    let args = browser_args(&seen);
    assert_eq!(args[0], "first-word", "{:?}", args);
    let redirect = browse(&args[1]);
    let location = redirect
        .lines()
        .find_map(|l| l.strip_prefix("Location: "))
        .unwrap_or_else(|| panic!("no redirect: {}", redirect));
    assert!(browse(location).starts_with("HTTP/1.1 200"));
    let output = run_to_end(child);
    let out = String::from_utf8_lossy(&output.stdout);
    let rest: Vec<String> = seen.try_iter().collect();
    assert_eq!(output.status.code(), Some(0), "{}{:?}", out, rest);
    assert_eq!(out.lines().count(), 1, "{}", out);
    for part in ["logged in to fake", issuer.as_str(), "mcp:tools"] {
        assert!(out.contains(part), "{}: {}", part, out);
    }
    assert!(
        !format!("{}{:?}", out, rest).contains("-fresh"),
        "a token shown"
    );
    let kept = read_json(&file);
    assert_eq!(kept[&url]["tokens"]["access_token"], "at-fresh");
    assert_eq!(kept[&url]["issuer"], issuer.as_str());
    let again = mcp(&[
        "--token-file",
        token_file,
        "--http",
        &url,
        "--era",
        "2025-11-25",
        "tools",
    ]);
    let out = String::from_utf8_lossy(&again.stdout);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(out.trim(), "[]");
}

/// The arguments the browser script printed on the stderr lines `seen`,
/// up to the first URL.
fn browser_args(seen: &crossbeam_channel::Receiver<String>) -> Vec<String> {
    let mut args = Vec::new();
    while !args
        .last()
        .map_or(false, |a: &String| a.starts_with("http"))
    {
        let line = seen
            .recv_timeout(BOUND)
            .unwrap_or_else(|_| panic!("BROWSER never ran; it had {:?}", args));
        if let Some(arg) = line.strip_prefix("browser-arg: ") {
            args.push(arg.to_string());
        }
    }
    args
}

/// Waits (at most [`BOUND`]) for `child` to end: its output.
fn run_to_end(child: std::process::Child) -> Output {
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(BOUND) {
        Ok(output) => output.unwrap(),
        Err(_) => panic!("mcp did not end within {:?}", BOUND),
    }
}

// `mcp --help` names every command, and `mcp bridge --help` the same text.
#[test]
fn help_lists_every_command() {
    let commands = [
        "info",
        "ping",
        "tools",
        "call",
        "resources",
        "read",
        "prompts",
        "prompt",
        "complete",
        "login",
        "logout",
        "bridge",
        "serve",
    ];
    for args in [&["--help"][..], &["bridge", "--help"]] {
        let out = mcp(args);
        assert!(out.status.success(), "{:?}", out);
        let usage = String::from_utf8_lossy(&out.stdout);
        let section = usage.split("commands:").nth(1).unwrap_or("");
        let words: Vec<&str> = section
            .split(|c: char| !c.is_ascii_alphanumeric())
            .collect();
        for command in commands {
            assert!(
                words.contains(&command),
                "{} is not listed:\n{}",
                command,
                usage
            );
        }
    }
}
