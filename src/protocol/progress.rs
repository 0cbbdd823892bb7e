//! Spec: basic/utilities/progress (2025-11-25).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::RequestId;

/// A progress token: a string or an integer, echoed with its JSON type.
pub type ProgressToken = RequestId;

/// Params of `notifications/progress`:
/// `{"progressToken", "progress", "total"?, "message"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification (PROG-2).
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
