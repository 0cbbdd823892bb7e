//! What the client does with what the server sends unasked: requests
//! (sampling, elicitation, roots, ping) answered by the program's closures,
//! and notifications (progress to the call that asked for it, the rest to
//! the program's callback).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crossbeam_channel::{bounded, Receiver, Sender};
use parking_lot::Mutex;
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::options::ProgressFn;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, JsonObject, Notification, Request, RequestId, Response};
use crate::protocol::{
    methods, notifications, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ListRootsResult, ProgressNotificationParams, ProgressToken,
};

pub(crate) type SamplingFn =
    dyn Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, Error> + Send + Sync;
pub(crate) type ElicitationFn =
    dyn Fn(ElicitRequestParams) -> Result<ElicitResult, Error> + Send + Sync;
pub(crate) type RootsFn = dyn Fn() -> Result<ListRootsResult, Error> + Send + Sync;
pub(crate) type NotificationFn = dyn Fn(&Notification) + Send + Sync;

/// The program's closures, as registered on the builder.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<Arc<SamplingFn>>,
    pub(crate) elicitation: Option<Arc<ElicitationFn>>,
    pub(crate) roots: Option<Arc<RootsFn>>,
    pub(crate) notification: Option<Arc<NotificationFn>>,
    /// The extensions the program declares, by identifier
    /// ([`ClientBuilder::extension`](crate::ClientBuilder::extension)).
    pub(crate) extensions: JsonObject,
}

impl Handlers {
    /// `true` when the program answers server requests or takes
    /// notifications: then a 2025-11-25 HTTP client opens its GET stream.
    pub(crate) fn answers_anything(&self) -> bool {
        self.sampling.is_some()
            || self.elicitation.is_some()
            || self.roots.is_some()
            || self.notification.is_some()
    }

    /// The capabilities the client declares: one per registered closure
    /// (lifecycle "Capability Negotiation"; META-1 in 2026-07-28).
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.sampling.is_some() {
            caps.sampling = Some(JsonObject::new());
        }
        if self.elicitation.is_some() {
            let mut modes = JsonObject::new();
            modes.insert("form".into(), Value::Object(JsonObject::new()));
            modes.insert("url".into(), Value::Object(JsonObject::new()));
            caps.elicitation = Some(modes);
        }
        if self.roots.is_some() {
            caps.roots = Some(JsonObject::new());
        }
        for (id, settings) in &self.extensions {
            let settings = settings.as_object().cloned().unwrap_or_default();
            caps = caps.with_extension(id, settings);
        }
        caps
    }
}

/// Routes what the server sends unasked; shared by the client and its
/// transport.
pub(crate) struct Inbox {
    handlers: Handlers,
    progress: Mutex<HashMap<ProgressToken, ProgressFn>>,
    /// Listen requests waiting for their acknowledgement (LISTEN-3).
    acks: Mutex<HashMap<RequestId, Sender<Value>>>,
    /// Settled on 2026-07-28, where servers send no requests (REM-3).
    v2026: std::sync::atomic::AtomicBool,
}

impl Inbox {
    pub(crate) fn new(handlers: Handlers) -> Inbox {
        Inbox {
            handlers,
            progress: Mutex::new(HashMap::new()),
            acks: Mutex::new(HashMap::new()),
            v2026: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Sends progress for `token` to `progress` until the guard drops.
    pub(crate) fn watch_progress(
        self: &Arc<Self>,
        token: ProgressToken,
        progress: ProgressFn,
    ) -> ProgressGuard {
        self.progress.lock().insert(token.clone(), progress);
        ProgressGuard {
            inbox: Arc::clone(self),
            token,
        }
    }

    /// The honoured filter of listen request `id`, when its
    /// acknowledgement arrives.
    pub(crate) fn expect_ack(&self, id: RequestId) -> Receiver<Value> {
        let (tx, rx) = bounded(1);
        self.acks.lock().insert(id, tx);
        rx
    }

    /// LISTEN-3, LISTEN-5: an acknowledgement names its listen request in
    /// `_meta.subscriptionId`; `true` when one was waiting for it.
    fn acknowledged(&self, params: Option<&Value>) -> bool {
        let id = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(crate::protocol::meta::SUBSCRIPTION_ID))
            .and_then(RequestId::from_value);
        let waiting = id.and_then(|id| self.acks.lock().remove(&id));
        match waiting {
            Some(tx) => {
                let honored = params.and_then(|p| p.get("notifications")).cloned();
                let _ = tx.send(honored.unwrap_or_else(|| Value::Object(JsonObject::new())));
                true
            }
            None => false,
        }
    }

    /// A notification from the server: progress goes to its call (and is
    /// dropped when no call asked for it, PROG-4), the rest to the
    /// program's callback.
    pub(crate) fn notification(&self, notification: &Notification) {
        if notification.method == notifications::PROGRESS {
            let params = notification.params.clone().unwrap_or(Value::Null);
            match serde_json::from_value::<ProgressNotificationParams>(params) {
                Ok(params) => {
                    let callback = self.progress.lock().get(&params.progress_token).cloned();
                    if let Some(callback) = callback {
                        callback(&params);
                    }
                }
                Err(e) => log::warn!("ignoring a malformed progress notification: {}", e),
            }
            return;
        }
        if notification.method == notifications::SUBSCRIPTIONS_ACKNOWLEDGED
            && self.acknowledged(notification.params.as_ref())
        {
            return;
        }
        if let Some(callback) = &self.handlers.notification {
            callback(notification);
        }
    }

    /// The era settled on.
    pub(crate) fn settle(&self, era: crate::protocol::Era) {
        let v2026 = era == crate::protocol::Era::V2026_07_28;
        self.v2026.store(v2026, std::sync::atomic::Ordering::SeqCst);
    }

    /// A request from the server (2025-11-25), answered by the program's
    /// closures; a method without one is `-32601`. In 2026-07-28, which has
    /// no server-to-client requests (GEN-5, REM-3), every one is `-32601`
    /// and no closure runs.
    ///
    /// `raw` is the request as the server wrote it: the order of an
    /// elicitation form's fields is read from it ([`form_order`]).
    pub(crate) fn request(&self, request: Request, raw: &[u8]) -> Response {
        let id = request.id.clone();
        if self.v2026.load(std::sync::atomic::Ordering::SeqCst) {
            let error = ErrorObject::new(
                crate::jsonrpc::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "{}: servers send no requests in 2026-07-28 (input comes as input_required)",
                    request.method
                ),
            );
            return Response::error(Some(id), error);
        }
        let order = match request.method.as_str() {
            methods::ELICITATION_CREATE => form_order(raw),
            _ => Vec::new(),
        };
        match self.answer_ordered(&request.method, request.params, order) {
            Ok(result) => Response::ok(id, result),
            Err(error) => Response::error(Some(id), error),
        }
    }

    /// The result for one server request or one 2026-07-28 input request
    /// (`{method, params}`): the same closures answer both (MRTR-2).
    pub(crate) fn answer(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        self.answer_ordered(method, params, Vec::new())
    }

    /// [`answer`](Self::answer), an elicitation form's fields in `order`
    /// (the server's, when known).
    fn answer_ordered(
        &self,
        method: &str,
        params: Option<Value>,
        order: Vec<String>,
    ) -> Result<Value, ErrorObject> {
        let params = params.unwrap_or_else(|| Value::Object(JsonObject::new()));
        match method {
            methods::PING => Ok(Value::Object(JsonObject::new())),
            methods::SAMPLING_CREATE_MESSAGE => match &self.handlers.sampling {
                Some(f) => run(params, |p| f(p)),
                None => Err(ErrorObject::method_not_found(method)),
            },
            methods::ELICITATION_CREATE => match &self.handlers.elicitation {
                Some(f) => run(params, |mut p: ElicitRequestParams| {
                    if let ElicitRequestParams::Form(form) = &mut p {
                        form.property_order = order;
                    }
                    f(p)
                }),
                None => Err(ErrorObject::method_not_found(method)),
            },
            methods::ROOTS_LIST => match &self.handlers.roots {
                Some(f) => run(params, |_: Value| f()),
                None => Err(ErrorObject::method_not_found(method)),
            },
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }
}

/// Parses the params, runs the closure, serializes its result; a closure's
/// error is sent as its JSON-RPC error.
fn run<P: DeserializeOwned, R: serde::Serialize>(
    params: Value,
    f: impl FnOnce(P) -> Result<R, Error>,
) -> Result<Value, ErrorObject> {
    let params = serde_json::from_value(params)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params: {}", e)))?;
    let result = f(params).map_err(|e| e.to_error_object())?;
    serde_json::to_value(result).map_err(|e| ErrorObject::internal(e.to_string()))
}

/// The names of an `elicitation/create` request's
/// `params.requestedSchema.properties`, in the order the server wrote
/// them: the crate's JSON objects sort their keys, so the order is read
/// from the request's own bytes, each name once, values skipped. Empty
/// when the bytes do not have that shape.
pub(crate) fn form_order(raw: &[u8]) -> Vec<String> {
    #[derive(Deserialize)]
    struct Raw {
        params: Option<Params>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        requested_schema: Option<Schema>,
    }
    #[derive(Deserialize)]
    struct Schema {
        properties: Option<Names>,
    }
    let names = serde_json::from_slice::<Raw>(raw)
        .ok()
        .and_then(|raw| raw.params)
        .and_then(|params| params.requested_schema)
        .and_then(|schema| schema.properties);
    names.map_or_else(Vec::new, |names| names.0)
}

/// The member names of a JSON object, in document order.
struct Names(Vec<String>);

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: serde::Deserializer<'de>>(json: D) -> Result<Names, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = Names;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Names, A::Error> {
                let mut names: Vec<String> = Vec::new();
                while let Some(name) = members.next_key::<String>()? {
                    members.next_value::<IgnoredAny>()?;
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                Ok(Names(names))
            }
        }
        json.deserialize_map(Keys)
    }
}

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox").finish_non_exhaustive()
    }
}

/// Stops routing a call's progress when the call ends.
pub(crate) struct ProgressGuard {
    inbox: Arc<Inbox>,
    token: RequestId,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.inbox.progress.lock().remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forms_fields_keep_the_servers_order() {
        // client/elicitation "Requested Schema": the fields as the server
        // wrote them, though the crate's JSON objects sort their keys.
        let raw = br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"zeta":{"type":"string","properties":{"inner":{}}},"alpha":{"type":"integer"},"mid":{}},"required":["alpha"]}}}"#;
        assert_eq!(form_order(raw), ["zeta", "alpha", "mid"]);
        assert!(form_order(b"{\"params\":{}}").is_empty());
        assert!(form_order(b"not json").is_empty());
        let request = match crate::jsonrpc::Message::parse(raw) {
            Ok(crate::jsonrpc::Message::Request(request)) => request,
            other => panic!("{:?}", other),
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let saw = Arc::clone(&seen);
        let handlers = Handlers {
            elicitation: Some(Arc::new(move |request: ElicitRequestParams| {
                if let ElicitRequestParams::Form(form) = request {
                    *saw.lock() = form
                        .property_names()
                        .iter()
                        .map(|n| n.to_string())
                        .collect();
                }
                Ok(ElicitResult::decline())
            })),
            ..Handlers::default()
        };
        Inbox::new(handlers).request(request, raw);
        assert_eq!(*seen.lock(), ["zeta", "alpha", "mid"]);
    }
    use crate::jsonrpc::ErrorCode;
    use serde_json::json;

    // LC capability negotiation: a client declares what it registered, nothing else.
    #[test]
    fn capabilities_follow_the_registered_closures() {
        let mut handlers = Handlers::default();
        assert_eq!(
            serde_json::to_value(handlers.capabilities()).unwrap(),
            json!({})
        );
        handlers.elicitation = Some(Arc::new(|_| Ok(ElicitResult::decline())));
        handlers.roots = Some(Arc::new(|| Ok(ListRootsResult::new(Vec::new()))));
        assert_eq!(
            serde_json::to_value(handlers.capabilities()).unwrap(),
            json!({"elicitation": {"form": {}, "url": {}}, "roots": {}})
        );
    }

    #[test]
    fn unregistered_server_requests_are_method_not_found_and_ping_is_empty() {
        let inbox = Inbox::new(Handlers::default());
        let err = inbox
            .answer(methods::SAMPLING_CREATE_MESSAGE, None)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(inbox.answer(methods::PING, None).unwrap(), json!({}));
    }

    #[test]
    fn malformed_params_are_invalid_params() {
        let inbox = Inbox::new(Handlers {
            elicitation: Some(Arc::new(|_| Ok(ElicitResult::decline()))),
            ..Handlers::default()
        });
        let err = inbox
            .answer(methods::ELICITATION_CREATE, Some(json!({"message": 3})))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    }
}
