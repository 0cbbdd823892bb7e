//! What a server offers: tools, resources, templates, prompts, in the order
//! they were added (TOOL-8: deterministic listing).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::complete::CompleterEntry;
use super::handler::{
    CompletionHandler, PromptHandler, ResourceHandler, ResourceTemplateHandler, ToolHandler,
};
use super::provider::ResourceProvider;
use super::uri_template::UriTemplate;
use super::validate::Schema;
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

/// Variables of a URI that matched a resource template, by name.
///
/// Values are percent-decoded, as RFC 6570 expansion encodes them:
/// `test://template/hello%20world/data` against `test://template/{id}/data`
/// gives `id = "hello world"`, and `caf%C3%A9` gives `café`. A URI with a
/// malformed escape (`%ZZ`) or escapes that decode to invalid UTF-8 matches
/// no template (`resources/read` answers `-32002`, or `-32602` in
/// 2026-07-28). In `{+path}` values, escapes of reserved characters such as
/// `%2F` stay encoded, so that every `/` in the value was a `/` in the URI.
///
/// Spec: server/resources "Resource Templates" (2025-11-25); RFC 6570.
pub type TemplateVariables = BTreeMap<String, String>;

/// URIs longer than this are not matched against templates.
const MAX_TEMPLATE_URI_BYTES: usize = 8 * 1024;

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<dyn ToolHandler>,
    /// Runs on the thread that read the call, not a worker.
    pub(crate) quick: bool,
    /// `tool.input_schema`, read for checking arguments.
    pub(crate) input: Schema,
    /// `tool.output_schema`, read for checking structured results.
    pub(crate) output: Option<Schema>,
}

pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    matcher: UriTemplate,
    pub(crate) handler: Arc<dyn ResourceTemplateHandler>,
}

pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<dyn PromptHandler>,
}

/// Every handler a server holds: lists kept in insertion order, whose
/// lookups by key are linear scans over `Arc`s (replaced by an index only
/// if servers grow large). Closing a server empties it, which drops the
/// handlers (and whatever they own) once running calls return.
#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
    pub(crate) providers: Vec<Arc<dyn ResourceProvider>>,
    pub(crate) templates: Vec<Arc<TemplateEntry>>,
    pub(crate) prompts: Vec<Arc<PromptEntry>>,
    pub(crate) completers: Vec<CompleterEntry>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    /// Tools whose calls become tasks only when the handler asks
    /// ([`RequestContext::start_task`](crate::RequestContext::start_task)).
    #[cfg(feature = "tasks")]
    pub(crate) late_tasks: std::collections::HashSet<String>,
}

/// Adds `entry`, or replaces the one `same` finds; the replaced one.
fn upsert<T>(list: &mut Vec<Arc<T>>, entry: T, same: impl Fn(&T) -> bool) -> Option<Arc<T>> {
    match list.iter().position(|e| same(e)) {
        Some(i) => Some(std::mem::replace(&mut list[i], Arc::new(entry))),
        None => {
            list.push(Arc::new(entry));
            None
        }
    }
}

/// Removes the entries `same` finds; them (to be dropped by the caller,
/// after it let go of the registry's lock).
fn remove<T>(list: &mut Vec<Arc<T>>, same: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
    let (gone, kept): (Vec<Arc<T>>, Vec<Arc<T>>) = list.drain(..).partition(|e| same(e));
    *list = kept;
    gone
}

impl Registry {
    pub(crate) fn insert_tool(
        &mut self,
        tool: Tool,
        handler: Arc<dyn ToolHandler>,
    ) -> Option<Arc<ToolEntry>> {
        self.insert_tool_entry(tool, handler, false)
    }

    /// Adds (or replaces) a tool; `quick`: it runs where it is read.
    pub(crate) fn insert_tool_entry(
        &mut self,
        tool: Tool,
        handler: Arc<dyn ToolHandler>,
        quick: bool,
    ) -> Option<Arc<ToolEntry>> {
        let name = tool.name.clone();
        let entry = ToolEntry {
            input: Schema::compile(&tool.input_schema),
            output: tool.output_schema.as_ref().map(Schema::compile),
            tool,
            handler,
            quick,
        };
        upsert(&mut self.tools, entry, |e| e.tool.name == name)
    }

    pub(crate) fn remove_tool(&mut self, name: &str) -> Vec<Arc<ToolEntry>> {
        remove(&mut self.tools, |e| e.tool.name == name)
    }

    /// `true` when calls of tool `name` become tasks only when asked.
    #[cfg(feature = "tasks")]
    pub(crate) fn starts_tasks_late(&self, name: &str) -> bool {
        self.late_tasks.contains(name)
    }

    /// `true` when a tool's calls may run as tasks.
    pub(crate) fn has_task_tools(&self) -> bool {
        self.tools
            .iter()
            .any(|e| e.tool.task_support() != crate::protocol::TaskSupport::Forbidden)
    }

    /// `true` for a tool registered as quick.
    pub(crate) fn is_quick(&self, name: &str) -> bool {
        self.tools.iter().any(|e| e.quick && e.tool.name == name)
    }

    pub(crate) fn tool(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.tools.iter().find(|e| e.tool.name == name).cloned()
    }

    pub(crate) fn insert_resource(
        &mut self,
        resource: Resource,
        handler: Arc<dyn ResourceHandler>,
    ) -> Option<Arc<ResourceEntry>> {
        let uri = resource.uri.clone();
        let entry = ResourceEntry { resource, handler };
        upsert(&mut self.resources, entry, |e| e.resource.uri == uri)
    }

    /// `true` when an MCP Apps view (a `ui://` resource of type
    /// `text/html;profile=mcp-app`) is registered.
    pub(crate) fn has_ui_resources(&self) -> bool {
        self.resources
            .iter()
            .any(|e| super::apps::is_view(&e.resource))
    }

    pub(crate) fn remove_resource(&mut self, uri: &str) -> Vec<Arc<ResourceEntry>> {
        remove(&mut self.resources, |e| e.resource.uri == uri)
    }

    pub(crate) fn insert_template(
        &mut self,
        template: ResourceTemplate,
        handler: Arc<dyn ResourceTemplateHandler>,
    ) -> Option<Arc<TemplateEntry>> {
        let key = template.uri_template.clone();
        let matcher = UriTemplate::parse(&template.uri_template);
        upsert(
            &mut self.templates,
            TemplateEntry {
                template,
                matcher,
                handler,
            },
            |e| e.template.uri_template == key,
        )
    }

    pub(crate) fn remove_template(&mut self, uri_template: &str) -> Vec<Arc<TemplateEntry>> {
        remove(&mut self.templates, |e| {
            e.template.uri_template == uri_template
        })
    }

    pub(crate) fn insert_completer(&mut self, entry: CompleterEntry) {
        match self
            .completers
            .iter()
            .position(|e| e.target == entry.target)
        {
            Some(i) => self.completers[i] = entry,
            None => self.completers.push(entry),
        }
    }

    /// `true` when `completion/complete` has someone to ask.
    pub(crate) fn completes(&self) -> bool {
        self.completion.is_some() || !self.completers.is_empty()
    }

    pub(crate) fn insert_prompt(
        &mut self,
        prompt: Prompt,
        handler: Arc<dyn PromptHandler>,
    ) -> Option<Arc<PromptEntry>> {
        let name = prompt.name.clone();
        upsert(&mut self.prompts, PromptEntry { prompt, handler }, |e| {
            e.prompt.name == name
        })
    }

    pub(crate) fn remove_prompt(&mut self, name: &str) -> Vec<Arc<PromptEntry>> {
        remove(&mut self.prompts, |e| e.prompt.name == name)
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<Arc<PromptEntry>> {
        self.prompts.iter().find(|e| e.prompt.name == name).cloned()
    }

    /// What `resources/read` of `uri` should call: a fixed resource first,
    /// then the first template that matches (the providers, asked between
    /// the two, are the caller's: asking them runs their code).
    pub(crate) fn resolve(&self, uri: &str) -> Option<Resolved> {
        if let Some(e) = self.resources.iter().find(|e| e.resource.uri == uri) {
            return Some(Resolved::Resource(Arc::clone(e)));
        }
        if uri.len() > MAX_TEMPLATE_URI_BYTES {
            return None;
        }
        self.templates.iter().find_map(|e| {
            e.matcher
                .matches(uri)
                .map(|vars| Resolved::Template(Arc::clone(e), vars))
        })
    }

    pub(crate) fn has_tools(&self) -> bool {
        !self.tools.is_empty()
    }

    pub(crate) fn has_prompts(&self) -> bool {
        !self.prompts.is_empty()
    }

    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty() || !self.providers.is_empty()
    }
}

pub(crate) enum Resolved {
    Resource(Arc<ResourceEntry>),
    Template(Arc<TemplateEntry>, TemplateVariables),
}
