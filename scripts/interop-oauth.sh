#!/usr/bin/env bash
# OAuth interop test: the official MCP Python SDK client (mcp 2.3.0 from PyPI, pinned in
# tests/interop/python/requirements.txt) authenticates with OAuth 2.1 against our
# `everything` example server and calls tools over Streamable HTTP.
#
# Usage: scripts/interop-oauth.sh [--legacy | --modern]
#   --legacy    only the client's legacy mode (initialize, 2025-11-25)
#   --modern    only the client's default mode (server/discover, 2026-07-28)
# Without a mode flag both modes run.
# Environment:
#   EVERYTHING_BIN   use this server binary instead of building the example
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of one client run, in seconds (default 180)
#
# First `oauth.py selftest` exercises the test authorization server on its own. Then the
# authorization server (`oauth.py serve-as`, the SDK's authorization-server routes with an
# approve-everything provider, RFC 7662 introspection and a test-only token mint) runs on
# 127.0.0.1:<free port> for the whole run, and for each mode the server runs as
#   $BIN --http 127.0.0.1:<port> --introspect <AS>/introspect --auth-issuer <AS>
# while `oauth.py check` drives it (see tests/interop/python/oauth.py for the checks).
#
# The virtualenv is the one scripts/interop-python.sh uses (tests/interop/python/.venv),
# made or refreshed the same way when missing or stale.
#
# Prints one `ok`/`FAIL` line per check (and `note` lines) and, last, the combined
# `N passed, M failed`; exits 1 if any check or run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-180}

modes=()
for arg in "$@"; do
  case "$arg" in
    --legacy) modes+=(legacy) ;;
    --modern | --default) modes+=(modern) ;;
    -h | --help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--legacy | --modern]" >&2; exit 2 ;;
  esac
done
[[ ${#modes[@]} -gt 0 ]] || modes=(modern legacy)

TAG=interop-oauth
# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/lib/python-interop.sh"
ensure_venv
example_bin

# --- process life cycle (the authorization server and the MCP server) ---
SERVER_PID=
AS_PID=
stop_server() { stop_pid "$SERVER_PID"; SERVER_PID=; }
stop_as() { stop_pid "$AS_PID"; AS_PID=; }
OUT=$(mktemp)
cleanup() {
  stop_server
  stop_as
  rm -f "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits (bounded: 10 s) until process $1 answers an HTTP GET of $2 with status $3
# (or with any status when $3 is "any"); fails if the process exits first.
wait_http() {
  local pid=$1 url=$2 want=$3 what=$4
  for _ in $(seq 1 100); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "interop-oauth: $what exited before it was ready" >&2
      return 1
    fi
    if "$PYTHON" - "$url" "$want" 2>/dev/null <<'EOF'; then
import sys, urllib.error, urllib.request
url, want = sys.argv[1], sys.argv[2]
try:
    status = urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=1).status
except urllib.error.HTTPError as e:
    status = e.code  # any HTTP status is an answer
sys.exit(0 if want == "any" or str(status) == want else 1)
EOF
      return 0
    fi
    sleep 0.1
  done
  echo "interop-oauth: $what did not answer on $url within 10 s" >&2
  return 1
}

# Starts the authorization server on a free port; sets AS_PID and AS_URL.
start_as() {
  local port
  port=$(free_port)
  AS_URL="http://127.0.0.1:$port"
  "$VENV/bin/python" "$PY_DIR/oauth.py" serve-as --port "$port" &
  AS_PID=$!
  wait_http "$AS_PID" "$AS_URL/.well-known/oauth-authorization-server" 200 "authorization server"
}

# Starts the MCP server on a free port, protected by the authorization server; sets
# SERVER_PID and URL.
start_server() {
  local port
  port=$(free_port)
  URL="http://127.0.0.1:$port/mcp"
  "$BIN" --http "127.0.0.1:$port" --introspect "$AS_URL/introspect" --auth-issuer "$AS_URL" &
  SERVER_PID=$!
  wait_http "$SERVER_PID" "$URL" any "server"
}

total_passed=0
total_failed=0
# Runs one oauth.py command under a timeout and adds its summary to the totals.
run_python() {
  local label=$1
  shift
  echo "interop-oauth: --- $label ---" >&2
  set +e
  timeout -k 5 $((RUN_TIMEOUT + 30)) "$VENV/bin/python" "$PY_DIR/oauth.py" "$@" --timeout "$RUN_TIMEOUT" | tee "$OUT"
  local rc=${PIPESTATUS[0]}
  set -e
  local last
  last=$(tail -n 1 "$OUT")
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
    if [[ "$rc" != 0 && "${BASH_REMATCH[2]}" == 0 ]]; then
      echo "FAIL $label: oauth.py exited with status $rc"
      total_failed=$((total_failed + 1))
    fi
  else
    echo "FAIL $label: oauth.py exited with status $rc without a summary"
    total_failed=$((total_failed + 1))
  fi
}

# --- runs ---
run_python "authorization server self-test" selftest

if ! start_as; then
  echo "FAIL authorization server start"
  total_failed=$((total_failed + 1))
else
  for mode in "${modes[@]}"; do
    label="oauth/$mode"
    flags=()
    [[ "$mode" == legacy ]] && flags+=(--legacy)
    if ! start_server; then
      echo "FAIL $label: server start"
      total_failed=$((total_failed + 1))
      stop_server
      continue
    fi
    run_python "$label" check "$URL" --as "$AS_URL" "${flags[@]}"
    stop_server
  done
fi
stop_as

echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
