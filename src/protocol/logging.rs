//! Spec: server/utilities/logging (2025-11-25).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A log level (RFC 5424), ordered from `Debug` (lowest) to `Emergency`.
///
/// Shape: `"debug"`, `"info"`, `"notice"`, `"warning"`, `"error"`,
/// `"critical"`, `"alert"`, `"emergency"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debugging detail.
    Debug,
    /// Progress.
    Info,
    /// Significant but normal.
    Notice,
    /// Something to look at.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action needed now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, lowest first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire name, e.g. `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LoggingLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoggingLevel::ALL
            .iter()
            .copied()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown logging level: {}", s))
    }
}

/// A level is a JSON string and nothing else: serde's derived enum
/// deserializer would also take `{"debug": null}`.
impl<'de> Deserialize<'de> for LoggingLevel {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Params of `logging/setLevel`: `{"level"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelRequestParams {
    /// The lowest level the client wants.
    pub level: LoggingLevel,
}

/// Params of `notifications/message`: `{"level", "logger"?, "data"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Which part of the server logged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value.
    pub data: Value,
}
