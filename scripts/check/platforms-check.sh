#!/usr/bin/env bash
# scripts/check/platforms-check.sh - check that the library, its examples
# and the `mcp` command compile for the platforms CI does not run on:
# Windows (MSVC and GNU), macOS on Apple silicon, Linux on ARM64, and
# WASI preview 1 with warnings as errors (interop-wasi.sh builds and runs
# the WASI servers; this keeps the rest of the crate clean there).
# `cargo check` only: no linker, no C compiler, nothing is run.
#
# Usage (from the repository root): bash scripts/check/platforms-check.sh
#
# Steps:
#  1. `rustup target add` each target that is not installed yet (the
#     standard library for it; a few seconds each).
#  2. For each target, with warnings as errors (RUSTFLAGS=-D warnings;
#     dependencies keep their capped lints):
#       cargo check --lib --examples             (default features)
#       cargo check -p tiny-mcp-cli              (the `mcp` command)
#     and, for x86_64-pc-windows-msvc and aarch64-apple-darwin, the
#     library and examples with every feature whose dependencies are
#     pure Rust (PURE_FEATURES below); for x86_64-pc-windows-msvc also
#     with --no-default-features.
#     Left out: the features `tls` and `jwt` (ring: its build script
#     compiles C and assembly even for `check`, which needs a C cross
#     compiler per target: x86_64-w64-mingw32-gcc, aarch64-linux-gnu-gcc,
#     clang for macOS and MSVC), and `fuzzing` (entry points for fuzz/).
#  3. The size of the target directory (du -sh), then, under CI
#     (CI=true), the directory is removed, as test-all.sh does with the
#     other scratch trees.
#
# Target directory: target/platforms (its own: a check's metadata would
# otherwise sit beside the host's builds). CARGO_INCREMENTAL=0.
# Last line: "platforms: ok (N checks in S s; target/platforms D)" (exit 0)
# or "platforms: FAILED (the checks that failed)" (exit 1).
set -uo pipefail

TARGETS="x86_64-pc-windows-msvc x86_64-pc-windows-gnu aarch64-apple-darwin aarch64-unknown-linux-gnu wasm32-wasip1"
FULL_TARGETS="x86_64-pc-windows-msvc aarch64-apple-darwin"
NO_DEFAULT_TARGET=x86_64-pc-windows-msvc
PURE_FEATURES="sealed-state tiny_http schemars tracing opentelemetry redis"

START=$(date +%s)
log() { echo "platforms-check: $*" >&2; }
die() { echo "platforms: FAILED ($*)"; exit 1; }

[ -f Cargo.toml ] && [ -d cli ] || die "run from the repository root"
ROOT=$(pwd -P)
OUT="$ROOT/target/platforms"
export CARGO_INCREMENTAL=0
export CARGO_TARGET_DIR="$OUT"
export RUSTFLAGS="-D warnings"

command -v rustup >/dev/null || die "rustup is needed to add the targets"
installed=$(rustup target list --installed) || die "rustup target list failed"
for target in $TARGETS; do
    if ! grep -qx "$target" <<<"$installed"; then
        log "rustup target add $target"
        rustup target add "$target" >&2 || die "rustup target add $target failed"
    fi
done

checks=0
failures=()
check() {
    local name=$1
    shift
    log "$name: cargo check $*"
    checks=$((checks + 1))
    if ! cargo check --locked --quiet "$@"; then
        failures+=("$name")
    fi
}

for target in $TARGETS; do
    check "$target" --lib --examples --target "$target"
    check "$target mcp" -p tiny-mcp-cli --target "$target"
done
for target in $FULL_TARGETS; do
    check "$target features" --lib --examples --features "$PURE_FEATURES" --target "$target"
done
check "$NO_DEFAULT_TARGET no-default-features" --lib --examples --no-default-features \
    --target "$NO_DEFAULT_TARGET"

SIZE=$(du -sh "$OUT" 2>/dev/null | cut -f1)
log "target/platforms holds $SIZE"
if [ "${CI:-}" = true ]; then
    rm -rf "$OUT"
fi
SECONDS_TAKEN=$(($(date +%s) - START))
[ "${#failures[@]}" -eq 0 ] || die "${failures[*]}"
echo "platforms: ok ($checks checks in $SECONDS_TAKEN s; target/platforms $SIZE)"
