//! Two servers in one process, each with its own `RedisTaskStore` on one
//! Redis (two `Server`s: two instance ids), as two instances behind a
//! load balancer (issue 30; DESIGN.md §21, §30). SEP-2663 "Task Update
//! Requests" and "Task Cancellation": a 2026-07-28 task started on `a`
//! and given input and cancelled through `b` behaves as on one instance;
//! a command for an instance that is gone is -32603 at once; a task whose
//! instance stopped renewing its lease is `failed` within the lease.

use std::time::{Duration, Instant};

use serde_json::json;
use tiny_mcp::{ErrorKind, RedisTaskStore, Server, TaskCommand, TaskStatus, TaskStore};

use super::Redis;
use crate::support::recv;
use crate::tasks::{
    client_2026, first_key, mcall, ok, poll_until, start_2026, status_is, task_builder, update,
    Controls,
};

const LEASE: Duration = Duration::from_secs(1);

/// Instances `a` (which runs the tasks here) and `b`, and a clone of
/// `a`'s store.
fn pair(redis: &Redis) -> (Server, Controls, Server, RedisTaskStore) {
    let store = |redis: &Redis| {
        RedisTaskStore::new(&redis.url())
            .expect("a Redis URL")
            .with_lease(LEASE)
    };
    let on_a = store(redis);
    let (builder, controls) = task_builder();
    let a = builder.task_store(on_a.clone()).build();
    let b = task_builder().0.task_store(store(redis)).build();
    (a, controls, b, on_a)
}

// Input for a task running on `a`, polled and answered through `b`,
// reaches the handler (twice); a cancel received by `b` sets the flag of
// a handler on `a`, and the task is `cancelled`.
#[test]
fn input_and_cancel_through_another_instance_reach_the_handler() {
    let redis = Redis::start();
    let (a, controls, b, _) = pair(&redis);
    let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a, "ask_twice");
    assert_eq!(recv(&controls.reached, "the handler's start"), "ask_twice");
    for answer in ["one", "two"] {
        let asked = poll_until(&mut on_b, &id, status_is("input_required"));
        let key = first_key(&asked["inputRequests"]);
        let content = json!({"action": "accept", "content": {"v": answer}});
        update(&mut on_b, &id, json!({ key: content }));
    }
    let done = poll_until(&mut on_b, &id, status_is("completed"));
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("one") && text.contains("two"), "{}", done);

    let id = start_2026(&mut on_a, "gated");
    assert_eq!(recv(&controls.reached, "the handler's start"), "gated");
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

// Issue 30: input is never dropped in silence. A command for an instance
// that no longer listens is -32603, at once (not after the forward
// timeout), and the task keeps its state.
#[test]
fn a_command_for_a_gone_instance_is_an_error_at_once() {
    let redis = Redis::start();
    let (a, controls, b, on_a) = pair(&redis);
    let (mut on_a_client, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a_client, "gated");
    recv(&controls.reached, "the handler's start");
    // A task of the same caller whose instance is gone, its lease not yet
    // run out, waiting for input.
    let mut orphan = on_a.get(&id).expect("the task");
    orphan.task_id = format!("{}-orphan", id);
    orphan.instance = "an-instance-that-stopped".into();
    orphan.move_to(TaskStatus::InputRequired, None);
    let ask = json!({"method": "elicitation/create", "params": {}});
    orphan.input_requests.insert("k".into(), ask);
    on_a.insert(orphan.clone()).unwrap();
    let started = Instant::now();
    let params = json!({"taskId": orphan.task_id, "inputResponses": {"k": {"action": "decline"}}});
    let error = mcall(&mut on_b, "tasks/update", params).expect_err("an error");
    assert_eq!(error.code.0, -32603, "{:?}", error);
    let error =
        mcall(&mut on_b, "tasks/cancel", json!({"taskId": orphan.task_id})).expect_err("an error");
    assert_eq!(error.code.0, -32603, "{:?}", error);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        poll_until(&mut on_b, &orphan.task_id, |_| true)["status"],
        "input_required"
    );
    let _ = controls.release.send(());
}

// Issue 30 "a dead instance's tasks": while `a` renews its lease (its
// handler runs) the task stays `working` for `b`; a record that names `a`
// but whose handler runs nowhere (as if `a` died with it, or its final
// status was lost: `a`'s lease thread stops renewing it) is `failed` for
// `b` within a few leases, -32603.
#[test]
fn a_stopped_instances_task_fails_within_its_lease() {
    let redis = Redis::start();
    let (a, controls, b, on_a) = pair(&redis);
    let (mut on_a_client, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a_client, "gated");
    recv(&controls.reached, "the handler's start");
    let mut held = on_a.get(&id).expect("the task");
    held.task_id = format!("{}-held", id);
    on_a.insert(held.clone()).unwrap();
    let inserted = Instant::now();
    let until = Instant::now() + LEASE * 2;
    while Instant::now() < until {
        let task = poll_until(&mut on_b, &id, |_| true);
        assert_eq!(task["status"], "working", "renewed: {}", task);
    }
    let failed = poll_until(&mut on_b, &held.task_id, status_is("failed"));
    assert!(
        inserted.elapsed() < LEASE * 3,
        "failed after {:?}",
        inserted.elapsed()
    );
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap_or("")
            .contains("the instance that ran this task stopped"),
        "{}",
        failed
    );
    assert_eq!(failed["error"]["code"], -32603, "{}", failed);
    let _ = controls.release.send(());
}

// The command reader subscribes again after Redis restarts (with
// back-off), and reads and writes go on through the pool at once (a pooled
// connection Redis closed is replaced, the multi-instance outage check
// found an insert failing on one): a command forwarded afterwards reaches
// `a` and is answered (here "not running here", -32602, since no handler
// runs that task).
#[test]
fn commands_reach_an_instance_again_after_redis_restarts() {
    let redis = Redis::start();
    let (a, _controls, _b, on_a) = pair(&redis);
    let on_b = RedisTaskStore::new(&redis.url()).expect("a Redis URL");
    assert_eq!(on_b.get("t"), None, "a pooled connection before");
    assert_eq!(on_a.get("t"), None, "a pooled connection before");
    let redis = redis.restart();
    let mut task = super::record("t", "o", 60_000);
    task.instance = a.handle().instance_id().to_string();
    on_a.insert(task.clone())
        .expect("an insert on a new connection");
    // A read on a connection Redis closed is made again on a new one.
    assert_eq!(on_b.get("t"), Some(task.clone()));
    let cancel = TaskCommand::Cancel {
        task_id: "t".into(),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match on_b.forward(&task, &cancel) {
            Err(e) if matches!(e.kind(), ErrorKind::InvalidParams(_)) => break,
            outcome => assert!(
                Instant::now() < deadline,
                "not resubscribed within 10 s: {:?}",
                outcome
            ),
        }
        std::thread::yield_now();
    }
    drop(redis);
}
