//! Commands between instances (DESIGN.md §30): `forward` publishes a
//! [`TaskCommand`] on the channel of the instance that runs the task and
//! waits for its answer on a reply list; each instance's reader thread
//! applies what comes on its own channel and answers.
//!
//! A message: `{"reply": "<prefix>reply:<uuid>", "command": "<TaskCommand::to_json>"}`.
//! An answer (pushed on the reply list, which expires after the forward
//! timeout): `ok`, `invalid:<message>` (the task does not run there) or
//! `error:<message>`.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use super::store::RedisTaskStore;
use crate::error::Error;
use crate::{ErrorKind, ServerHandle, TaskCommand, TaskRecord, WeakServerHandle};

/// How often the reader looks whether its server is still there.
const POLL: Duration = Duration::from_millis(500);
/// After this many quiet polls (2 s) the reader PINGs on its subscription:
/// a connection dropped without a FIN (NAT or load balancer state lost)
/// still counts as a subscriber for Redis, so commands published to it
/// would go nowhere until the reader notices and subscribes again.
const PING_EVERY: u32 = 4;
/// The longest wait between two attempts to subscribe.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

fn channel(store: &RedisTaskStore, instance: &str) -> String {
    format!("{}instance:{}", store.settings.prefix, instance)
}

/// [`TaskStore::forward`](crate::TaskStore::forward).
pub(crate) fn forward(
    store: &RedisTaskStore,
    record: &TaskRecord,
    command: &TaskCommand,
) -> Result<bool, Error> {
    let reply = format!("{}reply:{}", store.settings.prefix, uuid::Uuid::new_v4());
    let message = json!({"reply": reply, "command": command.to_json()}).to_string();
    // The receiver drops a larger message unanswered (`apply`): say so
    // now rather than after the whole forward timeout.
    if message.len() > store.settings.max_record_bytes {
        return Err(Error::msg(format!(
            "a command for task {} of {} bytes, over the task store's limit of {} bytes \
             (RedisTaskStore::max_record_bytes); not forwarded",
            record.task_id,
            message.len(),
            store.settings.max_record_bytes
        )));
    }
    let target = channel(store, &record.instance);
    let pool = &store.state.pool;
    let readers: i64 = pool.run("forward a task command", None, |c| {
        redis::cmd("PUBLISH").arg(&target).arg(&message).query(c)
    })?;
    if readers == 0 {
        return Err(Error::msg(format!(
            "instance {} that runs task {} does not listen (stopped)",
            record.instance, record.task_id
        )));
    }
    let wait = store.settings.forward_timeout;
    let answer: Option<(String, String)> = pool.run_once(
        "await a task command",
        Some(wait + pool.endpoint.timeout),
        |c| {
            redis::cmd("BLPOP")
                .arg(&reply)
                .arg(format!("{:.3}", wait.as_secs_f64()))
                .query(c)
        },
    )?;
    let answer = match answer {
        Some((_, answer)) => answer,
        None => {
            return Err(Error::msg(format!(
                "instance {} that runs task {} did not answer within {} ms",
                record.instance,
                record.task_id,
                wait.as_millis()
            )))
        }
    };
    if answer == "ok" {
        Ok(true)
    } else if let Some(message) = answer.strip_prefix("invalid:") {
        Err(Error::invalid_params(message.to_string()))
    } else {
        let message = answer.strip_prefix("error:").unwrap_or(&answer);
        Err(Error::msg(format!(
            "instance {}: {}",
            record.instance, message
        )))
    }
}

/// Starts the reader of this instance's channel, and waits (at most twice
/// the endpoint's timeout) until it is subscribed, so that a command sent
/// once the server is built reaches it.
pub(crate) fn start(store: &RedisTaskStore, server: WeakServerHandle, instance: String) {
    let (ready, subscribed) = sync_channel(1);
    let reader = store.clone();
    let spawned = thread::Builder::new()
        .name("tiny-mcp-redis-commands".into())
        .spawn(move || read_commands(&reader, &server, &instance, &ready));
    match spawned {
        Ok(_) => {
            let wait = store.state.pool.endpoint.timeout * 2;
            if subscribed.recv_timeout(wait).is_err() {
                log::warn!("task commands: not subscribed yet; the reader keeps trying");
            }
        }
        Err(e) => log::error!("cannot start the task command reader: {}", e),
    }
}

/// Subscribes, serves, and subscribes again with back-off after an error,
/// until the server is gone or closed.
fn read_commands(
    store: &RedisTaskStore,
    server: &WeakServerHandle,
    instance: &str,
    ready: &SyncSender<()>,
) {
    let name = channel(store, instance);
    let mut backoff = Duration::from_millis(100);
    while server.upgrade().is_some() {
        match serve(store, server, &name, ready, &mut backoff) {
            Ok(()) => return,
            Err(e) => {
                log::warn!("task commands: Redis: {}; again in {:?}", e, backoff);
                thread::sleep(backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Serves one subscription until the server is gone (`Ok`) or Redis
/// fails (`Err`).
fn serve(
    store: &RedisTaskStore,
    server: &WeakServerHandle,
    name: &str,
    ready: &SyncSender<()>,
    backoff: &mut Duration,
) -> redis::RedisResult<()> {
    let mut connection = store.state.pool.endpoint.connect(Some(POLL))?;
    let mut pubsub = connection.as_pubsub();
    pubsub.subscribe(name)?;
    pubsub.set_read_timeout(Some(POLL))?;
    let _ = ready.try_send(());
    *backoff = Duration::from_millis(100);
    let mut quiet = 0;
    loop {
        let message = match pubsub.get_message() {
            Ok(message) => message,
            Err(e) if e.is_timeout() => {
                if server.upgrade().is_none() {
                    return Ok(());
                }
                quiet += 1;
                if quiet >= PING_EVERY {
                    // Answered within POLL, or the subscription is lost.
                    let _: redis::Value = pubsub.ping()?;
                    quiet = 0;
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        quiet = 0;
        match server.upgrade() {
            Some(handle) => apply(store, &handle, message.get_payload_bytes()),
            None => return Ok(()),
        }
    }
}

/// Applies one message's command and pushes the answer to its reply list.
fn apply(store: &RedisTaskStore, server: &ServerHandle, payload: &[u8]) {
    if payload.len() > store.settings.max_record_bytes {
        log::warn!(
            "task commands: a message of {} bytes, dropped",
            payload.len()
        );
        return;
    }
    let value: Value = serde_json::from_slice(payload).unwrap_or(Value::Null);
    let reply_prefix = format!("{}reply:", store.settings.prefix);
    let reply = match value.get("reply").and_then(Value::as_str) {
        Some(reply) if reply.starts_with(&reply_prefix) => reply,
        _ => {
            log::warn!("task commands: a message without a reply key, dropped");
            return;
        }
    };
    let command = value.get("command").and_then(Value::as_str).unwrap_or("");
    let outcome =
        TaskCommand::from_json(command).and_then(|command| server.apply_task_command(&command));
    let answer = match outcome {
        Ok(()) => "ok".to_string(),
        Err(e) if matches!(e.kind(), ErrorKind::InvalidParams(_)) => format!("invalid:{}", e),
        Err(e) => format!("error:{}", e),
    };
    let keep = u64::try_from(store.settings.forward_timeout.as_millis()).unwrap_or(u64::MAX);
    let sent = store.state.pool.run("answer a task command", None, |c| {
        redis::pipe()
            .cmd("LPUSH")
            .arg(reply)
            .arg(&answer)
            .ignore()
            .cmd("PEXPIRE")
            .arg(reply)
            .arg(keep.max(1))
            .ignore()
            .query::<()>(c)
    });
    if let Err(e) = sent {
        log::warn!("task commands: {}", e);
    }
}
