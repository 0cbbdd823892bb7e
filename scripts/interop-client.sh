#!/usr/bin/env bash
# Interop test of our blocking client (tiny_mcp::Client, driven by
# examples/interop_client.rs) against servers nobody here wrote: the official
# Python SDK's MCPServer (mcp pinned in tests/interop/python/requirements.txt;
# tests/interop/python/server.py) and the official TypeScript SDK's McpServer
# (@modelcontextprotocol/sdk pinned in tests/interop/ts/package.json;
# tests/interop/ts/server.mjs), each over stdio and Streamable HTTP.
#
# Usage: scripts/interop-client.sh [--python | --ts] [--stdio | --http]
#   --python / --ts   only that SDK's server (default: both)
#   --stdio / --http  only that transport (default: both)
# Runs, for each server and transport, the driver with the client's default
# negotiation (2026-07-28 first, 2025-11-25 when the server does not serve it);
# against the Python server, which serves both eras, also pinned to 2025-11-25.
# Environment:
#   INTEROP_PYTHON    the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT   overall timeout of one driver run, in seconds (default 120)
#
# Installs what it needs the way interop-python.sh and interop-ts.sh do (the
# virtualenv in tests/interop/python/.venv, `npm ci` in tests/interop/ts when
# node_modules does not match the lock), builds the example, and prints one
# `ok`/`FAIL` line per check (labelled with the run), a `note` line with the
# era each connection reached, and, last, the combined `N passed, M failed`;
# exits 1 if any check or run failed. Every wait is bounded; every process it
# starts is stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY_DIR=$ROOT/tests/interop/python
TS_DIR=$ROOT/tests/interop/ts
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-120}
INSTALL_TIMEOUT=900
TAG=interop-client

sdks=()
transports=()
for arg in "$@"; do
  case "$arg" in
    --python) sdks+=(python) ;;
    --ts) sdks+=(ts) ;;
    --stdio) transports+=(stdio) ;;
    --http) transports+=(http) ;;
    -h | --help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--python | --ts] [--stdio | --http]" >&2; exit 2 ;;
  esac
done
[[ ${#sdks[@]} -gt 0 ]] || sdks=(python ts)
[[ ${#transports[@]} -gt 0 ]] || transports=(stdio http)

# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/lib/python-interop.sh"
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/lib/npm-deps.sh"

# --- what this script starts, stopped on exit ---
SERVER_PID=
DRIVER_PID=
OUT=$(mktemp)
LOG=$(mktemp)
cleanup() {
  stop_pid "$DRIVER_PID"
  stop_pid "$SERVER_PID"
  SERVER_PID=
  rm -f "$OUT" "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

total_passed=0
total_failed=0
notes=()
fail_run() {
  echo "FAIL $1: $2"
  total_failed=$((total_failed + 1))
}

# --- installs, each bounded ---
python_ready=0
ts_ready=0
if [[ " ${sdks[*]} " == *" python "* ]]; then
  export ROOT PY_DIR VENV STAMP PYTHON TAG
  # ensure_venv runs in a child shell so that `timeout` can bound it.
  if timeout -k 5 "$INSTALL_TIMEOUT" bash -c \
    'set -euo pipefail; source "$ROOT/scripts/lib/python-interop.sh"; ensure_venv'; then
    python_ready=1
  else
    fail_run python "the virtualenv could not be made"
  fi
fi
if [[ " ${sdks[*]} " == *" ts "* ]]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    fail_run ts "node or npm is not installed"
  elif deps_up_to_date; then
    echo "$TAG: npm dependencies up to date" >&2
    ts_ready=1
  else
    echo "$TAG: installing npm dependencies (npm ci)" >&2
    if (cd "$TS_DIR" && timeout -k 5 "$INSTALL_TIMEOUT" npm ci --no-audit --no-fund --prefer-offline >&2); then
      ts_ready=1
    else
      fail_run ts "npm ci failed"
    fi
  fi
fi

DRIVER=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/interop_client
if ! (cd "$ROOT" && timeout -k 5 "$INSTALL_TIMEOUT" cargo build --example interop_client >&2) ||
  [[ ! -x "$DRIVER" ]]; then
  fail_run build "cargo build --example interop_client"
  echo "$total_passed passed, $total_failed failed"
  exit 1
fi

# Sets SERVER_ARGV to the server's command line: $1 is python or ts, the rest
# its arguments.
server_argv() {
  local sdk=$1
  shift
  case "$sdk" in
    python) SERVER_ARGV=("$VENV/bin/python" "$PY_DIR/server.py" "$@") ;;
    ts) SERVER_ARGV=(node "$TS_DIR/server.mjs" "$@") ;;
  esac
}

# The stdio server's command line as the driver's --stdio takes it: each word
# in single quotes.
stdio_line() {
  server_argv "$1" --stdio
  local word line=
  for word in "${SERVER_ARGV[@]}"; do
    line+="'${word//\'/}' "
  done
  echo "$line"
}

# Starts the HTTP server of $1 on a free port; sets SERVER_PID and URL.
start_server() {
  local port
  port=$(free_port)
  server_argv "$1" --http "$port"
  "${SERVER_ARGV[@]}" >"$LOG" 2>&1 &
  SERVER_PID=$!
  URL="http://127.0.0.1:$port/mcp"
  wait_http "$SERVER_PID" "$URL" any "the $1 server"
}

# Runs the driver (arguments $2...) under a timeout, labels its lines with $1,
# and adds its summary to the totals.
run_driver() {
  local label=$1
  shift
  echo "$TAG: --- $label ---" >&2
  # In the background, so that an INT or TERM reaches the EXIT trap, which
  # stops it (timeout passes the signal on to the driver and its children).
  timeout -k 5 "$RUN_TIMEOUT" "$DRIVER" "$@" >"$OUT" &
  DRIVER_PID=$!
  local rc=0
  wait "$DRIVER_PID" || rc=$?
  DRIVER_PID=
  local line last
  while IFS= read -r line; do
    case "$line" in
      "ok "*) echo "ok $label: ${line#ok }" ;;
      "FAIL "*) echo "FAIL $label: ${line#FAIL }" ;;
      "note era: "*) echo "note $label: era ${line#note era: }"; notes+=("$label: era ${line#note era: }") ;;
      "note "*) echo "note $label: ${line#note }" ;;
      *) echo "$line" ;;
    esac
  done < <(grep -Ev '^[0-9]+ passed, [0-9]+ failed$' "$OUT")
  last=$(tail -n 1 "$OUT")
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    echo "note $label: $last in this run"
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
    if [[ "$rc" != 0 && "${BASH_REMATCH[2]}" == 0 ]]; then
      fail_run "$label" "the driver exited with status $rc"
    fi
  else
    fail_run "$label" "the driver exited with status $rc without a summary"
  fi
}

# One server and transport: the default negotiation, and for Python (which
# serves both eras) 2025-11-25 pinned as well.
run_one() {
  local sdk=$1 transport=$2 era
  local eras=(default)
  [[ "$sdk" == python ]] && eras+=(2025-11-25)
  for era in "${eras[@]}"; do
    local label="$sdk/$transport" flags=()
    if [[ "$era" != default ]]; then
      label="$label/$era"
      flags=(--era "$era")
    fi
    if [[ "$transport" == stdio ]]; then
      run_driver "$label" --stdio "$(stdio_line "$sdk")" "${flags[@]}"
    elif start_server "$sdk"; then
      run_driver "$label" --http "$URL" "${flags[@]}"
      stop_pid "$SERVER_PID"
      SERVER_PID=
    else
      fail_run "$label" "the HTTP server did not start"
      sed 's/^/  /' "$LOG" | tail -n 20 >&2
      stop_pid "$SERVER_PID"
      SERVER_PID=
    fi
  done
}

for sdk in "${sdks[@]}"; do
  ready=$python_ready
  [[ "$sdk" == ts ]] && ready=$ts_ready
  [[ "$ready" == 1 ]] || continue
  for transport in "${transports[@]}"; do
    run_one "$sdk" "$transport"
  done
done

for note in "${notes[@]}"; do
  echo "note $note"
done
echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
