//! Sets `cfg(mcp_is_terminal)` when the compiler is Rust 1.70 or later,
//! which has `std::io::IsTerminal`: off Linux, `mcp` then asks it whether
//! stdin is a terminal (to answer elicitation requests there). On Linux
//! `mcp` reads `/proc/self/fd/0` on any compiler, and with Rust 1.63 (the
//! MSRV) other platforms count stdin as not a terminal. No dependencies:
//! it only asks `$RUSTC --version`.

#[path = "../build/rustc_minor.rs"]
mod rustc_minor;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../build/rustc_minor.rs");
    let minor = match rustc_minor::rustc_minor() {
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
