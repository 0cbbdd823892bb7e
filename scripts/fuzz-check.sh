#!/usr/bin/env bash
# scripts/fuzz-check.sh - run each cargo-fuzz target in fuzz/ briefly
# (about a minute in all), seeded from fuzz/corpus/. New inputs go to
# target/fuzz-corpus/, never into the repository.
#
# Needs the nightly toolchain (libFuzzer); without it the check is skipped
# with a message. cargo-fuzz is installed with cargo when missing.
#
# Usage (from the repository root): bash scripts/fuzz-check.sh [SECONDS]
#   SECONDS  per target (default 25)
# Last line: "fuzz: ok (…)", "fuzz: skipped (…)" or "fuzz: FAILED (…)".
set -uo pipefail

SECONDS_PER_TARGET=${1:-25}
ROOT=$(pwd -P)
log() { echo "fuzz-check: $*" >&2; }
die() { echo "fuzz: FAILED ($*)"; exit 1; }

[ -d fuzz ] || die "run from the repository root"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz: skipped (no nightly toolchain)"
    exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    log "installing cargo-fuzz"
    cargo install cargo-fuzz --locked >"$ROOT/target/cargo-fuzz-install.log" 2>&1 \
        || { tail -n 20 "$ROOT/target/cargo-fuzz-install.log" >&2; die "cargo install cargo-fuzz"; }
fi
summary=()
for target in jsonrpc_parse serve_io; do
    work="$ROOT/target/fuzz-corpus/$target"
    mkdir -p "$work"
    out="$ROOT/target/fuzz-$target.log"
    (cd fuzz && cargo +nightly fuzz run "$target" "$work" "corpus/$target" -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1) >"$out" 2>&1 \
        || { tail -n 40 "$out" >&2; die "$target found a failure (fuzz/artifacts/$target)"; }
    runs=$(grep -o 'Done [0-9]* runs' "$out" | tail -1 | awk '{print $2}')
    log "$target: ${runs:-?} runs in ${SECONDS_PER_TARGET}s, no failure"
    summary+=("$target ${runs:-?} runs")
done
echo "fuzz: ok (${summary[*]})"
