//! [`ServerHandle`]: changes to a running server from any thread, and
//! [`ServerEdit`], several changes with one notification per kind.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Weak};

use serde_json::Value;

use super::builder;
use super::bus::Change;
use super::handler::{PromptHandler, ResourceHandler, ResourceTemplateHandler, ToolHandler};
use super::inner::ServerInner;
use super::registry::Registry;
use crate::jsonrpc::Message;
use crate::protocol::{LoggingLevel, Prompt, Resource, ResourceTemplate, Tool};

/// A handle to a running [`Server`](crate::Server): change what it offers and notify
/// clients. Cheap to clone; usable from any thread and from handlers
/// ([`RequestContext::server`](crate::RequestContext::server)).
///
/// Its [`edit`](Self::edit) is the one way to change the offer while
/// serving: one change or several, then one `notifications/*/list_changed`
/// per kind that changed to every initialized session (TOOL-2, RES-2,
/// PRM-2).
///
/// A handle keeps the server's handlers alive, as the [`Server`](crate::Server) does;
/// [`close`](Self::close) drops them, and [`downgrade`](Self::downgrade)
/// gives a handle that does not keep anything alive (for a thread that
/// should end with the server).
#[derive(Clone)]
pub struct ServerHandle {
    pub(super) inner: Arc<ServerInner>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("name", &self.inner.info.name)
            .finish()
    }
}

impl ServerHandle {
    pub(crate) fn new(inner: Arc<ServerInner>) -> ServerHandle {
        ServerHandle { inner }
    }

    /// Adds (or reloads) the skills under `root`, as
    /// [`ServerBuilder::skills_dir`](crate::ServerBuilder::skills_dir)
    /// does, declares the skills extension if it was not, and sends
    /// `notifications/resources/list_changed`. Returns the `SKILL.md` URIs
    /// of the skills found.
    ///
    /// # Errors
    ///
    /// As `skills_dir`; then nothing changes.
    #[cfg(feature = "skills")]
    pub fn add_skills_dir(
        &self,
        root: impl AsRef<std::path::Path>,
    ) -> Result<Vec<String>, crate::error::Error> {
        let inner = &self.inner;
        let uris = inner.skills.add_dir(root.as_ref())?;
        if !inner
            .skills
            .offered
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            let files = super::skills::SkillFiles(Arc::clone(&inner.skills));
            inner.registry.write().providers.push(Arc::new(files));
        }
        inner.declare(super::skills::declare);
        self.notify_resources_list_changed();
        Ok(uris)
    }

    /// Stops serving the skill whose `SKILL.md` is `uri` (its files too);
    /// `false` if there was none. Sends
    /// `notifications/resources/list_changed` when one was removed.
    #[cfg(feature = "skills")]
    pub fn remove_skill(&self, uri: &str) -> bool {
        let removed = self.inner.skills.remove(uri);
        if removed {
            self.notify_resources_list_changed();
        }
        removed
    }

    /// Changes what the server offers: `change` runs with the server's
    /// offer locked (requests wait until it returns, then see all of the
    /// changes or none), then one `list_changed` goes out per kind that
    /// changed. Replace a whole list by clearing it and adding the new
    /// items. Returns what `change` returns.
    ///
    /// `change` must not call the server (this handle, a clone, or a
    /// request's context): the offer stays locked while it runs.
    ///
    /// ```
    /// use tiny_mcp::{ReadResourceResult, RequestContext, Resource, Server};
    ///
    /// let server = Server::builder("files", "1").offer_resources().build();
    /// let names = ["a.txt", "b.txt"];
    /// server.handle().edit(|edit| {
    ///     edit.clear_resources();
    ///     for name in names.iter() {
    ///         let uri = format!("file:///{}", name);
    ///         edit.add_resource(Resource::new(uri, *name), |_: &RequestContext, uri: &str| {
    ///             Ok(ReadResourceResult::text(uri, "contents"))
    ///         });
    ///     }
    /// }); // one notifications/resources/list_changed
    /// ```
    pub fn edit<R>(&self, change: impl FnOnce(&mut ServerEdit<'_>) -> R) -> R {
        // A closed server takes no more handlers: the edit goes to a
        // scratch registry, dropped with the rest (checked under the lock,
        // which close takes to empty the registry).
        let mut scratch = Registry::default();
        let (result, changed, buried) = {
            let mut registry = self.inner.registry.write();
            let closed = self.inner.closing.is_closed();
            let target: &mut Registry = if closed { &mut scratch } else { &mut registry };
            let mut edit = ServerEdit {
                registry: target,
                changed: Changed::default(),
                buried: Vec::new(),
            };
            let result = change(&mut edit);
            (result, edit.changed, edit.buried)
        };
        drop(buried);
        if scratch.has_tools() || scratch.has_prompts() || scratch.has_resources() {
            log::warn!(
                "an edit of the closed server {} was dropped",
                self.inner.info.name
            );
            return result;
        }
        self.announce(changed);
        result
    }

    /// Declares and notifies the kinds an edit changed.
    fn announce(&self, changed: Changed) {
        let tasks = changed.tools_added && self.inner.registry.read().has_task_tools();
        self.inner.declare(|c| {
            if tasks && c.tasks.is_none() {
                super::tasks::declare(c);
            }
            if changed.tools_added {
                c.tools.get_or_insert_with(builder::listed);
            }
            if changed.prompts_added {
                c.prompts.get_or_insert_with(builder::listed);
            }
            if changed.resources_added {
                c.resources.get_or_insert_with(builder::subscribable);
            }
        });
        if changed.tools {
            self.notify_tools_list_changed();
        }
        if changed.prompts {
            self.notify_prompts_list_changed();
        }
        if changed.resources {
            self.notify_resources_list_changed();
        }
    }

    /// The names of the tools offered now, in listing order.
    pub fn tool_names(&self) -> Vec<String> {
        let registry = self.inner.registry.read();
        registry.tools.iter().map(|e| e.tool.name.clone()).collect()
    }

    /// Closes the server: every transport serving it stops
    /// ([`Server::serve_stdio`](crate::Server::serve_stdio) returns, [`HttpServer::join`](crate::HttpServer::join)
    /// returns, see [`Server::close`](crate::Server::close)), listen streams end, and its tools,
    /// resources, providers, templates, prompts and completers are dropped
    /// once their running calls return, with whatever they own (a channel
    /// sender, a file). Returns at once; calling it again does nothing. A
    /// closed server cannot serve again.
    pub fn close(&self) {
        self.inner.close();
    }

    /// `true` once [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closing.is_closed()
    }

    /// A handle that does not keep the server alive: see
    /// [`WeakServerHandle`].
    pub fn downgrade(&self) -> WeakServerHandle {
        WeakServerHandle {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// Sends `notifications/tools/list_changed` to every session and every
    /// listen stream that asked for it, here and (through the
    /// [`ChangeBus`](crate::ChangeBus)) on the other instances.
    pub fn notify_tools_list_changed(&self) {
        self.change(Change::ToolsListChanged);
    }

    /// Sends `notifications/prompts/list_changed` to every session and
    /// every listen stream that asked for it, on every instance.
    pub fn notify_prompts_list_changed(&self) {
        self.change(Change::PromptsListChanged);
    }

    /// Sends `notifications/resources/list_changed` to every session and
    /// every listen stream that asked for it, on every instance.
    pub fn notify_resources_list_changed(&self) {
        self.change(Change::ResourcesListChanged);
    }

    /// Ends every `subscriptions/listen` stream gracefully: each gets its
    /// listen request's result (LISTEN-11) and its HTTP response ends.
    pub fn close_listen_streams(&self) {
        self.inner.listen.close_all(&self.inner.info);
    }

    /// Sends `notifications/resources/updated {uri}` to the sessions that
    /// subscribed to `uri` (RES-3) and the listen streams that name it, on
    /// every instance.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.change(Change::ResourceUpdated(uri.to_string()));
    }

    /// Sends a log message (`notifications/message {level, logger?,
    /// data}`) from any thread, outside any request, to every 2025-11-25
    /// client of this instance whose `logging/setLevel` it passes (all of
    /// them until one sets a level) (server/utilities/logging). It goes
    /// where notifications that belong to no request go: stdout, or the
    /// session's GET stream (a session without one open does not get it).
    /// 2026-07-28 clients get none: they receive log messages only on a
    /// request that opted in (LOG-1), see
    /// [`RequestContext::log`](crate::RequestContext::log). Returns how
    /// many sessions it was sent to.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) -> usize {
        let mut params = crate::jsonrpc::JsonObject::new();
        params.insert("level".into(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data.into());
        let message = Message::notification(
            crate::protocol::notifications::MESSAGE,
            Some(Value::Object(params)),
        );
        let mut sent = 0;
        for session in self.inner.live_sessions() {
            let passes = !matches!(session.state.lock().log_level, Some(min) if level < min);
            if passes && session.send_unrelated(message.clone()) {
                sent += 1;
            }
        }
        sent
    }
}

/// A handle that does not keep the server alive: its handlers (and what
/// they own) are dropped when the last [`Server`](crate::Server) and [`ServerHandle`] go
/// or when the server is closed, whatever weak handles remain. Get a
/// strong handle for a moment with [`upgrade`](Self::upgrade).
///
/// ```
/// use tiny_mcp::Server;
///
/// let server = Server::builder("s", "1").build();
/// let weak = server.handle().downgrade();
/// std::thread::spawn(move || {
///     // Ends with the server: `upgrade` fails once it is gone or closed.
///     while let Some(handle) = weak.upgrade() {
///         handle.notify_tools_list_changed();
///         # break;
///     }
/// });
/// server.close();
/// ```
#[derive(Clone)]
pub struct WeakServerHandle {
    inner: Weak<ServerInner>,
}

impl fmt::Debug for WeakServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WeakServerHandle")
    }
}

impl WeakServerHandle {
    /// A strong handle, while the server exists and is not closed.
    pub fn upgrade(&self) -> Option<ServerHandle> {
        let inner = self.inner.upgrade()?;
        if inner.closing.is_closed() {
            return None;
        }
        Some(ServerHandle { inner })
    }
}

/// Which kinds an edit changed, and which it added to.
#[derive(Debug, Default, Clone, Copy)]
struct Changed {
    tools: bool,
    prompts: bool,
    resources: bool,
    tools_added: bool,
    prompts_added: bool,
    resources_added: bool,
}

/// Several changes to a running server's offer, made under one lock by
/// [`ServerHandle::edit`]: clients see all of them at once, and one
/// `list_changed` per kind that changed.
pub struct ServerEdit<'a> {
    registry: &'a mut Registry,
    changed: Changed,
    /// What the edit replaced or removed, dropped once the registry's lock
    /// is released: a handler's `Drop` may call the server.
    buried: Vec<Box<dyn Any>>,
}

impl fmt::Debug for ServerEdit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerEdit").finish()
    }
}

impl ServerEdit<'_> {
    /// Keeps what was replaced or removed until the edit is over.
    fn bury<T: 'static>(&mut self, gone: impl IntoIterator<Item = Arc<T>>) {
        for entry in gone {
            self.buried.push(Box::new(entry));
        }
    }

    /// Adds (or replaces) a tool.
    pub fn add_tool(&mut self, tool: Tool, handler: impl ToolHandler) {
        let replaced = self.registry.insert_tool(tool, Arc::new(handler));
        self.bury(replaced);
        self.changed.tools = true;
        self.changed.tools_added = true;
    }

    /// Removes a tool; `false` if there was none.
    pub fn remove_tool(&mut self, name: &str) -> bool {
        let removed = self.registry.remove_tool(name);
        let found = !removed.is_empty();
        self.changed.tools |= found;
        self.bury(removed);
        found
    }

    /// Removes every tool.
    pub fn clear_tools(&mut self) {
        self.changed.tools |= !self.registry.tools.is_empty();
        let cleared = std::mem::take(&mut self.registry.tools);
        self.bury(cleared);
    }

    /// Adds (or replaces) a prompt.
    pub fn add_prompt(&mut self, prompt: Prompt, handler: impl PromptHandler) {
        let replaced = self.registry.insert_prompt(prompt, Arc::new(handler));
        self.bury(replaced);
        self.changed.prompts = true;
        self.changed.prompts_added = true;
    }

    /// Removes a prompt; `false` if there was none.
    pub fn remove_prompt(&mut self, name: &str) -> bool {
        let removed = self.registry.remove_prompt(name);
        let found = !removed.is_empty();
        self.changed.prompts |= found;
        self.bury(removed);
        found
    }

    /// Removes every prompt.
    pub fn clear_prompts(&mut self) {
        self.changed.prompts |= !self.registry.prompts.is_empty();
        let cleared = std::mem::take(&mut self.registry.prompts);
        self.bury(cleared);
    }

    /// Adds (or replaces) a resource with a fixed URI.
    pub fn add_resource(&mut self, resource: Resource, handler: impl ResourceHandler) {
        let replaced = self.registry.insert_resource(resource, Arc::new(handler));
        self.bury(replaced);
        self.changed.resources = true;
        self.changed.resources_added = true;
    }

    /// Removes a resource by URI; `false` if there was none.
    pub fn remove_resource(&mut self, uri: &str) -> bool {
        let removed = self.registry.remove_resource(uri);
        let found = !removed.is_empty();
        self.changed.resources |= found;
        self.bury(removed);
        found
    }

    /// Removes every resource with a fixed URI (not the providers or the
    /// templates).
    pub fn clear_resources(&mut self) {
        self.changed.resources |= !self.registry.resources.is_empty();
        let cleared = std::mem::take(&mut self.registry.resources);
        self.bury(cleared);
    }

    /// Adds (or replaces) a resource template.
    pub fn add_resource_template(
        &mut self,
        template: ResourceTemplate,
        handler: impl ResourceTemplateHandler,
    ) {
        let replaced = self.registry.insert_template(template, Arc::new(handler));
        self.bury(replaced);
        self.changed.resources = true;
        self.changed.resources_added = true;
    }

    /// Removes a resource template by its URI template; `false` if there
    /// was none.
    pub fn remove_resource_template(&mut self, uri_template: &str) -> bool {
        let removed = self.registry.remove_template(uri_template);
        let found = !removed.is_empty();
        self.changed.resources |= found;
        self.bury(removed);
        found
    }
}
