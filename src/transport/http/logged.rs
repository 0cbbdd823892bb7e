//! What the HTTP transport logs about what a peer controls, bounded so
//! that a peer cannot fill the log (DESIGN.md §26, "Logs"): header values
//! cut short and escaped, and refusals at most one line per interval.

use std::fmt::Write;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How much of a peer-supplied value a log line shows, in bytes.
const SHOWN_BYTES: usize = 64;

/// How often refusals are logged at most: one line per interval, with
/// how many there were since the last.
const REFUSAL_INTERVAL: Duration = Duration::from_secs(10);

/// `value` as a log line may show it: at most its first 64 bytes, bytes
/// outside printable ASCII written `\xNN`, and `…` when it was cut.
pub(crate) fn shown(value: &str) -> String {
    let mut out = String::with_capacity(SHOWN_BYTES + 4);
    for &byte in value.as_bytes().iter().take(SHOWN_BYTES) {
        if (0x20..0x7f).contains(&byte) && byte != b'\\' {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "\\x{:02x}", byte);
        }
    }
    if value.len() > SHOWN_BYTES {
        out.push('…');
    }
    out
}

/// Connections and requests refused at a limit (503, 408), logged at
/// most once per [`REFUSAL_INTERVAL`] with a count, so that a flood of
/// refusals costs a line every ten seconds, not a line each.
#[derive(Debug, Default)]
pub(crate) struct RefusalLog {
    /// When the last line went out, and the refusals since.
    state: Mutex<(Option<Instant>, u64)>,
}

impl RefusalLog {
    /// Counts one refusal, `why` in words; logs a line when the interval
    /// since the last one has passed.
    pub(crate) fn refused(&self, why: &str) {
        let mut state = self.state.lock();
        state.1 += 1;
        let due = state.0.map_or(true, |at| at.elapsed() >= REFUSAL_INTERVAL);
        if due {
            let count = state.1;
            *state = (Some(Instant::now()), 0);
            drop(state);
            log::warn!(
                "refused {} since the last such line (latest: {})",
                count,
                why
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_values_are_short_and_escaped() {
        assert_eq!(shown("example.com:8080"), "example.com:8080");
        assert_eq!(shown("a\nb\\c\u{7f}é"), "a\\x0ab\\x5cc\\x7f\\xc3\\xa9");
        let long = "h".repeat(60 * 1024);
        assert_eq!(shown(&long), format!("{}…", "h".repeat(64)));
    }

    #[test]
    fn refusals_are_counted_into_one_line_per_interval() {
        let log = RefusalLog::default();
        log.refused("first");
        for _ in 0..1000 {
            log.refused("more");
        }
        let state = log.state.lock();
        assert!(state.0.is_some());
        assert_eq!(
            state.1, 1000,
            "the refusals after the first line wait for the next"
        );
    }
}
