//! The typed requests of [`Client`]: one method per request a server
//! serves (server/tools, server/resources, server/prompts,
//! server/utilities/completion and logging, basic/utilities/ping), each
//! list followed across its pages.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{CallOptions, Client};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::JsonObject;
use crate::protocol::{
    methods, CallToolResult, CompleteResult, Era, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel, Prompt,
    ReadResourceResult, Reference, Resource, ResourceTemplate, Tool,
};

/// Pages a `list_*` call follows at most before it fails.
const MAX_PAGES: usize = 1000;

impl Client {
    /// Checks that the server answers: `ping` in 2025-11-25;
    /// `server/discover` in 2026-07-28, which has no `ping` (REM-1).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn ping(&self) -> Result<(), Error> {
        let method = match self.server.era {
            Era::V2026_07_28 => methods::SERVER_DISCOVER,
            _ => methods::PING,
        };
        self.send(method, JsonObject::new(), None, &CallOptions::new())
            .map(|_| ())
    }

    /// Every tool, following `nextCursor` (server/tools "Listing Tools").
    ///
    /// # Errors
    ///
    /// See [`Client`]; a server that repeats a cursor or sends more than
    /// 1000 pages is [`ErrorKind::Protocol`].
    pub fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.all_pages(|cursor| {
            self.list_tools_page(cursor)
                .map(|p| (p.tools, p.next_cursor))
        })
    }

    /// One page of tools, from `cursor` (`None`: the first). In 2026-07-28
    /// a tool whose `x-mcp-header` annotations are invalid is left out
    /// (MHTTP-15), with a warning in the log.
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        let mut page: ListToolsResult = self.page(methods::TOOLS_LIST, cursor)?;
        match self.server.era {
            Era::V2026_07_28 => page.tools = self.params.admit(std::mem::take(&mut page.tools)),
            // Only 2025-11-25 lists `execution.taskSupport`.
            _ => self.task_support.learn(&page.tools),
        }
        Ok(page)
    }

    /// Calls a tool with `arguments` (a JSON object, or `Value::Null`).
    /// A tool's own failure is a result with `is_error: Some(true)`, not an
    /// `Err` (server/tools "Error Handling"). A tool whose
    /// `execution.taskSupport` is `required` runs as a task, which this
    /// call follows to its result (see [`CallOptions::task`]).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, &CallOptions::new())
    }

    /// [`call_tool`](Self::call_tool) with a timeout, a cancel token, a
    /// progress callback, or as a task ([`CallOptions::task`],
    /// [`CallOptions::on_task_status`]).
    ///
    /// # Errors
    ///
    /// See [`Client`]. A call that ran as a task and failed is the task's
    /// JSON-RPC error ([`ErrorKind::Peer`]); a task cancelled by someone
    /// else is [`ErrorKind::Cancelled`].
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = JsonObject::new();
        params.insert("name".into(), Value::from(name));
        if !arguments.is_null() {
            params.insert("arguments".into(), arguments);
        }
        self.call_tool_tasked(name, params, options)
    }

    /// One `tools/call` with `params`, its answer as JSON.
    pub(super) fn call_tool_once(
        &self,
        name: &str,
        params: JsonObject,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let first = self.send(
            methods::TOOLS_CALL,
            params.clone(),
            Some(name.to_string()),
            options,
        );
        match first {
            // HTTP-4: a server that wants Mcp-Param-* headers for a tool this
            // client has not listed yet says so with -32020; list, then retry
            // once with the headers.
            Err(e) if self.needs_param_headers(&e, name) => {
                self.list_tools()?;
                self.send(methods::TOOLS_CALL, params, Some(name.to_string()), options)
            }
            other => other,
        }
    }

    /// A 2026-07-28 HTTP header mismatch (`-32020`) on a tool no list has
    /// named yet.
    fn needs_param_headers(&self, e: &Error, name: &str) -> bool {
        let mismatch = matches!(e.kind(), ErrorKind::Peer(o) if o.code == crate::jsonrpc::ErrorCode::HEADER_MISMATCH);
        mismatch
            && self.http.is_some()
            && self.server.era == Era::V2026_07_28
            && !self.params.knows(name)
    }

    /// Every resource, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.all_pages(|cursor| {
            self.list_resources_page(cursor)
                .map(|p| (p.resources, p.next_cursor))
        })
    }

    /// One page of resources, from `cursor` (`None`: the first).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_resources_page(&self, cursor: Option<&str>) -> Result<ListResourcesResult, Error> {
        self.page(methods::RESOURCES_LIST, cursor)
    }

    /// Every resource template, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.all_pages(|cursor| {
            self.list_resource_templates_page(cursor)
                .map(|p| (p.resource_templates, p.next_cursor))
        })
    }

    /// One page of resource templates, from `cursor` (`None`: the first).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.page(methods::RESOURCES_TEMPLATES_LIST, cursor)
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// See [`Client`]; an unknown URI is the server's `-32002` (2025-11-25)
    /// or `-32602` (2026-07-28).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let params = serde_json::json!({ "uri": uri });
        self.typed(
            methods::RESOURCES_READ,
            params,
            Some(uri.to_string()),
            &CallOptions::new(),
        )
    }

    /// Subscribes to updates of a resource (2025-11-25; they arrive as
    /// `notifications/resources/updated` at
    /// [`on_notification`](crate::ClientBuilder::on_notification)).
    ///
    /// # Errors
    ///
    /// See [`Client`]. In 2026-07-28, which replaced it with
    /// `subscriptions/listen` (REM-1), [`ErrorKind::Message`].
    pub fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.only_2025(methods::RESOURCES_SUBSCRIBE)?;
        self.send(
            methods::RESOURCES_SUBSCRIBE,
            uri_params(uri),
            None,
            &CallOptions::new(),
        )?;
        self.session.subscriptions.lock().insert(uri.to_string());
        Ok(())
    }

    /// Ends a subscription made with [`subscribe`](Self::subscribe).
    ///
    /// # Errors
    ///
    /// As [`subscribe`](Self::subscribe).
    pub fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.only_2025(methods::RESOURCES_UNSUBSCRIBE)?;
        self.session.subscriptions.lock().remove(uri);
        self.send(
            methods::RESOURCES_UNSUBSCRIBE,
            uri_params(uri),
            None,
            &CallOptions::new(),
        )
        .map(|_| ())
    }

    /// Every prompt, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.all_pages(|cursor| {
            self.list_prompts_page(cursor)
                .map(|p| (p.prompts, p.next_cursor))
        })
    }

    /// One page of prompts, from `cursor` (`None`: the first).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn list_prompts_page(&self, cursor: Option<&str>) -> Result<ListPromptsResult, Error> {
        self.page(methods::PROMPTS_LIST, cursor)
    }

    /// Gets a prompt with its arguments (string values).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn get_prompt(
        &self,
        name: &str,
        arguments: &[(&str, &str)],
    ) -> Result<GetPromptResult, Error> {
        let params = serde_json::json!({ "name": name, "arguments": string_map(arguments) });
        self.typed(
            methods::PROMPTS_GET,
            params,
            Some(name.to_string()),
            &CallOptions::new(),
        )
    }

    /// Asks for completions of argument `argument` of a prompt or resource
    /// template, given the text typed so far (server/utilities/completion);
    /// `context` holds the values of arguments already chosen
    /// (`context.arguments`), `&[]` for none.
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
        context: &[(&str, &str)],
    ) -> Result<CompleteResult, Error> {
        let mut params = serde_json::json!({
            "ref": reference,
            "argument": { "name": argument, "value": value },
        });
        if !context.is_empty() {
            params["context"] = serde_json::json!({ "arguments": string_map(context) });
        }
        self.typed(
            methods::COMPLETION_COMPLETE,
            params,
            None,
            &CallOptions::new(),
        )
    }

    /// Sets the level of `notifications/message` the server sends:
    /// `logging/setLevel` in 2025-11-25. In 2026-07-28, which removed it,
    /// the level is sent with every later request instead
    /// (`_meta["io.modelcontextprotocol/logLevel"]`, LOG-1).
    ///
    /// # Errors
    ///
    /// See [`Client`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.server.era == Era::V2026_07_28 {
            *self.log_level.lock() = Some(level);
            return Ok(());
        }
        let params = serde_json::json!({ "level": level });
        self.typed::<Value>(
            methods::LOGGING_SET_LEVEL,
            params,
            None,
            &CallOptions::new(),
        )?;
        // Kept for a new session after this one ends (`recover.rs`).
        *self.log_level.lock() = Some(level);
        Ok(())
    }

    fn only_2025(&self, method: &str) -> Result<(), Error> {
        match self.server.era {
            Era::V2026_07_28 => Err(Error::msg(format!(
                "{} does not exist in 2026-07-28 (use subscriptions/listen)",
                method
            ))),
            _ => Ok(()),
        }
    }

    /// One page of a list method.
    pub(super) fn page<R: DeserializeOwned>(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<R, Error> {
        let params = match cursor {
            Some(cursor) => serde_json::json!({ "cursor": cursor }),
            None => Value::Object(JsonObject::new()),
        };
        self.typed(method, params, None, &CallOptions::new())
    }

    /// Follows cursors until the last page.
    pub(super) fn all_pages<T>(
        &self,
        mut page: impl FnMut(Option<&str>) -> Result<(Vec<T>, Option<String>), Error>,
    ) -> Result<Vec<T>, Error> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let (items, next) = page(cursor.as_deref())?;
            all.extend(items);
            match next {
                None => return Ok(all),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Error::new(ErrorKind::Protocol(format!(
                        "the server repeated the cursor {:?}",
                        next
                    ))))
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(Error::new(ErrorKind::Protocol(format!(
            "more than {} pages",
            MAX_PAGES
        ))))
    }
}

fn uri_params(uri: &str) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("uri".into(), Value::from(uri));
    params
}

/// Pairs of strings as a JSON object, inserted one by one (a later pair
/// replaces an earlier one with its name, as a collect would): a collect
/// into the map would sort them first, a sort routine per call site.
fn string_map(pairs: &[(&str, &str)]) -> JsonObject {
    let mut map = JsonObject::new();
    for (k, v) in pairs {
        map.insert(k.to_string(), Value::from(*v));
    }
    map
}
