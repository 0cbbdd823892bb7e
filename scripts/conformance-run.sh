#!/usr/bin/env bash
# Build the `everything` example, serve it over Streamable HTTP on a free loopback
# port and run the MCP conformance suite against it (scripts/conformance.sh).
#
# Usage: scripts/conformance-run.sh [SCENARIO...]
#   SCENARIO   passed on to scripts/conformance.sh (default: every server scenario)
# Environment: the MCP_CONFORMANCE_* variables of scripts/conformance.sh.
#
# Exits with scripts/conformance.sh's exit code (1 also if the server does not start).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release/examples/everything

case "${1:-}" in
  -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

(cd "$ROOT" && cargo build --release --example everything >&2) \
  || { echo "conformance-run: cargo build failed" >&2; exit 1; }

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') \
  || { echo "conformance-run: could not pick a free port (python3)" >&2; exit 1; }
URL=http://127.0.0.1:$PORT/mcp

LOG=$(mktemp) || exit 1
"$BIN" --http "127.0.0.1:$PORT" 2>"$LOG" >/dev/null </dev/null &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; rm -f "$LOG"' EXIT

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
  exit 1
fi
echo "conformance-run: server pid $SERVER at $URL" >&2

"$ROOT/scripts/conformance.sh" "$URL" "$@"
rc=$?
if [[ $rc -ne 0 && -s $LOG ]]; then
  echo "conformance-run: server stderr:" >&2
  sed 's/^/    /' "$LOG" >&2
fi
exit $rc
