#!/usr/bin/env bash
# Interop test of `mcp serve` (cli/src/serve/): the official TypeScript
# `server-everything` (the npm pin of tests/interop/npm-servers) runs as a
# stdio child of `mcp serve`, and the official Python SDK client (mcp 2.3.0,
# pinned in tests/interop/python/requirements.txt) drives it over
# Streamable HTTP: list, call, progress, cancellation, an elicitation round
# trip, remote session expiry (a second `mcp serve` with --session-timeout 1:
# the session's child ends, its id gets 404), and a 2026-07-28 client served
# through the session the proxy holds, the child's elicitation becoming an
# input_required round (tests/interop/python/serve.py).
#
# Usage: scripts/interop/interop-serve.sh
# Environment:
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of the client run, in seconds (default 120)
#   INSTALL_TIMEOUT  bound of `npm ci` and of the virtualenv (default 600)
#
# Prints one `ok`/`FAIL` line per check and, last, `N passed, M failed`;
# exits 1 if any check failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-120}
INSTALL_TIMEOUT=${INSTALL_TIMEOUT:-600}
TAG=interop-serve

case "${1:-}" in
  -h | --help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "usage: $0" >&2; exit 2 ;;
esac

# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/interop/lib/npm-deps.sh"
ensure_venv

NPM_DIR=$ROOT/tests/interop/npm-servers
command -v node >/dev/null || { echo "$TAG: node is not installed" >&2; exit 1; }
if TS_DIR=$NPM_DIR deps_up_to_date; then
  echo "$TAG: npm dependencies up to date" >&2
else
  echo "$TAG: installing the npm servers (npm ci)" >&2
  (cd "$NPM_DIR" && timeout -k 5 "$INSTALL_TIMEOUT" npm ci --no-audit --no-fund --prefer-offline >&2)
fi
EVERYTHING=$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js
[[ -f "$EVERYTHING" ]] || { echo "$TAG: $EVERYTHING is missing" >&2; exit 1; }

(cd "$ROOT" && cargo build -p tiny-mcp-cli >&2)
MCP=${CARGO_TARGET_DIR:-$ROOT/target}/debug/mcp

WORK=$(mktemp -d)
OUT=$WORK/out
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Starts `mcp serve` with options $2...; sets SERVE_PID and SERVE_URL from
# the URL it prints on stderr (its stderr goes to $WORK/$1.err).
start_serve() {
  local name=$1
  shift
  : >"$WORK/$name.err"
  "$MCP" serve --stdio "node $EVERYTHING stdio" --http 127.0.0.1:0 "$@" 2>"$WORK/$name.err" &
  SERVE_PID=$!
  PIDS+=("$SERVE_PID")
  for _ in $(seq 1 100); do
    SERVE_URL=$(sed -n 's/^mcp serve: listening on //p' "$WORK/$name.err")
    [[ -n "$SERVE_URL" ]] && return 0
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "$TAG: mcp serve ($name) did not start:" >&2
  cat "$WORK/$name.err" >&2
  return 1
}

start_serve main
URL=$SERVE_URL
start_serve expiry --session-timeout 1
EXPIRY_URL=$SERVE_URL
EXPIRY_PID=$SERVE_PID

total_passed=0
total_failed=0
run_counted "mcp serve" serve.py "$VENV/bin/python" "$PY_DIR/serve.py" "$URL" "$EXPIRY_URL" \
  "$EXPIRY_PID" --timeout "$RUN_TIMEOUT"

echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
