//! `RequestContext`: what a handler knows about its request and can do with
//! the client.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cancel::CancellationFlag;
use crate::jsonrpc::{JsonObject, Message, RequestId};
use crate::protocol::{
    methods, notifications, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsResult, LoggingLevel,
    ProgressToken,
};
use crate::server::ServerHandle;
use crate::session::Session;
use crate::transport::Sink;
use crate::{Error, ErrorKind};

/// The context of one request, passed first to every handler.
///
/// Everything the handler sends (progress, log messages, requests to the
/// client) is related to this request, and the transport routes it: on
/// stdio to stdout, on Streamable HTTP to this request's response stream.
///
/// Blocking calls to the client ([`create_message`](Self::create_message),
/// [`elicit`](Self::elicit), [`list_roots`](Self::list_roots)) check the
/// client's declared capability first, wait at most the server's
/// client-request timeout, and return [`ErrorKind::Cancelled`] as soon as
/// this request is cancelled.
pub struct RequestContext {
    pub(crate) session: Arc<Session>,
    pub(crate) request_id: RequestId,
    pub(crate) method: String,
    pub(crate) flag: CancellationFlag,
    pub(crate) sink: Arc<dyn Sink>,
    pub(crate) meta: Option<JsonObject>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("request_id", &self.request_id)
            .field("method", &self.method)
            .field("cancelled", &self.flag.is_cancelled())
            .finish()
    }
}

impl RequestContext {
    /// The id of the request being handled, with its JSON type.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// The method being handled, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The `Mcp-Session-Id` on Streamable HTTP; `None` on stdio.
    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_deref()
    }

    /// The request's `params._meta`, if it had one.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.meta.as_ref()
    }

    /// The client's `clientInfo` from `initialize`.
    pub fn client_info(&self) -> Option<Implementation> {
        self.session.state.lock().client_info.clone()
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.session.state.lock().client_capabilities.clone()
    }

    /// The negotiated protocol version, e.g. `2025-11-25`.
    pub fn protocol_version(&self) -> String {
        self.session.state.lock().protocol_version.clone()
    }

    /// A handle to the server, to change what it offers or notify clients.
    pub fn server(&self) -> ServerHandle {
        ServerHandle::new(Arc::clone(&self.session.server))
    }

    /// `true` once the request was cancelled. Poll it in long loops.
    pub fn is_cancelled(&self) -> bool {
        self.flag.is_cancelled()
    }

    /// `Err(Cancelled)` once the request was cancelled; use with `?`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Cancelled`] with the canceller's reason.
    pub fn check_cancelled(&self) -> Result<(), Error> {
        if self.flag.is_cancelled() {
            Err(Error::cancelled(self.flag.reason()))
        } else {
            Ok(())
        }
    }

    /// A clone of this request's cancellation flag, to hand to other threads.
    pub fn cancellation_flag(&self) -> CancellationFlag {
        self.flag.clone()
    }

    /// The request's `_meta.progressToken`, with its JSON type.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.meta
            .as_ref()
            .and_then(|m| m.get("progressToken"))
            .and_then(RequestId::from_value)
    }

    /// Sends `notifications/progress` for this request; a no-op when the
    /// request carried no `progressToken` or was cancelled.
    ///
    /// Shape: `{"progressToken", "progress", "total"?, "message"?}`.
    /// `progress` must grow from one call to the next (PROG-2).
    ///
    /// Spec: basic/utilities/progress (2025-11-25).
    pub fn notify_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let token = match self.progress_token() {
            Some(token) => token,
            None => return,
        };
        if self.flag.is_cancelled() {
            return;
        }
        let mut params = JsonObject::new();
        params.insert("progressToken".into(), token.to_value());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::from(message));
        }
        self.sink.send(Message::notification(
            notifications::PROGRESS,
            Some(Value::Object(params)),
        ));
    }

    /// Sends `notifications/message` at `level` with `data`, unless the
    /// client asked for a higher level with `logging/setLevel`.
    ///
    /// Spec: server/utilities/logging (2025-11-25).
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        self.log_with_logger(level, None, data)
    }

    /// Like [`log`](Self::log), naming the `logger`.
    pub fn log_with_logger(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: impl Into<Value>,
    ) {
        let wanted = self.session.state.lock().log_level;
        if matches!(wanted, Some(min) if level < min) || self.flag.is_cancelled() {
            return;
        }
        let mut params = JsonObject::new();
        params.insert("level".into(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data.into());
        self.sink.send(Message::notification(
            notifications::MESSAGE,
            Some(Value::Object(params)),
        ));
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] if the client did not declare
    /// `sampling` (SAMP-1); otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: client/sampling (2025-11-25).
    pub fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        if !self.client_capabilities().supports_sampling() {
            return Err(missing("sampling"));
        }
        self.call(
            methods::SAMPLING_CREATE_MESSAGE,
            serde_json::to_value(params)?,
        )
    }

    /// Asks the user for input (`elicitation/create`), in form or URL mode.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] naming `elicitation.form` or
    /// `elicitation.url` if the client did not declare that mode (ELIC-1);
    /// otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: client/elicitation (2025-11-25).
    pub fn elicit(&self, params: impl Into<ElicitRequestParams>) -> Result<ElicitResult, Error> {
        let params = params.into();
        let caps = self.client_capabilities();
        match &params {
            ElicitRequestParams::Form(_) if !caps.supports_elicitation_form() => {
                return Err(missing("elicitation.form"))
            }
            ElicitRequestParams::Url(_) if !caps.supports_elicitation_url() => {
                return Err(missing("elicitation.url"))
            }
            _ => {}
        }
        self.call(methods::ELICITATION_CREATE, serde_json::to_value(params)?)
    }

    /// Tells the client a URL-mode elicitation finished
    /// (`notifications/elicitation/complete {elicitationId}`, ELIC-5).
    pub fn notify_elicitation_complete(&self, elicitation_id: &str) {
        self.sink.send(Message::notification(
            notifications::ELICITATION_COMPLETE,
            Some(serde_json::json!({ "elicitationId": elicitation_id })),
        ));
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CapabilityMissing`] if the client did not declare
    /// `roots` (ROOT-1); otherwise as [`send_request`](Self::send_request).
    ///
    /// Spec: client/roots (2025-11-25).
    pub fn list_roots(&self) -> Result<ListRootsResult, Error> {
        if !self.client_capabilities().supports_roots() {
            return Err(missing("roots"));
        }
        self.call(methods::ROOTS_LIST, Value::Object(JsonObject::new()))
    }

    fn call<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, Error> {
        let timeout = self.session.server.config.client_request_timeout;
        let value = self.send_request(method, Some(params), timeout)?;
        Ok(serde_json::from_value(value)?)
    }

    /// Sends a request to the client and blocks until it answers.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::Cancelled`] when this request is cancelled meanwhile
    ///   (the client is sent `notifications/cancelled` for ours);
    /// - [`ErrorKind::Timeout`] after `timeout` (likewise, LC-6);
    /// - [`ErrorKind::Client`] when the client answers with an error;
    /// - [`ErrorKind::Closed`] when the connection is gone.
    pub fn send_request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, Error> {
        self.check_cancelled()?;
        let session = &self.session;
        let id = session.next_request_id();
        let (sender, receiver) = crossbeam_channel::bounded(1);
        session.pending.lock().insert(id.clone(), sender);
        if !session.in_flight.add_nested(&self.request_id, id.clone()) {
            // Cancelled between the check above and now.
            session.pending.lock().remove(&id);
            return Err(Error::cancelled(self.flag.reason()));
        }
        let sent = self.sink.send(Message::request(id.clone(), method, params));
        let outcome = if sent {
            receiver.recv_timeout(timeout)
        } else {
            Err(RecvTimeoutError::Disconnected)
        };
        session.in_flight.remove_nested(&self.request_id, &id);
        match outcome {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => {
                session.cancel_nested(vec![id], Some("timed out"), Some(&self.sink));
                Err(Error::new(ErrorKind::Timeout {
                    method: method.to_string(),
                    after: timeout,
                }))
            }
            Err(RecvTimeoutError::Disconnected) => {
                session.pending.lock().remove(&id);
                Err(Error::new(ErrorKind::Closed))
            }
        }
    }
}

fn missing(capability: &str) -> Error {
    Error::new(ErrorKind::CapabilityMissing {
        capability: capability.to_string(),
    })
}

/// A JSON number, written as an integer when it is one (`50`, not `50.0`).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}
