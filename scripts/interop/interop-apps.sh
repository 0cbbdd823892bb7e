#!/usr/bin/env bash
# Interop test of MCP Apps (io.modelcontextprotocol/ui, issue 28 item 6):
# the TypeScript MCP SDK client (tests/interop/apps, pinned in package.json /
# package-lock.json with @modelcontextprotocol/ext-apps) drives our `apps`
# example, and compares its tools, view listing and view contents with the
# same declarations made through ext-apps' registerAppTool/registerAppResource.
#
# Usage: scripts/interop/interop-apps.sh [--stdio | --http]
#   (no option)  both: stdio, then Streamable HTTP
#   --stdio      the client spawns the server and talks over stdin/stdout
#   --http       the server listens on 127.0.0.1:<free port>, the client
#                uses http://127.0.0.1:<port>/mcp
# Environment:
#   APPS_BIN     use this server binary instead of building the example
#
# Prints one `ok`/`FAIL` line per check and `N passed, M failed` per run;
# exits 1 if any check failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
APPS_DIR=$ROOT/tests/interop/apps

MODES=(stdio http)
case "${1:-}" in
  "") ;;
  --stdio) MODES=(stdio) ;;
  --http) MODES=(http) ;;
  -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--stdio | --http]" >&2; exit 2 ;;
esac

command -v node >/dev/null || { echo "interop-apps: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "interop-apps: npm is not installed" >&2; exit 1; }

# --- npm dependencies: `npm ci` only when node_modules does not match the lock ---
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/interop/lib/npm-deps.sh"
TS_DIR=$APPS_DIR
if deps_up_to_date; then
  echo "interop-apps: npm dependencies up to date" >&2
else
  echo "interop-apps: installing npm dependencies (npm ci)" >&2
  (cd "$APPS_DIR" && npm ci --no-audit --no-fund --prefer-offline >&2)
fi

# --- server binary ---
if [[ -n "${APPS_BIN:-}" ]]; then
  BIN=$APPS_BIN
else
  (cd "$ROOT" && cargo build --example apps >&2)
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/apps
fi
[[ -x "$BIN" ]] || { echo "interop-apps: server binary not found or not executable: $BIN" >&2; exit 1; }

SERVER_PID=
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  [[ -z "$SERVER_PID" ]] || wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Starts the example on a free port; sets SERVER_PID and URL once it listens
# (bounded: 10 s).
start_http() {
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  "$BIN" --http "127.0.0.1:$port" &
  SERVER_PID=$!
  URL="http://127.0.0.1:$port/mcp"
  for _ in $(seq 1 100); do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "interop-apps: server exited before it was ready" >&2; return 1; }
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "interop-apps: server did not listen on 127.0.0.1:$port within 10 s" >&2
  return 1
}

status=0
for mode in "${MODES[@]}"; do
  echo "== interop-apps: $mode" >&2
  if [[ "$mode" == stdio ]]; then
    node "$APPS_DIR/apps.mjs" stdio "$BIN" || status=1
  else
    if start_http; then
      node "$APPS_DIR/apps.mjs" http "$URL" || status=1
    else
      echo "FAIL http: the server did not start"
      status=1
    fi
    cleanup
  fi
done
exit "$status"
