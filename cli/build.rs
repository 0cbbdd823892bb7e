//! Sets `cfg(mcp_is_terminal)` when the compiler is Rust 1.70 or later,
//! which has `std::io::IsTerminal`: off Linux, `mcp` then asks it whether
//! stdin is a terminal (to answer elicitation requests there). On Linux
//! `mcp` reads `/proc/self/fd/0` on any compiler, and with Rust 1.63 (the
//! MSRV) other platforms count stdin as not a terminal. No dependencies:
//! it only asks `$RUSTC --version`. Its version probe is the one of the
//! library's `build.rs`, written again: each package is built from its
//! own tarball, so a file shared through `#[path]` would be left out.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
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
        println!("cargo:rustc-check-cfg=cfg(mcp_is_terminal)");
    }
    if minor >= 70 {
        println!("cargo:rustc-cfg=mcp_is_terminal");
    }
}

/// The `70` of `rustc 1.70.0 (90c541806 2023-05-31)`; `None` for a major
/// version other than 1.
fn minor_version(version: &str) -> Option<u32> {
    let number = version.split_whitespace().nth(1)?;
    let mut parts = number.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}
