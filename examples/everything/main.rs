//! `everything`: the main example server of tiny-mcp.
//!
//! It offers every tool, resource, resource template and prompt that the
//! MCP conformance suite asks of a server, in both protocol eras:
//!
//! - suite 0.1.16 and the 2025-11-25 scenarios (`CONFORMANCE.md` section 5:
//!   `test_simple_text`, `test_sampling`, `test://static-text`,
//!   `test_prompt_with_arguments`, …);
//! - the diagnostic tools of the 2026-07-28 scenarios
//!   (`CONFORMANCE-NEXT.md` section 4): `test_missing_capability`,
//!   `test_logging_tool`, `test_streaming_elicitation`,
//!   `test_trigger_tool_change`, `test_trigger_prompt_change`, the
//!   `x-mcp-header` tool `test_custom_header`, and the multi round-trip
//!   tools `test_input_required_result_*` with the prompt
//!   `test_input_required_result_prompt`.
//!
//! Every handler is written once. The ones that need the client (sampling,
//! elicitation, roots) pass `ErrorKind::InputRequired` on with `?`: in the
//! 2026-07-28 era the SDK then answers `input_required` and runs the handler
//! again on the client's retry; before it, the same calls are requests to
//! the client that block until answered.
//!
//! A few tools exercise the rest of the SDK:
//!
//! - `echo`: returns its `text` argument;
//! - `slow`: runs for `seconds` (default 10), reporting progress every
//!   100 ms and stopping early when the request is cancelled;
//! - `session_info`: the client's `clientInfo`, protocol version and
//!   capabilities, the principal (subject, client id, scopes) when the
//!   endpoint is protected, and how many handlers have seen a
//!   cancellation so far;
//! - `notify_changed`: sends the three `list_changed` notifications and
//!   `notifications/resources/updated` for `test://watched-resource`;
//! - `test_url_elicitation`, `test_url_elicitation_required`: URL-mode
//!   elicitation, asked for directly or as a `-32042` error;
//! - `test_roots`: the client's roots (`roots/list`).
//!
//! # Running it
//!
//! ```text
//! cargo run --example everything            # serves MCP on stdin/stdout
//! cargo run --example everything -- --stdio # the same
//! cargo run --example everything -- --help
//! cargo run --example everything -- --http 127.0.0.1:3000 --auth-demo
//! ```
//!
//! With `--auth-demo` or `--introspect URL` the HTTP endpoint is an OAuth
//! 2.1 protected resource (see `auth.rs`): requests need a bearer token,
//! e.g. `Authorization: Bearer user-token`.
//!
//! Nothing but protocol is written to stdout. To try it by hand, pipe JSON
//! lines into it:
//!
//! ```text
//! printf '%s\n' \
//!   '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
//!   '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
//!   '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}' \
//!   | cargo run -q --example everything
//! ```
//!
//! `scripts/interop/interop-ts.sh` drives it with the official TypeScript SDK client
//! and checks every tool, resource and prompt; `scripts/check/conformance-run.sh`
//! runs the conformance suites against it (0.1.16, and the 0.2.0 alpha at
//! 2026-07-28 and 2025-11-25).

use std::collections::BTreeMap;
use std::process;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{
    CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock,
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestFormParams,
    ElicitRequestUrlParams, ElicitResult, Era, Error, ErrorKind, GetPromptResult, InputRequest,
    JsonObject, ListRootsResult, LoggingLevel, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Reference, RequestContext, Resource, ResourceContents, ResourceTemplate,
    SamplingMessage, Server, ServerBuilder, TemplateVariables, Tool,
};

mod auth;
mod deploy;
mod redis;
#[cfg(feature = "tasks")]
mod tasks;

// ---------------------------------------------------------------------------
// Fixed data
// ---------------------------------------------------------------------------

/// A 1x1 red PNG, base64.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file, base64.
const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The resource `notify_changed` reports as updated.
const WATCHED_URI: &str = "test://watched-resource";

/// The resource template, also the `ref/resource` URI that completes `id`.
const TEMPLATE_URI: &str = "test://template/{id}/data";

/// Where the URL-mode elicitations send the user.
const AUTHORIZE_URL: &str = "https://example.com/authorize?session=demo";

/// How many tool handlers noticed that their request was cancelled, over the
/// life of the process (reported by `session_info`).
static CANCELLED_HANDLERS: AtomicUsize = AtomicUsize::new(0);

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------

const USAGE: &str = "\
usage: everything [--stdio | --http ADDR [--auth-demo | --introspect URL] [--auth-issuer URL]]
                  [--instance NAME] [--session-prefix P] [--state-key-file F] [--redis URL]

The tiny-mcp example server with every conformance tool, resource and prompt.

options:
  --stdio            serve MCP on stdin/stdout (the default)
  --http ADDR        serve Streamable HTTP on http://ADDR/mcp (e.g. 127.0.0.1:3000)
  --auth-demo        protect the endpoint (OAuth 2.1 resource server) with the demo
                     tokens user-token (alice, mcp:tools), admin-token (root,
                     mcp:tools mcp:admin), other-audience-token, expired-token
  --introspect URL   protect the endpoint, checking tokens by RFC 7662
                     introspection at URL (http:// only)
  --auth-issuer URL  the authorization server the metadata names
                     (default http://127.0.0.1:9000)
  --instance NAME    name this instance in session_info and an Mcp-Instance
                     header on every HTTP response
  --session-prefix P start the ids of the sessions and tasks it mints with
                     P (a routing key for a load balancer)
  --state-key-file F seal requestState with the keys in F (one hex key per
                     line, newest first; needs --features sealed-state)
  --redis URL        carry change events to and from the other instances
                     over Redis pub/sub (redis://127.0.0.1:6379/)
  --max-connections N  most HTTP connections at once (default 10000)
  --max-sessions N     most HTTP sessions at once (default 10000)
  --max-listen-streams N  most open subscriptions/listen streams (default 10000)
  -h, --help         print this help

With authorization every request needs the scope mcp:tools, and the tool
admin_echo also mcp:admin. ADDR needs a fixed port then: the resource
identifier is http://ADDR/mcp.";

/// What the command line asked for.
struct Options {
    http: Option<String>,
    auth: Option<auth::Auth>,
    issuer: String,
    deploy: deploy::Deploy,
    max_connections: Option<usize>,
    max_sessions: Option<usize>,
    max_listen_streams: Option<usize>,
}

/// The number an argument takes.
fn number(arg: &str, value: String) -> Result<usize, String> {
    value
        .parse()
        .map_err(|_| format!("{} {}: not a number", arg, value))
}

/// Parses the arguments; `Err` with a message for anything unknown.
fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        http: None,
        auth: None,
        issuer: "http://127.0.0.1:9000".into(),
        deploy: deploy::Deploy::default(),
        max_connections: None,
        max_sessions: None,
        max_listen_streams: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{} needs a value", arg))
        };
        match arg.as_str() {
            "--stdio" => {}
            "--http" => options.http = Some(value()?),
            "--auth-demo" => options.auth = Some(auth::Auth::Demo),
            "--introspect" => options.auth = Some(auth::Auth::Introspect(value()?)),
            "--auth-issuer" => options.issuer = value()?,
            "--instance" => options.deploy.instance = Some(value()?),
            "--session-prefix" => options.deploy.session_prefix = Some(value()?),
            "--state-key-file" => options.deploy.state_key_file = Some(value()?),
            "--redis" => options.deploy.redis = Some(value()?),
            "--max-connections" => options.max_connections = Some(number(arg, value()?)?),
            "--max-sessions" => options.max_sessions = Some(number(arg, value()?)?),
            "--max-listen-streams" => options.max_listen_streams = Some(number(arg, value()?)?),
            other => return Err(format!("unknown argument: {}", other)),
        }
    }
    if options.auth.is_some() && options.http.is_none() {
        return Err(
            "authorization needs --http (stdio takes its credentials from the \
                    environment)"
                .into(),
        );
    }
    Ok(options)
}

/// Writes the SDK's log records to stderr (stdout is the protocol). The
/// level comes from `TINY_MCP_LOG` (`error`, `warn`, `info`, `debug`,
/// `trace`); the default is `warn`.
struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!("everything: {}: {}", record.level(), record.args());
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

fn init_logging() {
    let level = std::env::var("TINY_MCP_LOG")
        .ok()
        .and_then(|v| v.parse::<log::LevelFilter>().ok())
        .unwrap_or(log::LevelFilter::Warn);
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

fn main() {
    init_logging();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("{}", USAGE);
        return;
    }
    let options = match parse_args(&args) {
        Ok(options) => options,
        Err(why) => {
            eprintln!("everything: {}", why);
            eprintln!("{}", USAGE);
            process::exit(2);
        }
    };
    let protected = options.auth.is_some();
    let mut builder = with_skills(with_tasks(everything()));
    if let Some(n) = options.max_listen_streams {
        builder = builder.max_listen_streams(n);
    }
    let server = match options.deploy.server(builder) {
        Ok(builder) => build_server(builder, protected),
        Err(err) => exit_with_error(&err),
    };
    options.deploy.started(&server);
    let addr = match options.http {
        None => {
            if let Err(err) = server.serve_stdio() {
                exit_with_error(&err);
            }
            return;
        }
        Some(addr) => addr,
    };
    let mut http = match options.deploy.http(server.http()) {
        Ok(http) => http,
        Err(err) => exit_with_error(&err),
    };
    if let Some(n) = options.max_connections {
        http = http.max_connections(n);
    }
    if let Some(n) = options.max_sessions {
        http = http.max_sessions(n);
    }
    if let Some(how) = options.auth {
        let resource = format!("http://{}/mcp", addr);
        http = http.protect(auth::protected(how, &resource, &options.issuer));
    }
    let addr = match socket_addr(&addr) {
        Ok(addr) => addr,
        Err(why) => {
            eprintln!("everything: {}", why);
            process::exit(2);
        }
    };
    match http.serve(addr) {
        Ok(http) => {
            eprintln!(
                "everything: serving MCP on http://{}/mcp",
                http.local_addr()
            );
            if let Err(err) = http.join() {
                exit_with_error(&err);
            }
        }
        Err(err) => exit_with_error(&err),
    }
}

/// `IP:port`, or `localhost:port` for 127.0.0.1. Names are not looked up:
/// a static binary that never resolves names leaves glibc's resolver (and
/// its dynamic loading) out, which keeps it small.
pub fn socket_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    let text = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{}", port),
        None => text.to_string(),
    };
    text.parse().map_err(|_| {
        format!(
            "{}: an IP address and port are needed, e.g. 127.0.0.1:3000",
            text
        )
    })
}

/// Prints `err` and its causes to stderr and exits with status 1.
fn exit_with_error(err: &Error) -> ! {
    eprint!("everything: {}", err);
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        eprint!(": {}", cause);
        source = cause.source();
    }
    eprintln!();
    process::exit(1);
}

/// The server from `builder` (everything registered); `protected` adds
/// `admin_echo` and the scopes of `auth.rs`.
fn build_server(builder: ServerBuilder, protected: bool) -> Server {
    if protected {
        auth::scoped(builder).build()
    } else {
        builder.build()
    }
}

/// The task fixtures of the suite's tasks scenarios (`tasks.rs`), when
/// the crate has tasks (its default `tasks` feature).
fn with_tasks(builder: ServerBuilder) -> ServerBuilder {
    #[cfg(feature = "tasks")]
    let builder = tasks::add(builder);
    builder
}

/// Without the crate's `skills` feature: no skills. With it, the skills of
/// the suite's skills scenarios (SEP-2640): the example's
/// own `skills/` folder, found where it was built; left out (with a
/// warning) when that folder is gone.
#[cfg(not(feature = "skills"))]
fn with_skills(builder: ServerBuilder) -> ServerBuilder {
    builder
}

/// As above, with the crate's `skills` feature.
#[cfg(feature = "skills")]
fn with_skills(builder: ServerBuilder) -> ServerBuilder {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/everything/skills");
    if !std::path::Path::new(dir).is_dir() {
        log::warn!("no skills: {} is not a directory", dir);
        return builder;
    }
    match builder.skills_dir(dir) {
        Ok(builder) => builder,
        Err(err) => exit_with_error(&err),
    }
}

/// Every tool, resource, template and prompt.
fn everything() -> ServerBuilder {
    let no_args = || json!({ "type": "object", "properties": {} });
    Server::builder("tiny-mcp-everything", env!("CARGO_PKG_VERSION"))
        .instructions(
            "A test server: every tool, resource and prompt of the MCP conformance suites \
             (2025-11-25 and 2026-07-28), plus echo, slow, session_info, notify_changed, \
             URL elicitation and roots.",
        )
        // Conformance tools (CONFORMANCE.md 5.1).
        .tool(
            Tool::new("test_simple_text", no_args())
                .with_description("Returns a simple text response"),
            test_simple_text,
        )
        .tool(
            Tool::new("test_image_content", no_args())
                .with_description("Returns a 1x1 red PNG image"),
            test_image_content,
        )
        .tool(
            Tool::new("test_audio_content", no_args())
                .with_description("Returns a minimal WAV audio clip"),
            test_audio_content,
        )
        .tool(
            Tool::new("test_embedded_resource", no_args())
                .with_description("Returns an embedded text resource"),
            test_embedded_resource,
        )
        .tool(
            Tool::new("test_multiple_content_types", no_args())
                .with_description("Returns text, an image and an embedded resource together"),
            test_multiple_content_types,
        )
        .tool(
            Tool::new("test_tool_with_logging", no_args())
                .with_description("Sends three info log messages while it runs"),
            test_tool_with_logging,
        )
        .tool(
            Tool::new("test_tool_with_progress", no_args())
                .with_description("Reports progress 0, 50 and 100 of 100, then returns the token"),
            test_tool_with_progress,
        )
        .tool(
            Tool::new("test_error_handling", no_args())
                .with_description("Always fails with an error result (isError: true)"),
            test_error_handling,
        )
        .tool(
            Tool::new(
                "test_sampling",
                json!({
                    "type": "object",
                    "properties": {
                        "prompt": { "type": "string", "description": "The prompt to send to the LLM" }
                    },
                    "required": ["prompt"]
                }),
            )
            .with_description("Asks the client's LLM to answer a prompt (sampling)"),
            test_sampling,
        )
        .tool(
            Tool::new(
                "test_elicitation",
                json!({
                    "type": "object",
                    "properties": {
                        "message": { "type": "string", "description": "The message to show the user" }
                    },
                    "required": ["message"]
                }),
            )
            .with_description("Asks the user for a username and an email address (elicitation)"),
            test_elicitation,
        )
        .tool(
            Tool::new("test_elicitation_sep1034_defaults", no_args())
                .with_description("Elicitation with default values for every field (SEP-1034)"),
            test_elicitation_sep1034_defaults,
        )
        .tool(
            Tool::new("test_elicitation_sep1330_enums", no_args())
                .with_description("Elicitation with the five enum schema shapes (SEP-1330)"),
            test_elicitation_sep1330_enums,
        )
        .tool(
            Tool::new("json_schema_2020_12_tool", json_schema_2020_12())
                .with_description("A tool whose input schema uses JSON Schema 2020-12 features"),
            json_schema_2020_12_tool,
        )
        .tool(
            Tool::new("test_reconnection", no_args())
                .with_description("Completes after a reconnection on Streamable HTTP (SEP-1699)"),
            test_reconnection,
        )
        // Diagnostic tools of the 2026-07-28 scenarios (CONFORMANCE-NEXT.md
        // section 4). They work in both eras.
        .tool(
            Tool::new("test_missing_capability", no_args()).with_description(
                "Needs the client's sampling capability; without it the call is refused \
                 (-32021 in the 2026-07-28 era)",
            ),
            test_missing_capability,
        )
        .tool(
            Tool::new("test_logging_tool", no_args()).with_description(
                "Logs three messages, sent only if the client asked for log messages",
            ),
            test_logging_tool,
        )
        .tool(
            Tool::new("test_streaming_elicitation", no_args()).with_description(
                "Asks the user to confirm (elicitation; input_required in the 2026-07-28 era)",
            ),
            test_streaming_elicitation,
        )
        .tool(
            Tool::new("test_trigger_tool_change", no_args()).with_description(
                "Adds or removes the tool test_dynamic_tool, which notifies tools/list_changed",
            ),
            test_trigger_tool_change,
        )
        .tool(
            Tool::new("test_trigger_prompt_change", no_args()).with_description(
                "Adds or removes the prompt test_dynamic_prompt, which notifies \
                 prompts/list_changed",
            ),
            test_trigger_prompt_change,
        )
        .tool(
            Tool::new(
                "test_custom_header",
                json!({
                    "type": "object",
                    "properties": {
                        "region": {
                            "type": "string",
                            "description": "A region name, mirrored in the Mcp-Param-Region header",
                            "x-mcp-header": "Region"
                        }
                    },
                    "required": ["region"]
                }),
            )
            .with_description(
                "Returns its region argument; on the 2026-07-28 HTTP wire the client mirrors it \
                 in Mcp-Param-Region (SEP-2243)",
            ),
            test_custom_header,
        )
        // Multi round-trip requests (SEP-2322): input_required in the
        // 2026-07-28 era, requests to the client one by one before it.
        .tool(
            Tool::new("test_input_required_result_elicitation", no_args())
                .with_description("Asks for the user's name (user_name) and greets them"),
            test_input_required_result_elicitation,
        )
        .tool(
            Tool::new("test_input_required_result_sampling", no_args()).with_description(
                "Asks the client's model for the capital of France (capital_question)",
            ),
            test_input_required_result_sampling,
        )
        .tool(
            Tool::new("test_input_required_result_list_roots", no_args())
                .with_description("Asks for the client's roots (client_roots) and lists them"),
            test_input_required_result_list_roots,
        )
        .tool(
            Tool::new("test_input_required_result_request_state", no_args()).with_description(
                "Asks for a confirmation (confirm) and checks the requestState it issued",
            ),
            test_input_required_result_request_state,
        )
        .tool(
            Tool::new("test_input_required_result_multiple_inputs", no_args()).with_description(
                "Asks for a name, a greeting from the model and the roots in one round",
            ),
            test_input_required_result_multiple_inputs,
        )
        .tool(
            Tool::new("test_input_required_result_multi_round", no_args()).with_description(
                "Asks for a name (step1), then a favourite colour (step2), in two rounds",
            ),
            test_input_required_result_multi_round,
        )
        .tool(
            Tool::new("test_input_required_result_tampered_state", no_args()).with_description(
                "Asks for a confirmation; a retry with a modified requestState is refused",
            ),
            test_input_required_result_tampered_state,
        )
        .tool(
            Tool::new("test_input_required_result_capabilities", no_args()).with_description(
                "Asks only for the inputs the client declared a capability for",
            ),
            test_input_required_result_capabilities,
        )
        // Extra tools. `echo` returns at once and never blocks: a quick
        // tool, run on the thread that reads its call.
        .quick_tool(
            Tool::new(
                "echo",
                json!({
                    "type": "object",
                    "properties": {
                        "text": { "type": "string", "description": "The text to echo" }
                    },
                    "required": ["text"]
                }),
            )
            .with_description("Returns the given text"),
            echo,
        )
        .tool(
            Tool::new(
                "slow",
                json!({
                    "type": "object",
                    "properties": {
                        "seconds": {
                            "type": "number",
                            "description": "How long to run, in seconds",
                            "default": 10,
                            "minimum": 0,
                            "maximum": MAX_SLOW_SECONDS
                        }
                    }
                }),
            )
            .with_description(
                "Runs for a while, reporting progress every 100 ms; stops when cancelled",
            ),
            slow,
        )
        .tool(
            Tool::new("session_info", no_args()).with_description(
                "Returns the client's info, protocol version and capabilities, and the \
                 number of handlers that saw a cancellation",
            ),
            session_info,
        )
        .tool(
            Tool::new("notify_changed", no_args()).with_description(
                "Sends tools, prompts and resources list_changed notifications and \
                 resources/updated for test://watched-resource",
            ),
            notify_changed,
        )
        .tool(
            Tool::new("test_url_elicitation", no_args())
                .with_description("Asks the user to open an authorization URL (URL-mode elicitation)"),
            test_url_elicitation,
        )
        .tool(
            Tool::new("test_url_elicitation_required", no_args()).with_description(
                "Fails with the -32042 error listing a URL elicitation to complete first",
            ),
            test_url_elicitation_required,
        )
        .tool(
            Tool::new("test_roots", no_args())
                .with_description("Returns the client's roots (roots/list) as JSON"),
            test_roots,
        )
        // Resources (5.2).
        .resource(
            Resource::new("test://static-text", "static-text")
                .with_title("Static Text Resource")
                .with_description("A fixed text resource")
                .with_mime_type("text/plain"),
            |_ctx: &RequestContext, uri: &str| -> Result<ReadResourceResult, Error> {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "This is the content of the static text resource.",
                )]))
            },
        )
        .resource(
            Resource::new("test://static-binary", "static-binary")
                .with_title("Static Binary Resource")
                .with_description("A fixed binary resource: a 1x1 red PNG")
                .with_mime_type("image/png"),
            |_ctx: &RequestContext, uri: &str| -> Result<ReadResourceResult, Error> {
                Ok(ReadResourceResult::new(vec![ResourceContents::blob(
                    uri,
                    "image/png",
                    PNG_BASE64,
                )]))
            },
        )
        .resource(
            Resource::new(WATCHED_URI, "watched-resource")
                .with_title("Watched Resource")
                .with_description("A resource to subscribe to; notify_changed reports it updated")
                .with_mime_type("text/plain"),
            |_ctx: &RequestContext, uri: &str| -> Result<ReadResourceResult, Error> {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "Watched resource content",
                )]))
            },
        )
        .resource_template(
            ResourceTemplate::new(TEMPLATE_URI, "template")
                .with_title("Resource Template")
                .with_description("JSON data for any id")
                .with_mime_type("application/json"),
            read_template,
        )
        // Prompts (5.4).
        .prompt(
            Prompt::new("test_simple_prompt").with_description("A simple prompt without arguments"),
            |_ctx: &RequestContext, _args: BTreeMap<String, String>| -> Result<GetPromptResult, Error> {
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    ContentBlock::text("This is a simple prompt for testing."),
                )]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments")
                .with_description("A prompt with required arguments")
                .with_argument(PromptArgument::new("arg1", "First test argument", true))
                .with_argument(PromptArgument::new("arg2", "Second test argument", true)),
            prompt_with_arguments,
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource")
                .with_description("A prompt that includes an embedded resource")
                .with_argument(PromptArgument::new(
                    "resourceUri",
                    "URI of the resource to embed",
                    true,
                )),
            prompt_with_embedded_resource,
        )
        .prompt(
            Prompt::new("test_prompt_with_image")
                .with_description("A prompt that includes image content"),
            |_ctx: &RequestContext, _args: BTreeMap<String, String>| -> Result<GetPromptResult, Error> {
                Ok(GetPromptResult::new(vec![
                    PromptMessage::user(ContentBlock::image(PNG_BASE64, "image/png")),
                    PromptMessage::user(ContentBlock::text("Please analyze the image above.")),
                ]))
            },
        )
        .prompt(
            Prompt::new("test_input_required_result_prompt").with_description(
                "Asks the user for context (user_context), then builds a prompt from it",
            ),
            prompt_input_required,
        )
        // Completion (5.5).
        .completion(complete)
}

// ---------------------------------------------------------------------------
// Conformance tools
// ---------------------------------------------------------------------------

fn test_simple_text(_ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::text(
        "This is a simple text response for testing.",
    ))
}

fn test_image_content(_ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::new(vec![ContentBlock::image(
        PNG_BASE64,
        "image/png",
    )]))
}

fn test_audio_content(_ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::new(vec![ContentBlock::audio(
        WAV_BASE64,
        "audio/wav",
    )]))
}

fn test_embedded_resource(
    _ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::new(vec![ContentBlock::resource(
        ResourceContents::text(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        ),
    )]))
}

fn test_multiple_content_types(
    _ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::new(vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG_BASE64, "image/png"),
        ContentBlock::resource(ResourceContents::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ]))
}

fn test_tool_with_logging(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let messages = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            thread::sleep(Duration::from_millis(50));
        }
        ctx.check_cancelled()?;
        ctx.log(LoggingLevel::Info, *message);
    }
    Ok(CallToolResult::text(
        "Tool with logging executed successfully",
    ))
}

fn test_tool_with_progress(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    for (i, progress) in [0u32, 50, 100].iter().enumerate() {
        if i > 0 {
            thread::sleep(Duration::from_millis(50));
        }
        ctx.check_cancelled()?;
        let message = format!("Completed step {} of 100", progress);
        ctx.notify_progress(f64::from(*progress), Some(100.0), Some(&message));
    }
    let_final_progress_arrive(ctx);
    // The token as text, without the quotes `RequestId`'s Display puts
    // around strings.
    let text = match ctx.progress_token().map(|token| token.to_value()) {
        Some(Value::String(token)) => token,
        Some(token) => token.to_string(),
        None => "no progress token".to_string(),
    };
    Ok(CallToolResult::text(text))
}

fn test_error_handling(_ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::error(
        "This tool intentionally returns an error for testing",
    ))
}

fn test_sampling(ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let prompt = required_str(&args, "prompt")?;
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
    // Like the reference server, a failed request (no `sampling` capability,
    // an error from the client, a timeout) is reported as a normal result;
    // but see `passes_through`.
    let text = match ctx.create_message(params) {
        Ok(answer) => match answer.text() {
            Some(text) => format!("LLM response: {}", text),
            None => format!("LLM response: {}", answer.content),
        },
        Err(err) if passes_through(ctx, &err) => return Err(err),
        Err(err) => format!("Sampling not supported or error: {}", err),
    };
    Ok(CallToolResult::text(text))
}

fn test_elicitation(ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let message = required_str(&args, "message")?;
    let schema = json!({
        "type": "object",
        "properties": {
            "username": { "type": "string", "description": "Your username" },
            "email": { "type": "string", "description": "Your email address" }
        },
        "required": ["username", "email"]
    });
    elicit_form(ctx, message, schema, "User response")
}

fn test_elicitation_sep1034_defaults(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        },
        "required": []
    });
    elicit_form(
        ctx,
        "Please review and update the form fields with defaults",
        schema,
        "Elicitation completed",
    )
}

fn test_elicitation_sep1330_enums(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let schema = literal(
        r#"{
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Pick one option (untitled single-select)",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Pick one option (titled single-select)",
                "oneOf": [
                    { "const": "value1", "title": "First Option" },
                    { "const": "value2", "title": "Second Option" },
                    { "const": "value3", "title": "Third Option" }
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Pick one option (legacy enumNames)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Pick one to three options (untitled multi-select)",
                "minItems": 1,
                "maxItems": 3,
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
            },
            "titledMulti": {
                "type": "array",
                "description": "Pick one to three options (titled multi-select)",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" }
                    ]
                }
            }
        },
        "required": []
    }"#,
    );
    elicit_form(
        ctx,
        "Please select options from the enum fields",
        schema,
        "Elicitation completed",
    )
}

/// The input schema of `json_schema_2020_12_tool`, passed through verbatim.
///
/// Suite 0.1.16 checks `$schema`, `$defs.address` and
/// `"additionalProperties": false` (SEP-1613); the 2026-07-28 scenario also
/// checks composition (`allOf` holding an `anyOf`), conditionals
/// (`if`/`then`/`else`) and an `$anchor` inside `$defs.address` (SEP-2106).
/// The SDK only checks `required` and the property types, so the handler
/// sees arguments that may break the rest.
fn json_schema_2020_12() -> Value {
    // At least one way to reach the person (allOf), and the one named by
    // contactMethod (if/then/else).
    literal(
        r##"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [
            { "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }
        ],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    }"##,
    )
}

/// A JSON literal of this file, parsed (smaller code than `json!` for a
/// large one: the static binary counts its bytes).
fn literal(text: &str) -> Value {
    serde_json::from_str(text).expect("a JSON literal of the example")
}

fn json_schema_2020_12_tool(
    _ctx: &RequestContext,
    args: JsonObject,
) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::text(format!(
        "JSON Schema 2020-12 tool called with: {}",
        Value::Object(args)
    )))
}

fn test_reconnection(_ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    Ok(CallToolResult::text(
        "Reconnection test completed successfully. If you received this, \
         the client properly reconnected after stream closure.",
    ))
}

/// Asks the user to fill in a form and reports the answer as
/// `"<label>: action=<action>, content=<JSON>"`; a failed request is reported
/// as a normal result, as the reference server does (but see
/// `passes_through`).
fn elicit_form(
    ctx: &RequestContext,
    message: &str,
    schema: Value,
    label: &str,
) -> Result<CallToolResult, Error> {
    let text = match ctx.elicit(ElicitRequestFormParams::new(message, schema)) {
        Ok(answer) => format!(
            "{}: action={}, content={}",
            label,
            action_name(answer.action),
            content_json(&answer)
        ),
        Err(err) if passes_through(ctx, &err) => return Err(err),
        Err(err) => format!("Elicitation not supported or error: {}", err),
    };
    Ok(CallToolResult::text(text))
}

fn action_name(action: ElicitAction) -> &'static str {
    match action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    }
}

/// The answer's `content` as JSON text, `null` when there is none.
fn content_json(answer: &ElicitResult) -> String {
    match &answer.content {
        Some(content) => Value::Object(content.clone()).to_string(),
        None => "null".to_string(),
    }
}

/// `true` for the errors of a client call that a tool must pass on with `?`
/// instead of reporting them as text: a cancel; a request for the client's
/// input, which the SDK turns into an `input_required` result in the
/// 2026-07-28 era; and, in that era, a capability the client did not
/// declare, which the SDK sends as `-32021` (MRTR-2).
fn passes_through(ctx: &RequestContext, err: &Error) -> bool {
    match err.kind() {
        ErrorKind::Cancelled { .. } | ErrorKind::InputRequired => true,
        ErrorKind::CapabilityMissing { .. } => ctx.era() == Era::V2026_07_28,
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Diagnostic tools of the 2026-07-28 scenarios
// ---------------------------------------------------------------------------

/// The tool `test_trigger_tool_change` adds and removes.
const DYNAMIC_TOOL: &str = "test_dynamic_tool";

/// The prompt `test_trigger_prompt_change` adds and removes.
const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";

/// Refused unless the client declared `sampling` (in the 2026-07-28 era as
/// `-32021` with `data.requiredCapabilities: {"sampling": {}}`, before it
/// as an `isError` result); otherwise asks the client's model to say hello.
fn test_missing_capability(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say hello")], 50);
    let answer = ctx.create_message(params)?;
    Ok(CallToolResult::text(format!(
        "LLM response: {}",
        answer.text().unwrap_or("(no text)")
    )))
}

/// Logs three messages. In the 2026-07-28 era the SDK sends them only when
/// the request carried `_meta["io.modelcontextprotocol/logLevel"]` (LOG-1),
/// before it only at or above the level set with `logging/setLevel`.
fn test_logging_tool(ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    let messages = [
        (LoggingLevel::Debug, "test_logging_tool: starting"),
        (LoggingLevel::Info, "test_logging_tool: working"),
        (LoggingLevel::Notice, "test_logging_tool: done"),
    ];
    for (level, message) in messages.iter() {
        ctx.check_cancelled()?;
        ctx.log_with_logger(*level, Some("everything"), *message);
    }
    Ok(CallToolResult::text(
        "Logged 3 messages (sent only to a client that asked for them)",
    ))
}

/// Asks the user to confirm with the blocking `elicit`: a request to the
/// client before the 2026-07-28 era, an `input_required` result in it (the
/// response stream then carries no JSON-RPC request, GEN-5).
fn test_streaming_elicitation(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let schema = json!({
        "type": "object",
        "properties": {
            "confirmed": { "type": "boolean", "description": "Go ahead?" }
        },
        "required": ["confirmed"]
    });
    let answer = ctx.elicit(ElicitRequestFormParams::new(
        "Please confirm to continue",
        schema,
    ))?;
    Ok(CallToolResult::text(format!(
        "Streaming elicitation: action={}, content={}",
        action_name(answer.action),
        content_json(&answer)
    )))
}

/// Toggles the tool `test_dynamic_tool`. Either change sends
/// `notifications/tools/list_changed` to the sessions and to the
/// `subscriptions/listen` streams that asked for it.
fn test_trigger_tool_change(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let server = ctx.server();
    let text = if server.remove_tool(DYNAMIC_TOOL) {
        format!("removed the tool {}", DYNAMIC_TOOL)
    } else {
        server.add_tool(
            Tool::new(DYNAMIC_TOOL, json!({ "type": "object", "properties": {} }))
                .with_description("Added by test_trigger_tool_change"),
            |_ctx: &RequestContext, _args: JsonObject| -> Result<CallToolResult, Error> {
                Ok(CallToolResult::text("This tool was added at run time."))
            },
        );
        format!("added the tool {}", DYNAMIC_TOOL)
    };
    Ok(CallToolResult::text(text))
}

/// Toggles the prompt `test_dynamic_prompt`, which sends
/// `notifications/prompts/list_changed` like `test_trigger_tool_change`.
fn test_trigger_prompt_change(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let server = ctx.server();
    let text = if server.remove_prompt(DYNAMIC_PROMPT) {
        format!("removed the prompt {}", DYNAMIC_PROMPT)
    } else {
        server.add_prompt(
            Prompt::new(DYNAMIC_PROMPT).with_description("Added by test_trigger_prompt_change"),
            |_ctx: &RequestContext,
             _args: BTreeMap<String, String>|
             -> Result<GetPromptResult, Error> {
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    ContentBlock::text("This prompt was added at run time."),
                )]))
            },
        );
        format!("added the prompt {}", DYNAMIC_PROMPT)
    };
    Ok(CallToolResult::text(text))
}

/// Returns its `region`. The tool's schema marks `region` with
/// `"x-mcp-header": "Region"`, so on the 2026-07-28 HTTP wire the SDK
/// checks it against the `Mcp-Param-Region` header before this runs
/// (HTTP-4).
fn test_custom_header(_ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let region = required_str(&args, "region")?;
    Ok(CallToolResult::text(format!("Region: {}", region)))
}

// ---------------------------------------------------------------------------
// Multi round-trip requests (SEP-2322)
//
// Each handler asks with `ctx.request_inputs` under the keys the suite
// expects and passes `InputRequired` on with `?`. In the 2026-07-28 era the
// request is then answered with `input_required`, and the handler runs again
// from the start on the client's retry, now finding the answers; before that
// era the requests go to the client one by one and the handler runs once.
// ---------------------------------------------------------------------------

/// The user's name, asked under `user_name`.
const USER_NAME: &str = "user_name";

/// The state `test_input_required_result_request_state` issues and expects
/// back.
fn confirm_state() -> Value {
    json!({ "issuedBy": "test_input_required_result_request_state", "awaiting": "confirm" })
}

/// An `elicitation/create` form asking for one required string `property`.
fn ask_for_string(message: &str, property: &str) -> InputRequest {
    InputRequest::elicit(ElicitRequestFormParams::new(
        message,
        json!({
            "type": "object",
            "properties": { property: { "type": "string" } },
            "required": [property]
        }),
    ))
}

/// The `confirm` form: `{ok: boolean}`, required.
fn ask_for_confirmation() -> InputRequest {
    InputRequest::elicit(ElicitRequestFormParams::new(
        "Please confirm",
        json!({
            "type": "object",
            "properties": { "ok": { "type": "boolean" } },
            "required": ["ok"]
        }),
    ))
}

/// A `sampling/createMessage` request with one user message.
fn ask_model(prompt: &str, max_tokens: u32) -> InputRequest {
    InputRequest::create_message(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        max_tokens,
    ))
}

/// The accepted answer's `field` as text; `None` when the user declined or
/// cancelled, or left it out.
fn accepted_field(answer: &ElicitResult, field: &str) -> Option<String> {
    if answer.action != ElicitAction::Accept {
        return None;
    }
    match answer.content.as_ref()?.get(field)? {
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// The model's answer as text.
fn model_text(answer: &CreateMessageResult) -> String {
    match answer.text() {
        Some(text) => text.to_string(),
        None => answer.content.to_string(),
    }
}

/// The roots as `uri (name)`, comma separated.
fn roots_text(roots: &ListRootsResult) -> String {
    let roots: Vec<String> = roots
        .roots
        .iter()
        .map(|root| match &root.name {
            Some(name) => format!("{} ({})", root.uri, name),
            None => root.uri.clone(),
        })
        .collect();
    if roots.is_empty() {
        "none".to_string()
    } else {
        roots.join(", ")
    }
}

/// "Hello, <name>!" for the name asked under `user_name`.
fn test_input_required_result_elicitation(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let answers = ctx.request_inputs(vec![(
        USER_NAME.into(),
        ask_for_string("What is your name?", "name"),
    )])?;
    let answer = answers.elicit_result(USER_NAME)?;
    Ok(CallToolResult::text(
        match accepted_field(&answer, "name") {
            Some(name) => format!("Hello, {}!", name),
            None => format!("No name given (action={})", action_name(answer.action)),
        },
    ))
}

/// The model's answer to "What is the capital of France?"
/// (`capital_question`).
fn test_input_required_result_sampling(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let key = "capital_question";
    let answers = ctx.request_inputs(vec![(
        key.into(),
        ask_model("What is the capital of France?", 100),
    )])?;
    let answer = answers.create_message_result(key)?;
    Ok(CallToolResult::text(format!(
        "The model says: {}",
        model_text(&answer)
    )))
}

/// The client's roots (`client_roots`).
fn test_input_required_result_list_roots(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let key = "client_roots";
    let answers = ctx.request_inputs(vec![(key.into(), InputRequest::list_roots())])?;
    let roots = answers.list_roots_result(key)?;
    Ok(CallToolResult::text(format!(
        "Client roots: {}",
        roots_text(&roots)
    )))
}

/// Issues its own state with the `confirm` request and, once answered,
/// checks that the state came back: "state-ok".
///
/// In the 2026-07-28 era the state must be the one the client echoed in
/// `requestState` (the SDK has verified it); before that era the handler
/// runs once and keeps its state in memory.
fn test_input_required_result_request_state(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let echoed = ctx.request_state();
    if echoed.is_none() {
        ctx.set_request_state(confirm_state());
    }
    let answers = ctx.request_inputs(vec![("confirm".into(), ask_for_confirmation())])?;
    let answer = answers.elicit_result("confirm")?;
    let state = if ctx.era() == Era::V2026_07_28 {
        echoed
    } else {
        ctx.request_state()
    };
    if state != Some(confirm_state()) {
        return Ok(CallToolResult::error(
            "requestState is missing or is not the one this tool issued",
        ));
    }
    Ok(CallToolResult::text(format!(
        "state-ok: confirmed={}",
        accepted_field(&answer, "ok").unwrap_or_else(|| action_name(answer.action).into())
    )))
}

/// An elicitation (`user_name`), a sampling request (`greeting`) and
/// `roots/list` (`client_roots`) in one round.
fn test_input_required_result_multiple_inputs(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let answers = ctx.request_inputs(vec![
        (
            USER_NAME.into(),
            ask_for_string("What is your name?", "name"),
        ),
        ("greeting".into(), ask_model("Generate a greeting", 50)),
        ("client_roots".into(), InputRequest::list_roots()),
    ])?;
    let name = accepted_field(&answers.elicit_result(USER_NAME)?, "name");
    let greeting = model_text(&answers.create_message_result("greeting")?);
    let roots = answers.list_roots_result("client_roots")?;
    Ok(CallToolResult::text(format!(
        "name: {}; greeting: {}; roots: {}",
        name.as_deref().unwrap_or("(not given)"),
        greeting,
        roots_text(&roots)
    )))
}

/// A name (`step1`), then, in a second round, a favourite colour (`step2`).
fn test_input_required_result_multi_round(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let first = ctx.request_inputs(vec![(
        "step1".into(),
        ask_for_string("Step 1: What is your name?", "name"),
    )])?;
    let name = accepted_field(&first.elicit_result("step1")?, "name");
    // Only asked once step1 is answered: the second round. The answer to
    // step1 travels in the new requestState.
    let second = ctx.request_inputs(vec![(
        "step2".into(),
        ask_for_string("Step 2: What is your favorite color?", "color"),
    )])?;
    let color = accepted_field(&second.elicit_result("step2")?, "color");
    Ok(CallToolResult::text(format!(
        "{} likes {}",
        name.as_deref().unwrap_or("Someone"),
        color.as_deref().unwrap_or("no colour in particular")
    )))
}

/// Asks for a confirmation. The answers gathered so far travel in
/// `requestState`, which the server's codec protects (by default it stays
/// on the server behind a random key), so a modified state is refused with
/// `-32602` before this handler runs.
fn test_input_required_result_tampered_state(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let answers = ctx.request_inputs(vec![("confirm".into(), ask_for_confirmation())])?;
    let answer = answers.elicit_result("confirm")?;
    Ok(CallToolResult::text(format!(
        "requestState verified; confirmed={}",
        accepted_field(&answer, "ok").unwrap_or_else(|| action_name(answer.action).into())
    )))
}

/// Asks only for what this request's client capabilities allow: a name
/// (elicitation), a greeting (sampling) and the roots, each if declared.
fn test_input_required_result_capabilities(
    ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    let caps = ctx.client_capabilities();
    let mut requests = Vec::new();
    if caps.supports_elicitation_form() {
        requests.push((
            USER_NAME.to_string(),
            ask_for_string("What is your name?", "name"),
        ));
    }
    if caps.supports_sampling() {
        requests.push(("greeting".to_string(), ask_model("Generate a greeting", 50)));
    }
    if caps.supports_roots() {
        requests.push(("client_roots".to_string(), InputRequest::list_roots()));
    }
    if requests.is_empty() {
        return Ok(CallToolResult::text(
            "The client declared neither elicitation, sampling nor roots: nothing to ask",
        ));
    }
    let keys: Vec<String> = requests.iter().map(|(key, _)| key.clone()).collect();
    let answers = ctx.request_inputs(requests)?;
    let answered: Vec<String> = keys
        .into_iter()
        .filter(|key| answers.get(key).is_some())
        .collect();
    Ok(CallToolResult::text(format!(
        "Asked for and got: {}",
        answered.join(", ")
    )))
}

// ---------------------------------------------------------------------------
// Extra tools
// ---------------------------------------------------------------------------

/// The longest `slow` run accepted, in seconds.
const MAX_SLOW_SECONDS: u32 = 3600;

/// How often `slow` reports progress and checks for cancellation.
const SLOW_STEP: Duration = Duration::from_millis(100);

fn echo(_ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let text = required_str(&args, "text")?;
    Ok(CallToolResult::text(text))
}

fn slow(ctx: &RequestContext, args: JsonObject) -> Result<CallToolResult, Error> {
    let seconds = match args.get("seconds") {
        None | Some(Value::Null) => 10.0,
        Some(value) => value
            .as_f64()
            .ok_or_else(|| Error::invalid_params("\"seconds\" must be a number"))?,
    };
    if !(0.0..=f64::from(MAX_SLOW_SECONDS)).contains(&seconds) {
        return Err(Error::invalid_params(format!(
            "\"seconds\" must be between 0 and {}",
            MAX_SLOW_SECONDS
        )));
    }
    // At most 36,000 steps, so the cast cannot truncate.
    let steps = (seconds * 10.0).ceil() as u64;
    for step in 1..=steps {
        thread::sleep(SLOW_STEP);
        if let Err(err) = ctx.check_cancelled() {
            CANCELLED_HANDLERS.fetch_add(1, Ordering::SeqCst);
            return Err(err);
        }
        let message = format!("step {} of {}", step, steps);
        ctx.notify_progress(step as f64, Some(steps as f64), Some(&message));
    }
    if steps > 0 {
        let_final_progress_arrive(ctx);
    }
    Ok(CallToolResult::text(format!("done after {} s", seconds)))
}

fn session_info(ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    let mut info = JsonObject::new();
    info.insert(
        "clientInfo".into(),
        serde_json::to_value(ctx.client_info())?,
    );
    info.insert(
        "protocolVersion".into(),
        Value::from(ctx.protocol_version()),
    );
    info.insert(
        "clientCapabilities".into(),
        serde_json::to_value(ctx.client_capabilities())?,
    );
    info.insert(
        "cancelledHandlers".into(),
        Value::from(CANCELLED_HANDLERS.load(Ordering::SeqCst)),
    );
    info.insert("principal".into(), auth::principal_info(ctx));
    info.insert("instance".into(), Value::from(deploy::instance()));
    let text = serde_json::to_string_pretty(&Value::Object(info))?;
    Ok(CallToolResult::text(text))
}

fn notify_changed(ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    let server = ctx.server();
    server.notify_tools_list_changed();
    server.notify_prompts_list_changed();
    server.notify_resources_list_changed();
    server.notify_resource_updated(WATCHED_URI);
    Ok(CallToolResult::text("notifications sent"))
}

fn test_url_elicitation(ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    let id = new_elicitation_id();
    let params = ElicitRequestUrlParams::new(
        "Please open the link to authorize the demo session",
        AUTHORIZE_URL,
        id.as_str(),
    );
    let answer = ctx.elicit(params)?;
    // The user agreed to open the URL; this demo has nothing to wait for, so
    // the out-of-band interaction is complete at once.
    if answer.action == ElicitAction::Accept {
        ctx.notify_elicitation_complete(&id);
    }
    Ok(CallToolResult::text(format!(
        "URL elicitation {}: action={}",
        id,
        action_name(answer.action)
    )))
}

fn test_url_elicitation_required(
    _ctx: &RequestContext,
    _args: JsonObject,
) -> Result<CallToolResult, Error> {
    Err(Error::url_elicitation_required(vec![
        ElicitRequestUrlParams::new(
            "Authorization is required before this tool can run",
            AUTHORIZE_URL,
            new_elicitation_id(),
        ),
    ]))
}

fn test_roots(ctx: &RequestContext, _args: JsonObject) -> Result<CallToolResult, Error> {
    let roots = ctx.list_roots()?;
    let text = serde_json::to_string_pretty(&roots.roots)?;
    Ok(CallToolResult::text(text))
}

/// A fresh, unique elicitation id.
fn new_elicitation_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// How long to wait between the last progress notification and the result.
const PROGRESS_SETTLE: Duration = Duration::from_millis(50);

/// Pauses briefly after a request's last progress notification, so that
/// the notification reaches the client well before the result.
///
/// The server sends them in order, but the TypeScript SDK client (1.x)
/// handles notifications on a later microtask and responses at once: when
/// both arrive in one read, the response removes the progress handler first
/// and the notification is reported as "unknown token" and lost
/// (modelcontextprotocol/typescript-sdk#2580).
fn let_final_progress_arrive(ctx: &RequestContext) {
    if ctx.progress_token().is_some() {
        thread::sleep(PROGRESS_SETTLE);
    }
}

/// The string argument `name`; the schema already made it required.
fn required_str<'a>(args: &'a JsonObject, name: &str) -> Result<&'a str, Error> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_params(format!("missing string argument \"{}\"", name)))
}

// ---------------------------------------------------------------------------
// Resource template and prompts
// ---------------------------------------------------------------------------

fn read_template(
    _ctx: &RequestContext,
    uri: &str,
    variables: &TemplateVariables,
) -> Result<ReadResourceResult, Error> {
    let id = match variables.get("id") {
        Some(id) => id.as_str(),
        None => return Err(Error::resource_not_found(uri)),
    };
    // Written by hand to keep the key order of the reference server; the
    // values go through serde_json so any id is escaped properly.
    let text = format!(
        r#"{{"id":{},"templateTest":true,"data":{}}}"#,
        Value::from(id),
        Value::from(format!("Data for ID: {}", id))
    );
    Ok(ReadResourceResult::new(vec![ResourceContents::text(
        uri,
        "application/json",
        text,
    )]))
}

fn prompt_with_arguments(
    _ctx: &RequestContext,
    args: BTreeMap<String, String>,
) -> Result<GetPromptResult, Error> {
    let arg = |name: &str| args.get(name).map(String::as_str).unwrap_or_default();
    let text = format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        arg("arg1"),
        arg("arg2")
    );
    Ok(GetPromptResult::new(vec![PromptMessage::user(
        ContentBlock::text(text),
    )]))
}

fn prompt_with_embedded_resource(
    _ctx: &RequestContext,
    args: BTreeMap<String, String>,
) -> Result<GetPromptResult, Error> {
    let uri = args
        .get("resourceUri")
        .ok_or_else(|| Error::invalid_params("missing argument \"resourceUri\""))?;
    Ok(GetPromptResult::new(vec![
        PromptMessage::user(ContentBlock::resource(ResourceContents::text(
            uri.as_str(),
            "text/plain",
            "Embedded resource content for testing.",
        ))),
        PromptMessage::user(ContentBlock::text(
            "Please process the embedded resource above.",
        )),
    ]))
}

/// `prompts/get` with a multi round-trip request: asks for `user_context`,
/// then builds the prompt from the answer.
fn prompt_input_required(
    ctx: &RequestContext,
    _args: BTreeMap<String, String>,
) -> Result<GetPromptResult, Error> {
    let key = "user_context";
    let answers = ctx.request_inputs(vec![(
        key.into(),
        ask_for_string("What context should the prompt use?", "context"),
    )])?;
    let context = accepted_field(&answers.elicit_result(key)?, "context");
    let text = match context {
        Some(context) => format!("Answer with this context in mind: {}", context),
        None => "Answer without any particular context.".to_string(),
    };
    Ok(GetPromptResult::new(vec![PromptMessage::user(
        ContentBlock::text(text),
    )]))
}

// ---------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------

const ARG1_VALUES: &[&str] = &["testValue1", "testValue2", "alpha", "apple"];
const ARG2_VALUES: &[&str] = &["testValue1", "testValue2", "beta", "banana"];
const TEMPLATE_IDS: &[&str] = &["1", "2", "3", "42", "123"];

fn complete(_ctx: &RequestContext, params: CompleteRequestParams) -> Result<CompleteResult, Error> {
    let argument = params.argument.name.as_str();
    let candidates: &[&str] = match &params.reference {
        Reference::Prompt { name } if name == "test_prompt_with_arguments" => match argument {
            "arg1" => ARG1_VALUES,
            "arg2" => ARG2_VALUES,
            _ => &[],
        },
        Reference::Resource { uri } if uri == TEMPLATE_URI && argument == "id" => TEMPLATE_IDS,
        _ => &[],
    };
    let prefix = params.argument.value.as_str();
    let values = candidates
        .iter()
        .filter(|value| value.starts_with(prefix))
        .map(|value| value.to_string())
        .collect();
    Ok(CompleteResult::new(values))
}
