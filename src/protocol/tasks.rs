//! Spec: basic/utilities/tasks (2025-11-25, experimental) and the
//! `io.modelcontextprotocol/tasks` extension of 2026-07-28 (SEP-2663):
//! the wire types a tool declares and a task is reported with.

#[cfg(feature = "tasks")]
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Whether a tool's calls may run as tasks: `execution.taskSupport`.
///
/// Spec: server/tools (2025-11-25), `ToolExecution`; SEP-2663.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (the default when absent). A 2025-11-25 call that asks
    /// for one gets `-32601` (TASK-2).
    Forbidden,
    /// A task when the client can take one, else a plain result.
    Optional,
    /// Always a task: a client that cannot take one gets `-32601`
    /// (2025-11-25) or `-32021` (2026-07-28).
    Required,
}

/// How a tool runs: `{"taskSupport"?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Whether its calls may run as tasks; absent means `forbidden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Where a task is: `working`, `input_required`, then one of the terminal
/// `completed`, `failed` and `cancelled`, which never change (TASK-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The work is running.
    Working,
    /// The work waits for the client's answer to a request.
    InputRequired,
    /// The work ended with a result (a tool's `isError` result too).
    Completed,
    /// The work ended with a JSON-RPC error.
    Failed,
    /// The work was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// `true` for `completed`, `failed` and `cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// As the wire spells it, e.g. `input_required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// The `task` param of a 2025-11-25 task-augmented request: `{"ttl"?}`,
/// the lifetime the client asks for, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskMetadata {
    /// Requested time to live in milliseconds; the server may shorten it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// A task as a server reports it: the `CreateTaskResult` of a call, the
/// answer to `tasks/get`, an entry of `tasks/list`.
///
/// Shape: `{"taskId", "status", "statusMessage"?, "createdAt",
/// "lastUpdatedAt", "ttl", "pollInterval"?}`, durations in milliseconds.
/// The 2026-07-28 extension names the durations `ttlMs` and
/// `pollIntervalMs`; both spellings are read into the same fields, and
/// the 2025-11-25 names are written. Members a status adds in 2026-07-28
/// (`result`, `error`, `inputRequests`) are not kept here.
///
/// Spec: basic/utilities/tasks (2025-11-25) `Task`; SEP-2663
/// `DetailedTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The id the server gave the task.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What the server says about the status, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was made, ISO 8601 (empty if the server left it out).
    #[serde(default)]
    pub created_at: String,
    /// When it last changed, ISO 8601 (empty if the server left it out).
    #[serde(default)]
    pub last_updated_at: String,
    /// How long the server keeps it from its creation, in milliseconds;
    /// `None`: without limit (or not said).
    #[serde(default, alias = "ttlMs")]
    pub ttl: Option<u64>,
    /// How often the server suggests polling it, in milliseconds.
    #[serde(
        default,
        alias = "pollIntervalMs",
        skip_serializing_if = "Option::is_none"
    )]
    pub poll_interval: Option<u64>,
}

/// One page of `tasks/list` (2025-11-25 only): `{"tasks", "nextCursor"?}`.
///
/// Spec: basic/utilities/tasks (2025-11-25) `ListTasksResult`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksResult {
    /// The tasks of this page.
    pub tasks: Vec<Task>,
    /// The cursor of the next page; `None` on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `time` in ISO 8601 / RFC 3339 form, UTC, with milliseconds:
/// `2026-12-02T10:30:00.123Z`.
#[cfg(feature = "tasks")]
pub(crate) fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        year,
        month,
        day,
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (the
/// era-based conversion: 400-year eras of 146,097 days).
#[cfg(feature = "tasks")]
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "tasks")]
    use std::time::Duration;

    use super::*;

    // TASK-5: timestamps are ISO 8601; known instants (test vectors from
    // `date -u -d @N`).
    #[cfg(feature = "tasks")]
    #[test]
    fn timestamps_are_iso8601() {
        let at = |secs: u64, millis: u64| {
            iso8601(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_796_170_245, 999), "2026-12-02T00:10:45.999Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000Z");
    }

    // TASK-5 and SEP-2663: a task reads from either era's names.
    #[test]
    fn tasks_read_from_both_eras() {
        let v2025: Task = serde_json::from_str(
            r#"{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"y","ttl":null,"pollInterval":250}"#,
        )
        .unwrap();
        assert_eq!((v2025.ttl, v2025.poll_interval), (None, Some(250)));
        let v2026: Task = serde_json::from_str(
            r#"{"resultType":"task","taskId":"b","status":"input_required","createdAt":"x","lastUpdatedAt":"y","ttlMs":60000,"pollIntervalMs":500,"inputRequests":{}}"#,
        )
        .unwrap();
        assert_eq!(v2026.status, TaskStatus::InputRequired);
        assert_eq!((v2026.ttl, v2026.poll_interval), (Some(60_000), Some(500)));
    }

    #[test]
    fn statuses_spell_as_the_wire() {
        let all = [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ];
        for status in all {
            let wire = serde_json::to_value(status).unwrap();
            assert_eq!(wire, status.as_str());
        }
        assert!(!TaskStatus::InputRequired.is_terminal() && TaskStatus::Cancelled.is_terminal());
    }
}
