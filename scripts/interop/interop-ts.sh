#!/usr/bin/env bash
# Interop test: the official TypeScript MCP SDK client (tests/interop/ts, pinned in
# package.json / package-lock.json) drives our `everything` example server.
#
# Usage: scripts/interop/interop-ts.sh [--stdio | --http]
#   --stdio (default)  the client spawns the server and talks over stdin/stdout
#   --http             the server is started on 127.0.0.1:<free port>, the client
#                      uses Streamable HTTP on http://127.0.0.1:<port>/mcp
# Environment:
#   EVERYTHING_BIN     use this server binary instead of building the example
#
# Prints one `ok`/`FAIL` line per check and `N passed, M failed` last; exits
# with the client's exit code (1 if any check failed).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TS_DIR=$ROOT/tests/interop/ts

MODE=stdio
case "${1:-}" in
  ""|--stdio) ;;
  --http) MODE=http ;;
  -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--stdio | --http]" >&2; exit 2 ;;
esac

command -v node >/dev/null || { echo "interop-ts: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "interop-ts: npm is not installed" >&2; exit 1; }

# --- npm dependencies: `npm ci` only when node_modules does not match the lock ---
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/interop/lib/npm-deps.sh"
if deps_up_to_date; then
  echo "interop-ts: npm dependencies up to date" >&2
else
  echo "interop-ts: installing npm dependencies (npm ci)" >&2
  (cd "$TS_DIR" && npm ci --no-audit --no-fund --prefer-offline >&2)
fi

# --- server binary ---
if [[ -n "${EVERYTHING_BIN:-}" ]]; then
  BIN=$EVERYTHING_BIN
else
  (cd "$ROOT" && cargo build --example everything >&2)
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/everything
fi
[[ -x "$BIN" ]] || { echo "interop-ts: server binary not found or not executable: $BIN" >&2; exit 1; }

# --- run ---
if [[ "$MODE" == stdio ]]; then
  set +e
  node "$TS_DIR/client.mjs" stdio "$BIN"
  rc=$?
  set -e
  exit "$rc"
fi

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$BIN" --http "127.0.0.1:$PORT" &
SERVER_PID=$!
cleanup() {
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  wait "$SERVER_PID" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Wait (bounded: 10 s) until the server accepts connections.
ready=0
for _ in $(seq 1 100); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "interop-ts: server exited before it was ready" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [[ "$ready" != 1 ]]; then
  echo "interop-ts: server did not listen on 127.0.0.1:$PORT within 10 s" >&2
  exit 1
fi

set +e
node "$TS_DIR/client.mjs" http "http://127.0.0.1:$PORT/mcp"
rc=$?
set -e
exit "$rc"
