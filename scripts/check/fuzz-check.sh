#!/usr/bin/env bash
# scripts/check/fuzz-check.sh - run each cargo-fuzz target in fuzz/ briefly
# (about a minute in all), seeded from fuzz/corpus/. New inputs go to
# target/fuzz-corpus/, never into the repository.
#
# Needs the nightly toolchain (libFuzzer); without it the check is skipped
# with a message. cargo-fuzz is installed with cargo when missing.
#
# Usage (from the repository root): bash scripts/check/fuzz-check.sh [SECONDS]
#   SECONDS  per target (default 12: about a minute for the five)
# The committed corpus is replayed first: a failure there fails the check.
# Then each target explores for SECONDS; what exploration finds is reported
# loudly (and saved under fuzz/artifacts/) without failing the run, since a
# random search is no deterministic test.
# Last line: "fuzz: ok (…)", "fuzz: skipped (…)" or "fuzz: FAILED (…)".
set -uo pipefail

SECONDS_PER_TARGET=${1:-12}
ROOT=$(pwd -P)
log() { echo "fuzz-check: $*" >&2; }
die() { echo "fuzz: FAILED ($*)"; exit 1; }

[ -d fuzz ] || die "run from the repository root"
# fuzz/target is built once per run (test-all.sh removes it after this step).
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
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
found=()
for target in jsonrpc_parse serve_io http_request uri_template request_state; do
    out="$ROOT/target/fuzz-$target.log"
    # 1. Replay the committed corpus (regressions fail the check).
    (cd fuzz && cargo +nightly fuzz run "$target" "corpus/$target" -- -runs=0) >"$out" 2>&1 \
        || { tail -n 40 "$out" >&2; die "$target fails on its committed corpus"; }
    # 2. Explore for a while; a new finding is reported, with its input
    #    saved under fuzz/artifacts/, for a regression seed and a fix.
    work="$ROOT/target/fuzz-corpus/$target"
    mkdir -p "$work"
    if (cd fuzz && cargo +nightly fuzz run "$target" "$work" "corpus/$target" -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1) >>"$out" 2>&1; then
        runs=$(grep -o 'Done [0-9]* runs' "$out" | tail -1 | awk '{print $2}')
        log "$target: corpus replayed, ${runs:-?} new runs in ${SECONDS_PER_TARGET}s, no failure"
        summary+=("$target ${runs:-?} runs")
    else
        tail -n 30 "$out" >&2
        log "NEW FINDING in $target: see fuzz/artifacts/$target and $out"
        found+=("$target")
        summary+=("$target: new finding")
    fi
done
if [ "${#found[@]}" -gt 0 ]; then
    echo "fuzz: ok, corpora replayed; NEW FINDINGS to triage in: ${found[*]}"
else
    echo "fuzz: ok (${summary[*]})"
fi
