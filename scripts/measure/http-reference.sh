#!/usr/bin/env bash
# The 2026-07-28 JSON path against the hand-written reference (issue 14, item 11).
#
# Usage: scripts/measure/http-reference.sh REF_SERVER [BENCH OPTIONS]
#   REF_SERVER   the reference server binary of the shared bench kit
#                (`ref-server`, built from ../shared/tools/bench/reference); it is
#                started as `REF_SERVER --http 127.0.0.1:<port> --json` (2025-11-25
#                sessions, application/json answers)
#   BENCH OPTIONS  passed to `cargo bench --bench http` (default: --clients 16 --runs 7)
#
# The shared load generator speaks only the 2025-11-25 flow, so this uses the
# crate's own bench client (benches/http.rs) for every server, alternating in one
# run, each server a process of its own (as under the load generator):
#   reference-json  the reference, json-2025 flow (initialize, then tools/call
#                   with Mcp-Session-Id and Accept: application/json)
#   json-2026       the `everything` example (release build), 2026-07-28 flow (no
#                   handshake, the _meta envelope, Mcp-Method/Mcp-Name headers)
#   json-2025       the same example process, the reference's own flow
# The summary's `vs ceil` column is each server's median rate over the reference's.
# The servers are other processes, so their CPU is not reported.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REF=${1:?usage: scripts/measure/http-reference.sh REF_SERVER [BENCH OPTIONS]}
shift
[ -x "$REF" ] || { echo "http-reference: $REF is not an executable" >&2; exit 2; }
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--clients 16 --runs 7)

cd "$ROOT"
cargo build --release --example everything
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
PIDS=()
trap 'kill "${PIDS[@]}" 2> /dev/null || true' EXIT
# Starts "$@" and waits (at most 10 s) until 127.0.0.1:$PORT accepts.
start() {
  "$@" > /dev/null 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    if (exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2> /dev/null; then return 0; fi
    kill -0 "$!" 2> /dev/null || { echo "http-reference: $1 exited" >&2; exit 1; }
    sleep 0.1
  done
  echo "http-reference: $1 does not accept on port $PORT" >&2
  exit 1
}
PORT=$(free_port)
REF_ADDR=127.0.0.1:$PORT
start "$REF" --http "$REF_ADDR" --json
PORT=$(free_port)
EX_ADDR=127.0.0.1:$PORT
start target/release/examples/everything --http "$EX_ADDR"

cargo bench --bench http -- --no-memory --at-json-2025 "reference-json=$REF_ADDR" \
  --at "json-2026=$EX_ADDR" --at-json-2025 "json-2025=$EX_ADDR" "${ARGS[@]}"
