//! The key set of a JWKS URL (RFC 7517 §5), fetched with the client's
//! HTTP code (one deadline, a bounded body), cached, refetched when a
//! token names a key it lacks (at most once per refresh interval) or when
//! it is older than its maximum age, and kept for a bounded stale window
//! when a refetch fails.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;

use super::jwk::{Alg, Jwk};
use crate::client::oauth::fetch::{shown, Fetcher};
use crate::transport::http::TokenError;

/// How the key set is kept.
#[derive(Debug, Clone)]
pub(crate) struct KeyPolicy {
    /// At most one refetch per this interval, whatever tokens arrive.
    pub(crate) refresh_interval: Duration,
    /// Keys older than this are refetched before use.
    pub(crate) max_age: Duration,
    /// After `max_age`, how long the last good set still serves while
    /// refetches fail.
    pub(crate) stale_for: Duration,
    /// The most keys a set may have.
    pub(crate) max_keys: usize,
}

/// The keys of one JWKS URL.
pub(crate) struct KeySet {
    url: String,
    fetcher: Fetcher,
    policy: KeyPolicy,
    state: Mutex<State>,
    /// Held while a fetch is under way, so that a request with no usable
    /// keys waits for it (bounded by the fetch's deadline).
    fetching: Mutex<()>,
}

#[derive(Default)]
struct State {
    keys: Arc<Vec<Jwk>>,
    /// When `keys` were fetched.
    good_at: Option<Instant>,
    /// When the last fetch started.
    tried_at: Option<Instant>,
}

/// A generic description: the detail goes to the log only.
const UNAVAILABLE: &str = "the authorization server's signing keys are unavailable";

impl KeySet {
    pub(crate) fn new(url: String, fetcher: Fetcher, policy: KeyPolicy) -> KeySet {
        KeySet {
            url,
            fetcher,
            policy,
            state: Mutex::new(State::default()),
            fetching: Mutex::new(()),
        }
    }

    /// The keys that may have signed a token with `kid` and `alg`: the
    /// one named `kid` (whose algorithm must be `alg`), or without `kid`
    /// every key of `alg`.
    pub(crate) fn candidates(&self, kid: Option<&str>, alg: Alg) -> Result<Vec<Jwk>, TokenError> {
        let now = Instant::now();
        // The fetch lock is taken while the state is held, so that a
        // request that sees the attempt marked and no keys always finds
        // the fetch lock taken (it waits for the fetch, not a 503).
        let fetching = {
            let mut state = self.state.lock();
            let fresh = state.good_at.map_or(false, |at| {
                now.saturating_duration_since(at) < self.policy.max_age
            });
            if fresh {
                if let Some(found) = pick(&state.keys, kid, alg)? {
                    return Ok(found);
                }
            }
            let may = state.tried_at.map_or(true, |at| {
                now.saturating_duration_since(at) >= self.policy.refresh_interval
            });
            // `try_lock`: only a fetch holds it, and a fetch longer than
            // the refresh interval is left to finish.
            let guard = if may { self.fetching.try_lock() } else { None };
            if guard.is_some() {
                state.tried_at = Some(now);
            }
            guard
        };
        let may_fetch = fetching.is_some();
        let mut failed = false;
        if may_fetch {
            match self.fetch() {
                Ok(keys) => {
                    let found = pick(&keys, kid, alg);
                    let mut state = self.state.lock();
                    state.keys = Arc::new(keys);
                    state.good_at = Some(Instant::now());
                    drop(state);
                    return match found? {
                        Some(found) => Ok(found),
                        None => Err(TokenError::invalid("unknown signing key")),
                    };
                }
                Err(why) => {
                    log::warn!("JWKS {}: {}", shown(&self.url), why);
                    failed = true;
                }
            }
        }
        if !may_fetch && !self.usable(now) {
            // Another request is fetching the first (or an expired) set:
            // wait for it rather than refuse.
            drop(self.fetching.lock());
        }
        if !self.usable(now) {
            return Err(TokenError::unavailable(UNAVAILABLE));
        }
        let keys = Arc::clone(&self.state.lock().keys);
        match pick(&keys, kid, alg)? {
            Some(found) => Ok(found),
            None if failed => Err(TokenError::unavailable(UNAVAILABLE)),
            None => Err(TokenError::invalid("unknown signing key")),
        }
    }

    /// `true` if the cached set may serve at `now` (within its age and
    /// the stale window).
    fn usable(&self, now: Instant) -> bool {
        let good_at = self.state.lock().good_at;
        good_at.map_or(false, |at| {
            now.saturating_duration_since(at)
                < self.policy.max_age.saturating_add(self.policy.stale_for)
        })
    }

    /// A new key set, or why not (for the log).
    fn fetch(&self) -> Result<Vec<Jwk>, String> {
        let reply = self
            .fetcher
            .get_once("jwks", &self.url)
            .map_err(|e| e.to_string())?;
        if reply.status != 200 {
            return Err(format!("answered {}", reply.status));
        }
        let doc: Value =
            serde_json::from_slice(&reply.body).map_err(|e| format!("not JSON: {}", e))?;
        let listed = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("no \"keys\" array")?;
        if listed.len() > self.policy.max_keys {
            return Err(format!(
                "{} keys, more than the {} allowed",
                listed.len(),
                self.policy.max_keys
            ));
        }
        let mut keys = Vec::new();
        for value in listed {
            match Jwk::parse(value) {
                Ok(key) => keys.push(key),
                Err(why) => log::debug!("JWKS {}: skipped {}", shown(&self.url), why),
            }
        }
        if keys.is_empty() {
            // Not a good set: keep the last one (a provider mid-deploy).
            return Err("no usable key".into());
        }
        Ok(keys)
    }
}

/// The keys of `keys` that fit; `None` when none does. Keys of different
/// types may share a `kid` (RFC 7517 §4.5): the token's `alg` picks among
/// them, and a `kid` none of whose keys has that `alg` is a misfit.
fn pick(keys: &[Jwk], kid: Option<&str>, alg: Alg) -> Result<Option<Vec<Jwk>>, TokenError> {
    let named = |k: &&Jwk| kid.map_or(true, |kid| k.kid.as_deref() == Some(kid));
    let fit: Vec<Jwk> = keys
        .iter()
        .filter(named)
        .filter(|k| k.alg == alg)
        .cloned()
        .collect();
    if !fit.is_empty() {
        return Ok(Some(fit));
    }
    if kid.is_some() && keys.iter().any(|k| named(&k)) {
        return Err(TokenError::invalid(
            "the token's alg does not match its key",
        ));
    }
    Ok(None)
}
