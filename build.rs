//! Sets `cfg(tiny_mcp_process_group)` when the compiler is Rust 1.64 or
//! later, which has `std::os::unix::process::CommandExt::process_group`:
//! the stdio client then starts its server in a process group of its own,
//! so that closing ends everything the server started (DESIGN.md §17). On
//! Rust 1.63 (the MSRV, Debian 12's compiler) the cfg is not set and the
//! client signals the server's descendants instead. No dependencies: it
//! only asks `$RUSTC --version`. `TINY_MCP_NO_PROCESS_GROUP=1` in the
//! build's environment leaves the cfg out on any compiler, to test the
//! Rust 1.63 way with a newer one.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TINY_MCP_NO_PROCESS_GROUP");
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let minor = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|version| minor_version(&version));
    let minor = match minor {
        Some(minor) => minor,
        None => return,
    };
    // Rust 1.80 checks cfg names; older compilers would warn about the key.
    if minor >= 80 {
        println!("cargo:rustc-check-cfg=cfg(tiny_mcp_process_group)");
    }
    let refused = env::var_os("TINY_MCP_NO_PROCESS_GROUP").map_or(false, |v| v == "1");
    if minor >= 64 && !refused {
        println!("cargo:rustc-cfg=tiny_mcp_process_group");
    }
}

/// The `63` of `rustc 1.63.0 (4b91a6ea7 2022-08-08)`; `None` for a major
/// version other than 1.
fn minor_version(version: &str) -> Option<u32> {
    let number = version.split_whitespace().nth(1)?;
    let mut parts = number.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}
