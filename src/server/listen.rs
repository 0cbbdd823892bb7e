//! `subscriptions/listen` streams (2026-07-28), keyed by ids the server
//! mints.
//!
//! A listen request opens one subscription whose id, stamped on every
//! message as `_meta["io.modelcontextprotocol/subscriptionId"]`, is the
//! request's JSON-RPC id with its JSON type (LISTEN-5). Request ids are
//! unique only per sender and 2026-07-28 clients have no session, so two
//! clients may both listen with id `1`: the registry is keyed by a number it
//! mints for each stream, never by the request id (DESIGN.md §10).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::envelope::decorate;
use super::sink::Sink;
use crate::error::to_json;
use crate::jsonrpc::{JsonObject, Message, RequestId, Response};
use crate::protocol::{meta, notifications, ServerCapabilities};

/// `SubscriptionFilter`: `{"toolsListChanged"?, "promptsListChanged"?,
/// "resourcesListChanged"?, "resourceSubscriptions"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubscriptionFilter {
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resource_subscriptions: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl SubscriptionFilter {
    /// LISTEN-4: the part of `self` the server honours, by its capabilities.
    pub(crate) fn honoured(&self, capabilities: &ServerCapabilities) -> SubscriptionFilter {
        let listed = |c: &Option<crate::protocol::ListChangedCapability>| matches!(c, Some(c) if c.list_changed == Some(true));
        let resources = capabilities.resources.as_ref();
        SubscriptionFilter {
            tools_list_changed: self.tools_list_changed && listed(&capabilities.tools),
            prompts_list_changed: self.prompts_list_changed && listed(&capabilities.prompts),
            resources_list_changed: self.resources_list_changed
                && resources.map_or(false, |r| r.list_changed == Some(true)),
            resource_subscriptions: if resources.map_or(false, |r| r.subscribe == Some(true)) {
                self.resource_subscriptions.clone()
            } else {
                Vec::new()
            },
        }
    }
}

/// A change a listen stream may be told about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Change<'a> {
    Tools,
    Prompts,
    Resources,
    Updated(&'a str),
}

struct Listener {
    /// The session (stdio connection, HTTP request) that opened it.
    owner: u64,
    request_id: RequestId,
    filter: SubscriptionFilter,
    sink: Arc<dyn Sink>,
}

/// Every open listen stream of a server.
pub(crate) struct ListenRegistry {
    listeners: Mutex<HashMap<u64, Arc<Listener>>>,
    next_key: AtomicU64,
    max: usize,
}

impl ListenRegistry {
    pub(crate) fn new(max: usize) -> ListenRegistry {
        ListenRegistry {
            listeners: Mutex::new(HashMap::new()),
            next_key: AtomicU64::new(1),
            max,
        }
    }

    /// Opens a stream and sends its acknowledgement first (LISTEN-3).
    /// Returns the stream's key, or `None` at the limit.
    pub(crate) fn open(
        &self,
        owner: u64,
        request_id: RequestId,
        filter: SubscriptionFilter,
        sink: Arc<dyn Sink>,
    ) -> Option<u64> {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let listener = Arc::new(Listener {
            owner,
            request_id,
            filter,
            sink,
        });
        // The acknowledgement is queued before the stream is registered, so
        // no change notification can overtake it.
        let mut params = JsonObject::new();
        params.insert("_meta".into(), stamp_meta(&listener.request_id));
        // A filter that cannot be serialized (a bug, logged) is left out.
        if let Ok(filter) = to_json("a listen filter", &listener.filter) {
            params.insert("notifications".into(), filter);
        }
        {
            let mut listeners = self.listeners.lock();
            if listeners.len() >= self.max {
                return None;
            }
            listener.sink.send(Message::notification(
                notifications::SUBSCRIPTIONS_ACKNOWLEDGED,
                Some(Value::Object(params)),
            ));
            listeners.insert(key, listener);
        }
        Some(key)
    }

    /// Sends `change` to every stream that asked for it; a stream whose
    /// sink refuses is dropped (that stream only).
    pub(crate) fn notify(&self, change: Change<'_>) {
        let listeners: Vec<(u64, Arc<Listener>)> = self
            .listeners
            .lock()
            .iter()
            .map(|(k, l)| (*k, Arc::clone(l)))
            .collect();
        let mut gone = Vec::new();
        for (key, listener) in listeners {
            let f = &listener.filter;
            let (method, uri) = match change {
                Change::Tools if f.tools_list_changed => (notifications::TOOLS_LIST_CHANGED, None),
                Change::Prompts if f.prompts_list_changed => {
                    (notifications::PROMPTS_LIST_CHANGED, None)
                }
                Change::Resources if f.resources_list_changed => {
                    (notifications::RESOURCES_LIST_CHANGED, None)
                }
                Change::Updated(uri) if f.resource_subscriptions.iter().any(|u| u == uri) => {
                    (notifications::RESOURCES_UPDATED, Some(uri))
                }
                _ => continue,
            };
            let mut params = JsonObject::new();
            if let Some(uri) = uri {
                params.insert("uri".into(), Value::from(uri));
            }
            params.insert("_meta".into(), stamp_meta(&listener.request_id));
            if !listener
                .sink
                .send(Message::notification(method, Some(Value::Object(params))))
            {
                gone.push(key);
            }
        }
        if !gone.is_empty() {
            let mut listeners = self.listeners.lock();
            for key in gone {
                listeners.remove(&key);
            }
        }
    }

    /// `true` while `owner` has a listen stream opened by request `id`.
    pub(crate) fn contains(&self, owner: u64, request_id: &RequestId) -> bool {
        self.listeners
            .lock()
            .values()
            .any(|l| l.owner == owner && &l.request_id == request_id)
    }

    /// Forgets a stream without a word (its client went away, LISTEN-10).
    pub(crate) fn close(&self, key: u64) {
        self.listeners.lock().remove(&key);
    }

    /// stdio `notifications/cancelled` naming a listen request: forget it.
    /// Returns `true` if there was one.
    pub(crate) fn cancel(&self, owner: u64, request_id: &RequestId) -> bool {
        let mut listeners = self.listeners.lock();
        let key = listeners
            .iter()
            .find(|(_, l)| l.owner == owner && &l.request_id == request_id)
            .map(|(k, _)| *k);
        match key {
            Some(key) => {
                listeners.remove(&key);
                true
            }
            None => false,
        }
    }

    /// Forgets every stream of `owner` without a word (its client left,
    /// LISTEN-12).
    pub(crate) fn forget_owner(&self, owner: u64) {
        self.listeners.lock().retain(|_, l| l.owner != owner);
    }

    /// Ends every stream gracefully (LISTEN-11): the listen request's
    /// result `{"resultType": "complete", "_meta": {subscriptionId}}`.
    pub(crate) fn close_all(&self, server_info: &crate::protocol::Implementation) {
        self.close_where(server_info, |_| true)
    }

    /// Ends gracefully the streams whose owner passes `owned`.
    pub(crate) fn close_where(
        &self,
        server_info: &crate::protocol::Implementation,
        owned: impl Fn(u64) -> bool,
    ) {
        let listeners: Vec<Arc<Listener>> = {
            let mut map = self.listeners.lock();
            let keys: Vec<u64> = map
                .iter()
                .filter(|(_, l)| owned(l.owner))
                .map(|(k, _)| *k)
                .collect();
            keys.into_iter().filter_map(|k| map.remove(&k)).collect()
        };
        for listener in listeners {
            let mut result = JsonObject::new();
            result.insert("_meta".into(), stamp_meta(&listener.request_id));
            let result = decorate(Value::Object(result), server_info, None);
            listener.sink.send(Message::Response(Response::ok(
                listener.request_id.clone(),
                result,
            )));
            listener.sink.end();
        }
    }

    /// How many streams are open.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.listeners.lock().len()
    }
}

fn stamp_meta(id: &RequestId) -> Value {
    let mut m = JsonObject::new();
    m.insert(meta::SUBSCRIPTION_ID.into(), id.to_value());
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::Receiver;

    fn sink() -> (Arc<dyn Sink>, Receiver<Message>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (Arc::new(crate::server::sink::ChannelSink(tx)), rx)
    }

    fn sub_id(message: &Message) -> Value {
        let text = message.to_json_string();
        let value: Value = serde_json::from_str(&text).unwrap();
        value["params"]["_meta"][meta::SUBSCRIPTION_ID].clone()
    }

    // LISTEN-3, LISTEN-5, LISTEN-7: ack first, exact id, only asked types.
    #[test]
    fn same_request_id_from_two_clients() {
        let registry = ListenRegistry::new(8);
        let filter = SubscriptionFilter {
            tools_list_changed: true,
            ..Default::default()
        };
        let (a, a_rx) = sink();
        let (b, b_rx) = sink();
        registry
            .open(1, RequestId::Number(1), filter.clone(), a)
            .unwrap();
        registry.open(2, RequestId::Number(1), filter, b).unwrap();
        registry.notify(Change::Tools);
        registry.notify(Change::Prompts);
        for rx in [&a_rx, &b_rx] {
            let ack = rx.try_recv().unwrap();
            assert!(
                matches!(&ack, Message::Notification(n) if n.method == notifications::SUBSCRIPTIONS_ACKNOWLEDGED)
            );
            assert_eq!(sub_id(&ack), Value::from(1));
            let change = rx.try_recv().unwrap();
            assert!(
                matches!(&change, Message::Notification(n) if n.method == notifications::TOOLS_LIST_CHANGED)
            );
            assert_eq!(sub_id(&change), Value::from(1));
            assert!(rx.try_recv().is_err(), "prompts were not asked for");
        }
        // Cancelling one leaves the other.
        assert!(registry.cancel(1, &RequestId::Number(1)));
        assert_eq!(registry.len(), 1);
    }

    // LISTEN-4: only what the capabilities advertise is honoured.
    #[test]
    fn honoured_subset() {
        let caps = ServerCapabilities {
            tools: Some(crate::protocol::ListChangedCapability {
                list_changed: Some(true),
            }),
            ..Default::default()
        };
        let asked = SubscriptionFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resource_subscriptions: vec!["a".into()],
            ..Default::default()
        };
        let got = asked.honoured(&caps);
        assert!(got.tools_list_changed);
        assert!(!got.prompts_list_changed);
        assert!(got.resource_subscriptions.is_empty());
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::json!({"toolsListChanged": true})
        );
    }

    #[test]
    fn at_the_limit_and_graceful_close() {
        let registry = ListenRegistry::new(1);
        let (a, a_rx) = sink();
        let (b, _) = sink();
        registry
            .open(1, RequestId::from("x"), SubscriptionFilter::default(), a)
            .unwrap();
        assert!(registry
            .open(2, RequestId::from("y"), SubscriptionFilter::default(), b)
            .is_none());
        registry.close_all(&crate::protocol::Implementation::new("s", "1"));
        let _ack = a_rx.try_recv().unwrap();
        match a_rx.try_recv().unwrap() {
            Message::Response(r) => {
                let result = r.outcome.unwrap();
                assert_eq!(result["resultType"], "complete");
                assert_eq!(result["_meta"][meta::SUBSCRIPTION_ID], "x");
            }
            other => panic!("expected the final result, got {:?}", other),
        }
        assert_eq!(registry.len(), 0);
    }
}
