//! Interop server on rmcp (the official Rust MCP SDK) for tiny-mcp's
//! blocking client to drive (tests/fixtures/interop_client/, profile `rmcp`).
//!
//! ```text
//! rmcp-interop-server --stdio        serve over stdin/stdout
//! rmcp-interop-server --http PORT    serve Streamable HTTP on http://127.0.0.1:PORT/mcp
//! ```
//!
//! Tools: `echo {text}`, `add {a, b}`, `progress {steps}` (one progress
//! notification per step when the call has a progress token), `slow
//! {seconds}` (one progress notification, then waits for the seconds or
//! for the call's cancellation), `cancelled` (how many `slow` calls were
//! cancelled so far, in this process) and `fail` (isError). Resource
//! `interop://greeting` (text/plain); prompt `greet {name}`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{
    prompt, prompt_handler, prompt_router, schemars, tool, tool_handler, tool_router,
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt,
};

/// How many `slow` calls saw their cancellation.
static CANCELLED: AtomicUsize = AtomicUsize::new(0);

const GREETING: &str = "interop://greeting";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct StepsArgs {
    steps: u32,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SlowArgs {
    seconds: u64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    /// Whom to greet.
    name: String,
}

/// The server; rmcp's `#[tool_handler]` and `#[prompt_handler]` build its
/// routers from the `#[tool_router]` and `#[prompt_router]` blocks.
#[derive(Clone)]
struct Interop;

fn text(s: impl Into<String>) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s.into())]))
}

async fn report(ctx: &RequestContext<RoleServer>, progress: f64, total: f64) {
    if let Some(token) = ctx.meta.get_progress_token() {
        let param = ProgressNotificationParam::new(token, progress).with_total(total);
        let _ = ctx.peer.notify_progress(param).await;
    }
}

#[tool_router]
impl Interop {
    #[tool(description = "Returns `text` unchanged")]
    fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> Result<CallToolResult, McpError> {
        text(args.text)
    }

    #[tool(description = "Adds two numbers; the sum as text")]
    fn add(&self, Parameters(args): Parameters<AddArgs>) -> Result<CallToolResult, McpError> {
        let total = args.a + args.b;
        if total == total.trunc() {
            text(format!("{}", total as i64))
        } else {
            text(format!("{}", total))
        }
    }

    #[tool(description = "Reports `steps` progress notifications")]
    async fn progress(
        &self,
        Parameters(args): Parameters<StepsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        for i in 1..=args.steps {
            report(&ctx, f64::from(i), f64::from(args.steps)).await;
        }
        text(format!("did {} steps", args.steps))
    }

    #[tool(description = "One progress notification, then waits `seconds` or until cancelled")]
    async fn slow(
        &self,
        Parameters(args): Parameters<SlowArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        report(&ctx, 0.0, 1.0).await;
        tokio::select! {
            _ = ctx.ct.cancelled() => {
                CANCELLED.fetch_add(1, Ordering::SeqCst);
                text("cancelled")
            }
            _ = tokio::time::sleep(Duration::from_secs(args.seconds)) => {
                text(format!("slept {} s", args.seconds))
            }
        }
    }

    #[tool(description = "How many `slow` calls were cancelled so far")]
    fn cancelled(&self) -> Result<CallToolResult, McpError> {
        text(CANCELLED.load(Ordering::SeqCst).to_string())
    }

    #[tool(description = "Always fails: a result with isError true")]
    fn fail(&self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::error(vec![ContentBlock::text(
            "failed: as asked",
        )]))
    }
}

#[prompt_router]
impl Interop {
    /// A one-message prompt that greets `name`
    #[prompt(name = "greet")]
    async fn greet(
        &self,
        Parameters(args): Parameters<GreetArgs>,
    ) -> Result<Vec<PromptMessage>, McpError> {
        Ok(vec![PromptMessage::new_text(
            Role::User,
            format!("Please greet {}.", args.name),
        )])
    }
}

#[tool_handler]
#[prompt_handler]
impl ServerHandler for Interop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-interop-server", "3.11.0-interop"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resource = Resource::new(GREETING, "greeting").with_mime_type("text/plain");
        Ok(ListResourcesResult {
            resources: vec![resource],
            ..Default::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != GREETING {
            return Err(McpError::resource_not_found("no such resource", None));
        }
        let contents =
            ResourceContents::text("hello from rmcp", GREETING).with_mime_type("text/plain");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

async fn serve_http(port: u16) -> std::io::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpService,
    };
    let service = TowerToHyperService::new(StreamableHttpService::new(
        || Ok(Interop),
        LocalSessionManager::default().into(),
        Default::default(),
    ));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("rmcp-interop-server: http://127.0.0.1:{}/mcp", port);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let _ = Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn serve_stdio() -> std::io::Result<()> {
    let running = Interop
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rmcp-interop-server: {}", e);
            std::process::exit(1);
        }
    };
    let outcome = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--stdio"] => runtime.block_on(serve_stdio()),
        ["--http", port] => match port.parse() {
            Ok(port) => runtime.block_on(serve_http(port)),
            Err(_) => Err(std::io::Error::other("--http takes a port number")),
        },
        _ => Err(std::io::Error::other(
            "usage: rmcp-interop-server --stdio | --http PORT",
        )),
    };
    if let Err(e) = outcome {
        eprintln!("rmcp-interop-server: {}", e);
        std::process::exit(1);
    }
}
