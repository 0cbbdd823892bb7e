//! Integration tests, one binary (docs/STYLE.md section 5).
//!
//! `memory` drives the real dispatcher through [`tiny_mcp::MemoryClient`];
//! `stdio` spawns the `everything` example as a child process and speaks
//! newline-delimited JSON-RPC to it; `http` serves on 127.0.0.1:0 and
//! speaks raw HTTP/1.1; `modern` covers the 2026-07-28 era on all three;
//! `hardening` holds regressions found by hostile-peer trials; `surface`
//! checks that errors and panics reach the caller. `support`
//! holds what they share; `auth` covers authorization, request context and
//! hooks on HTTP.

mod support;

mod auth;
mod authoring;
mod client;
mod deploy;

mod fixes;
mod hardening;
mod http;
mod memory;
mod modern;
#[cfg(feature = "skills")]
mod skills;
mod stdio;
mod surface;
#[cfg(feature = "tasks")]
mod tasks;
