//! A task on the wire, in each era's shape.
//!
//! 2025-11-25 `Task`: `{"taskId", "status", "statusMessage"?, "createdAt",
//! "lastUpdatedAt", "ttl", "pollInterval"?}` (milliseconds), and
//! `CreateTaskResult` wraps it as `{"task"}`. 2026-07-28 (SEP-2663): the
//! same fields with `ttlMs` and `pollIntervalMs`, `CreateTaskResult` flat
//! with `resultType: "task"`, and `tasks/get` inlining `inputRequests`,
//! `result` or `error` by status (`DetailedTask`).

use serde_json::Value;

use super::TaskRecord;
use crate::error::to_json;
use crate::jsonrpc::JsonObject;
use crate::protocol::{iso8601, Era, TaskStatus};
use crate::server::inner::ServerInner;

/// The fields both eras share, with the era's names for the durations.
fn base(record: &TaskRecord, era: Era) -> JsonObject {
    let (ttl, poll) = match era {
        Era::V2025_11_25 => ("ttl", "pollInterval"),
        Era::V2026_07_28 => ("ttlMs", "pollIntervalMs"),
    };
    let mut task = JsonObject::new();
    task.insert("taskId".into(), Value::from(record.task_id.as_str()));
    task.insert("status".into(), Value::from(record.status.as_str()));
    if let Some(message) = &record.status_message {
        task.insert("statusMessage".into(), Value::from(message.as_str()));
    }
    task.insert("createdAt".into(), Value::from(iso8601(record.created_at)));
    task.insert(
        "lastUpdatedAt".into(),
        Value::from(iso8601(record.last_updated_at)),
    );
    task.insert(ttl.into(), Value::from(millis(record.ttl)));
    task.insert(
        poll.into(),
        Value::from(millis(record.poll_interval).max(1)),
    );
    task
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A 2025-11-25 `Task`.
pub(crate) fn task_2025(record: &TaskRecord) -> JsonObject {
    base(record, Era::V2025_11_25)
}

/// A 2026-07-28 `DetailedTask`: the task with what its status carries.
pub(crate) fn detailed_task(record: &TaskRecord) -> JsonObject {
    let mut task = base(record, Era::V2026_07_28);
    match record.status {
        TaskStatus::InputRequired => {
            let requests = Value::Object(record.input_requests.clone());
            task.insert("inputRequests".into(), requests);
        }
        TaskStatus::Completed => {
            let result = record
                .result
                .clone()
                .unwrap_or_else(|| Value::Object(JsonObject::new()));
            task.insert("result".into(), result);
        }
        TaskStatus::Failed => {
            // An error that cannot be serialized (a bug, logged) is left out.
            let error = record.error.as_ref().map(|e| to_json("a task's error", e));
            if let Some(Ok(error)) = error {
                task.insert("error".into(), error);
            }
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    task
}

/// The `CreateTaskResult` that answers the request a task stands for.
pub(crate) fn create_result(record: &TaskRecord, server: &ServerInner) -> Value {
    match record.era {
        Era::V2025_11_25 => serde_json::json!({ "task": task_2025(record) }),
        Era::V2026_07_28 => {
            let mut result = base(record, Era::V2026_07_28);
            result.insert("resultType".into(), Value::from("task"));
            // A task stands for a `tools/call`, whose results are not
            // cacheable (its row in the method table).
            server.decorate(Value::Object(result), false)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::jsonrpc::ErrorObject;

    fn record(era: Era) -> TaskRecord {
        TaskRecord::new("t1".into(), String::new(), era, Duration::from_secs(60))
    }

    // TASK-5 and SEP-2663 "Tasks": the era's names for the durations, in
    // integer milliseconds; no v1 names on the 2026-07-28 wire.
    #[test]
    fn durations_carry_the_eras_names() {
        let v2025 = task_2025(&record(Era::V2025_11_25));
        assert_eq!(v2025["ttl"], 60_000);
        assert!(v2025.contains_key("pollInterval") && !v2025.contains_key("ttlMs"));
        let v2026 = detailed_task(&record(Era::V2026_07_28));
        assert_eq!(v2026["ttlMs"], 60_000);
        assert!(!v2026.contains_key("ttl") && !v2026.contains_key("pollInterval"));
        assert_eq!(v2026["status"], "working");
    }

    // SEP-2663 `DetailedTask`: a failed task inlines its error and no result.
    #[test]
    fn failed_tasks_inline_their_error() {
        let mut task = record(Era::V2026_07_28);
        task.move_to(TaskStatus::Failed, Some("boom".into()));
        task.error = Some(ErrorObject::internal("boom"));
        let wire = detailed_task(&task);
        assert_eq!(wire["error"]["code"], -32603);
        assert!(!wire.contains_key("result"));
        assert_eq!(wire["statusMessage"], "boom");
    }
}
