//! The compiler's minor version, for the build scripts of both packages
//! (`build.rs`, `cli/build.rs`), which include this file with `#[path]`.
//! No dependencies: it only asks `$RUSTC --version`.

use std::env;
use std::process::Command;

/// The `63` of `rustc 1.63.0 (4b91a6ea7 2022-08-08)` for the compiler
/// cargo builds with; `None` when it cannot be asked or its major
/// version is not 1.
pub fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let version = String::from_utf8(output.stdout).ok()?;
    let number = version.split_whitespace().nth(1)?;
    let mut parts = number.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}
