//! Tasks across instances (DESIGN.md §21, issue 30): two servers share one
//! task store whose `forward` carries `tasks/update` and `tasks/cancel` to
//! the instance that runs the handler (`TaskStore::attach`,
//! `TaskStore::forward`, `ServerHandle::apply_task_command`), as a Redis
//! store does between processes. SEP-2663 "Task Update Requests" and
//! "Task Cancellation": the handler sees its input and its cancellation as
//! on one instance.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use tiny_mcp::{
    Error, MemoryTaskStore, Server, ServerHandle, TaskCommand, TaskRecord, TaskStore,
    WeakServerHandle,
};

use super::{
    client_2026, first_key, mcall, ok, poll_until, start_2026, status_is, task_builder, update,
    Controls,
};
use crate::support::recv;

/// One store for every instance; `forward` applies the command on the
/// instance the record names, or fails as an unreachable one would.
#[derive(Clone)]
struct Shared {
    store: Arc<MemoryTaskStore>,
    instances: Arc<Mutex<HashMap<String, WeakServerHandle>>>,
    carries: bool,
}

impl TaskStore for Shared {
    fn insert(&self, record: TaskRecord) -> Result<(), Error> {
        self.store.insert(record)
    }
    fn get(&self, task_id: &str) -> Option<TaskRecord> {
        self.store.get(task_id)
    }
    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord> {
        self.store.update(task_id, change)
    }
    fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, Option<String>), Error> {
        self.store.list(owner, cursor, limit)
    }
    fn attach(&self, server: &ServerHandle) {
        let id = server.instance_id().to_string();
        self.instances.lock().insert(id, server.downgrade());
    }
    fn forward(&self, record: &TaskRecord, command: &TaskCommand) -> Result<bool, Error> {
        if !self.carries {
            return Ok(false);
        }
        let target = self.instances.lock().get(&record.instance).cloned();
        match target.and_then(|weak| weak.upgrade()) {
            Some(server) => server.apply_task_command(command).map(|()| true),
            None => Err(Error::msg("the instance is gone")),
        }
    }
}

fn shared(carries: bool) -> Shared {
    Shared {
        store: Arc::new(MemoryTaskStore::new(100, 100)),
        instances: Arc::new(Mutex::new(HashMap::new())),
        carries,
    }
}

/// Instances `a` (which runs the tasks here) and `b`, on one store.
fn pair(store: &Shared) -> (Server, Controls, Server) {
    let (builder, controls) = task_builder();
    let a = builder.task_store(store.clone()).build();
    let b = task_builder().0.task_store(store.clone()).build();
    (a, controls, b)
}

// SEP-2663 "Task Update Requests": input for a task running on `a`,
// polled and answered through `b`, reaches the handler, twice.
#[test]
fn update_through_another_instance_reaches_the_handler() {
    let store = shared(true);
    let (a, controls, b) = pair(&store);
    let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a, "ask_twice");
    assert_eq!(recv(&controls.reached, "the handler's start"), "ask_twice");
    for answer in ["one", "two"].iter() {
        let asked = poll_until(&mut on_b, &id, status_is("input_required"));
        let key = first_key(&asked["inputRequests"]);
        let content = json!({"action": "accept", "content": {"v": answer}});
        update(&mut on_b, &id, json!({ key: content }));
    }
    let done = poll_until(&mut on_b, &id, status_is("completed"));
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("one") && text.contains("two"), "{}", done);
}

// SEP-2663 "Task Cancellation": a cancel received by `b` sets the flag of
// the handler on `a`, and the task is `cancelled`.
#[test]
fn cancel_through_another_instance_stops_the_handler() {
    let store = shared(true);
    let (a, controls, b) = pair(&store);
    let mut on_b = client_2026(&b);
    let id = start_2026(&mut client_2026(&a), "gated");
    recv(&controls.reached, "the handler's start");
    ok(
        mcall(&mut on_b, "tasks/cancel", json!({"taskId": id})),
        "cancel",
    );
    assert!(
        recv(&controls.cancelled, "the handler's end"),
        "flag not set"
    );
    assert_eq!(poll_until(&mut on_b, &id, |_| true)["status"], "cancelled");
}

// Issue 30: input is never dropped in silence. An instance that cannot be
// reached, and a store that carries no commands, answer -32603; the task
// keeps waiting for its input.
#[test]
fn update_that_cannot_reach_the_handler_is_an_error() {
    for carries in [true, false].iter() {
        let store = shared(*carries);
        let (a, controls, b) = pair(&store);
        let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
        let id = start_2026(&mut on_a, "ask_twice");
        recv(&controls.reached, "the handler's start");
        let asked = poll_until(&mut on_b, &id, status_is("input_required"));
        store.instances.lock().clear();
        let key = first_key(&asked["inputRequests"]);
        let params = json!({"taskId": id, "inputResponses": { key: {"action": "decline"} }});
        let error = mcall(&mut on_b, "tasks/update", params).expect_err("an error");
        assert_eq!(error.code.0, -32603, "{:?}", error);
        assert_eq!(
            poll_until(&mut on_a, &id, |_| true)["status"],
            "input_required"
        );
        ok(
            mcall(&mut on_a, "tasks/cancel", json!({"taskId": id})),
            "cancel",
        );
    }
}
