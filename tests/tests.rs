//! Integration tests, one binary (docs/STYLE.md section 5), one folder per
//! behaviour.
//!
//! `memory` drives the real dispatcher through [`tiny_mcp::MemoryClient`];
//! `stdio` spawns the `everything` fixture (tests/fixtures/everything/) as
//! a child process and speaks newline-delimited JSON-RPC to it; `http`
//! serves on 127.0.0.1:0 and speaks raw HTTP/1.1; `era_2026` covers the
//! 2026-07-28 era on all three; `surface` checks that errors and panics
//! reach the caller. `support` holds what they share; `auth` covers
//! authorization, request context and hooks on HTTP. `tests/fixtures/`
//! holds the programs the tests and scripts run (built as examples).

mod support;

mod apps;
mod auth;
mod authoring;
mod client;
mod deploy;
mod era_2026;
mod http;
mod memory;
#[cfg(feature = "metrics")]
mod metrics;
#[cfg(feature = "redis")]
mod redis;
#[cfg(all(feature = "redis", feature = "tasks"))]
mod redis_store;
#[cfg(feature = "skills")]
mod skills;
mod stdio;
mod surface;
#[cfg(feature = "tasks")]
mod tasks;
#[cfg(feature = "tracing")]
mod tracing_span;
mod upstream;
mod verify;
