//! Change notifications on request: `subscriptions/listen` in 2026-07-28
//! (LISTEN-1 to LISTEN-12), and the GET stream of a 2025-11-25 HTTP
//! session (2025-11-25 transports, "Listening for Messages from the
//! Server"). Either way the notifications reach the program's
//! [`on_notification`](crate::ClientBuilder::on_notification) callback.

use std::fmt;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select};
use serde::Serialize;
use serde_json::Value;

use super::http::HttpLink;
use super::link::{Link, Outgoing, Wait};
use super::options::CancelToken;
use super::recover::SessionEpoch;
use super::wire::{Conn, Head};
use super::{envelope, Client};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::JsonObject;
use crate::protocol::{methods, Era};

/// How long a subscription may stay open: for as long as it is held.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// What a `subscriptions/listen` asks for (`SubscriptionFilter`, LISTEN-1).
///
/// ```
/// use tiny_mcp::SubscriptionFilter;
///
/// let filter = SubscriptionFilter::new().tools_list_changed().resource("file:///notes.txt");
/// # drop(filter);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    tools_list_changed: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    prompts_list_changed: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    resources_list_changed: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resource_subscriptions: Vec<String>,
}

impl SubscriptionFilter {
    /// Nothing yet.
    pub fn new() -> SubscriptionFilter {
        SubscriptionFilter::default()
    }

    /// `notifications/tools/list_changed`.
    pub fn tools_list_changed(mut self) -> SubscriptionFilter {
        self.tools_list_changed = true;
        self
    }

    /// `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(mut self) -> SubscriptionFilter {
        self.prompts_list_changed = true;
        self
    }

    /// `notifications/resources/list_changed`.
    pub fn resources_list_changed(mut self) -> SubscriptionFilter {
        self.resources_list_changed = true;
        self
    }

    /// `notifications/resources/updated` for `uri`.
    pub fn resource(mut self, uri: impl Into<String>) -> SubscriptionFilter {
        self.resource_subscriptions.push(uri.into());
        self
    }
}

/// An open subscription; dropping it (or [`close`](Self::close)) ends it.
pub struct Subscription {
    token: CancelToken,
    honored: Value,
    thread: Option<thread::JoinHandle<()>>,
}

impl Subscription {
    /// What the server will send (the acknowledgement's `notifications`,
    /// LISTEN-4): the part of the filter it honours. `{}` for a 2025-11-25
    /// GET stream, which carries whatever the server sends.
    pub fn honored(&self) -> &Value {
        &self.honored
    }

    /// Ends the subscription: over HTTP the stream is closed (LISTEN-10,
    /// CANCEL-2); on stdio `notifications/cancelled` names it.
    pub fn close(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.token.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.end();
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("honored", &self.honored)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Opens a subscription to change notifications. In 2026-07-28 it is a
    /// `subscriptions/listen` request, and this returns once the server
    /// acknowledged it (LISTEN-3); in 2025-11-25 over HTTP it opens the
    /// session's GET stream (a server without one answers `405`, which is
    /// an error here), unless the client opened it when it connected
    /// (it does when it has any closure for the server's messages); in
    /// 2025-11-25 over stdio notifications arrive anyway and nothing is
    /// opened. The notifications reach
    /// [`on_notification`](crate::ClientBuilder::on_notification).
    ///
    /// # Errors
    ///
    /// The server refused (its error), or did not acknowledge within the
    /// request timeout.
    pub fn listen(&self, filter: &SubscriptionFilter) -> Result<Subscription, Error> {
        match self.server.era {
            Era::V2026_07_28 => self.listen_2026(filter),
            _ => self.listen_2025(),
        }
    }

    fn listen_2026(&self, filter: &SubscriptionFilter) -> Result<Subscription, Error> {
        let mut params = JsonObject::new();
        params.insert("notifications".into(), serde_json::to_value(filter)?);
        envelope(self, &mut params);
        let id = self.new_id();
        let acked = self.inbox.expect_ack(id.clone());
        let out = Outgoing {
            id,
            method: methods::SUBSCRIPTIONS_LISTEN.to_string(),
            params: Value::Object(params),
            name: None,
        };
        let (done_tx, done) = bounded(1);
        let token = CancelToken::new();
        let thread = spawn_held(Arc::clone(&self.link), out, token.clone(), move |end| {
            let _ = done_tx.send(end);
        })?;
        let mut subscription = Subscription {
            token,
            honored: Value::Null,
            thread: Some(thread),
        };
        select! {
            recv(acked) -> honored => {
                subscription.honored = honored.unwrap_or(Value::Null);
                Ok(subscription)
            }
            recv(done) -> end => Err(match end {
                Ok(Err(e)) => e,
                _ => Error::new(ErrorKind::Protocol("the listen stream ended before its acknowledgement".into())),
            }),
            default(self.request_timeout) => Err(Error::new(ErrorKind::Timeout {
                method: methods::SUBSCRIPTIONS_LISTEN.into(),
                after: self.request_timeout,
            })),
        }
    }

    pub(crate) fn listen_2025(&self) -> Result<Subscription, Error> {
        let token = CancelToken::new();
        let thread = match &self.http {
            // The stream opened on connecting already carries everything
            // (a server allows one GET stream per session).
            Some(_) if self.background.lock().is_some() => None,
            Some(http) => {
                let first = http.open_get_stream(self.request_timeout)?;
                let stream = GetStream {
                    http: Arc::clone(http),
                    epoch: Arc::clone(&self.epoch),
                    token: token.clone(),
                    timeout: self.request_timeout,
                };
                let handle = thread::Builder::new()
                    .name("tiny-mcp-client-get".into())
                    .spawn(move || stream.keep(first))?;
                Some(handle)
            }
            None => None,
        };
        Ok(Subscription {
            token,
            honored: Value::Object(JsonObject::new()),
            thread,
        })
    }
}

/// A 2025-11-25 GET stream kept open for as long as it is held: when the
/// server ends it, it is opened again, on the same session if the server
/// still knows it, else on the next session the client starts (2025-11-25
/// transports, "Listening for Messages from the Server" and "Session
/// Management"). A server that ends it again and again is asked less and
/// less often, from [`MIN_PAUSE`] up to [`MAX_PAUSE`].
struct GetStream {
    http: Arc<HttpLink>,
    epoch: Arc<SessionEpoch>,
    token: CancelToken,
    timeout: Duration,
}

/// The pause before asking again for a GET stream that lasted under
/// [`SHORT_STREAM`]; doubled at each such stream up to [`MAX_PAUSE`].
const MIN_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between two GET streams.
const MAX_PAUSE: Duration = Duration::from_secs(30);
/// A GET stream that lasted at least this long is opened again at once.
const SHORT_STREAM: Duration = Duration::from_secs(1);

impl GetStream {
    /// Reads `first`, then each stream opened after it, until the token is
    /// cancelled or the server has no GET stream (`405`).
    fn keep(self, first: (Conn, Head)) {
        let epoch = Arc::clone(&self.epoch);
        let _wake = self.token.on_cancel(move || epoch.wake());
        let mut stream = Some(first);
        let mut pause = Duration::from_secs(0);
        loop {
            if let Some((conn, head)) = stream.take() {
                let began = Instant::now();
                self.http.read_get_stream(conn, head, &self.token);
                pause = match began.elapsed() < SHORT_STREAM {
                    true => (pause * 2).max(MIN_PAUSE).min(MAX_PAUSE),
                    false => Duration::from_secs(0),
                };
            }
            if self.token.is_cancelled() {
                return;
            }
            let seen = self.epoch.current();
            if pause > Duration::from_secs(0) {
                // Woken early by a new session, or by the cancel.
                self.epoch.wait_past(seen, pause, &self.token);
                if self.token.is_cancelled() {
                    return;
                }
            }
            match self.http.open_get_stream(self.timeout) {
                Ok(opened) => stream = Some(opened),
                Err(e) if matches!(e.kind(), ErrorKind::SessionExpired) => {
                    log::debug!("the GET stream's session ended; waiting for the next");
                    self.epoch.wait_past(seen, FOREVER, &self.token);
                    pause = Duration::from_secs(0);
                }
                Err(e) if matches!(e.kind(), ErrorKind::Http { status: 405, .. }) => return,
                Err(e) => {
                    log::debug!("the GET stream could not be opened again: {}", e);
                    pause = (pause * 2).max(MIN_PAUSE).min(MAX_PAUSE);
                }
            }
        }
    }
}

/// Runs `out` on a thread of its own until it ends or `token` is
/// cancelled; `ended` gets how it ended.
fn spawn_held(
    link: Arc<dyn Link>,
    out: Outgoing,
    token: CancelToken,
    ended: impl FnOnce(Result<Value, Error>) + Send + 'static,
) -> Result<thread::JoinHandle<()>, Error> {
    let handle = thread::Builder::new()
        .name("tiny-mcp-client-listen".into())
        .spawn(move || {
            let wait = Wait {
                deadline: Instant::now() + FOREVER,
                timeout: FOREVER,
                cancel: Some(&token),
            };
            ended(link.request(&out, &wait));
        })?;
    Ok(handle)
}
