//! A [`TaskRecord`] as the JSON value of its Redis key.
//!
//! Shape (times in milliseconds since the Unix epoch, durations in
//! milliseconds): `{"taskId", "owner", "share", "peer", "instance",
//! "era": "2025-11-25" | "2026-07-28", "status": "working" | ..,
//! "statusMessage": string | null, "createdAtMs", "lastUpdatedAtMs",
//! "ttlMs", "pollIntervalMs", "inputRequests": {..}, "result": any | null,
//! "error": {"code", "message", "data"?} | null}`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::jsonrpc::{ErrorObject, JsonObject};
use crate::protocol::{Era, TaskStatus};
use crate::TaskRecord;

/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::V2025_11_25 => "2025-11-25",
        Era::V2026_07_28 => "2026-07-28",
    }
}

/// The record as one line of JSON.
pub(crate) fn encode(record: &TaskRecord) -> String {
    json!({
        "taskId": record.task_id,
        "owner": record.owner,
        "share": record.share,
        "peer": record.peer,
        "instance": record.instance,
        "era": era_name(record.era),
        "status": record.status.as_str(),
        "statusMessage": record.status_message,
        "createdAtMs": epoch_ms(record.created_at),
        "lastUpdatedAtMs": epoch_ms(record.last_updated_at),
        "ttlMs": ms(record.ttl),
        "pollIntervalMs": ms(record.poll_interval),
        "inputRequests": record.input_requests,
        "result": record.result,
        "error": record.error,
    })
    .to_string()
}

/// The record of [`encode`]'s form; `None` for anything else (Redis is
/// input like any other).
pub(crate) fn decode(text: &[u8]) -> Option<TaskRecord> {
    let value: Value = serde_json::from_slice(text).ok()?;
    let text_of = |name: &str| value.get(name).and_then(Value::as_str).map(String::from);
    let ms_of = |name: &str| value.get(name).and_then(Value::as_u64);
    let era = match value.get("era").and_then(Value::as_str)? {
        "2025-11-25" => Era::V2025_11_25,
        "2026-07-28" => Era::V2026_07_28,
        _ => return None,
    };
    let status: TaskStatus = serde_json::from_value(value.get("status")?.clone()).ok()?;
    let error = match value.get("error") {
        None | Some(Value::Null) => None,
        Some(error) => Some(serde_json::from_value::<ErrorObject>(error.clone()).ok()?),
    };
    let input_requests = match value.get("inputRequests") {
        Some(Value::Object(requests)) => requests.clone(),
        _ => JsonObject::new(),
    };
    let mut record = TaskRecord::new(
        text_of("taskId")?,
        text_of("owner")?,
        era,
        Duration::from_millis(ms_of("ttlMs")?),
    );
    record.share = text_of("share")?;
    record.peer = text_of("peer")?;
    record.instance = text_of("instance")?;
    record.status = status;
    record.status_message = text_of("statusMessage");
    record.created_at = UNIX_EPOCH + Duration::from_millis(ms_of("createdAtMs")?);
    record.last_updated_at = UNIX_EPOCH + Duration::from_millis(ms_of("lastUpdatedAtMs")?);
    record.poll_interval = Duration::from_millis(ms_of("pollIntervalMs")?);
    record.input_requests = input_requests;
    record.result = match value.get("result") {
        None | Some(Value::Null) => None,
        Some(result) => Some(result.clone()),
    };
    record.error = error;
    Some(record)
}

/// `record` with its times cut to whole milliseconds, as [`encode`] keeps
/// them (so that what `update` returns is what `get` reads).
pub(crate) fn cut_to_ms(record: &mut TaskRecord) {
    let cut = |time: SystemTime| UNIX_EPOCH + Duration::from_millis(epoch_ms(time));
    record.created_at = cut(record.created_at);
    record.last_updated_at = cut(record.last_updated_at);
}

/// `record` with what made it too large dropped: `failed`, with a
/// `-32603` error saying so (never lost in silence).
pub(crate) fn too_large(record: &TaskRecord, bytes: usize, max: usize) -> TaskRecord {
    dropped(
        record,
        format!(
            "the task's record is {} bytes, over the task store's limit of {} bytes \
             (RedisTaskStore::max_record_bytes); its result was dropped",
            bytes, max
        ),
    )
}

/// `record` whose JSON does not read back (nested deeper than JSON is
/// read: 128 levels): `failed`, with a `-32603` error saying so, as
/// [`too_large`].
pub(crate) fn unreadable(record: &TaskRecord) -> TaskRecord {
    dropped(
        record,
        "the task's record is nested too deeply to be read back from the task store \
         (over 128 levels); its result was dropped"
            .to_string(),
    )
}

fn dropped(record: &TaskRecord, message: String) -> TaskRecord {
    let mut failed = record.clone();
    failed.status = TaskStatus::Failed;
    failed.input_requests.clear();
    failed.result = None;
    failed.error = Some(ErrorObject::internal(message.clone()));
    failed.status_message = Some(message);
    failed.last_updated_at = SystemTime::now();
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every field survives the round trip, to the millisecond.
    #[test]
    fn records_round_trip() {
        let mut record = TaskRecord::new(
            "t".into(),
            "o\u{0}x".into(),
            Era::V2026_07_28,
            Duration::from_millis(60_000),
        );
        record.peer = "peer\u{0}192.0.2.1".into();
        record.instance = "i".into();
        record.created_at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        record.last_updated_at = record.created_at;
        record.move_to(TaskStatus::InputRequired, Some("asks".into()));
        record.last_updated_at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_456);
        record
            .input_requests
            .insert("k".into(), json!({"method": "elicitation/create"}));
        assert_eq!(decode(encode(&record).as_bytes()), Some(record.clone()));
        record.move_to(TaskStatus::Failed, None);
        record.last_updated_at = record.created_at;
        record.error = Some(ErrorObject::internal("no"));
        record.result = Some(json!({"content": []}));
        assert_eq!(decode(encode(&record).as_bytes()), Some(record));
        assert_eq!(decode(b"{\"taskId\":1}"), None);
        assert_eq!(decode(b"junk"), None);
    }
}
