//! The `TaskStore` contract on Redis, as `MemoryTaskStore` keeps it
//! (src/server/tasks/store.rs): records, the owner's listing with the
//! store's cursor (TASK-8), expiry, the bounds of DESIGN.md §6 and §26,
//! final states (TASK-4) and compare-and-set updates.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use tiny_mcp::{ErrorKind, RedisTaskStore, TaskRecord, TaskStatus, TaskStore};

use super::{record, Redis};
use crate::support::WAIT;

fn store(redis: &Redis) -> RedisTaskStore {
    RedisTaskStore::new(&redis.url()).expect("a Redis URL")
}

fn status(store: &RedisTaskStore, id: &str) -> Option<TaskStatus> {
    store.get(id).map(|r| r.status)
}

// Every field comes back as inserted and as updated; an unknown id is
// `None`; a second store on another prefix does not see the first's tasks.
#[test]
fn records_round_trip_through_redis() {
    let redis = Redis::start();
    let store = store(&redis);
    let mut task = record("a", "session\u{0}1", 60_000);
    task.peer = "peer\u{0}192.0.2.1".into();
    task.instance = "elsewhere".into();
    store.insert(task.clone()).unwrap();
    assert_eq!(store.get("a"), Some(task.clone()));
    assert_eq!(store.get("nope"), None);
    let updated = store.update("a", &mut |r| {
        r.move_to(TaskStatus::InputRequired, Some("asks".into()));
        r.input_requests.insert("k".into(), json!({"method": "x"}));
    });
    let updated = updated.expect("the task");
    assert_eq!(updated.status, TaskStatus::InputRequired);
    assert_eq!(store.get("a"), Some(updated));
    assert!(store.update("nope", &mut |_| {}).is_none());
    let other = RedisTaskStore::new(&redis.url())
        .unwrap()
        .with_prefix("other:");
    assert_eq!(other.get("a"), None);
}

// tasks/list: the owner's tasks only, in pages, oldest first, with the
// store's cursor; a cursor it did not give out is -32602 (TASK-8).
#[test]
fn lists_an_owners_tasks_in_pages() {
    let redis = Redis::start();
    let store = store(&redis);
    for (id, owner) in [("a", "x"), ("b", "y"), ("c", "x"), ("d", "x")] {
        store.insert(record(id, owner, 60_000)).unwrap();
        // Creation order is by the millisecond: let one pass.
        let now = Instant::now();
        while now.elapsed() < Duration::from_millis(2) {
            thread::yield_now();
        }
    }
    let (page, next) = store.list("x", None, 2).unwrap();
    let ids: Vec<_> = page.iter().map(|r| r.task_id.as_str()).collect();
    assert_eq!(ids, ["a", "c"]);
    let (page, next) = store.list("x", next.as_deref(), 2).unwrap();
    let ids: Vec<_> = page.iter().map(|r| r.task_id.as_str()).collect();
    assert_eq!(ids, ["d"]);
    assert!(next.is_none());
    for junk in ["nope", "", "12:a", "0000000000000000:"] {
        let error = store.list("x", Some(junk), 2).unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidParams(_)),
            "{}: {:?}",
            junk,
            error
        );
    }
    assert!(store.list("z", None, 10).unwrap().0.is_empty());
}

// A finished task is forgotten once its TTL passed, and leaves the
// count and the owner's listing; a running one outlives its TTL.
#[test]
fn finished_tasks_expire_running_ones_stay() {
    let redis = Redis::start();
    let store = store(&redis).with_max_tasks(2);
    store.insert(record("running", "o", 1)).unwrap();
    store.insert(record("done", "o", 50)).unwrap();
    store.update("done", &mut |r| {
        r.move_to(TaskStatus::Completed, None);
    });
    assert!(store.insert(record("third", "o", 60_000)).is_err(), "full");
    let deadline = Instant::now() + WAIT;
    while store.get("done").is_some() {
        assert!(Instant::now() < deadline, "the finished task stayed");
        thread::yield_now();
    }
    assert_eq!(status(&store, "running"), Some(TaskStatus::Working));
    // The insert drops the expired task from the owner's listing, before
    // any listing reads it.
    store.insert(record("third", "o", 60_000)).unwrap();
    let mut redis_connection = redis::Client::open(redis.url())
        .and_then(|client| client.get_connection())
        .expect("a connection");
    let listed: usize = redis::cmd("ZCARD")
        .arg("tiny-mcp:owner:o")
        .query(&mut redis_connection)
        .expect("ZCARD");
    assert_eq!(listed, 2, "running and third");
    let (page, _) = store.list("o", None, 10).unwrap();
    let ids: Vec<_> = page.iter().map(|r| r.task_id.as_str()).collect();
    assert_eq!(ids, ["running", "third"]);
}

// The bounds of DESIGN.md §6 and §26, with MemoryTaskStore's messages:
// in total, per share, per peer, and the anonymous owner's allowance.
#[test]
fn bounded_in_total_per_share_per_peer_and_anonymous() {
    let redis = Redis::start();
    let store = store(&redis)
        .with_max_tasks(6)
        .with_max_per_owner(1)
        .with_max_per_peer(2)
        .with_max_anonymous(3);
    store.insert(record("a", "session:1", 60_000)).unwrap();
    let error = store.insert(record("b", "session:1", 60_000)).unwrap_err();
    assert!(
        error.to_string().contains("(max_tasks_per_owner)"),
        "{}",
        error
    );
    let anonymous = |id: &str, share: &str, peer: &str| {
        let mut task = record(id, "", 60_000);
        task.share = share.into();
        task.peer = peer.into();
        task
    };
    store.insert(anonymous("c", "p1", "addr")).unwrap();
    store.insert(anonymous("d", "p2", "addr")).unwrap();
    let error = store.insert(anonymous("e", "p3", "addr")).unwrap_err();
    assert!(
        error.to_string().contains("(max_tasks_per_peer)"),
        "{}",
        error
    );
    store.insert(anonymous("f", "", "")).unwrap();
    let error = store.insert(anonymous("g", "", "")).unwrap_err();
    assert!(
        error.to_string().contains("(max_anonymous_tasks)"),
        "{}",
        error
    );
    store.insert(record("h", "session:2", 60_000)).unwrap();
    store.insert(record("i", "session:3", 60_000)).unwrap();
    let error = store.insert(record("j", "session:4", 60_000)).unwrap_err();
    assert!(
        error.to_string().contains("6 tasks, its limit"),
        "{}",
        error
    );
    assert!(store.insert(record("a2", "session:9", 60_000)).is_err());
}

// TASK-4: a final status is never left, however many threads update the
// task at once; and no update is lost (compare-and-set).
#[test]
fn concurrent_updates_lose_nothing_and_final_stays_final() {
    let redis = Redis::start();
    let store = Arc::new(store(&redis));
    store.insert(record("t", "o", 60_000)).unwrap();
    let (threads, rounds) = (8, 25);
    let bump = |store: &RedisTaskStore| {
        store.update("t", &mut |r| {
            let n: u64 = r
                .status_message
                .as_deref()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0);
            r.status_message = Some((n + 1).to_string());
        })
    };
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for _ in 0..rounds {
                    assert!(bump(&store).is_some());
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let count = store.get("t").and_then(|r| r.status_message);
    assert_eq!(count, Some((threads * rounds).to_string()), "lost updates");
    let workers: Vec<_> = (0..threads)
        .map(|n| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for round in 0..rounds {
                    let to = if (n + round) % 5 == 0 {
                        TaskStatus::Completed
                    } else if n % 2 == 0 {
                        TaskStatus::Working
                    } else {
                        TaskStatus::InputRequired
                    };
                    store.update("t", &mut |r: &mut TaskRecord| {
                        r.move_to(to, None);
                    });
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(status(&store, "t"), Some(TaskStatus::Completed));
}

// A record over the byte bound is kept `failed` with an error naming the
// sizes (never lost in silence).
#[test]
fn an_oversized_result_is_kept_failed() {
    let redis = Redis::start();
    let store = store(&redis).with_max_record_bytes(2_000);
    store.insert(record("t", "o", 60_000)).unwrap();
    let kept = store.update("t", &mut |r| {
        r.move_to(TaskStatus::Completed, None);
        r.result = Some(json!({ "text": "x".repeat(5_000) }));
    });
    let kept = kept.expect("the task");
    assert_eq!(kept.status, TaskStatus::Failed);
    assert_eq!(store.get("t"), Some(kept.clone()));
    let error = kept.error.expect("an error");
    assert_eq!(error.code.0, -32603);
    assert!(
        error
            .message
            .contains("over the task store's limit of 2000 bytes"),
        "{}",
        error.message
    );
}

// Redis unreachable: get and update answer None, insert and list Err; no
// panic.
#[test]
fn an_unreachable_redis_is_an_error_not_a_panic() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let store = RedisTaskStore::new(&format!("redis://127.0.0.1:{}/", port)).unwrap();
    assert!(store.insert(record("t", "o", 60_000)).is_err());
    assert!(store.get("t").is_none());
    assert!(store.update("t", &mut |_| {}).is_none());
    assert!(store.list("o", None, 10).is_err());
    let error = RedisTaskStore::new("http://nope").unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::InvalidParams(_)));
}
