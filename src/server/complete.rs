//! `completion/complete`: a completer per prompt argument or template
//! variable ([`ArgumentCompleter`]), else the server-wide
//! [`CompletionHandler`](super::CompletionHandler), else no suggestions.
//!
//! Spec: server/utilities/completion (2025-11-25), CMP-1, CMP-2.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::context::RequestContext;
use super::inline::parse_params;
use super::registry::Registry;
use super::reply::failure;
use super::reply::to_value;
use super::reply::{Failure, Reply};
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::protocol::{CompleteRequestParams, CompleteResult, Reference};

/// Suggests values for one prompt argument or one template variable.
///
/// Register it with
/// [`ServerBuilder::complete_prompt_argument`](crate::ServerBuilder::complete_prompt_argument)
/// or [`complete_template_variable`](crate::ServerBuilder::complete_template_variable).
/// It gets what the user typed so far (`value`) and the arguments already
/// given (`context`, empty when the client sent none) and returns every
/// suggestion, best first; the crate sends the first 100 with `total` and
/// `hasMore` (CMP-2).
///
/// As a closure, with the types written out (see
/// [`ToolHandler`](crate::ToolHandler)):
///
/// ```
/// use std::collections::BTreeMap;
/// use tiny_mcp::{Prompt, PromptArgument, RequestContext, Server};
/// # use tiny_mcp::GetPromptResult;
///
/// let languages = ["python", "perl", "rust"];
/// let server = Server::builder("s", "1")
///     .prompt(Prompt::new("review").with_argument(PromptArgument::new("language", "", true)),
///         |_: &RequestContext, _: BTreeMap<String, String>| Ok(GetPromptResult::default()))
///     .complete_prompt_argument("review", "language",
///         move |_: &RequestContext, typed: &str, _: &BTreeMap<String, String>| {
///             Ok(languages.iter().filter(|l| l.starts_with(typed)).map(|l| l.to_string()).collect())
///         })
///     .build();
/// # drop(server);
/// ```
pub trait ArgumentCompleter: Send + Sync + 'static {
    /// Every suggestion for `value`, best first.
    fn complete(
        &self,
        ctx: &RequestContext,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, Error>;
}

impl<F> ArgumentCompleter for F
where
    F: Fn(&RequestContext, &str, &BTreeMap<String, String>) -> Result<Vec<String>, Error>
        + Send
        + Sync
        + 'static,
{
    fn complete(
        &self,
        ctx: &RequestContext,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, Error> {
        self(ctx, value, context)
    }
}

/// A completer that suggests the `values` that start with what was typed
/// (ignoring case), in their order: for an argument whose values are known
/// up front.
///
/// ```
/// use tiny_mcp::{complete_from, ResourceTemplate, Server};
/// # use tiny_mcp::{ReadResourceResult, RequestContext, TemplateVariables};
///
/// let server = Server::builder("s", "1")
///     .resource_template(ResourceTemplate::new("lang://{name}", "language"),
///         |_: &RequestContext, uri: &str, _: &TemplateVariables| Ok(ReadResourceResult::text(uri, "")))
///     .complete_template_variable("lang://{name}", "name", complete_from(["Python", "Rust"]))
///     .build();
/// # drop(server);
/// ```
pub fn complete_from<S: Into<String>>(
    values: impl IntoIterator<Item = S>,
) -> impl ArgumentCompleter {
    let values: Vec<String> = values.into_iter().map(Into::into).collect();
    move |_: &RequestContext, typed: &str, _: &BTreeMap<String, String>| {
        let typed = typed.to_lowercase();
        let matching = values
            .iter()
            .filter(|v| v.to_lowercase().starts_with(&typed));
        Ok(matching.cloned().collect())
    }
}

/// What a completer completes: a prompt's argument or a template's
/// variable (the template as registered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    PromptArgument { prompt: String, argument: String },
    TemplateVariable { template: String, variable: String },
}

impl Target {
    fn is(&self, reference: &Reference, name: &str) -> bool {
        match (self, reference) {
            (Target::PromptArgument { prompt, argument }, Reference::Prompt { name: p }) => {
                prompt == p && argument == name
            }
            (Target::TemplateVariable { template, variable }, Reference::Resource { uri }) => {
                template == uri && variable == name
            }
            _ => false,
        }
    }
}

pub(crate) struct CompleterEntry {
    pub(crate) target: Target,
    pub(crate) completer: Arc<dyn ArgumentCompleter>,
}

/// Who answers a completion, read under the registry's lock.
enum Answerer {
    Completer(Arc<dyn ArgumentCompleter>),
    Handler(Arc<dyn super::handler::CompletionHandler>),
    Nobody,
}

fn answerer(registry: &Registry, params: &CompleteRequestParams) -> Result<Answerer, ErrorObject> {
    let name = &params.argument.name;
    let found = registry
        .completers
        .iter()
        .find(|e| e.target.is(&params.reference, name));
    if let Some(entry) = found {
        return Ok(Answerer::Completer(Arc::clone(&entry.completer)));
    }
    if let Some(handler) = &registry.completion {
        return Ok(Answerer::Handler(Arc::clone(handler)));
    }
    // As the official SDKs: a reference to nothing is -32602; a known
    // prompt or template without a completer gets no suggestions.
    let known = match &params.reference {
        Reference::Prompt { name } => registry.prompt(name).is_some(),
        Reference::Resource { uri } => {
            registry
                .templates
                .iter()
                .any(|e| &e.template.uri_template == uri)
                || registry.resources.iter().any(|e| &e.resource.uri == uri)
        }
    };
    if known {
        Ok(Answerer::Nobody)
    } else {
        Err(ErrorObject::invalid_params(format!(
            "completion of an unknown reference: {}",
            match &params.reference {
                Reference::Prompt { name } => format!("prompt {}", name),
                Reference::Resource { uri } => format!("resource template {}", uri),
            }
        )))
    }
}

/// `completion/complete` (CMP-1): the first 100 suggestions, with `total`
/// and `hasMore` when there are more (CMP-2).
pub(crate) fn complete(ctx: &RequestContext, params: Option<Value>) -> Result<Reply, Failure> {
    let params: CompleteRequestParams = parse_params(params)?;
    let answerer = answerer(&ctx.session.server.registry.read(), &params)?;
    let result = match answerer {
        Answerer::Handler(handler) => handler.complete(ctx, params),
        Answerer::Completer(completer) => {
            let empty = BTreeMap::new();
            let context = params.context.as_ref().and_then(|c| c.arguments.as_ref());
            completer
                .complete(ctx, &params.argument.value, context.unwrap_or(&empty))
                .map(CompleteResult::new)
        }
        Answerer::Nobody => Ok(CompleteResult::default()),
    };
    Ok(Reply::Value(to_value(
        result.map_err(|e| failure(ctx, e))?,
    )?))
}
