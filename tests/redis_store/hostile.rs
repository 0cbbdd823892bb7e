//! Hostile checks of `RedisTaskStore` (DESIGN.md §30): what a peer with
//! access to Redis, a Redis that refuses writes, or a client sending
//! oversized input can do to the tasks of others.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tiny_mcp::{RedisTaskStore, Server, TaskStore};

use super::{record, Redis};
use crate::support::recv;
use crate::tasks::{client_2026, mcall, poll_until, start_2026, task_builder, Controls};

const LEASE: Duration = Duration::from_secs(1);

fn admin(redis: &Redis) -> redis::Connection {
    redis::Client::open(redis.url())
        .and_then(|client| client.get_connection())
        .expect("an admin connection")
}

fn store(redis: &Redis) -> RedisTaskStore {
    RedisTaskStore::new(&redis.url())
        .expect("a Redis URL")
        .with_lease(LEASE)
}

/// Instances `a` (which runs the tasks) and `b`.
fn pair(redis: &Redis) -> (Server, Controls, Server) {
    let (builder, controls) = task_builder();
    let a = builder.task_store(store(redis)).build();
    let b = task_builder().0.task_store(store(redis)).build();
    (a, controls, b)
}

// Redis is input like any other (§30): one record that does not decode
// (written by a peer, or by another version of the library during a
// rolling upgrade) is skipped by `list`, and does not hide the owner's
// other tasks (before: the whole listing failed, for as long as the key
// lived).
#[test]
fn a_corrupt_record_does_not_hide_the_owners_other_tasks() {
    let redis = Redis::start();
    let store = store(&redis);
    let (bad, mut good) = (record("bad", "o", 60_000), record("good", "o", 60_000));
    good.created_at = bad.created_at + Duration::from_millis(1);
    good.last_updated_at = good.created_at;
    store.insert(bad).expect("insert");
    store.insert(good.clone()).expect("insert");
    let _: () = redis::cmd("SET")
        .arg("tiny-mcp:task:bad")
        .arg("{not json")
        .query(&mut admin(&redis))
        .expect("SET");
    let (page, next) = store.list("o", None, 10).expect("a listing");
    assert_eq!(page, vec![good], "the good record is listed");
    assert_eq!(next, None);
    assert_eq!(store.get("bad"), None);
}

/// `errorstat_OOM`'s count in `INFO errorstats` (Redis 7).
fn oom_errors(admin: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("errorstats")
        .query(admin)
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix("errorstat_OOM:count="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

// A task's result must not be lost in silence: when Redis refuses the
// write of the final status (OOM under `maxmemory-policy noeviction`, or a
// restart at that moment), the task ends up `failed` within a few leases
// once Redis takes writes again, on every instance.
//
// Before: `settle`'s `TaskStore::update` returned `None` (logged), the run
// was released, and the record stayed `working`; the lease thread kept
// renewing it (it stayed in `held`), which also kept its key alive, so
// every instance answered `working` for as long as `a` lived and
// `tasks/result` blocked until the client gave up. Now the lease thread
// drops tasks whose handler no longer runs, and a read moves them to
// `failed` once the lease ran out (this instance's own reads too).
#[test]
fn a_final_status_refused_by_redis_is_not_lost() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    let (a, controls, b) = pair(&redis);
    let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a, "gated");
    assert_eq!(recv(&controls.reached, "the handler's start"), "gated");
    let before = oom_errors(&mut admin);
    let config = |admin: &mut redis::Connection, name: &str, value: &str| {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(admin)
            .expect("CONFIG SET");
    };
    config(&mut admin, "maxmemory-policy", "noeviction");
    config(&mut admin, "maxmemory", "1");
    controls.release.send(()).expect("the handler waits");
    assert!(!recv(&controls.cancelled, "the handler's end"));
    let deadline = Instant::now() + Duration::from_secs(5);
    while oom_errors(&mut admin) == before {
        assert!(Instant::now() < deadline, "no write was refused");
        std::thread::sleep(Duration::from_millis(5));
    }
    config(&mut admin, "maxmemory", "0");
    let ended = |task: &Value| task["status"] != "working";
    let started = Instant::now();
    let task = poll_until(&mut on_b, &id, |t| {
        ended(t) || started.elapsed() > LEASE * 4
    });
    assert!(ended(&task), "still working after 4 leases: {}", task);
}

// A client's `tasks/update` whose forwarded message is over what the
// receiving instance reads (`max_record_bytes`; the command is JSON in a
// JSON string, so every quote is escaped twice) is -32603 at once, not
// dropped by the receiver and awaited for the whole forward timeout.
#[test]
fn an_oversized_forwarded_update_fails_at_once() {
    let redis = Redis::start();
    let (a, controls, b) = pair(&redis);
    let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a, "gated");
    recv(&controls.reached, "the handler's start");
    let quotes = "\"".repeat(1_500_000);
    let params = json!({"taskId": id, "inputResponses": {"k": {"s": quotes}}});
    let started = Instant::now();
    let error = mcall(&mut on_b, "tasks/update", params).expect_err("an error");
    assert_eq!(error.code.0, -32603, "{:?}", error);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let _ = controls.release.send(());
}

/// A JSON value nested `depth` arrays deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!("core"), |inner, _| json!([inner]))
}

// A result nested deeper than `serde_json` reads back (128 levels; a
// tool's structured result may mirror an upstream document) must not
// make the task vanish: before, the record was written, then read as
// "not a task record", so `get` answered `None` (-32602 "unknown task")
// and the result was lost in silence. Now it is kept `failed`, saying
// why, as an oversized one is.
#[test]
fn a_result_too_deep_to_read_back_is_kept_failed() {
    let redis = Redis::start();
    let store = store(&redis);
    store.insert(record("deep", "o", 60_000)).expect("insert");
    let done = store.update("deep", &mut |r| {
        if r.move_to(tiny_mcp::TaskStatus::Completed, None) {
            r.result = Some(json!({"structuredContent": nested(200)}));
        }
    });
    let done = done.expect("the update is kept");
    assert_eq!(done.status, tiny_mcp::TaskStatus::Failed, "{:?}", done);
    let kept = store.get("deep").expect("the task is still there");
    assert_eq!(kept.status, tiny_mcp::TaskStatus::Failed);
    assert!(kept.result.is_none());
    let error = kept.error.expect("an error saying why");
    assert_eq!(error.code.0, -32603);
    // A result just under the depth is kept as it is.
    store.insert(record("fine", "o", 60_000)).expect("insert");
    let fine = store.update("fine", &mut |r| {
        if r.move_to(tiny_mcp::TaskStatus::Completed, None) {
            r.result = Some(json!({"structuredContent": nested(100)}));
        }
    });
    assert_eq!(
        fine.map(|r| r.status),
        Some(tiny_mcp::TaskStatus::Completed)
    );
}

// What a peer with access to Redis publishes on an instance's command
// channel (§30) cannot panic or stop its reader, nor make it write
// outside the reply lists: non-JSON, nesting past what is read, a message
// over `max_record_bytes`, wrong types, and a reply key naming the task's
// record are dropped; a bad command with a proper reply key is answered
// `invalid:`; the task's record is left as it was, and a real cancel
// through `b` still reaches the handler.
#[test]
fn junk_on_an_instance_channel_is_dropped_and_the_reader_goes_on() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    let (a, controls, b) = pair(&redis);
    let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut on_a, "gated");
    recv(&controls.reached, "the handler's start");
    let record_key = format!("tiny-mcp:task:{}", id);
    let before: String = redis::cmd("GET")
        .arg(&record_key)
        .query(&mut admin)
        .expect("GET");
    let channel = format!("tiny-mcp:instance:{}", a.handle().instance_id());
    let cancel = json!({"cancel": id}).to_string();
    let junk = vec![
        "not json".to_string(),
        "[".repeat(100_000),
        format!(
            "{{\"reply\":\"tiny-mcp:reply:big\",\"pad\":\"{}\"}}",
            "x".repeat(5 << 20)
        ),
        json!({"reply": 5, "command": cancel}).to_string(),
        json!({"reply": record_key, "command": cancel}).to_string(),
        json!({"reply": "tiny-mcp:reply:x", "command": "junk"}).to_string(),
        json!({"reply": "tiny-mcp:reply:x", "command": {"cancel": id}}).to_string(),
    ];
    for message in &junk {
        let _: i64 = redis::cmd("PUBLISH")
            .arg(&channel)
            .arg(message)
            .query(&mut admin)
            .expect("PUBLISH");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let answers: Vec<String> = redis::cmd("LRANGE")
            .arg("tiny-mcp:reply:x")
            .arg(0)
            .arg(-1)
            .query(&mut admin)
            .expect("LRANGE");
        if answers.len() == 2 {
            assert!(
                answers.iter().all(|a| a.starts_with("invalid:")),
                "{:?}",
                answers
            );
            break;
        }
        assert!(Instant::now() < deadline, "answers: {:?}", answers);
        std::thread::yield_now();
    }
    let after: String = redis::cmd("GET")
        .arg(&record_key)
        .query(&mut admin)
        .expect("GET");
    assert_eq!(before, after, "the record is untouched");
    let big: i64 = redis::cmd("EXISTS")
        .arg("tiny-mcp:reply:big")
        .query(&mut admin)
        .expect("EXISTS");
    assert_eq!(big, 0, "the oversized message is not answered");
    assert!(mcall(&mut on_b, "tasks/cancel", json!({"taskId": id})).is_ok());
    assert!(
        recv(&controls.cancelled, "the handler's end"),
        "flag not set"
    );
}

// The URL's password never shows in an error or in `Debug` (§30): not
// when Redis is away, not when Redis refuses it.
#[test]
fn the_password_never_shows() {
    let redis = Redis::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let urls = [
        format!("redis://:s3cr3t-pw@127.0.0.1:{}/", closed),
        redis.url().replace("redis://", "redis://user:s3cr3t-pw@"),
        redis.url().replace("redis://", "redis://:s3cr3t-pw@"),
    ];
    for url in &urls {
        let store = RedisTaskStore::new(url).expect("a Redis URL");
        let error = store.insert(record("t", "o", 60_000)).expect_err("refused");
        let shown = format!("{} {:?} {:?}", error, error, store);
        assert!(!shown.contains("s3cr3t"), "{}", shown);
        let listed = store.list("o", None, 1).expect_err("refused");
        assert!(!format!("{} {:?}", listed, listed).contains("s3cr3t"));
    }
    let bad = RedisTaskStore::new("redis://:s3cr3t-pw@[::1").expect_err("not a URL");
    assert!(!format!("{} {:?}", bad, bad).contains("s3cr3t"));
}

/// Subscribers of `channel` (`PUBSUB NUMSUB`).
fn subscribers(admin: &mut redis::Connection, channel: &str) -> i64 {
    let counts: Vec<(String, i64)> = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query(admin)
        .expect("PUBSUB NUMSUB");
    counts.first().map_or(0, |(_, n)| *n)
}

// The command reader ends with its server (§30: "every thread exits when
// the server closes"): closed, or dropped without closing, its
// subscription is gone within a few polls (500 ms each).
#[test]
fn the_command_reader_ends_with_its_server() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    for close in [true, false] {
        let server = task_builder().0.task_store(store(&redis)).build();
        let channel = format!("tiny-mcp:instance:{}", server.handle().instance_id());
        assert_eq!(
            subscribers(&mut admin, &channel),
            1,
            "subscribed when built"
        );
        if close {
            server.handle().close();
        }
        drop(server);
        let deadline = Instant::now() + Duration::from_secs(3);
        while subscribers(&mut admin, &channel) != 0 {
            assert!(
                Instant::now() < deadline,
                "still subscribed (close: {})",
                close
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

// Redis that refuses the scripts (an ACL without EVAL/EVALSHA): starting
// a task is an error answered at once (within the endpoint's 2 s), never a
// hang or a panic; another store on the same Redis goes on. (Under OOM
// with `noeviction` the insert script is not refused: its first write,
// ZREMRANGEBYSCORE, is not deny-oom, and Redis lets a script that wrote
// go on; the CAS write script is refused, see above.)
#[test]
fn refused_scripts_fail_a_task_start_at_once() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("limited")
        .arg("on")
        .arg(">pw")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-eval")
        .arg("-evalsha")
        .arg("-script")
        .query(&mut admin)
        .expect("ACL SETUSER");
    let url = redis.url().replace("redis://", "redis://limited:pw@");
    let limited = RedisTaskStore::new(&url).expect("a Redis URL");
    let server = task_builder().0.task_store(limited).build();
    let mut client = client_2026(&server);
    let started = Instant::now();
    let refused = mcall(
        &mut client,
        "tools/call",
        json!({"name": "gated", "arguments": {}}),
    );
    // The client is told the store is unavailable, not Redis's own words
    // (they go to the log): the new-user trial saw "Connection refused
    // (os error 111)" in a tools/call error.
    let message = refused.as_ref().map_err(|e| e.message.clone()).err();
    let message = message.unwrap_or_default();
    assert!(
        message.contains("task store is unavailable") && !message.contains("NOPERM"),
        "{:?}",
        refused
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let (a, controls, _b) = pair(&redis);
    start_2026(&mut client_2026(&a), "gated");
    recv(&controls.reached, "the handler's start");
    let _ = controls.release.send(());
}

// A Redis that fails a read must not make a task look gone: `tasks/get`
// (and a blocking `tasks/result`, which polls it) answers -32603 ("try
// again"). Before: -32602 "unknown task: it never existed, has expired or
// is not yours" (`TaskStore::get` answers `None` on a Redis error), after
// which a client rightly stops asking and the result is lost to it; now
// the methods read through `TaskStore::try_get`.
#[test]
fn a_failed_read_is_not_an_unknown_task() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    let (a, controls, _b) = pair(&redis);
    let mut on_a = client_2026(&a);
    let id = start_2026(&mut on_a, "gated");
    recv(&controls.reached, "the handler's start");
    let acl = |admin: &mut redis::Connection, rules: &[&str]| {
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg("default")
            .arg(rules)
            .query(admin)
            .expect("ACL SETUSER");
    };
    acl(&mut admin, &["-mget", "-get"]);
    let answer = mcall(&mut on_a, "tasks/get", json!({"taskId": id}));
    acl(&mut admin, &["+mget", "+get"]);
    let _ = controls.release.send(());
    let error = answer.expect_err("reads are refused");
    assert_eq!(error.code.0, -32603, "{:?}", error);
}

/// A TCP proxy to Redis whose [`cut`](Blackhole::cut) makes every
/// connection open at that moment silent both ways, without closing it
/// (a NAT or load balancer that dropped its state: no FIN, no RST);
/// connections made afterwards pass.
struct Blackhole {
    port: u16,
    generation: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Blackhole {
    fn start(redis: &Redis) -> Blackhole {
        use std::sync::atomic::Ordering;
        let target = redis.url();
        let target = target
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let generation = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let cut = std::sync::Arc::clone(&generation);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = match std::net::TcpStream::connect(&target) {
                    Ok(server) => server,
                    Err(_) => continue,
                };
                let born = cut.load(Ordering::SeqCst);
                for (from, to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ] {
                    let (mut from, mut to) = match (from, to) {
                        (Ok(from), Ok(to)) => (from, to),
                        _ => continue,
                    };
                    let cut = std::sync::Arc::clone(&cut);
                    std::thread::spawn(move || {
                        use std::io::{Read, Write};
                        let mut buffer = [0u8; 16 * 1024];
                        while let Ok(n) = from.read(&mut buffer) {
                            if n == 0 {
                                break;
                            }
                            if cut.load(Ordering::SeqCst) == born
                                && to.write_all(&buffer[..n]).is_err()
                            {
                                break;
                            }
                        }
                        // Held open: the peer sees neither FIN nor RST.
                        std::mem::forget(to);
                    });
                }
            }
        });
        Blackhole { port, generation }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn cut(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

// An instance whose command subscription went silent without a FIN (NAT
// or load balancer state dropped; Redis still counts the subscriber, so
// PUBLISH finds a reader) notices within a few seconds and subscribes
// again, as the change bus's reader does (its blocking XREAD times out):
// a cancel through `b` reaches the handler on `a` again.
#[test]
fn a_silently_dropped_command_subscription_is_renewed() {
    let redis = Redis::start();
    let hole = Blackhole::start(&redis);
    let (builder, controls) = task_builder();
    let on_a = RedisTaskStore::new(&hole.url())
        .expect("a Redis URL")
        .with_lease(Duration::from_secs(30))
        // No pooled connection to be cut too: only the subscription is.
        .with_pool_size(0);
    let a = builder.task_store(on_a).build();
    let on_b = store(&redis).with_forward_timeout(Duration::from_millis(500));
    let b = task_builder().0.task_store(on_b).build();
    let (mut to_a, mut to_b) = (client_2026(&a), client_2026(&b));
    let id = start_2026(&mut to_a, "gated");
    recv(&controls.reached, "the handler's start");
    hole.cut();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let _ = mcall(&mut to_b, "tasks/cancel", json!({"taskId": id}));
        if let Ok(cancelled) = controls.cancelled.try_recv() {
            assert!(cancelled, "the handler's flag is set");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the command reader never subscribed again"
        );
    }
}

// One task's record that a script cannot read (a key of another type at
// `<prefix>task:<id>`: a peer, or another program on the same prefix)
// must not stop the lease renewals of this instance's other tasks (they
// would all be failed by other instances, "the instance that ran this
// task stopped"). Before: the first script error ended the whole round.
#[test]
fn one_unreadable_record_does_not_stop_the_other_leases() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    let (a, controls, b) = pair(&redis);
    let (mut on_a, mut on_b) = (client_2026(&a), client_2026(&b));
    let ids: Vec<String> = (0..4)
        .map(|_| {
            let id = start_2026(&mut on_a, "gated");
            recv(&controls.reached, "the handler's start");
            id
        })
        .collect();
    let bad = format!("tiny-mcp:task:{}", ids[0]);
    let _: () = redis::pipe()
        .cmd("DEL")
        .arg(&bad)
        .ignore()
        .cmd("HSET")
        .arg(&bad)
        .arg("f")
        .arg("v")
        .ignore()
        .query(&mut admin)
        .expect("HSET");
    let until = Instant::now() + LEASE * 5 / 2;
    while Instant::now() < until {
        for id in &ids[1..] {
            let task = poll_until(&mut on_b, id, |_| true);
            assert_eq!(task["status"], "working", "renewed: {}", task);
        }
    }
    for _ in &ids {
        let _ = controls.release.send(());
    }
}

// TASK-10 through the listing: a member naming another owner's task in
// an owner's listing (written by a peer) does not show it, and a cursor a
// client forged is either refused (-32602) or only a position in the
// caller's own listing.
#[test]
fn a_listing_shows_only_the_owners_tasks_whatever_its_members_and_cursor() {
    let redis = Redis::start();
    let store = store(&redis);
    let theirs = record("theirs", "other", 60_000);
    let mut mine = record("mine", "me", 60_000);
    mine.created_at = theirs.created_at + Duration::from_millis(1);
    mine.last_updated_at = mine.created_at;
    store.insert(theirs.clone()).expect("insert");
    store.insert(mine.clone()).expect("insert");
    let member = |r: &tiny_mcp::TaskRecord| {
        let ms = r
            .created_at
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis();
        format!("{:016}:{}", ms, r.task_id)
    };
    let _: () = redis::cmd("ZADD")
        .arg("tiny-mcp:owner:me")
        .arg(0)
        .arg(member(&theirs))
        .query(&mut admin(&redis))
        .expect("ZADD");
    let (page, _) = store.list("me", None, 10).expect("a listing");
    assert_eq!(page, vec![mine.clone()]);
    let (page, _) = store
        .list("me", Some(&member(&theirs)), 10)
        .expect("a position");
    assert_eq!(page, vec![mine]);
    for forged in ["junk", "", "0000000000000000:", "[+", "-"] {
        let refused = store.list("me", Some(forged), 10).expect_err(forged);
        assert!(
            matches!(refused.kind(), tiny_mcp::ErrorKind::InvalidParams(_)),
            "{}: {:?}",
            forged,
            refused
        );
    }
}

// `forward` waits at most its forward timeout (§30), also when Redis
// drops the connection it waits on (CLIENT KILL, a proxy, a restart): the
// reply cannot come on another connection's wait (the command went out
// before), so it is an error then, not a second whole wait.
#[test]
fn a_forward_whose_wait_is_dropped_does_not_wait_again() {
    let redis = Redis::start();
    let mut admin = admin(&redis);
    // A silent "instance": subscribed, never answers.
    let mut silent = self::admin(&redis);
    let mut silent = silent.as_pubsub();
    silent
        .subscribe("tiny-mcp:instance:silent")
        .expect("SUBSCRIBE");
    let sender = store(&redis).with_forward_timeout(Duration::from_secs(2));
    let mut target = record("t", "o", 60_000);
    target.instance = "silent".into();
    let started = Instant::now();
    let waiting = std::thread::spawn(move || {
        let command = tiny_mcp::TaskCommand::Cancel {
            task_id: "t".into(),
        };
        sender.forward(&target, &command)
    });
    let deadline = Instant::now() + Duration::from_secs(2);
    let blocked = loop {
        let clients: String = redis::cmd("CLIENT")
            .arg("LIST")
            .query(&mut admin)
            .expect("CLIENT LIST");
        let id = clients
            .lines()
            .find(|line| line.contains("cmd=blpop"))
            .and_then(|line| line.split(' ').find_map(|f| f.strip_prefix("id=")))
            .map(String::from);
        // Half of the wait gone: a second whole wait would pass the bound.
        match id {
            Some(id) if started.elapsed() >= Duration::from_secs(1) => break id,
            Some(_) => {}
            None => assert!(Instant::now() < deadline, "no BLPOP: {}", clients),
        }
        std::thread::yield_now();
    };
    let _: redis::Value = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(&blocked)
        .query(&mut admin)
        .expect("CLIENT KILL");
    let outcome = waiting.join().expect("no panic");
    assert!(outcome.is_err(), "{:?}", outcome);
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "{:?}",
        started.elapsed()
    );
}
