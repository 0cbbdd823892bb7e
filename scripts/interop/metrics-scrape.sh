#!/usr/bin/env bash
# Metrics scrape (issue 29): starts the `everything` example over HTTP with
# --metrics-path /metrics, sends a known workload and checks with the
# official Prometheus text parser (prometheus_client, pinned in
# tests/interop/python/requirements.txt) that the counts equal it exactly
# (tests/interop/python/metrics_scrape.py). Reuses the interop virtualenv.
#
# Usage: scripts/interop/metrics-scrape.sh
# Environment: EVERYTHING_BIN (use this server binary), INTEROP_PYTHON,
# INTEROP_TIMEOUT (seconds, default 60).
# Last line: `N passed, M failed`; exits 1 if any check failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-60}
TAG=metrics-scrape
# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
ensure_venv
example_bin

SERVER_PID=
OUT=$(mktemp)
cleanup() {
  stop_pid "$SERVER_PID"
  rm -f "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_everything --metrics-path /metrics
METRICS_URL=${URL%/mcp}/metrics
total_passed=0
total_failed=0
run_counted "metrics" "metrics_scrape.py" \
  timeout "$RUN_TIMEOUT" "$VENV/bin/python" "$PY_DIR/metrics_scrape.py" "$URL" "$METRICS_URL"
echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
