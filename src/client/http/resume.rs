//! Resuming a 2025-11-25 event stream that ended before its answer
//! (basic/transports "Resumability and Redelivery", HTTP-6, HTTP-15): a
//! GET with `Last-Event-ID`, after the `retry:` the server asked for. A
//! server may close the stream after every event to make the client poll,
//! so resuming goes on as long as each connection brings a new event id,
//! within the call's deadline; only reconnections in a row that bring
//! none are counted and limited.

use std::time::Duration;

use crate::error::{Error, ErrorKind};

/// The longest `retry:` honoured, and the wait when none was given.
const MAX_RETRY: Duration = Duration::from_secs(5);
const DEFAULT_RETRY: Duration = Duration::from_millis(100);

/// Where one call's stream stands across its connections.
#[derive(Debug)]
pub(super) struct Resumption {
    /// The last event id seen on any of the call's connections.
    last_id: Option<String>,
    /// The last `retry:` the server sent, in milliseconds.
    retry: Option<u64>,
    /// Reconnections in a row that brought no new event id.
    idle: usize,
    max_idle: usize,
}

impl Resumption {
    /// Before the call's POST; `max_idle` reconnections in a row may bring
    /// nothing new.
    pub(super) fn new(max_idle: usize) -> Resumption {
        Resumption {
            last_id: None,
            retry: None,
            idle: 0,
            max_idle,
        }
    }

    /// The `Last-Event-ID` to resume from; `None` before the first drop.
    pub(super) fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// A connection ended without the answer, its last event id `last_id`
    /// and its `retry:`: how long to wait before resuming.
    ///
    /// # Errors
    ///
    /// `ErrorKind::Protocol` when there is no event id to resume from, or
    /// when more than `max_idle` reconnections in a row brought no new one.
    pub(super) fn dropped(
        &mut self,
        last_id: Option<String>,
        retry: Option<u64>,
    ) -> Result<Duration, Error> {
        self.retry = retry.or(self.retry);
        match last_id {
            Some(id) if self.last_id.as_ref() != Some(&id) => {
                self.last_id = Some(id);
                self.idle = 0;
            }
            _ if self.last_id.is_none() => return Err(ended("it gave no event id to resume from")),
            _ => {
                self.idle += 1;
                if self.idle > self.max_idle {
                    return Err(ended(&format!(
                        "{} reconnections in a row brought no new event",
                        self.idle
                    )));
                }
            }
        }
        let pause = self.retry.map_or(DEFAULT_RETRY, Duration::from_millis);
        Ok(pause.min(MAX_RETRY))
    }
}

/// The call's error when its stream cannot be resumed, saying `why`.
pub(super) fn ended(why: &str) -> Error {
    Error::new(ErrorKind::Protocol(format!(
        "the server's event stream ended before the answer: {}",
        why
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    // "Resumability and Redelivery": progress resets the count of empty
    // reconnections; `retry:` is kept across connections, capped at 5 s.
    #[test]
    fn resuming_follows_progress() {
        let mut resumption = Resumption::new(2);
        assert!(resumption.dropped(None, None).is_err(), "nothing to resume");
        let mut resumption = Resumption::new(2);
        let pause = resumption.dropped(Some("1".into()), Some(10)).unwrap();
        assert_eq!(pause, Duration::from_millis(10));
        for id in 2..50 {
            resumption.dropped(Some(id.to_string()), None).unwrap();
        }
        assert_eq!(resumption.last_id(), Some("49"));
        resumption.dropped(None, Some(60_000)).unwrap();
        let pause = resumption.dropped(Some("49".into()), None).unwrap();
        assert_eq!(pause, MAX_RETRY);
        let err = resumption.dropped(None, None).unwrap_err();
        assert!(err.to_string().contains("3 reconnections"), "{}", err);
        let mut resumption = Resumption::new(0);
        resumption.dropped(Some("1".into()), None).unwrap();
        assert!(resumption.dropped(None, None).is_err());
    }
}
