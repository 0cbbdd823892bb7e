//! The client against 2025-era stdio servers that do not know
//! `server/discover`, and the handshake that must never be cancelled.
//! The servers are `tests/client/fixtures/old-server.sh` in one of its
//! modes.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tiny_mcp::{Client, ClientBuilder, Era, ErrorKind, StderrMode};

/// `sh old-server.sh mode [record]`.
fn old_server(mode: &str, record: Option<&PathBuf>) -> Command {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/client/fixtures/old-server.sh"
    );
    let mut command = Command::new("sh");
    command.arg(script).arg(mode);
    if let Some(record) = record {
        command.arg(record);
    }
    command
}

fn builder() -> ClientBuilder {
    Client::builder("old-servers-test", "1")
        .stderr(StderrMode::Capture)
        .shutdown_timeout(Duration::from_secs(2))
}

/// A file for a server to record its input in, removed when dropped.
struct Record(PathBuf);

impl Record {
    fn new(name: &str) -> Record {
        let path =
            std::env::temp_dir().join(format!("tiny-mcp-{}-{}.jsonl", name, std::process::id()));
        let _ = std::fs::remove_file(&path);
        Record(path)
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// basic/lifecycle "Initialization" and basic/utilities/cancellation
// (2025-11-25): "The initialize request MUST NOT be cancelled by
// clients". A server that never answers gets no notifications/cancelled
// for it, nor for the server/discover probe, when connecting times out.
#[test]
fn a_timed_out_handshake_is_never_cancelled() {
    for era in [Some(Era::V2025_11_25), None] {
        let record = Record::new(&format!("deaf-{:?}", era));
        let mut b = builder().request_timeout(Duration::from_millis(300));
        if let Some(era) = era {
            b = b.era(era);
        }
        let err = b
            .connect_stdio(old_server("deaf", Some(&record.0)))
            .unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{:?}", err);
        // Connecting closed the server and waited for it: its record is
        // complete.
        let lines = record.lines();
        assert!(lines.iter().any(|l| l.contains("\"id\":1")), "{:?}", lines);
        assert!(
            !lines.iter().any(|l| l.contains("notifications/cancelled")),
            "{:?}",
            lines
        );
    }
}
