#!/usr/bin/env bash
# Interop test of `mcp bridge`: the official MCP Python SDK client (mcp 2.3.0 from PyPI,
# pinned in tests/interop/python/requirements.txt) starts `mcp bridge --to URL` as a stdio
# server and talks through it to our `everything` example over Streamable HTTP, in both
# remote eras, with and without OAuth.
#
# Usage: scripts/interop/interop-bridge.sh [--v2025 | --v2026] [--plain | --oauth]
#   --v2025     only the remote 2025-11-25 era (`mcp bridge --era 2025-11-25`)
#   --v2026     only the remote 2026-07-28 era (`--era 2026-07-28`)
#   --plain     only the unprotected server
#   --oauth     only the server protected by the test authorization server
# Without an era flag both eras run, without a server flag both servers.
# Environment:
#   EVERYTHING_BIN   use this server binary instead of building the example
#   MCP_BIN          use this `mcp` CLI instead of building cli/ (package tiny-mcp-cli)
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of one client run, in seconds (default 120)
#
# The virtualenv is the one of scripts/interop/interop-python.sh (tests/interop/python/.venv).
# For each era a fresh server runs on 127.0.0.1:<free port>:
#   plain:  everything --http ADDR
#   oauth:  everything --http ADDR --introspect AS/introspect --auth-issuer AS
# with the test authorization server (`oauth.py serve-as`, approves at once, scope
# mcp:tools) on another free port for the whole run. tests/interop/python/bridge.py
# drives the bridge with the SDK's stdio client (see there for the checks: initialize,
# era, tools, echo, progress, sampling, elicitation, roots, cancel, after-cancel,
# auto-mode, disconnect). In the oauth runs the bridge logs in with
# scripts/interop/lib/headless-browser.py as BROWSER and a fresh --token-file (check
# `login`), then a second run on the same server and token file must use the kept
# token: no BROWSER run, no login URL (check `no-login`).
#
# Prints one `PASS`/`FAIL` line per check, labelled bridge/ERA/SERVER/CHECK (ERA v2025 or
# v2026, SERVER plain, oauth or oauth-reuse), and, last, `interop-bridge: N passed, M
# failed`; exits 1 if any check or run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUN_TIMEOUT=${INTEROP_TIMEOUT:-120}
BROWSER_CMD=$ROOT/scripts/interop/lib/headless-browser.py

modes=()
servers=()
for arg in "$@"; do
  case "$arg" in
    --v2025) modes+=(v2025) ;;
    --v2026) modes+=(v2026) ;;
    --plain) servers+=(plain) ;;
    --oauth) servers+=(oauth) ;;
    -h | --help) sed -n '2,34p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--v2025 | --v2026] [--plain | --oauth]" >&2; exit 2 ;;
  esac
done
[[ ${#modes[@]} -gt 0 ]] || modes=(v2025 v2026)
[[ ${#servers[@]} -gt 0 ]] || servers=(plain oauth)

TAG=interop-bridge
# PY_DIR, VENV, STAMP and PYTHON: the defaults of the library.
# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
ensure_venv
example_bin
if [[ -z "${MCP_BIN:-}" ]]; then
  (cd "$ROOT" && cargo build -p tiny-mcp-cli >&2)
  MCP_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/mcp
fi
[[ -x "$MCP_BIN" ]] || { echo "$TAG: mcp binary not found or not executable: $MCP_BIN" >&2; exit 1; }

# --- process life cycle (the authorization server and the MCP server) ---
SERVER_PID=
AS_PID=
stop_server() { stop_pid "$SERVER_PID"; SERVER_PID=; }
OUT=$(mktemp)
WORK=$(mktemp -d)
# Both servers stopped and reaped, the scratch files removed, on any exit.
trap 'stop_server; stop_pid "$AS_PID"; rm -rf "$OUT" "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
total_passed=0
total_failed=0

fail_run() {
  echo "FAIL $1: $2"
  total_failed=$((total_failed + 1))
}

# One bridge.py run, counted: $1 the label, $2 the era, the rest its options.
run_bridge() {
  local label=$1 era=$2
  shift 2
  run_counted "$label" bridge.py "$VENV/bin/python" "$PY_DIR/bridge.py" "$MCP_BIN" "$URL" \
    --era "$era" --label "$label" --timeout "$RUN_TIMEOUT" "$@"
}

# --- runs ---
as_up=0
if [[ " ${servers[*]} " == *" oauth "* ]]; then
  if start_as; then
    as_up=1
  else
    fail_run "bridge/oauth" "authorization server start"
  fi
fi
for mode in "${modes[@]}"; do
  era=2026-07-28
  [[ "$mode" == v2025 ]] && era=2025-11-25
  for server in "${servers[@]}"; do
    [[ "$server" == plain || "$as_up" == 1 ]] || continue
    label="bridge/$mode/$server"
    auth=()
    [[ "$server" == oauth ]] && auth=(--introspect "$AS_URL/introspect" --auth-issuer "$AS_URL")
    if ! start_everything "${auth[@]}"; then
      fail_run "$label" "server start"
      stop_server
      continue
    fi
    tokens="$WORK/$mode-$server/tokens.json"
    mkdir -p "$(dirname "$tokens")"
    if [[ "$server" == oauth ]]; then
      run_bridge "$label" "$era" --token-file "$tokens" --login first --browser "$BROWSER_CMD"
      run_bridge "$label-reuse" "$era" --token-file "$tokens" --login reuse --browser "$BROWSER_CMD"
    else
      run_bridge "$label" "$era" --token-file "$tokens"
    fi
    stop_server
  done
done

echo "$TAG: $total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
