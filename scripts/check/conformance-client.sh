#!/usr/bin/env bash
# Run the CLIENT scenarios of the official MCP conformance suite (npm
# @modelcontextprotocol/conformance) against tiny-mcp's blocking Client, driven
# by tests/fixtures/conformance_client.rs (the suite starts a scenario server and runs
# `conformance_client <serverUrl>` with MCP_CONFORMANCE_SCENARIO set):
#   1. release 0.1.16, every non-auth client scenario;
#   2. the 0.2.0 alpha at 2025-11-25 and at 2026-07-28, every non-auth client
#      scenario that applies at that version (`list --client --spec-version V`);
#   3. the auth scenarios (`auth/*`) of both: the release's and the pre-release's
#      at 2025-11-25 and at 2026-07-28, the client logging in with tiny_mcp::oauth
#      (a headless user agent; the suite's authorization servers approve at once),
#      run JOBS at a time and counted like the others.
#
# Usage: scripts/check/conformance-client.sh [SCENARIO...]
#   SCENARIO   only these scenarios, in each run that lists them (auth/... too)
# Environment:
#   MCP_CONFORMANCE_VERSION       release suite version          (default 0.1.16)
#   MCP_CONFORMANCE_NEXT_VERSION  pre-release suite version      (default 0.2.0-alpha.12)
#   MCP_CONFORMANCE_SDK_VERSION   @modelcontextprotocol/sdk forced via npm overrides
#                                 (default 1.32.2; empty: no override)
#   MCP_CONFORMANCE_NODE_VERSION  node-linux-<arch> package used when the local
#                                 node is older than 22 (default 22.23.3)
#   MCP_CONFORMANCE_CACHE         release install dir      (default <repo>/target/conformance)
#   MCP_CONFORMANCE_NEXT_CACHE    pre-release install dir  (default <repo>/target/conformance-next)
#   MCP_CONFORMANCE_TIMEOUT       seconds per scenario                 (default 45)
#   MCP_CONFORMANCE_AUTH=0        skip the auth scenarios
#   MCP_CONFORMANCE_JOBS          auth scenarios run at once           (default 8)
#   MCP_CONFORMANCE_VERBOSE=1     the suite's whole report for every scenario
#
# Prints `PASS name (suite, version; x ok, y failed, z warnings)` or `FAIL ...`
# per scenario, a failure followed by its failed and warning checks and the
# client's stderr; then `AUTH PASS|FAIL name (...)` per auth scenario (a failure
# with its details) and `auth: P passed of R run`; and last `N passed, M failed`
# over every scenario run. Exits 1 if any scenario failed (or nothing ran).
# Nothing is installed globally (see scripts/check/lib/install-suite.sh).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/debug/examples/conformance_client
REL_VERSION=${MCP_CONFORMANCE_VERSION:-0.1.16}
NEXT_VERSION=${MCP_CONFORMANCE_NEXT_VERSION:-0.2.0-alpha.12}
SDK_VERSION=${MCP_CONFORMANCE_SDK_VERSION-1.32.2}
NODE_VERSION=${MCP_CONFORMANCE_NODE_VERSION:-22.23.3}
REL_CACHE=${MCP_CONFORMANCE_CACHE:-$TARGET/conformance}
NEXT_CACHE=${MCP_CONFORMANCE_NEXT_CACHE:-$TARGET/conformance-next}
TIMEOUT=${MCP_CONFORMANCE_TIMEOUT:-45}
AUTH=${MCP_CONFORMANCE_AUTH:-1}
JOBS=${MCP_CONFORMANCE_JOBS:-8}
VERBOSE=${MCP_CONFORMANCE_VERBOSE:-0}
TAG=conformance-client

case "${1:-}" in
  -h|--help) sed -n '2,34p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
SCENARIOS=("$@")

# Early failure: still end with the summary line.
die() {
  echo "$TAG: $*" >&2
  echo "0 passed, 1 failed"
  exit 1
}

TMP=$(mktemp -d) || die "mktemp failed"
AUTH_PIDS=()
cleanup() {
  local pid
  for pid in ${AUTH_PIDS[@]+"${AUTH_PIDS[@]}"}; do kill "$pid" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# --- the client under test ---
# Feature `jwt`: the client-credentials-jwt scenario signs its assertion.
(cd "$ROOT" && cargo build --features jwt --example conformance_client >&2) || die "cargo build failed"
# The suite splits --command on spaces.
[[ $BIN != *" "* ]] || die "the example's path contains a space: $BIN"

# --- both suites (install_suite reads VERSION and CACHE, sets NODE and CLI) ---
. "$ROOT/scripts/check/lib/install-suite.sh"
VERSION=$REL_VERSION CACHE=$REL_CACHE
install_suite
REL_NODE=$NODE REL_CLI=$CLI
VERSION=$NEXT_VERSION CACHE=$NEXT_CACHE
install_suite
NEXT_NODE=$NODE NEXT_CLI=$CLI

# client_scenarios NODE CLI [ARGS...]: the "  - name [...]" lines of
# `list --client ARGS...`, keeping only the named SCENARIOS when given.
client_scenarios() {
  local node=$1 cli=$2 s
  shift 2
  "$node" "$cli" list --client "$@" 2>/dev/null | awk '
    /^Client scenarios/ { on = 1; next }
    on && /^  - / { print $2; next }
    on { exit }' | while read -r s; do
      if [[ ${#SCENARIOS[@]} -eq 0 || " ${SCENARIOS[*]} " == *" $s "* ]]; then
        echo "$s"
      fi
    done
}

# run_one OUT NODE CLI SCENARIO [SPEC]: runs one scenario, its report
# (colours dropped) in OUT and the suite's exit status in OUT.rc.
run_one() {
  local out=$1 node=$2 cli=$3 s=$4 spec=${5:-} rc
  local args=(client --command "$BIN" --scenario "$s")
  [[ -n $spec ]] && args+=(--spec-version "$spec")
  timeout -k 5 "$TIMEOUT" "$node" "$cli" "${args[@]}" > "$out.raw" 2>&1
  rc=$?
  sed $'s/\e\\[[0-9;]*m//g' "$out.raw" > "$out"
  echo "$rc" > "$out.rc"
}

# verdict OUT LABEL: prints the PASS/FAIL line of a report; status 0 on a pass.
# The suite exits 1 when a check failed or warned; also insist on its
# "Passed: x/y" summary so that a crash exiting 0 cannot count as a pass.
verdict() {
  local out=$1 label=$2 rc counts note
  rc=$(cat "$out.rc")
  counts=$(sed -n 's/^Passed: \([0-9]*\)\/[0-9]*, \([0-9]*\) failed, \([0-9]*\) warnings.*/\1 ok, \2 failed, \3 warnings/p' \
    "$out" | tail -n 1)
  if [[ $rc -eq 0 && -n $counts ]]; then
    echo "PASS $label; $counts)"
    return 0
  fi
  case $rc in 124|137) note="timed out after ${TIMEOUT}s" ;; *) note="exit $rc" ;; esac
  echo "FAIL $label; ${counts:+$counts; }$note)"
  return 1
}

# details OUT: a failure's failed and warning checks and the client's stderr.
details() {
  awk '
    /^(Failed|Warning) Checks:$/ || /^Stderr:$/ { on = 1; print "    " $0; next }
    on && /^$/ { on = 0; next }
    on { print "    " $0 }
    /^Client timed out/ { print "    " $0 }' "$1"
}

passed=0 failed=0 n=0
# run_set SUITE NODE CLI [SPEC]: every non-auth client scenario of a suite
# (at SPEC when given), one after the other.
run_set() {
  local suite=$1 node=$2 cli=$3 spec=${4:-} s out label
  local list_args=()
  [[ -n $spec ]] && list_args=(--spec-version "$spec")
  for s in $(client_scenarios "$node" "$cli" ${list_args[@]+"${list_args[@]}"} | grep -v '^auth/'); do
    n=$((n + 1))
    out=$TMP/run-$n
    label="$s ($suite${spec:+, $spec}"
    run_one "$out" "$node" "$cli" "$s" "$spec"
    if verdict "$out" "$label"; then
      passed=$((passed + 1))
      [[ $VERBOSE == 1 ]] && sed 's/^/    /' "$out"
    else
      failed=$((failed + 1))
      if [[ $VERBOSE == 1 ]]; then sed 's/^/    /' "$out"; else details "$out"; fi
    fi
  done
}

echo "$TAG: $BIN against suites $REL_VERSION and $NEXT_VERSION" >&2
run_set "$REL_VERSION" "$REL_NODE" "$REL_CLI"
run_set "$NEXT_VERSION" "$NEXT_NODE" "$NEXT_CLI" 2025-11-25
run_set "$NEXT_VERSION" "$NEXT_NODE" "$NEXT_CLI" 2026-07-28

# --- auth scenarios, run JOBS at a time ---
if [[ $AUTH != 0 ]]; then
  auth_runs=()   # "suite|spec|scenario"
  for s in $(client_scenarios "$REL_NODE" "$REL_CLI" | grep '^auth/'); do
    auth_runs+=("$REL_VERSION||$s")
  done
  for spec in 2025-11-25 2026-07-28; do
    for s in $(client_scenarios "$NEXT_NODE" "$NEXT_CLI" --spec-version "$spec" | grep '^auth/'); do
      auth_runs+=("$NEXT_VERSION|$spec|$s")
    done
  done
  i=0
  for r in ${auth_runs[@]+"${auth_runs[@]}"}; do
    IFS='|' read -r suite spec s <<< "$r"
    if [[ $suite == "$REL_VERSION" ]]; then node=$REL_NODE cli=$REL_CLI; else node=$NEXT_NODE cli=$NEXT_CLI; fi
    while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n; done
    run_one "$TMP/auth-$i" "$node" "$cli" "$s" "$spec" &
    AUTH_PIDS+=($!)
    i=$((i + 1))
  done
  wait
  AUTH_PIDS=()
  auth_passed=0 i=0
  for r in ${auth_runs[@]+"${auth_runs[@]}"}; do
    IFS='|' read -r suite spec s <<< "$r"
    if line=$(verdict "$TMP/auth-$i" "$s ($suite${spec:+, $spec}"); then
      auth_passed=$((auth_passed + 1))
      passed=$((passed + 1))
      echo "AUTH $line"
      [[ $VERBOSE == 1 ]] && sed 's/^/    /' "$TMP/auth-$i"
    else
      failed=$((failed + 1))
      echo "AUTH $line"
      if [[ $VERBOSE == 1 ]]; then sed 's/^/    /' "$TMP/auth-$i"; else details "$TMP/auth-$i"; fi
    fi
    i=$((i + 1))
  done
  echo "auth: $auth_passed passed of ${#auth_runs[@]} run"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
