//! Change events across instances (DESIGN.md §16): the seam through which
//! a program carries list changes and resource updates between the
//! instances behind a load balancer.
//!
//! A change made here ([`ServerHandle`]'s `notify_*`, `add_*`, `remove_*`)
//! reaches this instance's sessions and listen streams and is published on
//! the [`ChangeBus`]; a change another instance published is fed in with
//! [`ServerHandle::apply_change`], which delivers it here and publishes
//! nothing. Events carry the id of the instance they came from, so an
//! instance that hears its own event back (pub/sub buses deliver to every
//! subscriber) drops it: no loops, no duplicates.

use serde_json::{json, Value};

use super::handle::ServerHandle;
use super::listen;
use crate::error::Error;
use crate::jsonrpc::Message;
use crate::protocol::notifications;

/// A change that every instance's clients should hear of.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(String),
}

/// A [`Change`] and the instance it was made on, as it travels on a bus.
///
/// Its wire form ([`to_json`](Self::to_json)) is one JSON object:
/// `{"origin": "<instance id>", "change": "tools" | "prompts" |
/// "resources" | {"updated": "<uri>"}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEvent {
    /// The id of the instance the change was made on
    /// ([`ServerHandle::instance_id`]).
    pub origin: String,
    /// What changed.
    pub change: Change,
}

impl ChangeEvent {
    /// The event as one line of JSON, for a bus.
    pub fn to_json(&self) -> String {
        let change = match &self.change {
            Change::ToolsListChanged => json!("tools"),
            Change::PromptsListChanged => json!("prompts"),
            Change::ResourcesListChanged => json!("resources"),
            Change::ResourceUpdated(uri) => json!({ "updated": uri }),
        };
        json!({"origin": self.origin, "change": change}).to_string()
    }

    /// The event of [`to_json`](Self::to_json)'s form.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for
    /// anything else (a bus is input like any other).
    pub fn from_json(text: &str) -> Result<ChangeEvent, Error> {
        let invalid = || Error::invalid_params("not a change event");
        // From the bytes: the crate reads every message so, and a second
        // reader (of `&str`) would be a second parser in a binary.
        let value: Value = serde_json::from_slice(text.as_bytes()).map_err(|_| invalid())?;
        let origin = value
            .get("origin")
            .and_then(Value::as_str)
            .ok_or_else(invalid)?;
        let change = match value.get("change").ok_or_else(invalid)? {
            Value::String(kind) if kind == "tools" => Change::ToolsListChanged,
            Value::String(kind) if kind == "prompts" => Change::PromptsListChanged,
            Value::String(kind) if kind == "resources" => Change::ResourcesListChanged,
            other => match other.get("updated").and_then(Value::as_str) {
                Some(uri) => Change::ResourceUpdated(uri.to_string()),
                None => return Err(invalid()),
            },
        };
        Ok(ChangeEvent {
            origin: origin.to_string(),
            change,
        })
    }
}

/// Carries this instance's changes to the others: a Redis stream, pub/sub, a
/// message queue, whatever the deployment runs. Set it with
/// [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus); the
/// default publishes nothing (one instance).
///
/// `publish` is called on the thread that made the change, after this
/// instance's clients were told: hand the event to a queue or a
/// connection and return. The program's subscriber feeds what other
/// instances publish into [`ServerHandle::apply_change`].
pub trait ChangeBus: Send + Sync + 'static {
    /// Publishes `event` to the other instances.
    fn publish(&self, event: &ChangeEvent);

    /// Called once, when the server is built: a bus starts its subscriber
    /// here, which feeds the other instances' events into
    /// [`ServerHandle::apply_change`]. Keep a
    /// [`WeakServerHandle`](crate::WeakServerHandle) (`server.downgrade()`),
    /// not the handle, and stop once it no longer upgrades or
    /// [`is_closed`](ServerHandle::is_closed). The default does nothing
    /// (the program subscribes itself).
    fn attach(&self, server: &ServerHandle) {
        let _ = server;
    }

    /// How many events this bus dropped since it was made, none sent (a
    /// bounded queue's oldest, while the bus was slower than the changes
    /// or its broker away): the metrics' `tiny_mcp_change_bus_dropped_total`.
    /// The default: 0.
    fn dropped(&self) -> u64 {
        0
    }
}

impl<F> ChangeBus for F
where
    F: Fn(&ChangeEvent) + Send + Sync + 'static,
{
    fn publish(&self, event: &ChangeEvent) {
        self(event)
    }
}

impl ServerHandle {
    /// This instance's id (a random UUID, fixed for the server's life):
    /// the `origin` of the events it publishes.
    pub fn instance_id(&self) -> &str {
        &self.inner.instance_id
    }

    /// Delivers a change another instance published to this instance's
    /// sessions, GET streams, subscribers and listen streams, and
    /// publishes nothing. An event whose origin is this instance is
    /// dropped (it was delivered when it was made); `false` then.
    pub fn apply_change(&self, event: &ChangeEvent) -> bool {
        if event.origin == self.inner.instance_id {
            return false;
        }
        self.deliver(&event.change);
        true
    }

    /// Delivers `change` here, then publishes it.
    pub(crate) fn change(&self, change: Change) {
        self.deliver(&change);
        if let Some(bus) = &self.inner.bus {
            bus.publish(&ChangeEvent {
                origin: self.inner.instance_id.clone(),
                change,
            });
        }
    }

    /// Tells this instance's clients of `change`.
    fn deliver(&self, change: &Change) {
        let inner = &self.inner;
        let (method, listen) = match change {
            Change::ToolsListChanged => (notifications::TOOLS_LIST_CHANGED, listen::Change::Tools),
            Change::PromptsListChanged => {
                (notifications::PROMPTS_LIST_CHANGED, listen::Change::Prompts)
            }
            Change::ResourcesListChanged => (
                notifications::RESOURCES_LIST_CHANGED,
                listen::Change::Resources,
            ),
            Change::ResourceUpdated(uri) => return self.deliver_updated(uri),
        };
        inner.broadcast(method, None);
        inner.listen.notify(listen);
    }

    /// RES-3: `notifications/resources/updated` to the sessions that
    /// subscribed to `uri` and the listen streams that name it.
    fn deliver_updated(&self, uri: &str) {
        self.inner.listen.notify(listen::Change::Updated(uri));
        for session in self.inner.live_sessions() {
            let subscribed = session.state.lock().subscriptions.contains(uri);
            if subscribed {
                session.send_unrelated(Message::notification(
                    notifications::RESOURCES_UPDATED,
                    Some(json!({ "uri": uri })),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_junk_is_refused() {
        let changes = [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
            Change::ResourceUpdated("file:///a b".into()),
        ];
        for change in changes.iter() {
            let event = ChangeEvent {
                origin: "i1".into(),
                change: change.clone(),
            };
            assert_eq!(ChangeEvent::from_json(&event.to_json()).unwrap(), event);
        }
        for junk in [
            "",
            "{}",
            r#"{"origin":"i","change":"x"}"#,
            r#"{"change":"tools"}"#,
        ]
        .iter()
        {
            assert!(ChangeEvent::from_json(junk).is_err(), "{}", junk);
        }
    }
}
