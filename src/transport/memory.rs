//! An in-memory client that drives a server's real dispatcher through
//! channels, without processes or sockets. Use it to test handlers.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::Value;

use super::pool::WorkerPool;
use crate::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use crate::server::session::{Closing, Session};
use crate::server::Server;
use crate::server::{dispatch, Caller, ChannelSink, Principal, Received, Sink};

type Responder = Box<dyn FnMut(&Request) -> Result<Value, ErrorObject> + Send>;

/// A client connected to a [`Server`] in memory, for tests.
///
/// Messages go straight into the server's dispatcher; handlers run on
/// worker threads as they would on stdio. Server-to-client requests
/// (sampling, elicitation, roots) are answered by the closure set with
/// [`on_server_request`](Self::on_server_request) while
/// [`request`](Self::request) waits; notifications are kept for
/// [`recv_timeout`](Self::recv_timeout) and
/// [`take_notifications`](Self::take_notifications).
///
/// # Example
///
/// ```
/// use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};
///
/// let server = Server::builder("t", "1")
///     .tool(Tool::new("hi", serde_json::json!({"type": "object"})),
///           |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("hello")))
///     .build();
/// let mut client = server.connect_memory();
/// client.initialize(serde_json::json!({})).unwrap();
/// let result = client
///     .request("tools/call", Some(serde_json::json!({"name": "hi"})))
///     .unwrap();
/// assert_eq!(result["content"][0]["text"], "hello");
/// ```
pub struct MemoryClient {
    session: Arc<Session>,
    sink: Arc<dyn Sink>,
    incoming: Receiver<Message>,
    pool: WorkerPool,
    backlog: VecDeque<Message>,
    next_id: i64,
    responder: Option<Responder>,
    timeout: Duration,
    /// Who the requests come from ([`set_principal`](Self::set_principal)).
    principal: Option<Arc<Principal>>,
}

impl fmt::Debug for MemoryClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryClient")
            .field("backlog", &self.backlog.len())
            .finish()
    }
}

impl MemoryClient {
    /// A fresh session, as if a new stdio client had started.
    pub(crate) fn connect(server: &Server) -> MemoryClient {
        // Unbounded: the test reads at its own pace and must not block the
        // server's threads.
        let (sender, incoming) = crossbeam_channel::unbounded();
        let sink: Arc<dyn Sink> = Arc::new(ChannelSink(sender));
        let session = Session::connection(&server.inner, Arc::clone(&sink));
        MemoryClient {
            session,
            sink,
            incoming,
            pool: WorkerPool::new(
                "tiny-mcp-memory-worker",
                server.inner.config.max_workers,
                None,
                &server.inner.metrics.workers,
            ),
            backlog: VecDeque::new(),
            next_id: 1,
            responder: None,
            timeout: Duration::from_secs(10),
            principal: None,
        }
    }
}

impl MemoryClient {
    /// Sends any message to the server, as a client would.
    pub fn send(&self, message: Message) {
        let caller = Caller {
            principal: self.principal.clone(),
            ..Caller::default()
        };
        match dispatch::receive(&self.session, message, &self.sink, caller) {
            Received::Answered(response) => {
                self.sink.send(Message::Response(response));
            }
            Received::Run(job) => {
                // Refused only once the pool is joined, with the server.
                let _ = self.pool.schedule(job);
            }
            Received::Listening(_) | Received::Consumed => {}
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Option<Value>) {
        self.send(Message::notification(method, params));
    }

    /// Sends a request without waiting; returns its id (integers from 1).
    pub fn send_request(&mut self, method: &str, params: Option<Value>) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        self.send(Message::request(id.clone(), method, params));
        id
    }

    /// Sends a request and waits for its response (at most the timeout,
    /// 10 s by default), answering server requests meanwhile.
    ///
    /// # Errors
    ///
    /// The server's error response, or `-32603` "no response" on timeout.
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let id = self.send_request(method, params);
        self.wait_response(&id)
    }

    /// Waits for the response to `id`, answering server requests and
    /// keeping other messages.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub fn wait_response(&mut self, id: &RequestId) -> Result<Value, ErrorObject> {
        if let Some(i) = self.backlog.iter().position(|m| is_response_to(m, id)) {
            if let Some(Message::Response(r)) = self.backlog.remove(i) {
                return r.outcome;
            }
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.incoming.recv_timeout(left).map_err(|_| {
                ErrorObject::internal(format!("no response to request {} in time", id))
            })?;
            match message {
                Message::Response(r) if r.id.as_ref() == Some(id) => return r.outcome,
                Message::Request(request) if self.responder.is_some() => self.answer(request),
                other => self.backlog.push_back(other),
            }
        }
    }

    fn answer(&mut self, request: Request) {
        if let Some(responder) = self.responder.as_mut() {
            let outcome = responder(&request);
            self.send(Message::Response(Response {
                id: Some(request.id),
                outcome,
            }));
        }
    }

    /// Sends `initialize` (version 2025-11-25, these client capabilities)
    /// and `notifications/initialized`; returns the `initialize` result.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub fn initialize(&mut self, capabilities: Value) -> Result<Value, ErrorObject> {
        let result = self.request(
            "initialize",
            Some(serde_json::json!({
                "protocolVersion": crate::protocol::versions::LATEST,
                "capabilities": capabilities,
                "clientInfo": {"name": "tiny-mcp-memory-client", "version": "1.0.0"}
            })),
        )?;
        self.notify("notifications/initialized", None);
        Ok(result)
    }

    /// Answers server-to-client requests with `responder` from now on.
    pub fn on_server_request(
        &mut self,
        responder: impl FnMut(&Request) -> Result<Value, ErrorObject> + Send + 'static,
    ) {
        self.responder = Some(Box::new(responder));
    }

    /// Sends the following requests as `principal`, as a token verifier on
    /// HTTP would have established it, for testing handlers that read
    /// [`RequestContext::principal`](crate::RequestContext::principal) and
    /// lists filtered by scope
    /// ([`ServerBuilder::list_only_permitted`](crate::ServerBuilder::list_only_permitted)).
    /// Scope refusals (403) are the HTTP edge's and are not made here.
    /// Defaults to `None`.
    pub fn set_principal(&mut self, principal: Option<Principal>) {
        self.principal = principal.map(Arc::new);
    }

    /// Sets how long [`request`](Self::request) waits. Defaults to 10 s.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The next message from the server not yet taken, waiting at most
    /// `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Message> {
        if let Some(message) = self.backlog.pop_front() {
            return Some(message);
        }
        self.incoming.recv_timeout(timeout).ok()
    }

    /// Takes every notification received so far (without waiting).
    pub fn take_notifications(&mut self) -> Vec<Message> {
        while let Ok(message) = self.incoming.try_recv() {
            self.backlog.push_back(message);
        }
        let (notifications, rest) = self
            .backlog
            .drain(..)
            .partition(|m| matches!(m, Message::Notification(_)));
        self.backlog = rest;
        notifications.into_iter().collect()
    }
}

fn is_response_to(message: &Message, id: &RequestId) -> bool {
    matches!(message, Message::Response(r) if r.id.as_ref() == Some(id))
}

impl Drop for MemoryClient {
    fn drop(&mut self) {
        self.session
            .close("the memory client was dropped", Closing::ClientLeft);
        let limit = self.session.server.config.handler_exit_timeout;
        if let Err(e) = self.pool.join_within(Some(limit)) {
            log::error!("memory client: {}", e);
        }
    }
}
