//! The local side of `mcp bridge`: the client on this process's stdin and
//! stdout. One writer for stdout (a message per line, basic/transports
//! "stdio"), the requests the bridge sends the client on the remote
//! server's behalf and their answers, and the client's requests in
//! flight, each with the token that cancels its forwarded copy.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tiny_mcp::{CancelToken, Error, ErrorKind, ErrorObject, RequestId, Response};

/// An answer from the local client: its `result`, or its `error`.
type Answer = Result<Value, ErrorObject>;

/// See the module docs.
pub struct Local {
    out: Mutex<io::Stdout>,
    /// Set once writing failed: the client is gone.
    gone: AtomicBool,
    next_id: AtomicU64,
    /// The bridge's requests to the client, by id, waiting for answers.
    asked: Mutex<HashMap<String, Asked>>,
    /// The client's requests being forwarded, by id (as JSON text).
    calls: Mutex<HashMap<String, CancelToken>>,
}

/// A request id as JSON (`null` for none).
pub fn id_value(id: Option<&RequestId>) -> Value {
    match id {
        Some(RequestId::Number(n)) => Value::from(*n),
        Some(RequestId::String(s)) => Value::from(s.as_str()),
        None => Value::Null,
    }
}

/// A request of the bridge's to the client, waiting for its answer.
struct Asked {
    /// Where the answer goes.
    sender: SyncSender<Answer>,
    /// The bridge's id for it.
    id: String,
    /// The client's request it was asked for (its key in `calls`), when
    /// it was asked while forwarding one.
    call: Option<String>,
}

thread_local! {
    /// The client's request this thread forwards (its key in `calls`):
    /// what the bridge asks the client meanwhile is asked for it.
    static CALL: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A lock that a panicking holder did not spoil: the maps stay usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Local {
    pub fn new() -> Local {
        Local {
            out: Mutex::new(io::stdout()),
            gone: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            asked: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
        }
    }

    /// `true` once stdout could not be written.
    pub fn gone(&self) -> bool {
        self.gone.load(Ordering::SeqCst)
    }

    /// Writes one message as one line. U+2028 and U+2029 go escaped, as
    /// the crate's stdio output writes them (DESIGN.md §7): some line
    /// readers split on them. Compact JSON has them only inside strings,
    /// where the escape means the same.
    pub fn send(&self, message: &Value) {
        let mut text = message.to_string();
        if text.contains(['\u{2028}', '\u{2029}']) {
            text = text
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029");
        }
        let mut line = text.into_bytes();
        line.push(b'\n');
        let mut out = lock(&self.out);
        if out.write_all(&line).and_then(|()| out.flush()).is_err() {
            self.gone.store(true, Ordering::SeqCst);
        }
    }

    pub fn notify(&self, method: &str, params: Option<Value>) {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(&message);
    }

    pub fn reply(&self, id: Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    pub fn reply_error(&self, id: Value, error: &ErrorObject) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "error": error }));
    }

    /// Enters a request of the client's, cancelled through `token`.
    /// `false` when one with the same id is still in flight.
    pub fn track(&self, id: &Value, token: CancelToken) -> bool {
        let mut calls = lock(&self.calls);
        let key = id.to_string();
        if calls.contains_key(&key) {
            return false;
        }
        calls.insert(key, token);
        true
    }

    /// Ends a tracked request with its outcome; nothing is sent for one
    /// the client cancelled (basic/utilities/cancellation: the receiver
    /// should not answer it).
    pub fn finish(&self, id: Value, outcome: Result<Value, ErrorObject>) {
        let token = lock(&self.calls).remove(&id.to_string());
        if token.map_or(false, |t| t.is_cancelled()) {
            return;
        }
        match outcome {
            Ok(result) => self.reply(id, result),
            Err(error) => self.reply_error(id, &error),
        }
    }

    /// Runs `forward` for the client's request `id` on this thread: the
    /// requests the bridge sends the client meanwhile belong to it.
    pub fn on_behalf_of<R>(&self, id: &Value, forward: impl FnOnce() -> R) -> R {
        CALL.with(|call| *call.borrow_mut() = Some(id.to_string()));
        let outcome = forward();
        CALL.with(|call| *call.borrow_mut() = None);
        outcome
    }

    /// `notifications/cancelled` from the client: cancels the forwarded
    /// request (the remote server is told), and the requests the bridge
    /// sent the client for it, which are moot now: the client is told
    /// (basic/utilities/cancellation), the remote server gets an error.
    pub fn cancel(&self, id: &Value) {
        let key = id.to_string();
        match lock(&self.calls).get(&key) {
            Some(token) => token.cancel(),
            None => return,
        }
        let moot: Vec<Asked> = {
            let mut asked = lock(&self.asked);
            let keys: Vec<String> = asked
                .iter()
                .filter(|(_, a)| a.call.as_deref() == Some(key.as_str()))
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| asked.remove(k)).collect()
        };
        for asked in moot {
            self.told_cancelled(&asked.id, "the request it was for was cancelled");
            let why = "the local client cancelled the request this was asked for";
            let _ = asked.sender.try_send(Err(ErrorObject::internal(why)));
        }
    }

    /// Tells the client that the bridge's request `id` is cancelled.
    fn told_cancelled(&self, id: &str, reason: &str) {
        let params = json!({ "requestId": id, "reason": reason });
        self.notify("notifications/cancelled", Some(params));
    }

    /// Cancels every request in flight: stdin ended.
    pub fn cancel_all(&self) {
        for token in lock(&self.calls).values() {
            token.cancel();
        }
        // Requests to the client fail at once: it is gone.
        lock(&self.asked).clear();
    }

    /// Sends the client a request (sampling, elicitation, roots) and waits
    /// for its answer, at most `timeout`.
    ///
    /// # Errors
    ///
    /// The client's error as [`Error::rpc`] (so that the remote server gets
    /// it as sent), a timeout, or the client gone.
    pub fn ask(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, Error> {
        let id = format!("bridge-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (sender, answer) = sync_channel(1);
        let asked = Asked {
            sender,
            id: id.clone(),
            call: CALL.with(|call| call.borrow().clone()),
        };
        lock(&self.asked).insert(Value::from(id.as_str()).to_string(), asked);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let outcome = answer.recv_timeout(timeout);
        let waiting = lock(&self.asked).remove(&Value::from(id.as_str()).to_string());
        // basic/lifecycle "Timeouts": the sender that stops waiting says so.
        if waiting.is_some() && outcome.is_err() {
            self.told_cancelled(&id, "timed out");
        }
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(Error::rpc(error)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                Err(Error::new(ErrorKind::Timeout {
                    method: method.to_string(),
                    after: timeout,
                }))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                Err(Error::new(ErrorKind::Closed))
            }
        }
    }

    /// An answer from the client (`result` or `error`) to a request of
    /// [`ask`](Self::ask); one to nothing asked is dropped.
    pub fn answered(&self, response: Response) {
        let id = id_value(response.id.as_ref());
        let waiting = lock(&self.asked).remove(&id.to_string());
        match waiting {
            Some(asked) => {
                let _ = asked.sender.try_send(response.outcome);
            }
            None => note!(
                "mcp bridge: the client answered a request never sent ({})",
                id
            ),
        }
    }
}
