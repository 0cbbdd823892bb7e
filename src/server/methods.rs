//! The method table: everything the crate knows about each request method,
//! one row per method, in the order of the spec's pages.
//!
//! Both eras and every transport dispatch through [`METHODS`]: the
//! dispatcher reads the era, gate and threading columns, the 2026-07-28
//! HTTP header checks read `mcp_name`, the worker reads `asks_input`, and
//! result decoration reads `cacheable`. Adding a method (the tasks methods,
//! an extension's) is one row plus its handler function. Method names
//! appear only here and in `protocol::methods`.
//!
//! The model is rust-analyzer's dispatcher, where each line names a method
//! and its threading policy; here the line is data (DESIGN.md §12).

use serde_json::Value;

use super::context::MethodTraits;
use super::inner::ServerInner;
use super::reply::{InlineFn, WorkerFn};
use super::scopes::Offer;
use super::{calls, inline, skills, tasks, upstream};
use crate::protocol::{methods as m, Era, ServerCapabilities};

/// One method.
pub(crate) struct Method {
    /// As the spec spells it, e.g. `tools/call`.
    pub(crate) name: &'static str,
    /// The eras it exists in; in any other era it is `-32601` (REM-1).
    pub(crate) eras: Eras,
    /// What must be offered for it to exist in the 2025-11-25 era; when
    /// closed, `-32601`.
    pub(crate) gate_2025: Gate,
    /// The same for the 2026-07-28 era (MOD-3: a method whose capability
    /// the server did not declare does not exist).
    pub(crate) gate_2026: Gate,
    /// Where it is answered.
    pub(crate) runs: Runs,
    /// Answered before `initialize` in the 2025-11-25 era (LC-1); every
    /// other request then gets `-32600`.
    pub(crate) before_initialize: bool,
    /// The params field that the `Mcp-Name` header mirrors on 2026-07-28
    /// HTTP (HTTP-6), if any.
    pub(crate) mcp_name: Option<&'static str>,
    /// The `x-mcp-header` properties of its tool's arguments are mirrored
    /// in `Mcp-Param-*` headers on 2026-07-28 HTTP (HTTP-4).
    pub(crate) mcp_params: bool,
    /// Its handler may answer `input_required` (MRTR-1).
    pub(crate) asks_input: bool,
    /// Its 2026-07-28 result carries `ttlMs` and `cacheScope` (CACHE-1).
    pub(crate) cacheable: bool,
    /// What it acts on, for the scopes it needs (basic/authorization,
    /// "Scope Challenge Handling"): a tool, prompt or resource named in
    /// its params, the prompt or template a completion refers to, or the
    /// resources a listen stream subscribes to.
    pub(crate) offer: Option<Offer>,
    /// What a server with an [`Upstream`](super::Upstream) does with it
    /// (DESIGN.md §25).
    pub(crate) proxied: Proxied,
}

/// What a server that forwards its sessions to an upstream does with a
/// method: most go to [`Upstream::forward`](super::Upstream::forward).
#[derive(Clone, Copy)]
pub(crate) enum Proxied {
    /// On a worker, to `Upstream::forward` (also a method with no row).
    Forward,
    /// As its row says, here (`ping`, listen streams).
    Here,
    /// Answered on the reading thread by this function instead.
    Answer(upstream::OpenFn),
}

/// The eras a method exists in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Eras {
    v2025: bool,
    v2026: bool,
}

impl Eras {
    const BOTH: Eras = Eras {
        v2025: true,
        v2026: true,
    };
    const V2025_11_25: Eras = Eras {
        v2025: true,
        v2026: false,
    };
    const V2026_07_28: Eras = Eras {
        v2025: false,
        v2026: true,
    };

    /// `true` if the method exists in `era`.
    pub(crate) fn contain(self, era: Era) -> bool {
        match era {
            Era::V2025_11_25 => self.v2025,
            Era::V2026_07_28 => self.v2026,
        }
    }
}

/// What a method needs the server to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Nothing: the method always exists.
    Open,
    /// The `tools` capability.
    Tools,
    /// The `prompts` capability.
    Prompts,
    /// The `resources` capability.
    Resources,
    /// The `completions` capability and a completion handler.
    Completions,
    /// A completion handler (whatever the declared capabilities say).
    CompletionHandler,
    /// Tasks: `capabilities.tasks` (2025-11-25) or the tasks extension
    /// (2026-07-28) declared.
    Tasks,
    /// The skills extension declared (SEP-2640).
    Skills,
}

impl Gate {
    /// `true` when `server` offers what the gate needs.
    pub(crate) fn is_open(self, server: &ServerInner) -> bool {
        let declared = |kind: fn(&ServerCapabilities) -> bool| server.with_capabilities(kind);
        match self {
            Gate::Open => true,
            Gate::Tools => declared(|c| c.tools.is_some()),
            Gate::Prompts => declared(|c| c.prompts.is_some()),
            Gate::Resources => declared(|c| c.resources.is_some()),
            Gate::Completions => {
                server.registry.read().completes() && declared(|c| c.completions.is_some())
            }
            Gate::CompletionHandler => server.registry.read().completes(),
            Gate::Skills => declared(|c| c.declares_extension(crate::protocol::extensions::SKILLS)),
            Gate::Tasks => declared(|c| {
                c.tasks.is_some() || c.declares_extension(crate::protocol::extensions::TASKS)
            }),
        }
    }
}

/// Where a method is answered.
#[derive(Clone, Copy)]
pub(crate) enum Runs {
    /// On the reading thread, at once: cheap and never blocks.
    Inline(InlineFn),
    /// On a worker: it runs a program's handler. Entered in the in-flight
    /// table on the reading thread, so a cancel that follows finds it.
    Worker(WorkerFn),
    /// Opens a `subscriptions/listen` stream (2026-07-28).
    Listen,
}

/// Shorthand for the rows below.
const fn row(name: &'static str, eras: Eras, runs: Runs) -> Method {
    Method {
        name,
        eras,
        gate_2025: Gate::Open,
        gate_2026: Gate::Open,
        runs,
        before_initialize: false,
        mcp_name: None,
        mcp_params: false,
        asks_input: false,
        cacheable: false,
        offer: None,
        proxied: Proxied::Forward,
    }
}

/// The row of a method no row names, forwarded by a server with an
/// upstream: its empty name stands for the request's own.
pub(crate) static FORWARDED: Method = row("", Eras::BOTH, Runs::Worker(upstream::forward));

/// Every method a client may call, in the order of the spec's pages:
/// lifecycle, utilities, tools, resources, prompts, completion, logging,
/// then the methods new in 2026-07-28.
pub(crate) const METHODS: &[Method] = &[
    Method {
        before_initialize: true,
        proxied: Proxied::Answer(upstream::initialize),
        ..row(
            m::INITIALIZE,
            Eras::V2025_11_25,
            Runs::Inline(inline::initialize),
        )
    },
    Method {
        before_initialize: true,
        proxied: Proxied::Here,
        ..row(m::PING, Eras::V2025_11_25, Runs::Inline(inline::ping))
    },
    Method {
        gate_2026: Gate::Tools,
        cacheable: true,
        ..row(m::TOOLS_LIST, Eras::BOTH, Runs::Inline(inline::list_tools))
    },
    Method {
        gate_2026: Gate::Tools,
        mcp_name: Some("name"),
        mcp_params: true,
        asks_input: true,
        offer: Some(Offer::Tool),
        ..row(m::TOOLS_CALL, Eras::BOTH, Runs::Worker(calls::call_tool))
    },
    Method {
        gate_2026: Gate::Resources,
        cacheable: true,
        ..row(
            m::RESOURCES_LIST,
            Eras::BOTH,
            Runs::Worker(super::provider::list_resources),
        )
    },
    Method {
        gate_2026: Gate::Resources,
        cacheable: true,
        ..row(
            m::RESOURCES_TEMPLATES_LIST,
            Eras::BOTH,
            Runs::Inline(inline::list_templates),
        )
    },
    Method {
        gate_2026: Gate::Resources,
        mcp_name: Some("uri"),
        asks_input: true,
        cacheable: true,
        offer: Some(Offer::Resource),
        ..row(
            m::RESOURCES_READ,
            Eras::BOTH,
            Runs::Worker(calls::read_resource),
        )
    },
    Method {
        gate_2025: Gate::Resources,
        offer: Some(Offer::Resource),
        ..row(
            m::RESOURCES_SUBSCRIBE,
            Eras::V2025_11_25,
            Runs::Inline(inline::subscribe),
        )
    },
    Method {
        gate_2025: Gate::Resources,
        ..row(
            m::RESOURCES_UNSUBSCRIBE,
            Eras::V2025_11_25,
            Runs::Inline(inline::unsubscribe),
        )
    },
    Method {
        gate_2026: Gate::Prompts,
        cacheable: true,
        ..row(
            m::PROMPTS_LIST,
            Eras::BOTH,
            Runs::Inline(inline::list_prompts),
        )
    },
    Method {
        gate_2026: Gate::Prompts,
        mcp_name: Some("name"),
        asks_input: true,
        offer: Some(Offer::Prompt),
        ..row(m::PROMPTS_GET, Eras::BOTH, Runs::Worker(calls::get_prompt))
    },
    Method {
        gate_2025: Gate::CompletionHandler,
        gate_2026: Gate::Completions,
        offer: Some(Offer::Reference),
        ..row(
            m::COMPLETION_COMPLETE,
            Eras::BOTH,
            Runs::Worker(super::complete::complete),
        )
    },
    row(
        m::LOGGING_SET_LEVEL,
        Eras::V2025_11_25,
        Runs::Inline(inline::set_level),
    ),
    Method {
        cacheable: true,
        ..row(
            m::SERVER_DISCOVER,
            Eras::V2026_07_28,
            Runs::Inline(inline::discover),
        )
    },
    Method {
        offer: Some(Offer::Subscriptions),
        proxied: Proxied::Here,
        ..row(m::SUBSCRIPTIONS_LISTEN, Eras::V2026_07_28, Runs::Listen)
    },
    // Tasks: basic/utilities/tasks (2025-11-25), SEP-2663 (2026-07-28).
    task_row(
        m::TASKS_GET,
        Eras::V2025_11_25,
        Runs::Inline(tasks::get_2025),
    ),
    task_row(
        m::TASKS_RESULT,
        Eras::V2025_11_25,
        Runs::Worker(tasks::result),
    ),
    task_row(m::TASKS_LIST, Eras::V2025_11_25, Runs::Inline(tasks::list)),
    task_row(
        m::TASKS_CANCEL,
        Eras::V2025_11_25,
        Runs::Inline(tasks::cancel_2025),
    ),
    Method {
        mcp_name: Some("taskId"),
        ..task_row(
            m::TASKS_GET,
            Eras::V2026_07_28,
            Runs::Inline(tasks::get_2026),
        )
    },
    Method {
        mcp_name: Some("taskId"),
        ..task_row(
            m::TASKS_UPDATE,
            Eras::V2026_07_28,
            Runs::Inline(tasks::update),
        )
    },
    Method {
        mcp_name: Some("taskId"),
        ..task_row(
            m::TASKS_CANCEL,
            Eras::V2026_07_28,
            Runs::Inline(tasks::cancel_2026),
        )
    },
    // Skills: SEP-2640 (the io.modelcontextprotocol/skills extension).
    Method {
        gate_2026: Gate::Skills,
        cacheable: true,
        ..row(
            m::SKILLS_LIST,
            Eras::V2026_07_28,
            Runs::Inline(skills::list),
        )
    },
    Method {
        gate_2026: Gate::Skills,
        cacheable: true,
        ..row(m::SKILLS_GET, Eras::V2026_07_28, Runs::Inline(skills::get))
    },
    Method {
        gate_2026: Gate::Skills,
        ..row(
            m::RESOURCES_DIRECTORY_READ,
            Eras::V2026_07_28,
            Runs::Inline(skills::read_directory),
        )
    },
];

/// A `tasks/*` row: it exists while tasks are declared.
const fn task_row(name: &'static str, eras: Eras, runs: Runs) -> Method {
    Method {
        gate_2025: Gate::Tasks,
        gate_2026: Gate::Tasks,
        ..row(name, eras, runs)
    }
}

/// The row of `name` in `era`; `None` when the method does not exist there.
pub(crate) fn find(name: &str, era: Era) -> Option<&'static Method> {
    METHODS
        .iter()
        .find(|method| method.name == name && method.eras.contain(era))
}

/// The params field `Mcp-Name` mirrors for `name` (2026-07-28 HTTP).
pub(crate) fn mcp_name_field(name: &str) -> Option<&'static str> {
    find(name, Era::V2026_07_28).and_then(|method| method.mcp_name)
}

/// `true` when `name`'s `Mcp-Param-*` headers are checked (2026-07-28 HTTP).
pub(crate) fn has_mcp_params(name: &str) -> bool {
    find(name, Era::V2026_07_28).map_or(false, |method| method.mcp_params)
}

/// What a request for `name` acts on, in whichever era has the method.
pub(crate) fn offer_of(name: &str) -> Option<Offer> {
    METHODS
        .iter()
        .find(|method| method.name == name)
        .and_then(|method| method.offer)
}

/// The scopes a request for `name` with `params` needs: the server-wide
/// ones, then those of the tool, prompt or resource it acts on (its row's
/// `offer`). HTTP's second registry question, asked before the request is
/// dispatched.
pub(crate) fn scopes_needed(
    server: &ServerInner,
    name: &str,
    params: Option<&Value>,
) -> Vec<String> {
    let offer = offer_of(name);
    server.scopes.needed(&server.registry.read(), offer, params)
}

/// `true` when `name` opens a listen stream (2026-07-28).
pub(crate) fn opens_listen(name: &str) -> bool {
    find(name, Era::V2026_07_28).map_or(false, |method| matches!(method.runs, Runs::Listen))
}

impl Method {
    /// The columns a handler's run reads.
    pub(crate) fn traits(&self) -> MethodTraits {
        MethodTraits {
            name: self.name,
            cacheable: self.cacheable,
            asks_input: self.asks_input,
        }
    }

    /// The gate of this method in `era`.
    pub(crate) fn gate(&self, era: Era) -> Gate {
        match era {
            Era::V2025_11_25 => self.gate_2025,
            Era::V2026_07_28 => self.gate_2026,
        }
    }
}

#[cfg(test)]
mod tests {
    //! One test per column of the table: a method answers as its row says.

    use std::sync::Arc;

    use crossbeam_channel::Receiver;
    use serde_json::{json, Value};

    use super::*;
    use crate::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
    use crate::server::caller::Caller;
    use crate::server::context::RequestContext;
    use crate::server::session::Session;
    use crate::server::{ChannelSink, Received, Sink};
    use crate::{
        CallToolResult, CompleteResult, ElicitRequestFormParams, JsonObject, Server, Tool,
    };

    const META_2026: &str = r#"{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}"#;

    /// A server with one tool that asks for input, and a completion handler
    /// that does the same.
    fn server() -> Server {
        Server::builder("table", "1")
            .tool(
                Tool::new("ask", json!({"type": "object"})),
                |ctx: &RequestContext, _: JsonObject| {
                    let form = ElicitRequestFormParams::new("name?", json!({"type": "object"}));
                    ctx.elicit(form)?;
                    Ok(CallToolResult::text("done"))
                },
            )
            .completion(|ctx: &RequestContext, _| {
                let form = ElicitRequestFormParams::new("name?", json!({"type": "object"}));
                ctx.elicit(form)?;
                Ok(CompleteResult::default())
            })
            .build()
    }

    /// A message from a client without a known sender, as stdio reads one.
    fn receive(session: &Arc<Session>, message: Message, sink: &Arc<dyn Sink>) -> Received {
        crate::server::dispatch::receive(session, message, sink, Caller::default())
    }

    fn connect(server: &Server) -> (Arc<Session>, Arc<dyn Sink>, Receiver<Message>) {
        let (sender, receiver) = crossbeam_channel::unbounded();
        let sink: Arc<dyn Sink> = Arc::new(ChannelSink(sender));
        let session = Session::connection(&server.inner, Arc::clone(&sink));
        (session, sink, receiver)
    }

    fn request(id: i64, method: &str, params: Value) -> Message {
        Message::request(RequestId::Number(id), method, Some(params))
    }

    fn request_2026(id: i64, method: &str, mut params: Value) -> Message {
        params["_meta"] = serde_json::from_str(META_2026).unwrap();
        request(id, method, params)
    }

    fn initialize(session: &Arc<Session>, sink: &Arc<dyn Sink>) {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}});
        assert!(matches!(
            receive(session, request(0, "initialize", params), sink),
            Received::Answered(r) if r.outcome.is_ok()
        ));
    }

    /// The answer of an inline method; panics on any other outcome.
    fn answer(received: Received) -> Result<Value, ErrorObject> {
        match received {
            Received::Answered(response) => response.outcome,
            _ => panic!("expected an inline answer"),
        }
    }

    /// Runs a worker method's job here and returns its response.
    fn run(received: Received, receiver: &Receiver<Message>) -> Result<Value, ErrorObject> {
        match received {
            Received::Run(job) => job.run(),
            _ => panic!("expected a job"),
        }
        loop {
            match receiver.try_recv() {
                Ok(Message::Response(r)) => return r.outcome,
                Ok(_) => continue,
                Err(_) => panic!("the job wrote no response"),
            }
        }
    }

    // Column `name`: every row is a spec method name, once per era.
    #[test]
    fn names_are_unique_per_era() {
        for era in [Era::V2025_11_25, Era::V2026_07_28] {
            let names: Vec<&str> = METHODS
                .iter()
                .filter(|m| m.eras.contain(era))
                .map(|m| m.name)
                .collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(names.len(), unique.len(), "duplicate rows in {:?}", era);
        }
        assert_eq!(
            find(m::TOOLS_CALL, Era::V2025_11_25).map(|r| r.name),
            Some("tools/call")
        );
        // tasks::wire::create_result decorates a task's result as not
        // cacheable, since a task stands for a tools/call.
        assert_eq!(
            find(m::TOOLS_CALL, Era::V2026_07_28).map(|r| r.cacheable),
            Some(false)
        );
    }

    // Column `eras` (REM-1, ERA-6): ping exists only in 2025-11-25,
    // server/discover only in 2026-07-28; elsewhere -32601.
    #[test]
    fn eras_decide_existence() {
        let server = server();
        let (session, sink, _rx) = connect(&server);
        initialize(&session, &sink);
        let err = answer(receive(
            &session,
            request(1, m::SERVER_DISCOVER, json!({})),
            &sink,
        ));
        assert_eq!(err.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
        let (session, sink, _rx) = connect(&server);
        let err = answer(receive(
            &session,
            request_2026(1, m::PING, json!({})),
            &sink,
        ));
        assert_eq!(err.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
        let ok = answer(receive(
            &session,
            request_2026(2, m::SERVER_DISCOVER, json!({})),
            &sink,
        ));
        assert_eq!(ok.unwrap()["supportedVersions"], json!(["2026-07-28"]));
    }

    // Columns `gate_2025` and `gate_2026` (MOD-3): without prompts,
    // prompts/list is an empty list in 2025-11-25 and -32601 in 2026-07-28.
    #[test]
    fn gates_differ_by_era() {
        let server = server();
        let (session, sink, _rx) = connect(&server);
        initialize(&session, &sink);
        let ok = answer(receive(
            &session,
            request(1, m::PROMPTS_LIST, json!({})),
            &sink,
        ));
        assert_eq!(ok.unwrap()["prompts"], json!([]));
        let (session, sink, _rx) = connect(&server);
        let err = answer(receive(
            &session,
            request_2026(1, m::PROMPTS_LIST, json!({})),
            &sink,
        ));
        assert_eq!(err.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(
            find(m::RESOURCES_SUBSCRIBE, Era::V2025_11_25).map(|r| r.gate_2025),
            Some(Gate::Resources)
        );
    }

    // Column `runs`: lists inline, handlers on a worker, listen a stream.
    #[test]
    fn runs_say_where_a_method_is_answered() {
        let server = server();
        let (session, sink, _rx) = connect(&server);
        let listed = receive(&session, request_2026(1, m::TOOLS_LIST, json!({})), &sink);
        assert!(matches!(listed, Received::Answered(_)));
        let call = request_2026(2, m::TOOLS_CALL, json!({"name": "ask"}));
        assert!(matches!(receive(&session, call, &sink), Received::Run(_)));
        let listen = request_2026(3, m::SUBSCRIPTIONS_LISTEN, json!({"notifications": {}}));
        assert!(matches!(
            receive(&session, listen, &sink),
            Received::Listening(_)
        ));
    }

    // Column `before_initialize` (LC-1): ping before initialize is
    // answered; tools/list is -32600.
    #[test]
    fn only_the_handshake_and_ping_precede_initialize() {
        let server = server();
        let (session, sink, _rx) = connect(&server);
        assert!(answer(receive(&session, request(1, m::PING, json!({})), &sink)).is_ok());
        let err = answer(receive(
            &session,
            request(2, m::TOOLS_LIST, json!({})),
            &sink,
        ));
        assert_eq!(err.unwrap_err().code, ErrorCode::INVALID_REQUEST);
    }

    // Columns `mcp_name` (HTTP-6) and `mcp_params` (HTTP-4): the params
    // field Mcp-Name mirrors, and the one method with Mcp-Param-* headers.
    #[test]
    fn mcp_name_fields() {
        assert!(has_mcp_params(m::TOOLS_CALL));
        assert!(!has_mcp_params(m::PROMPTS_GET));
        assert!(opens_listen(m::SUBSCRIPTIONS_LISTEN) && !opens_listen(m::TOOLS_CALL));
        assert_eq!(mcp_name_field(m::TOOLS_CALL), Some("name"));
        assert_eq!(mcp_name_field(m::PROMPTS_GET), Some("name"));
        assert_eq!(mcp_name_field(m::RESOURCES_READ), Some("uri"));
        assert_eq!(mcp_name_field(m::TOOLS_LIST), None);
        assert_eq!(mcp_name_field(m::PING), None);
    }

    // Column `asks_input` (MRTR-1): a tool's elicit becomes input_required;
    // a completion handler's does not.
    #[test]
    fn only_rows_that_ask_answer_input_required() {
        let server = server();
        let (session, sink, rx) = connect(&server);
        let call = request_2026(1, m::TOOLS_CALL, json!({"name": "ask"}));
        let result = run(receive(&session, call, &sink), &rx).unwrap();
        assert_eq!(result["resultType"], "input_required");
        let complete = request_2026(
            2,
            m::COMPLETION_COMPLETE,
            json!({"ref": {"type": "ref/prompt", "name": "p"},
                   "argument": {"name": "a", "value": ""}}),
        );
        let err = run(receive(&session, complete, &sink), &rx).unwrap_err();
        assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
    }

    // Column `cacheable` (CACHE-1): lists carry ttlMs and cacheScope;
    // input_required and tool results do not, though all carry resultType.
    #[test]
    fn only_cacheable_results_carry_cache_hints() {
        let server = server();
        let (session, sink, rx) = connect(&server);
        let listed = answer(receive(
            &session,
            request_2026(1, m::TOOLS_LIST, json!({})),
            &sink,
        ));
        let listed = listed.unwrap();
        assert_eq!(
            (listed["ttlMs"].clone(), listed["cacheScope"].clone()),
            (json!(0), json!("private"))
        );
        let call = request_2026(2, m::TOOLS_CALL, json!({"name": "ask"}));
        let asked = run(receive(&session, call, &sink), &rx).unwrap();
        assert!(asked.get("ttlMs").is_none(), "{}", asked);
        assert!(asked["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    }
}
