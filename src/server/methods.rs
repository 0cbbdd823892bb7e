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
//! and its threading policy; here the line is data (DESIGN.md §11).

use serde_json::Value;

use super::context::RequestContext;
use super::{inline, run, ServerInner};
use crate::jsonrpc::ErrorObject;
use crate::protocol::{methods as m, Era};
use crate::session::Session;

/// What an inline answer or a handler run produced.
pub(crate) type Answer = Result<Value, ErrorObject>;

/// How a handler run ended, short of a result.
pub(crate) enum Failure {
    /// Send this error.
    Rpc(ErrorObject),
    /// Answer `input_required` (2026-07-28, MRTR-1).
    InputRequired,
}

impl From<ErrorObject> for Failure {
    fn from(e: ErrorObject) -> Self {
        Failure::Rpc(e)
    }
}

/// One method.
pub(crate) struct Method {
    /// As the spec spells it, e.g. `tools/call`.
    pub(crate) name: &'static str,
    /// The eras it exists in; in any other era it is `-32601` (REM-1).
    pub(crate) eras: Eras,
    /// What must be offered for it to exist in the 2025-11-25 era; when
    /// closed, `-32601`.
    pub(crate) legacy_gate: Gate,
    /// The same for the 2026-07-28 era (MOD-4: a method whose capability
    /// the server did not declare does not exist).
    pub(crate) modern_gate: Gate,
    /// Where it is answered.
    pub(crate) runs: Runs,
    /// Answered before `initialize` in the 2025-11-25 era (LC-4); every
    /// other request then gets `-32600`.
    pub(crate) before_initialize: bool,
    /// The params field that the `Mcp-Name` header mirrors on 2026-07-28
    /// HTTP (HTTP-6), if any.
    pub(crate) mcp_name: Option<&'static str>,
    /// Its handler may answer `input_required` (MRTR-1).
    pub(crate) asks_input: bool,
    /// Its 2026-07-28 result carries `ttlMs` and `cacheScope` (CACHE-1).
    pub(crate) cacheable: bool,
}

/// The eras a method exists in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Eras {
    legacy: bool,
    modern: bool,
}

impl Eras {
    const BOTH: Eras = Eras {
        legacy: true,
        modern: true,
    };
    const LEGACY: Eras = Eras {
        legacy: true,
        modern: false,
    };
    const MODERN: Eras = Eras {
        legacy: false,
        modern: true,
    };

    /// `true` if the method exists in `era`.
    pub(crate) fn contain(self, era: Era) -> bool {
        match era {
            Era::V2025_11_25 => self.legacy,
            Era::V2026_07_28 => self.modern,
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
}

impl Gate {
    /// `true` when `server` offers what the gate needs.
    pub(crate) fn is_open(self, server: &ServerInner) -> bool {
        let caps = &server.capabilities;
        match self {
            Gate::Open => true,
            Gate::Tools => caps.tools.is_some(),
            Gate::Prompts => caps.prompts.is_some(),
            Gate::Resources => caps.resources.is_some(),
            Gate::Completions => caps.completions.is_some() && server.completion.is_some(),
            Gate::CompletionHandler => server.completion.is_some(),
        }
    }
}

/// Where a method is answered.
#[derive(Clone, Copy)]
pub(crate) enum Runs {
    /// On the reading thread, at once: cheap and never blocks.
    Inline(fn(&Session, Option<Value>) -> Answer),
    /// On a worker: it runs a program's handler. Entered in the in-flight
    /// table on the reading thread, so a cancel that follows finds it.
    Worker(WorkerFn),
    /// Opens a `subscriptions/listen` stream (2026-07-28).
    Listen,
}

/// A handler call run on a worker.
pub(crate) type WorkerFn = fn(&RequestContext, Option<Value>) -> Result<Value, Failure>;

/// Shorthand for the rows below.
const fn row(name: &'static str, eras: Eras, runs: Runs) -> Method {
    Method {
        name,
        eras,
        legacy_gate: Gate::Open,
        modern_gate: Gate::Open,
        runs,
        before_initialize: false,
        mcp_name: None,
        asks_input: false,
        cacheable: false,
    }
}

/// Every method a client may call, in the order of the spec's pages:
/// lifecycle, utilities, tools, resources, prompts, completion, logging,
/// then the methods new in 2026-07-28.
pub(crate) const METHODS: &[Method] = &[
    Method {
        before_initialize: true,
        ..row(
            m::INITIALIZE,
            Eras::LEGACY,
            Runs::Inline(inline::initialize),
        )
    },
    Method {
        before_initialize: true,
        ..row(m::PING, Eras::LEGACY, Runs::Inline(inline::ping))
    },
    Method {
        modern_gate: Gate::Tools,
        cacheable: true,
        ..row(m::TOOLS_LIST, Eras::BOTH, Runs::Inline(inline::list_tools))
    },
    Method {
        modern_gate: Gate::Tools,
        mcp_name: Some("name"),
        asks_input: true,
        ..row(m::TOOLS_CALL, Eras::BOTH, Runs::Worker(run::call_tool))
    },
    Method {
        modern_gate: Gate::Resources,
        cacheable: true,
        ..row(
            m::RESOURCES_LIST,
            Eras::BOTH,
            Runs::Inline(inline::list_resources),
        )
    },
    Method {
        modern_gate: Gate::Resources,
        cacheable: true,
        ..row(
            m::RESOURCES_TEMPLATES_LIST,
            Eras::BOTH,
            Runs::Inline(inline::list_templates),
        )
    },
    Method {
        modern_gate: Gate::Resources,
        mcp_name: Some("uri"),
        asks_input: true,
        cacheable: true,
        ..row(
            m::RESOURCES_READ,
            Eras::BOTH,
            Runs::Worker(run::read_resource),
        )
    },
    Method {
        legacy_gate: Gate::Resources,
        ..row(
            m::RESOURCES_SUBSCRIBE,
            Eras::LEGACY,
            Runs::Inline(inline::subscribe),
        )
    },
    Method {
        legacy_gate: Gate::Resources,
        ..row(
            m::RESOURCES_UNSUBSCRIBE,
            Eras::LEGACY,
            Runs::Inline(inline::unsubscribe),
        )
    },
    Method {
        modern_gate: Gate::Prompts,
        cacheable: true,
        ..row(
            m::PROMPTS_LIST,
            Eras::BOTH,
            Runs::Inline(inline::list_prompts),
        )
    },
    Method {
        modern_gate: Gate::Prompts,
        mcp_name: Some("name"),
        asks_input: true,
        ..row(m::PROMPTS_GET, Eras::BOTH, Runs::Worker(run::get_prompt))
    },
    Method {
        legacy_gate: Gate::CompletionHandler,
        modern_gate: Gate::Completions,
        ..row(
            m::COMPLETION_COMPLETE,
            Eras::BOTH,
            Runs::Worker(run::complete),
        )
    },
    row(
        m::LOGGING_SET_LEVEL,
        Eras::LEGACY,
        Runs::Inline(inline::set_level),
    ),
    Method {
        cacheable: true,
        ..row(
            m::SERVER_DISCOVER,
            Eras::MODERN,
            Runs::Inline(inline::discover),
        )
    },
    row(m::SUBSCRIPTIONS_LISTEN, Eras::MODERN, Runs::Listen),
];

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

impl Method {
    /// The gate of this method in `era`.
    pub(crate) fn gate(&self, era: Era) -> Gate {
        match era {
            Era::V2025_11_25 => self.legacy_gate,
            Era::V2026_07_28 => self.modern_gate,
        }
    }
}
