#!/usr/bin/env bash
# Run the pre-release line of the MCP conformance suite (npm
# @modelcontextprotocol/conformance 0.2.0-alpha.*), the first with 2026-07-28
# (stateless) server scenarios, against an MCP server that is already running
# (Streamable HTTP). scripts/check/conformance.sh runs the released 0.1.x line.
#
# Usage: scripts/check/conformance-next.sh [URL] [SCENARIO...]
#   URL        MCP endpoint (default http://127.0.0.1:3000/mcp); keep it on
#              127.0.0.1/localhost, the dns-rebinding-protection scenario needs that
#   SCENARIO   only these scenarios (default: the set MCP_CONFORMANCE_SUITE picks)
# Environment:
#   MCP_CONFORMANCE_SPEC_VERSION  wire and scenario filter: 2026-07-28 (default)
#                                 or 2025-11-25
#   MCP_CONFORMANCE_SUITE         extensions: the extension scenarios (tasks-*,
#                                 sep-2640-skills-*), each at the wire the suite
#                                 picks; all (default): every scenario that applies at the
#                                 version (`list --server --spec-version V`, pending
#                                 ones included); required: only the version's frozen
#                                 scored set (`list --server --requirements V`)
#   MCP_CONFORMANCE_EXTRA         more scenarios to run after that set (space separated)
#   MCP_CONFORMANCE_NEXT_VERSION  suite version               (default 0.2.0-alpha.12)
#   MCP_CONFORMANCE_SDK_VERSION   @modelcontextprotocol/sdk forced via npm overrides
#                                 (default 1.32.2; empty: no override)
#   MCP_CONFORMANCE_NODE_VERSION  node-linux-<arch> package used when the local
#                                 node is older than 22 (default 22.23.3)
#   MCP_CONFORMANCE_NEXT_CACHE    install directory   (default <repo>/target/conformance-next)
#   MCP_CONFORMANCE_TIMEOUT       seconds per scenario          (default 120)
#   MCP_CONFORMANCE_VERBOSE=1     also print the suite's report for passing scenarios
#
# Prints `PASS name (x ok, y failed, z warnings)` / `FAIL name ...` per scenario
# (with the suite's report for a failure), `SKIP name` for a named scenario that
# does not apply at the version, and `N passed, M failed` last (`, K skipped`
# when K > 0). Exit 0 only if at least one scenario ran and none failed.
# Nothing is installed globally: the suite (and Node 22 if needed) go into the cache.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VERSION=${MCP_CONFORMANCE_NEXT_VERSION:-0.2.0-alpha.12}
SDK_VERSION=${MCP_CONFORMANCE_SDK_VERSION-1.32.2}
NODE_VERSION=${MCP_CONFORMANCE_NODE_VERSION:-22.23.3}
CACHE=${MCP_CONFORMANCE_NEXT_CACHE:-${CARGO_TARGET_DIR:-$ROOT/target}/conformance-next}
TIMEOUT=${MCP_CONFORMANCE_TIMEOUT:-120}
SPEC=${MCP_CONFORMANCE_SPEC_VERSION:-2026-07-28}
SET=${MCP_CONFORMANCE_SUITE:-all}
read -r -a EXTRA <<< "${MCP_CONFORMANCE_EXTRA:-}"
VERBOSE=${MCP_CONFORMANCE_VERBOSE:-0}

URL=http://127.0.0.1:3000/mcp
if [[ $# -gt 0 && $1 == *://* ]]; then URL=$1; shift; fi
case "${1:-}" in
  -h|--help) sed -n '2,34p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
SCENARIOS=("$@")

# Early failure: still end with the summary line.
die() {
  echo "conformance-next: $*" >&2
  echo "0 passed, $(( ${#SCENARIOS[@]} > 0 ? ${#SCENARIOS[@]} : 1 )) failed"
  exit 1
}

case $SPEC in
  2026-07-28|2025-11-25) ;;
  draft) SPEC=2026-07-28 ;;
  *) die "MCP_CONFORMANCE_SPEC_VERSION must be 2026-07-28 or 2025-11-25, not '$SPEC'" ;;
esac
case $SET in
  all|required|extensions) ;;
  *) die "MCP_CONFORMANCE_SUITE must be 'all', 'required' or 'extensions', not '$SET'" ;;
esac

. "$(dirname "${BASH_SOURCE[0]}")/lib/install-suite.sh"
TAG=conformance-next
install_suite

# --- scenarios ---
# `list --server ...` prints "  - name [tags]" lines under a "Server scenarios"
# header; with --requirements other blocks (client scenarios, "not scored")
# follow, so only the lines of that first block count.
server_scenarios() {
  "$NODE" "$CLI" list --server "$@" | awk '
    /^Server scenarios/ { on = 1; next }
    on && /^  - / { print $2; next }
    on { exit }'
}
if [[ ${#SCENARIOS[@]} -eq 0 ]]; then
  if [[ $SET == required ]]; then
    mapfile -t SCENARIOS < <(server_scenarios --requirements "$SPEC")
  elif [[ $SET == extensions ]]; then
    mapfile -t SCENARIOS < <("$NODE" "$CLI" list --server |
      sed -n 's/^  - \([^ ]*\) \[extension\].*/\1/p')
  else
    mapfile -t SCENARIOS < <(server_scenarios --spec-version "$SPEC")
  fi
  [[ ${#SCENARIOS[@]} -gt 0 ]] || die "could not list the suite's server scenarios ($SET, $SPEC)"
  for s in ${EXTRA[@]+"${EXTRA[@]}"}; do
    [[ " ${SCENARIOS[*]} " == *" $s "* ]] || SCENARIOS+=("$s")
  done
fi

# --- is the server there? (any HTTP answer will do) ---
"$NODE" -e 'fetch(process.argv[1], {signal: AbortSignal.timeout(5000)})
  .then(() => process.exit(0), e => { console.error(String(e.cause ?? e)); process.exit(1); })' "$URL" \
  || die "no server answers at $URL"

# --- run each scenario on its own ---
echo "conformance-next: suite $VERSION at $SPEC, ${#SCENARIOS[@]} scenarios ($SET), $URL" >&2
passed=0 failed=0 skipped=0
for s in "${SCENARIOS[@]}"; do
  # Extension scenarios name no spec version: the suite picks their wire.
  version=(--spec-version "$SPEC")
  [[ $SET == extensions ]] && version=()
  out=$(timeout -k 5 "$TIMEOUT" "$NODE" "$CLI" server --url "$URL" --scenario "$s" \
    ${version[@]+"${version[@]}"} 2>&1)
  rc=$?
  # The suite hard-codes ANSI colours; drop them unless printing to a terminal.
  [[ -t 1 ]] || out=$(sed $'s/\e\\[[0-9;]*m//g' <<< "$out")
  if [[ $rc -eq 0 && $out == *$'\n'"SKIPPED: "* || $rc -eq 0 && $out == "SKIPPED: "* ]]; then
    skipped=$((skipped + 1))
    echo "SKIP $s (not applicable at $SPEC)"
    continue
  fi
  # "Passed: 4/5, 1 failed, 0 warnings"
  counts=$(sed -n 's/^Passed: \([0-9]*\)\/[0-9]*, \([0-9]*\) failed, \([0-9]*\) warnings.*/\1 ok, \2 failed, \3 warnings/p' \
    <<< "$out" | tail -n 1)
  # The suite exits 1 when a check failed; also insist on its summary so that
  # a crash exiting 0 cannot count as a pass.
  if [[ $rc -eq 0 && -n $counts ]]; then
    passed=$((passed + 1))
    echo "PASS $s ($counts)"
    [[ $VERBOSE == 1 ]] && sed 's/^/    /' <<< "$out"
  else
    failed=$((failed + 1))
    case $rc in 124|137) note="timed out after ${TIMEOUT}s" ;; *) note="exit $rc" ;; esac
    echo "FAIL $s (${counts:+$counts; }$note)"
    sed 's/^/    /' <<< "$out"
  fi
done
if [[ $skipped -gt 0 ]]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[[ $failed -eq 0 && $passed -gt 0 ]]
