#!/usr/bin/env bash
# Client throughput: tiny_mcp::Client (benches/client.rs) next to the official
# MCP Python SDK client (mcp 2.3.0, pinned in tests/interop/python/requirements.txt;
# tests/interop/python/bench_client.py), both driving the same `everything`
# server binary the same way: over stdio (the client starts it) and HTTP (the
# bench starts it on 127.0.0.1:0), in both eras, with N client threads (Rust)
# or asyncio tasks (Python) sharing one client.
#
# Usage: scripts/measure/bench-client.sh [--seconds S] [--warmup S] [--runs N] [--threads LIST]
#                                [--transports LIST] [--eras LIST] [--wait-idle S]
#   --seconds S        measured seconds per run (default 3)
#   --warmup S         unmeasured seconds before each run (default 0.5)
#   --runs N           runs per (transport, era, N) and client (default 3)
#   --threads LIST     N, comma-separated (default 1,8,32)
#   --transports LIST  stdio,http (default both)
#   --eras LIST        2026-07-28,2025-11-25 (default both)
#   --wait-idle S      before each run, wait up to S seconds for the machine to be
#                      under 10% busy (default 0: no wait)
# Environment:
#   EVERYTHING_BIN   use this server binary instead of target/release/examples/everything
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#
# It builds the example and the bench in release (`cargo build --release --examples`,
# `cargo bench --bench client --no-run`), makes the virtualenv if needed, then runs
# each (transport, era, N) once per run with each client, one process per run: the
# Rust bench and the Python one alternate (which goes first alternates too, and the
# order of the cells is reversed every other run), so that a change of load hits
# both alike. Each run prints its line; at the end a table gives the median of each
# figure per client and the ratios tiny-mcp / Python (calls/s: above 1 is faster;
# latency and CPU: below 1 is less). Exits 1 if any run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
TAG=bench-client

seconds=3
warmup=0.5
runs=3
threads=1,8,32
transports=stdio,http
eras=2026-07-28,2025-11-25
wait_idle=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --transports) transports=$2; shift 2 ;;
    --eras) eras=$2; shift 2 ;;
    --wait-idle) wait_idle=$2; shift 2 ;;
    -h | --help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--seconds S] [--warmup S] [--runs N] [--threads LIST] [--transports LIST] [--eras LIST] [--wait-idle S]" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "$TAG: --runs needs a number of at least 1" >&2; exit 2; }

# shellcheck source=../interop/lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
ensure_venv

cd "$ROOT"
echo "$TAG: cargo build --release --examples" >&2
cargo build --release --examples >&2
BIN=${EVERYTHING_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/everything}
[[ -x "$BIN" ]] || { echo "$TAG: server binary not found or not executable: $BIN" >&2; exit 1; }
echo "$TAG: cargo bench --bench client --no-run" >&2
RUST_BENCH=$(
  cargo bench --bench client --no-run --message-format=json 2>/dev/null | "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "client" and m.get("executable"):
        print(m["executable"])'
)
[[ -x "$RUST_BENCH" ]] || { echo "$TAG: cannot find the client bench binary" >&2; exit 1; }

RAW=$(mktemp)
OUT=$(mktemp)
trap 'rm -f "$RAW" "$OUT"' EXIT

IFS=, read -r -a transport_list <<<"$transports"
IFS=, read -r -a era_list <<<"$eras"
IFS=, read -r -a thread_list <<<"$threads"
cells=()
for t in "${transport_list[@]}"; do
  for e in "${era_list[@]}"; do
    for n in "${thread_list[@]}"; do cells+=("$t $e $n"); done
  done
done
limit=$("$PYTHON" -c 'import sys; print(int(float(sys.argv[1]) + float(sys.argv[2]) + float(sys.argv[3]) + 60))' \
  "$seconds" "$warmup" "$wait_idle")

failed=0
# Runs one client ($1: rust or python) on one cell ($2 transport, $3 era, $4 N).
run_one() {
  local who=$1 transport=$2 era=$3 n=$4
  local common=(--transports "$transport" --eras "$era" --threads "$n" --runs 1
    --seconds "$seconds" --warmup "$warmup" --wait-idle "$wait_idle" --server "$BIN" --raw)
  local cmd
  if [[ "$who" == rust ]]; then
    cmd=("$RUST_BENCH" --bench "${common[@]}")
  else
    cmd=("$VENV/bin/python" "$PY_DIR/bench_client.py" "${common[@]}")
  fi
  local status=0
  timeout -k 5 "$limit" "${cmd[@]}" >"$OUT" || status=$?
  if [[ "$status" == 0 ]] && grep -q '^raw ' "$OUT"; then
    grep '^raw ' "$OUT" | sed "s/ run=1 / run=$run /" >>"$RAW"
    local line
    line=$(grep -m1 -E '^(stdio|http) ' "$OUT")
    # The run column (after via, era and N: 21 characters) is 1 in each process.
    printf '%-8s %s%4s%s\n' "$who" "${line:0:21}" "$run" "${line:25}"
  else
    echo "FAIL $who $transport $era N=$n (exit status $status)"
    cat "$OUT"
    failed=$((failed + 1))
  fi
}

echo "$TAG: server $BIN; $runs run(s) of ${#cells[@]} cells per client, $seconds s each after $warmup s warm-up"
printf '%-8s %-5s %-10s %3s %4s %9s %9s %9s %12s %12s %5s\n' client via era N run calls/s "p50 µs" "p99 µs" \
  "cli CPU/call" "srv CPU/call" busy
for run in $(seq 1 "$runs"); do
  order=("${cells[@]}")
  if ((run % 2 == 0)); then
    order=()
    for ((i = ${#cells[@]} - 1; i >= 0; i--)); do order+=("${cells[i]}"); done
  fi
  index=0
  for cell in "${order[@]}"; do
    read -r transport era n <<<"$cell"
    if (((run + index) % 2 == 1)); then
      run_one rust "$transport" "$era" "$n"
      run_one python "$transport" "$era" "$n"
    else
      run_one python "$transport" "$era" "$n"
      run_one rust "$transport" "$era" "$n"
    fi
    index=$((index + 1))
  done
done

echo
"$PYTHON" - "$RAW" <<'EOF'
import math, sys
rows = []
for line in open(sys.argv[1], encoding="utf-8"):
    fields = dict(kv.split("=", 1) for kv in line.split()[1:])
    rows.append(fields)

def num(text):
    value = float(text)
    return None if math.isnan(value) else value

def median(values):
    if not values or any(v is None for v in values):
        return None
    values = sorted(values)
    return values[len(values) // 2]  # the upper one of an even count, as the benches do

cells = []
for r in rows:
    cell = (r["transport"], r["era"], int(r["threads"]))
    if cell not in cells:
        cells.append(cell)
cells.sort(key=lambda c: (c[0] != "stdio", c[1] != "2026-07-28", c[2]))
keys = ["rate", "p50_us", "p99_us", "cli_cpu_us", "srv_cpu_us", "busy"]

def figures(impl, cell):
    runs = [r for r in rows if r["impl"] == impl and (r["transport"], r["era"], int(r["threads"])) == cell]
    return len(runs), {k: median([num(r[k]) for r in runs]) for k in keys}

def show(v, digits=1, unit=""):
    return "n/a" if v is None else f"{v:.{digits}f}{unit}"

def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"

print("medians over the runs; ratio = tiny-mcp / Python (calls/s: above 1 is faster; latency, CPU: below 1 is less)")
print(f"{'via':<5} {'era':<10} {'N':>3} {'client':<8} {'runs':>4} {'calls/s':>9} {'p50 µs':>9} {'p99 µs':>9} "
      f"{'cli CPU/call':>12} {'srv CPU/call':>12} {'busy':>5}")
for cell in cells:
    (n_rust, rust), (n_py, py) = figures("tiny-mcp", cell), figures("python", cell)
    for name, count, f in (("tiny-mcp", n_rust, rust), ("python", n_py, py)):
        busy = None if f["busy"] is None else f["busy"] * 100
        print(f"{cell[0]:<5} {cell[1]:<10} {cell[2]:>3} {name:<8} {count:>4} {show(f['rate'], 0):>9} "
              f"{show(f['p50_us']):>9} {show(f['p99_us']):>9} {show(f['cli_cpu_us'], 1, ' µs'):>12} "
              f"{show(f['srv_cpu_us'], 1, ' µs'):>12} {show(busy, 0, '%'):>5}")
    print(f"{'':<5} {'':<10} {'':>3} {'ratio':<8} {'':>4} {ratio(rust['rate'], py['rate']):>9} "
          f"{ratio(rust['p50_us'], py['p50_us']):>9} {ratio(rust['p99_us'], py['p99_us']):>9} "
          f"{ratio(rust['cli_cpu_us'], py['cli_cpu_us']):>12} {ratio(rust['srv_cpu_us'], py['srv_cpu_us']):>12}")
EOF
if [[ "$failed" -gt 0 ]]; then
  echo "$TAG: $failed run(s) failed"
  exit 1
fi
