#!/usr/bin/env bash
# Build the `everything` example, serve it over Streamable HTTP on a free loopback
# port and run the MCP conformance suites against that one server:
#   1. release 0.1.16 (scripts/check/conformance.sh), every server scenario;
#   2. the 0.2.0 alpha at 2026-07-28 (scripts/check/conformance-next.sh): the frozen
#      scored set plus the pending header scenarios http-header-validation and
#      http-custom-header-server-validation;
#   3. the 0.2.0 alpha at 2025-11-25: every scenario that applies there;
#   4. the 0.2.0 alpha's extension scenarios (tasks-*, sep-2640-skills-*).
#
# Usage: scripts/check/conformance-run.sh [SCENARIO...]
#   SCENARIO   run only these scenarios, in each run where they exist (a
#              scenario unknown to a suite is left out of that run)
# Environment: the MCP_CONFORMANCE_* variables of scripts/check/conformance.sh and
# scripts/check/conformance-next.sh (MCP_CONFORMANCE_SPEC_VERSION, _SUITE and _EXTRA
# are set here per run).
#
# Prints each run's report, then `N passed, M failed` last, summed over the
# three runs. Exits 1 if any scenario failed (or the server does not start).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release/examples/everything
HEADER_SCENARIOS="http-header-validation http-custom-header-server-validation"

case "${1:-}" in
  -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
SCENARIOS=("$@")

(cd "$ROOT" && cargo build --release --example everything >&2) \
  || { echo "conformance-run: cargo build failed" >&2; echo "0 passed, 1 failed"; exit 1; }

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') \
  || { echo "conformance-run: could not pick a free port (python3)" >&2; echo "0 passed, 1 failed"; exit 1; }
URL=http://127.0.0.1:$PORT/mcp

LOG=$(mktemp) || exit 1
OUT=$(mktemp) || exit 1
"$BIN" --http "127.0.0.1:$PORT" 2>"$LOG" >/dev/null </dev/null &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; rm -f "$LOG" "$OUT"' EXIT

# Wait (at most ~10 s) until the endpoint gives any HTTP answer.
for _ in $(seq 100); do
  kill -0 "$SERVER" 2>/dev/null || break
  code=$(curl -s -o /dev/null --max-time 1 -w '%{http_code}' -X POST \
    -H 'content-type: application/json' -d '{}' "$URL")
  [[ $code != 000 ]] && break
  sleep 0.1
done
if [[ ${code:-000} == 000 ]]; then
  echo "conformance-run: server did not answer at $URL; its stderr:" >&2
  sed 's/^/    /' "$LOG" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "conformance-run: server pid $SERVER at $URL" >&2

# The scenarios of SCENARIOS that a suite lists (one per line on stdin).
known_to() {
  local s
  while read -r s; do
    [[ " ${SCENARIOS[*]} " == *" $s "* ]] && echo "$s"
  done
}

total_passed=0 total_failed=0 summary=()
# run LABEL COMMAND...: runs one suite, tees its report, adds its last line
# ("N passed, M failed[, K skipped]") to the totals.
run() {
  local label=$1 line p f
  shift
  echo "=== $label ==="
  "$@" | tee "$OUT"
  line=$(tail -n 1 "$OUT")
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
  else
    p=0 f=1
    echo "conformance-run: $label printed no summary line" >&2
  fi
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
  summary+=("$label: $p passed, $f failed")
  echo
}

# suite_list CACHE ARGS...: the server scenarios a suite installed in CACHE
# lists (`list --server ARGS...`, the "  - name" lines of its first block).
suite_list() {
  local cache=$1 node=node n
  shift
  for n in "$cache"/node/node_modules/node-linux-*/bin/node; do
    [[ -x $n ]] && node=$n
  done
  "$node" "$cache/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    list --server "$@" 2>/dev/null | awk '
      /^  - / { print $2; seen = 1; next }
      seen { exit }'
}

if [[ ${#SCENARIOS[@]} -eq 0 ]]; then
  run "suite 0.1.16" "$ROOT/scripts/check/conformance.sh" "$URL"
  run "suite 0.2.0-alpha.12 at 2026-07-28 (scored + header scenarios)" \
    env MCP_CONFORMANCE_SPEC_VERSION=2026-07-28 MCP_CONFORMANCE_SUITE=required \
    MCP_CONFORMANCE_EXTRA="$HEADER_SCENARIOS" "$ROOT/scripts/check/conformance-next.sh" "$URL"
  run "suite 0.2.0-alpha.12 at 2025-11-25" \
    env MCP_CONFORMANCE_SPEC_VERSION=2025-11-25 MCP_CONFORMANCE_SUITE=all \
    "$ROOT/scripts/check/conformance-next.sh" "$URL"
  run "suite 0.2.0-alpha.12 extensions (tasks, skills)" \
    env MCP_CONFORMANCE_SUITE=extensions "$ROOT/scripts/check/conformance-next.sh" "$URL"
else
  # Make sure both suites are installed (pointed at a closed port, the
  # scripts only install), then keep the named scenarios each one knows.
  "$ROOT/scripts/check/conformance.sh" http://127.0.0.1:1/mcp none >/dev/null 2>&1
  "$ROOT/scripts/check/conformance-next.sh" http://127.0.0.1:1/mcp >/dev/null 2>&1
  old_cache=${MCP_CONFORMANCE_CACHE:-$TARGET/conformance}
  next_cache=${MCP_CONFORMANCE_NEXT_CACHE:-$TARGET/conformance-next}
  mapfile -t old < <(suite_list "$old_cache" | known_to)
  mapfile -t at2026 < <({
    suite_list "$next_cache" --requirements 2026-07-28
    tr ' ' '\n' <<< "$HEADER_SCENARIOS"
  } | known_to)
  mapfile -t at2025 < <(suite_list "$next_cache" --spec-version 2025-11-25 | known_to)
  if [[ ${#old[@]} -gt 0 ]]; then
    run "suite 0.1.16" "$ROOT/scripts/check/conformance.sh" "$URL" "${old[@]}"
  fi
  if [[ ${#at2026[@]} -gt 0 ]]; then
    run "suite 0.2.0-alpha.12 at 2026-07-28" env MCP_CONFORMANCE_SPEC_VERSION=2026-07-28 \
      "$ROOT/scripts/check/conformance-next.sh" "$URL" "${at2026[@]}"
  fi
  if [[ ${#at2025[@]} -gt 0 ]]; then
    run "suite 0.2.0-alpha.12 at 2025-11-25" env MCP_CONFORMANCE_SPEC_VERSION=2025-11-25 \
      "$ROOT/scripts/check/conformance-next.sh" "$URL" "${at2025[@]}"
  fi
  if [[ ${#summary[@]} -eq 0 ]]; then
    echo "conformance-run: no suite knows the scenarios: ${SCENARIOS[*]}" >&2
    total_failed=${#SCENARIOS[@]}
  fi
fi

if [[ $total_failed -ne 0 && -s $LOG ]]; then
  echo "conformance-run: server stderr:" >&2
  sed 's/^/    /' "$LOG" >&2
fi
for line in "${summary[@]}"; do echo "  $line"; done
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
