//! `mcp serve`: a stdio MCP server served over Streamable HTTP.
//!
//! ```text
//! mcp serve --stdio "npx -y @modelcontextprotocol/server-everything" --http 127.0.0.1:8080
//! ```
//!
//! The crate's HTTP transport serves the endpoint, with everything it has
//! on by default (Host/Origin checks against DNS rebinding, body and
//! header limits, timeouts, session limits, resumable event streams, both
//! eras); the library's [`Upstream`](tiny_mcp::Upstream) seam hands each
//! session's messages to [`proxy::Proxy`], which starts the stdio server
//! once per HTTP session (or once, `--shared`) with the crate's `Client`.
//! The bound URL goes to stderr (`mcp serve: listening on
//! http://ADDR/mcp`) once the socket is bound. Bound to a loopback
//! address, the per-peer shares (sessions, connections, workers and tasks
//! one address may hold) are off: every client is then the same host.

mod child;
mod era_2026;
mod proxy;
mod tokens;

use std::net::TcpListener;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tiny_mcp::{
    Error, HttpRefusal, HttpRequestHead, Principal, ProtectedResource, Server, TokenVerifier,
};

use child::Spawn;
use proxy::Proxy;
use tokens::TokenFile;

const USAGE: &str = "\
usage: mcp serve --stdio \"CMD ARGS\" --http ADDR [OPTIONS]

Serves a stdio MCP server over Streamable HTTP at http://ADDR/mcp, starting
it once per HTTP session (each session's client is the server's client).

  --stdio \"CMD ARGS\"    the server to start
  --http ADDR          where to listen, e.g. 127.0.0.1:8080 (port 0: any free port);
                       the URL goes to stderr once bound
  --shared             start the server once, for every session (a server that
                       keeps no state per client); it is started again if it exits
  --token-file PATH    accept only requests with one of these bearer tokens
                       (one per line; # comments)
  --authorization-server URL
                       with --token-file: be an OAuth protected resource naming
                       this authorization server (metadata served, sessions bound
                       to their token)
  --allow-host HOST    also accept this Host header (repeatable); by default a
                       loopback address accepts only loopback names
  --allow-origin ORIGIN
                       also accept requests from this Origin (repeatable)
  --max-sessions N     sessions at once, each with its own server unless --shared
                       (default 64)
  --session-timeout SECONDS
                       an idle session ends, and its server with it (default 1800)
  --timeout SECONDS    one forwarded request (default 300)";

/// The options of `mcp serve`.
struct Options {
    stdio: Option<String>,
    http: Option<String>,
    shared: bool,
    token_file: Option<String>,
    authorization_server: Option<String>,
    hosts: Vec<String>,
    origins: Vec<String>,
    max_sessions: usize,
    session_timeout: Duration,
    timeout: Duration,
}

/// Runs `mcp serve` with the arguments after `serve`; the exit code.
pub(crate) fn main(raw: Vec<String>) -> i32 {
    let options = match parse(raw) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("mcp serve: {}\n\n{}", message, USAGE);
            return crate::USAGE_ERROR;
        }
    };
    match run(&options) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mcp serve: {}", e);
            crate::CONNECTION_ERROR
        }
    }
}

fn parse(raw: Vec<String>) -> Result<Options, String> {
    let mut options = Options {
        stdio: None,
        http: None,
        shared: false,
        token_file: None,
        authorization_server: None,
        hosts: Vec::new(),
        origins: Vec::new(),
        max_sessions: 64,
        session_timeout: Duration::from_secs(30 * 60),
        timeout: Duration::from_secs(300),
    };
    let mut raw = raw.into_iter();
    while let Some(arg) = raw.next() {
        let mut value = |name: &str| raw.next().ok_or_else(|| format!("{} needs a value", name));
        match arg.as_str() {
            "--stdio" => options.stdio = Some(value("--stdio")?),
            "--http" => options.http = Some(value("--http")?),
            "--shared" => options.shared = true,
            "--token-file" => options.token_file = Some(value("--token-file")?),
            "--authorization-server" => {
                options.authorization_server = Some(value("--authorization-server")?)
            }
            "--allow-host" => options.hosts.push(value("--allow-host")?),
            "--allow-origin" => options.origins.push(value("--allow-origin")?),
            "--max-sessions" => {
                let text = value("--max-sessions")?;
                options.max_sessions = match text.parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(format!("--max-sessions needs a count, not {}", text)),
                }
            }
            "--session-timeout" => {
                options.session_timeout =
                    crate::seconds("--session-timeout", &value("--session-timeout")?)?
            }
            "--timeout" => options.timeout = crate::seconds("--timeout", &value("--timeout")?)?,
            "-h" | "--help" => {
                println!("{}", USAGE);
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {}", other)),
        }
    }
    if options.stdio.is_none() || options.http.is_none() {
        return Err("serve needs --stdio \"CMD ARGS\" and --http ADDR".into());
    }
    if options.authorization_server.is_some() && options.token_file.is_none() {
        return Err("--authorization-server goes with --token-file".into());
    }
    Ok(options)
}

fn run(options: &Options) -> Result<(), Error> {
    let line = options.stdio.clone().unwrap_or_default();
    let words = crate::split_command(&line).map_err(Error::invalid_params)?;
    if words.is_empty() {
        return Err(Error::invalid_params("--stdio needs a command"));
    }
    let spawn = Spawn {
        line,
        words,
        timeout: options.timeout,
    };
    let proxy = Proxy::new(spawn, options.shared);
    if options.shared {
        // Fail now, not at the first client, when it cannot start.
        proxy.common()?;
    }
    let relays = proxy.common_relays();
    // The kinds are the children's to declare (their `initialize`); offered
    // here, so that 2026-07-28 listen streams honour their changes.
    let server = Server::builder("mcp serve", env!("CARGO_PKG_VERSION"))
        .offer_tools()
        .offer_prompts()
        .offer_resources()
        .upstream(proxy)
        .build();
    relays.set_server(server.handle().downgrade());
    // Bound first, so that a protected resource names its real port.
    let addr = options.http.clone().unwrap_or_default();
    let listener = TcpListener::bind(addr.as_str())
        .map_err(|e| Error::msg(format!("cannot listen on {}: {}", addr, e)))?;
    let bound = listener.local_addr()?;
    drop(listener);
    let url = format!("http://{}/mcp", bound);
    let mut http = server
        .http()
        .endpoint("/mcp")
        .max_sessions(options.max_sessions)
        .session_idle_timeout(options.session_timeout)
        .allowed_hosts(options.hosts.clone())
        .allowed_origins(options.origins.clone())
        // On loopback every client is this host: one peer, whose share
        // would be all there is (DESIGN.md §26).
        .per_peer_shares(!bound.ip().is_loopback());
    if let Some(path) = &options.token_file {
        let tokens = TokenFile::read(path).map_err(Error::invalid_params)?;
        http = match &options.authorization_server {
            Some(issuer) => http.protect(
                ProtectedResource::new(url.as_str(), tokens).authorization_server(issuer.as_str()),
            ),
            None => http.before_request(bearer_hook(tokens)),
        };
    }
    let running = http.serve(bound)?;
    eprintln!("mcp serve: listening on {}", url);
    // Idle sessions hold a child each: let them go as they expire.
    let sweep =
        (options.session_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    loop {
        thread::sleep(sweep);
        running.end_idle_sessions();
    }
}

/// `--token-file` without an authorization server: `401` with a bare
/// `Bearer` challenge unless the request carries an accepted token.
fn bearer_hook(
    tokens: TokenFile,
) -> impl Fn(&HttpRequestHead<'_>, Option<&Principal>) -> Result<(), HttpRefusal> + Send + Sync {
    let tokens = Arc::new(tokens);
    move |head: &HttpRequestHead<'_>, _: Option<&Principal>| {
        // RFC 6750 §2.1: the scheme's name is case-insensitive.
        let token = head
            .header("authorization")
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match token.map(|token| tokens.verify(token, head)) {
            Some(Ok(_)) => Ok(()),
            _ => Err(HttpRefusal::new(401)
                .header("WWW-Authenticate", "Bearer")
                .text("a bearer token is required")),
        }
    }
}
