#!/usr/bin/env bash
# Interop test: the official MCP Python SDK client (mcp 2.3.0 from PyPI, pinned in
# tests/interop/python/requirements.txt) drives our `everything` example server,
# and (over stdio) the `typed_tools` example, whose structured results its
# output-schema check must accept (tests/interop/python/typed.py); in the
# 2026-07-28 runs it also runs a task end to end (tests/interop/python/tasks.py).
#
# Usage: scripts/interop/interop-python.sh [--stdio | --http] [--v2025 | --v2026]
#   --stdio     only stdio (the client spawns the server)
#   --http      only Streamable HTTP (the server runs on 127.0.0.1:<free port>/mcp)
#   --v2025     only the client's 2025-11-25 mode (initialize handshake, session)
#   --v2026     only the client's default mode (2026-07-28, server/discover);
#               --default is an alias
# Without a transport flag both transports run, without a mode flag both modes:
# no arguments at all runs the four combinations.
# Environment:
#   EVERYTHING_BIN   use this server binary instead of building the example
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of one client run, in seconds (default 180)
#
# The virtualenv lives in tests/interop/python/.venv; it is (re)made with
# `python3 -m venv` and `pip install -r requirements.txt` when it is missing or
# its stamp does not match requirements.txt and the Python version.
#
# Prints one `ok`/`FAIL` line per check and, last, the combined `N passed, M failed`;
# exits 1 if any check or run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-180}

transports=()
modes=()
for arg in "$@"; do
  case "$arg" in
    --stdio) transports+=(stdio) ;;
    --http) transports+=(http) ;;
    --v2025) modes+=(v2025) ;;
    --v2026 | --default) modes+=(v2026) ;;
    -h | --help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--stdio | --http] [--v2025 | --v2026]" >&2; exit 2 ;;
  esac
done
[[ ${#transports[@]} -gt 0 ]] || transports=(stdio http)
[[ ${#modes[@]} -gt 0 ]] || modes=(v2026 v2025)

TAG=interop-python
# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
ensure_venv
example_bin

# --- HTTP server life cycle ---
SERVER_PID=
stop_server() { stop_pid "$SERVER_PID"; SERVER_PID=; }
OUT=$(mktemp)
cleanup() {
  stop_server
  rm -f "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Starts the server on a free port; sets SERVER_PID and URL.
start_server() { start_everything; }

# --- runs ---
total_passed=0
total_failed=0
for transport in "${transports[@]}"; do
  for mode in "${modes[@]}"; do
    label="$transport/$mode"
    flags=()
    [[ "$mode" == v2025 ]] && flags+=(--v2025)
    if [[ "$transport" == http ]]; then
      if ! start_server; then
        echo "FAIL $label: server start"
        total_failed=$((total_failed + 1))
        stop_server
        continue
      fi
      target=$URL
    else
      target=$BIN
    fi
    run_counted "$label" client "$VENV/bin/python" "$PY_DIR/client.py" "$transport" "$target" \
      "${flags[@]}" --timeout "$RUN_TIMEOUT"
    # A task end to end (2026-07-28 tasks extension) through the SDK's
    # extension surface (tests/interop/python/tasks.py).
    if [[ "$mode" == v2026 ]]; then
      run_counted "tasks/$transport" tasks "$VENV/bin/python" \
        "$PY_DIR/tasks.py" "$transport" "$target"
    fi
    [[ "$transport" == http ]] && stop_server
  done
done

# The typed_tools example: the SDK's output-schema check accepts its
# structured results (stdio, both modes).
if [[ " ${transports[*]} " == *" stdio "* ]]; then
  (cd "$ROOT" && cargo build --example typed_tools >&2)
  TYPED_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/typed_tools
  for mode in "${modes[@]}"; do
    flags=()
    [[ "$mode" == v2025 ]] && flags+=(--v2025)
    run_counted "typed/$mode" typed "$VENV/bin/python" "$PY_DIR/typed.py" "$TYPED_BIN" \
      "${flags[@]}" --timeout "$RUN_TIMEOUT"
  done
fi

echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
