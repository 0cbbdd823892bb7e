#!/usr/bin/env bash
# Run the official MCP conformance suite (npm @modelcontextprotocol/conformance)
# against an MCP server that is already running (Streamable HTTP).
#
# Usage: scripts/check/conformance.sh [URL] [SCENARIO...]
#   URL        MCP endpoint (default http://127.0.0.1:3000/mcp); keep it on
#              127.0.0.1/localhost, the dns-rebinding-protection scenario needs that
#   SCENARIO   only these scenarios (default: all of `conformance list --server`)
# Environment:
#   MCP_CONFORMANCE_VERSION      suite version                 (default 0.1.16)
#   MCP_CONFORMANCE_SDK_VERSION  @modelcontextprotocol/sdk forced via npm overrides
#                                (default 1.32.2; empty: no override)
#   MCP_CONFORMANCE_NODE_VERSION node-linux-<arch> package used when the local
#                                node is older than 22 (default 22.23.3)
#   MCP_CONFORMANCE_CACHE        install directory        (default <repo>/target/conformance)
#   MCP_CONFORMANCE_TIMEOUT      seconds per scenario          (default 120)
#
# Prints `PASS name` / `FAIL name` per scenario (with the suite's report for a
# failure) and `N passed, M failed` last. Exit 0 only if every scenario passed.
# Nothing is installed globally: the suite (and Node 22 if needed) go into the cache.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VERSION=${MCP_CONFORMANCE_VERSION:-0.1.16}
SDK_VERSION=${MCP_CONFORMANCE_SDK_VERSION-1.32.2}
NODE_VERSION=${MCP_CONFORMANCE_NODE_VERSION:-22.23.3}
CACHE=${MCP_CONFORMANCE_CACHE:-${CARGO_TARGET_DIR:-$ROOT/target}/conformance}
TIMEOUT=${MCP_CONFORMANCE_TIMEOUT:-120}

URL=http://127.0.0.1:3000/mcp
if [[ $# -gt 0 && $1 == *://* ]]; then URL=$1; shift; fi
case "${1:-}" in
  -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
SCENARIOS=("$@")

# Early failure: still end with the summary line.
die() {
  echo "conformance: $*" >&2
  echo "0 passed, $(( ${#SCENARIOS[@]} > 0 ? ${#SCENARIOS[@]} : 1 )) failed"
  exit 1
}

. "$(dirname "${BASH_SOURCE[0]}")/lib/install-suite.sh"
TAG=conformance
install_suite

# --- scenarios: `list --server` prints "  - name [spec versions]" lines ---
if [[ ${#SCENARIOS[@]} -eq 0 ]]; then
  mapfile -t SCENARIOS < <("$NODE" "$CLI" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
  [[ ${#SCENARIOS[@]} -gt 0 ]] || die "could not list the suite's server scenarios"
fi

# --- is the server there? (any HTTP answer will do) ---
"$NODE" -e 'fetch(process.argv[1], {signal: AbortSignal.timeout(5000)})
  .then(() => process.exit(0), e => { console.error(String(e.cause ?? e)); process.exit(1); })' "$URL" \
  || die "no server answers at $URL"

# --- run each scenario on its own ---
echo "conformance: suite $VERSION, ${#SCENARIOS[@]} scenarios, $URL" >&2
passed=0 failed=0
for s in "${SCENARIOS[@]}"; do
  out=$(timeout -k 5 "$TIMEOUT" "$NODE" "$CLI" server --url "$URL" --scenario "$s" 2>&1)
  rc=$?
  # The suite exits 1 when a check failed; also insist on its "Passed: x/y" summary
  # so that a crash exiting 0 cannot count as a pass.
  if [[ $rc -eq 0 && $out == *$'\n'"Passed: "* ]]; then
    passed=$((passed + 1))
    echo "PASS $s"
  else
    failed=$((failed + 1))
    case $rc in 124|137) note=" (timed out after ${TIMEOUT}s)" ;; *) note=" (exit $rc)" ;; esac
    echo "FAIL $s$note"
    # The suite hard-codes ANSI colours; drop them unless printing to a terminal.
    [[ -t 1 ]] || out=$(sed $'s/\e\\[[0-9;]*m//g' <<< "$out")
    sed 's/^/    /' <<< "$out"
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
