#!/usr/bin/env bash
# The bridge's overhead (issue 26): pipelined tools/call through `mcp bridge`
# against the same calls sent straight over HTTP, and through mcp-remote (the
# npm stdio-to-HTTP bridge, pinned in tests/interop/mcp-remote/package.json)
# where node and npm are there.
#
# Usage: scripts/measure/bench-bridge.sh LOADGEN [--runs N] [--window LIST] [--n N]
#                                        [--max-secs S] [--no-mcp-remote]
#   LOADGEN        the load generator of the shared bench kit (`loadgen`, built
#                  from ../shared/tools/bench/loadgen)
#   --runs N       repetitions (default 7)
#   --window LIST  requests in flight, comma-separated (default 16): the stdio
#                  window, and the number of keep-alive clients of the direct cell
#   --n N          calls per cell and run (default 30000)
#   --max-secs S   a cell's measured time at most (default 5; mcp-remote stops there)
#   --no-mcp-remote  leave mcp-remote out
#
# Cells, each a process of its own, alternated within each run (the order
# rotates from run to run), all against the `everything` example (release):
#   direct         `LOADGEN http --clients W`: W keep-alive connections, one call
#                  in flight on each (the example started by the load generator)
#   bridge-2025    `LOADGEN stdio --window W -- mcp bridge --to URL --era 2025-11-25`
#   bridge-2026    the same with --era 2026-07-28
#   mcp-remote     `LOADGEN stdio --window W -- node .../mcp-remote/dist/proxy.js URL
#                  --transport http-only --silent` (a loopback http:// URL needs no
#                  --allow-http)
# For the three bridges the script starts the example on a free port before the
# cell and ends it after. The same W in both modes: the same number of calls in
# flight. `CPU/call` is the CPU of the process the load generator started: the
# server in the direct cell, the bridge in the others; `peak RSS` is that
# process's (VmHWM). The summary gives the medians and each cell's throughput
# over the direct cell's.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAG=bench-bridge
USAGE="usage: scripts/measure/bench-bridge.sh LOADGEN [--runs N] [--window LIST] [--n N] [--max-secs S] [--no-mcp-remote]"
LG=${1:?$USAGE}
shift
[[ -x "$LG" ]] || { echo "$TAG: $LG is not an executable" >&2; exit 2; }
LG=$(cd "$(dirname "$LG")" && pwd)/$(basename "$LG")
runs=7
windows=16
n=30000
max_secs=5
with_remote=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --window) windows=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --max-secs) max_secs=$2; shift 2 ;;
    --no-mcp-remote) with_remote=0; shift ;;
    -h | --help) sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$USAGE" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "$TAG: --runs needs a number of at least 1" >&2; exit 2; }

cd "$ROOT"
echo "$TAG: cargo build --release --example everything -p tiny-mcp -p tiny-mcp-cli --bin mcp" >&2
cargo build --release --example everything -p tiny-mcp -p tiny-mcp-cli --bin mcp >&2
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples/everything
MCP=$TARGET/release/mcp
[[ -x "$EX" && -x "$MCP" ]] || { echo "$TAG: $EX or $MCP not built" >&2; exit 1; }

# mcp-remote: `npm ci` only when node_modules does not match the lock.
REMOTE_DIR=$ROOT/tests/interop/mcp-remote
REMOTE_JS=$REMOTE_DIR/node_modules/mcp-remote/dist/proxy.js
if ((with_remote)); then
  if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
    echo "$TAG: node or npm is not installed: no mcp-remote cell" >&2
    with_remote=0
  else
    TS_DIR=$REMOTE_DIR
    # shellcheck source=../interop/lib/npm-deps.sh
    source "$ROOT/scripts/interop/lib/npm-deps.sh"
    if ! deps_up_to_date; then
      echo "$TAG: installing mcp-remote (npm ci in tests/interop/mcp-remote)" >&2
      (cd "$REMOTE_DIR" && timeout -k 5 300 npm ci --no-audit --no-fund --prefer-offline >&2)
    fi
    REMOTE_VERSION=$(node -p 'require(process.argv[1]).version' "$REMOTE_DIR/node_modules/mcp-remote/package.json")
  fi
fi

TMP=$(mktemp -d)
SERVER=
cleanup() {
  if [[ -n "$SERVER" ]]; then kill "$SERVER" 2> /dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
RAW=$TMP/raw.jsonl
: > "$RAW"
# mcp-remote keeps its OAuth state here (none is needed: no login).
export MCP_REMOTE_CONFIG_DIR=$TMP/mcp-remote-config

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
# Starts the example on a free port ($PORT) and waits (at most 10 s) until it accepts.
start_server() {
  PORT=$(free_port)
  "$EX" --http "127.0.0.1:$PORT" > /dev/null 2> "$TMP/server.log" &
  SERVER=$!
  for _ in $(seq 1 100); do
    if (exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2> /dev/null; then return 0; fi
    kill -0 "$SERVER" 2> /dev/null || { echo "$TAG: the example exited" >&2; cat "$TMP/server.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$TAG: the example does not accept on port $PORT" >&2
  exit 1
}
stop_server() {
  kill "$SERVER" 2> /dev/null || true
  wait "$SERVER" 2> /dev/null || true
  SERVER=
}

failed=0
# One cell ($1) with window $2 in run $3: appends the load generator's JSON,
# with the cell's name, window and run, to $RAW and prints a line.
run_cell() {
  local cell=$1 w=$2 run=$3 url out status=0
  out=$TMP/out.json
  : > "$TMP/child.log"
  local limit=$((max_secs * 3 + 60))
  case "$cell" in
    direct)
      LOADGEN_SERVER_LOG=$TMP/child.log timeout -k 5 "$limit" "$LG" http --clients "$w" --n "$n" \
        --warmup 50 --max-secs "$max_secs" -- "$EX" --http '{addr}' > "$out" || status=$?
      ;;
    *)
      start_server
      url=http://127.0.0.1:$PORT/mcp
      local cmd
      case "$cell" in
        bridge-2025) cmd=("$MCP" bridge --to "$url" --era 2025-11-25) ;;
        bridge-2026) cmd=("$MCP" bridge --to "$url" --era 2026-07-28) ;;
        mcp-remote) cmd=(node "$REMOTE_JS" "$url" --transport http-only --silent) ;;
      esac
      LOADGEN_SERVER_LOG=$TMP/child.log timeout -k 5 "$limit" "$LG" stdio --window "$w" --n "$n" \
        --warmup 1000 --max-secs "$max_secs" -- "${cmd[@]}" > "$out" || status=$?
      stop_server
      ;;
  esac
  local line
  line=$(tail -n 1 "$out" 2> /dev/null || true)
  if [[ "$status" == 0 ]] && python3 - "$cell" "$w" "$run" "$line" >> "$RAW" <<'EOF'
import json, sys
cell, w, run, line = sys.argv[1:]
r = json.loads(line)
if r.get("errors") or r.get("failure") or r.get("setup_error") or not r.get("rps"):
    sys.exit(1)
r.update(cell=cell, w=int(w), run=int(run))
print(json.dumps(r))
EOF
  then
    python3 - "$(tail -n 1 "$RAW")" <<'EOF'
import json, sys
r = json.loads(sys.argv[1])
print(f"{r['run']:>3} {r['cell']:<12} {r['w']:>3} {r['rps']:>9.0f} {r['p50_us']:>9.1f} {r['p99_us']:>9.1f} "
      f"{r['cpu_us_per_req']:>8.1f} {r.get('peak_rss_kb', 0) / 1024:>8.1f}")
EOF
  else
    echo "FAIL run $run $cell W=$w (exit status $status): $line"
    tail -n 5 "$TMP/child.log"
    failed=$((failed + 1))
  fi
}

IFS=, read -r -a window_list <<< "$windows"
cells=(direct bridge-2025 bridge-2026)
if ((with_remote)); then cells+=(mcp-remote); fi
echo "$TAG: $runs run(s); W = $windows; n = $n, at most $max_secs s a cell; $(nproc) CPUs" \
  "$( ((with_remote)) && echo "; mcp-remote $REMOTE_VERSION, node $(node --version)")"
printf '%3s %-12s %3s %9s %9s %9s %8s %8s\n' run cell W calls/s "p50 µs" "p99 µs" "CPU/call" "RSS MiB"
for run in $(seq 1 "$runs"); do
  for w in "${window_list[@]}"; do
    k=${#cells[@]}
    for ((i = 0; i < k; i++)); do
      run_cell "${cells[$(((i + run - 1) % k))]}" "$w" "$run"
    done
  done
done

echo
python3 - "$RAW" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]

def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None  # the upper one of an even count

print("medians over the runs; vs direct = the cell's calls/s over the direct cell's")
print(f"{'cell':<12} {'W':>3} {'runs':>4} {'calls/s':>9} {'vs direct':>9} {'p50 µs':>9} {'p99 µs':>9} "
      f"{'CPU/call':>8} {'RSS MiB':>8}")
order = ["direct", "bridge-2025", "bridge-2026", "mcp-remote"]
for w in sorted({r["w"] for r in rows}):
    base = median([r["rps"] for r in rows if r["w"] == w and r["cell"] == "direct"])
    for cell in order:
        rs = [r for r in rows if r["w"] == w and r["cell"] == cell]
        if not rs:
            continue
        m = {k: median([r.get(k) for r in rs]) for k in ("rps", "p50_us", "p99_us", "cpu_us_per_req", "peak_rss_kb")}
        vs = f"{m['rps'] / base:.2f}" if base else "n/a"
        rss = "n/a" if m["peak_rss_kb"] is None else f"{m['peak_rss_kb'] / 1024:.1f}"
        print(f"{cell:<12} {w:>3} {len(rs):>4} {m['rps']:>9.0f} {vs:>9} {m['p50_us']:>9.1f} {m['p99_us']:>9.1f} "
              f"{m['cpu_us_per_req']:>8.1f} {rss:>8}")
EOF
if ((failed)); then
  echo "$TAG: $failed cell run(s) failed" >&2
  exit 1
fi
