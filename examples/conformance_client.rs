//! `conformance_client`: the client under test of the official MCP
//! conformance suite's client scenarios (npm `@modelcontextprotocol/conformance`),
//! built on [`tiny_mcp::Client`].
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance_client http://localhost:PORT/mcp
//! node dist/index.js client --command "target/debug/examples/conformance_client" \
//!     --scenario tools_call [--spec-version 2026-07-28]
//! ```
//!
//! The suite starts a scenario server and runs `<command> <serverUrl>` with
//! `MCP_CONFORMANCE_SCENARIO` set, `MCP_CONFORMANCE_PROTOCOL_VERSION` (the
//! spec version under test; pre-release suites) and, for some scenarios,
//! `MCP_CONFORMANCE_CONTEXT` (JSON). `scripts/check/conformance-client.sh` runs
//! every scenario.
//!
//! Each scenario does what a program using the library would do: connect,
//! list, call. Nothing works around the library: a missing feature shows up
//! as the suite's failed check. Beyond that, only what a real program does
//! with the public API: the auto-accepting elicitation handler fills the
//! form with the schema's `default`s (SEP-1034). (A 2025-11-25 HTTP client
//! with handlers opens its session's GET stream itself, so that server
//! requests sent outside any call reach them.) A watchdog ends a run that outlives
//! every request timeout, so that a hung call fails here, not in the suite.
//!
//! With `MCP_CONFORMANCE_PROTOCOL_VERSION` 2025-11-25 or 2026-07-28 the
//! client speaks only that era; without it (release 0.1.x) it negotiates
//! (`server/discover`, then `initialize`). Auth scenarios only use the
//! bearer-token provider (no OAuth flow): the token is
//! `MCP_CONFORMANCE_BEARER_TOKEN` if set, else none.
//!
//! Exit status: 0 when the scenario's steps succeeded, 1 otherwise (the
//! error on stderr), 2 for usage errors.

use std::env;
use std::process;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{
    Client, ClientBuilder, CreateMessageResult, ElicitRequestParams, ElicitResult, Era, Error,
    JsonObject, Root,
};

/// The tool the SEP-2322 scenario calls between two rounds of another call.
const MRTR_UNRELATED_TOOL: &str = "test_mrtr_unrelated";
/// How long each request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// When the whole run gives up (below the suite's 30 s per scenario, so
/// that a hung call is reported here rather than by the suite's kill).
const RUN_DEADLINE: Duration = Duration::from_secs(20);

/// What one run knows: the scenario, the server, the suite's extra inputs.
struct Run {
    scenario: String,
    url: String,
    era: Option<Era>,
    context: Value,
    /// Set after connecting, for handlers that call the server themselves.
    client: Arc<Mutex<Option<Arc<Client>>>>,
}

fn main() {
    let url = env::args().nth(1);
    let scenario = env::var("MCP_CONFORMANCE_SCENARIO").ok();
    let (url, scenario) = match (url, scenario) {
        (Some(url), Some(scenario)) => (url, scenario),
        _ => {
            eprintln!("usage: MCP_CONFORMANCE_SCENARIO=<name> conformance_client <serverUrl>");
            process::exit(2);
        }
    };
    let era = match env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok().as_deref() {
        Some("2026-07-28") => Some(Era::V2026_07_28),
        Some(_) => Some(Era::V2025_11_25),
        None => None,
    };
    let context = env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|raw| serde_json::from_str(&raw).ok())
        .unwrap_or(Value::Null);
    let run = Run {
        scenario,
        url,
        era,
        context,
        client: Arc::new(Mutex::new(None)),
    };
    watchdog(run.scenario.clone());
    match run_scenario(&run) {
        Ok(()) => eprintln!("conformance_client: {} done", run.scenario),
        Err(e) => {
            eprintln!("conformance_client: {}: {}", run.scenario, e);
            process::exit(1);
        }
    }
}

/// Ends the process after [`RUN_DEADLINE`]: a call the library does not
/// time out must not hold the suite (which waits for the client's pipes).
fn watchdog(scenario: String) {
    thread::spawn(move || {
        thread::sleep(RUN_DEADLINE);
        eprintln!(
            "conformance_client: {}: still running after {:?} (a call did not return \
             within its {:?} request timeout); giving up",
            scenario, RUN_DEADLINE, REQUEST_TIMEOUT
        );
        process::exit(1);
    });
}

fn run_scenario(run: &Run) -> Result<(), Error> {
    if run.scenario.starts_with("auth/") {
        return auth(run);
    }
    let client = connect(run)?;
    match run.scenario.as_str() {
        "request-metadata" | "json-schema-ref-no-deref" => client.list_tools().map(|_| ()),
        "http-standard-headers" => exercise_everything(&client),
        "http-custom-headers" => custom_headers(&client, &run.context),
        "json-schema-2020-12-preservation" => echo_schema(&client),
        // initialize, tools_call, elicitation-sep1034-client-defaults,
        // sse-retry, sep-2322-client-request-state,
        // http-invalid-tool-headers, and anything new.
        _ => call_listed_tools(&client),
    }
}

/// The builder every scenario starts from: who the client is, and
/// handlers for every server request, so that every capability is
/// declared.
fn builder(run: &Run) -> ClientBuilder {
    let slot = Arc::clone(&run.client);
    let mrtr = run.scenario == "sep-2322-client-request-state";
    let builder = Client::builder("tiny-mcp-conformance-client", env!("CARGO_PKG_VERSION"))
        .request_timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(5))
        .on_elicitation(move |request| {
            if mrtr {
                call_unrelated_tool(&slot);
            }
            Ok(accept_with_defaults(&request))
        })
        .on_sampling(|_params| {
            Ok(CreateMessageResult::assistant_text(
                "a canned answer from the conformance client",
                "conformance-model",
            ))
        })
        .roots(vec![Root::new("file:///tmp").with_name("tmp")]);
    match run.era {
        Some(era) => builder.era(era),
        None => builder,
    }
}

fn connect(run: &Run) -> Result<Arc<Client>, Error> {
    let client = Arc::new(builder(run).connect_http(&run.url)?);
    eprintln!(
        "conformance_client: connected, {} ({:?})",
        client.protocol_version(),
        client.server_info().map(|i| i.name.as_str())
    );
    if let Ok(mut slot) = run.client.lock() {
        *slot = Some(Arc::clone(&client));
    }
    Ok(client)
}

/// An auto-accepting elicitation handler: a form is answered with the
/// schema's defaults (SEP-1034: the fields the user left alone); a URL
/// is declined, as nobody is there to open it.
fn accept_with_defaults(request: &ElicitRequestParams) -> ElicitResult {
    match request {
        ElicitRequestParams::Form(form) => ElicitResult::accept(Some(form.default_values())),
        _ => ElicitResult::decline(),
    }
}

/// SEP-2322 "parallel isolation": while one call waits for input, the
/// program makes another, unrelated call, which must carry neither the
/// first call's `inputResponses` nor its `requestState`.
fn call_unrelated_tool(slot: &Mutex<Option<Arc<Client>>>) {
    let client = match slot.lock() {
        Ok(slot) => slot.clone(),
        Err(_) => None,
    };
    if let Some(client) = client {
        if let Err(e) = client.call_tool(MRTR_UNRELATED_TOOL, json!({})) {
            eprintln!("conformance_client: {}: {}", MRTR_UNRELATED_TOOL, e);
        }
    }
}

/// Lists the tools and calls each one (except the SEP-2322 one called
/// between rounds), with arguments made from its input schema.
fn call_listed_tools(client: &Client) -> Result<(), Error> {
    let tools = client.list_tools()?;
    eprintln!("conformance_client: {} tools", tools.len());
    for tool in tools.iter().filter(|t| t.name != MRTR_UNRELATED_TOOL) {
        let result = client.call_tool(&tool.name, sample_arguments(&tool.input_schema))?;
        eprintln!(
            "conformance_client: {} -> isError {:?}",
            tool.name, result.is_error
        );
    }
    Ok(())
}

/// Arguments a schema accepts: each property's `default`, else a value
/// of its `type`.
fn sample_arguments(schema: &JsonObject) -> Value {
    let mut arguments = JsonObject::new();
    let properties = match schema.get("properties").and_then(Value::as_object) {
        Some(properties) => properties,
        None => return Value::Object(arguments),
    };
    for (name, property) in properties {
        let value = match property.get("default") {
            Some(default) => default.clone(),
            None => match property.get("type").and_then(Value::as_str) {
                Some("string") => json!("example"),
                Some("integer") => json!(2),
                Some("number") => json!(3),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => continue,
            },
        };
        arguments.insert(name.clone(), value);
    }
    Value::Object(arguments)
}

/// Every list and every item: tools called, resources read, prompts got.
fn exercise_everything(client: &Client) -> Result<(), Error> {
    call_listed_tools(client)?;
    for resource in client.list_resources()? {
        client.read_resource(&resource.uri)?;
    }
    for prompt in client.list_prompts()? {
        client.get_prompt(&prompt.name, &[])?;
    }
    Ok(())
}

/// SEP-2243: the context names the calls to make (with values that test
/// the `Mcp-Param-*` encodings); the tools are listed first, as a program
/// learns their schemas before calling them.
fn custom_headers(client: &Client, context: &Value) -> Result<(), Error> {
    let tools = client.list_tools()?;
    let calls = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::msg("MCP_CONFORMANCE_CONTEXT has no toolCalls"))?;
    for call in calls {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("");
        if !tools.iter().any(|t| t.name == name) {
            return Err(Error::msg(format!("the server does not list {:?}", name)));
        }
        let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
        client.call_tool(name, arguments)?;
    }
    Ok(())
}

/// SEP-1613: sends the focal tool's input schema, as the client holds it,
/// back through the echo tool; the scenario diffs it with what it served.
fn echo_schema(client: &Client) -> Result<(), Error> {
    let tools = client.list_tools()?;
    let focal = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .ok_or_else(|| Error::msg("json_schema_2020_12_tool is not listed"))?;
    let schema = Value::Object(focal.input_schema.clone());
    client.call_tool("json_schema_echo", json!({ "schema": schema }))?;
    Ok(())
}

/// Auth scenarios with only the bearer-token provider: no OAuth discovery,
/// registration or token request. A 401/403 is reported with the server's
/// challenge (what an OAuth layer on top of the library would start from).
fn auth(run: &Run) -> Result<(), Error> {
    let token = env::var("MCP_CONFORMANCE_BEARER_TOKEN").ok();
    let client = builder(run)
        .bearer_token(move || token.clone())
        .connect_http(&run.url)?;
    client.list_tools()?;
    client.call_tool("test-tool", json!({}))?;
    Ok(())
}
