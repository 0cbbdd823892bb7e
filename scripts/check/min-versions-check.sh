#!/usr/bin/env bash
# scripts/check/min-versions-check.sh - prove that the lowest dependency versions
# Cargo.toml declares really build: resolve a lockfile with
# `cargo +nightly update -Z minimal-versions` in a scratch copy, then build
# the crate and its tests and run the unit tests with the stable toolchain.
# The committed Cargo.lock is never touched.
#
# Usage (from the repository root): bash scripts/check/min-versions-check.sh
# Last line: "minimal versions: ok" (exit 0) or "minimal versions: FAILED (why)".
set -uo pipefail

ROOT=$(pwd -P)
OUT="$ROOT/target/min-versions"
WORK="$OUT/work"
log() { echo "min-versions: $*" >&2; }
die() { echo "minimal versions: FAILED ($*)"; exit 1; }

[ -f Cargo.toml ] || die "run from the repository root"
command -v rustup >/dev/null || die "rustup is needed for the nightly resolver"
rustup toolchain list | grep -q '^nightly' \
    || rustup toolchain install nightly --profile minimal >/dev/null 2>&1 \
    || die "no nightly toolchain"
rm -rf "$WORK" && mkdir -p "$WORK" || die "cannot recreate $WORK"
tar -C "$ROOT" --exclude=./target --exclude=./.git -cf - . | tar -C "$WORK" -xf - \
    || die "copying the project failed"
cd "$WORK" || die "no $WORK"
cargo +nightly update -Z minimal-versions >"$OUT/update.log" 2>&1 \
    || { tail -n 20 "$OUT/update.log" >&2; die "cargo +nightly update -Z minimal-versions"; }
for crate in serde serde_json httparse crossbeam-channel parking_lot uuid log nix; do
    version=$(awk -v name="$crate" '$0 == "name = \"" name "\"" {getline; print $3}' Cargo.lock | tr -d '"' | head -1)
    log "$crate $version"
done
export CARGO_TARGET_DIR="$OUT/target"
# Built once (test-all.sh removes target/min-versions after this step).
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
cargo build --lib --locked || die "cargo build --lib at the minimal versions"
cargo test --no-run --locked || die "cargo test --no-run at the minimal versions"
cargo test --lib --locked -q || die "unit tests at the minimal versions"
cargo test --lib --locked -q --features sealed-state \
    || die "unit tests with sealed-state at the minimal versions"
echo "minimal versions: ok"
