#!/usr/bin/env bash
# stdio and HTTP `tools/call` of the reference server and of two builds of
# the `everything` example (say, before and after a change), alternated in
# one run with the shared kit's load generator; medians and ratios to the
# reference (issue 27: the shares must not cost more than 5%).
#
# Usage: scripts/measure/bench-versus.sh LOADGEN REF_SERVER EVERYTHING_A EVERYTHING_B [ROUNDS]
#   LOADGEN, REF_SERVER  built from ../shared/tools/bench (see its README)
#   EVERYTHING_A/_B      release builds of the example (e.g. copied aside
#                        from another checkout's target/release/examples)
#   ROUNDS               alternations (default 5)
# Prints one line per run, then per transport: median rps of each server and
# its ratio to the reference's.
set -euo pipefail
LG=${1:?usage: bench-versus.sh LOADGEN REF A B [ROUNDS]}
REF=${2:?}
A=${3:?}
B=${4:?}
ROUNDS=${5:-5}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
rps() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["rps"])'; }
for round in $(seq "$ROUNDS"); do
  for name in ref a b; do
    case $name in ref) bin=$REF ;; a) bin=$A ;; b) bin=$B ;; esac
    r=$("$LG" stdio --n 50000 --window 64 --warmup 2000 --max-secs 5 -- "$bin" --stdio | rps)
    echo "$r" >> "$OUT/stdio-$name"
    h=$("$LG" http --clients 16 --n 20000 --warmup 50 --max-secs 5 -- "$bin" --http '{addr}' | rps)
    echo "$h" >> "$OUT/http-$name"
    echo "round $round $name stdio $r http $h"
  done
done
python3 - "$OUT" <<'PY'
import statistics, sys, os
out = sys.argv[1]
for transport in ("stdio", "http"):
    med = {n: statistics.median(float(x) for x in open(os.path.join(out, f"{transport}-{n}")))
           for n in ("ref", "a", "b")}
    print(f"{transport}: ref {med['ref']:.0f}/s  a {med['a']:.0f}/s ({med['a']/med['ref']:.2f})"
          f"  b {med['b']:.0f}/s ({med['b']/med['ref']:.2f})  b/a {med['b']/med['a']:.3f}")
PY
