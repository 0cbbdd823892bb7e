#!/usr/bin/env bash
# Interop test under a real WASI runtime (issue 31): the `minimal` and
# `wasi_glossary` examples built for wasm32-wasip1 (core modules) and
# wasm32-wasip2 (components) run under Wasmtime (the `wasmtime` package from
# PyPI, pinned in tests/interop/python/requirements.txt;
# tests/interop/python/wasi_run.py), and the official MCP Python SDK client
# (mcp 2.3.0) drives them over stdio in both eras (tests/interop/python/wasi.py):
# initialize or server/discover, tools/list, the echo tool, a typed tool's
# structuredContent, a read through a resource template, a prompt, and an
# elicitation answered by the client's callback. The wasm32-wasip1 modules
# run the same checks under Node's node:wasi too (tests/interop/wasi/node_run.mjs).
#
# Usage: scripts/interop/interop-wasi.sh [--v2025 | --v2026]
#   --v2025     only the client's 2025-11-25 mode (initialize handshake)
#   --v2026     only the client's default mode (2026-07-28, server/discover)
# Without a flag both run.
# Environment:
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of one client run, in seconds (default 180)
#   WASI_TARGETS     the targets (default: "wasm32-wasip1 wasm32-wasip2"); each is
#                    added with `rustup target add` when missing
#   WASI_WASM_OPT    0: skip the size after wasm-opt (default: measure it, with
#                    wasm-opt from PATH, else Binaryen's npm package, pinned in
#                    tests/interop/wasi/package.json)
#
# Then, for information (they never fail the run): each .wasm's size in
# bytes (a wasm32-wasip1 module also after `wasm-opt -Oz`); the start-up
# time (launch, send initialize, read the answer; median of 5) native and
# under Wasmtime, with and without Wasmtime's compilation cache
# (tests/interop/python/wasi_startup.py).
#
# Prints one `ok`/`FAIL` line per check and, last, the combined `N passed, M failed`;
# exits 1 if any check or run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
RUN_TIMEOUT=${INTEROP_TIMEOUT:-180}
read -r -a TARGETS <<<"${WASI_TARGETS:-wasm32-wasip1 wasm32-wasip2}"
EXAMPLES=(minimal wasi_glossary)

modes=()
for arg in "$@"; do
  case "$arg" in
    --v2025) modes+=(v2025) ;;
    --v2026 | --default) modes+=(v2026) ;;
    -h | --help) sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--v2025 | --v2026]" >&2; exit 2 ;;
  esac
done
[[ ${#modes[@]} -gt 0 ]] || modes=(v2026 v2025)

TAG=interop-wasi
# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"

# --- the programs: each WASI target and, for the start-up comparison, native ---
build_flags=()
for name in "${EXAMPLES[@]}"; do build_flags+=(--example "$name"); done
installed=$(rustup target list --installed)
for target in "${TARGETS[@]}"; do
  if ! grep -qx "$target" <<<"$installed"; then
    echo "$TAG: rustup target add $target" >&2
    rustup target add "$target" >&2
  fi
  (cd "$ROOT" && cargo build --release --target "$target" "${build_flags[@]}" >&2)
done
(cd "$ROOT" && cargo build --release "${build_flags[@]}" >&2)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
NATIVE_DIR=$TARGET_DIR/release/examples
ensure_venv

OUT=$(mktemp)
OPT_DIR=$(mktemp -d)
trap 'rm -rf "$OUT" "$OPT_DIR"' EXIT

# --- the checks, for each target in each era ---
total_passed=0
total_failed=0
for target in "${TARGETS[@]}"; do
  wasm_dir=$TARGET_DIR/$target/release/examples
  for mode in "${modes[@]}"; do
    flags=()
    [[ "$mode" == v2025 ]] && flags+=(--v2025)
    run_counted "$target/$mode" wasi.py "$VENV/bin/python" "$PY_DIR/wasi.py" \
      "$wasm_dir/minimal.wasm" "$wasm_dir/wasi_glossary.wasm" --label "$target" \
      "${flags[@]}" --timeout "$RUN_TIMEOUT"
  done
done
# The same checks with the wasm32-wasip1 modules under Node's node:wasi
# (tests/interop/wasi/node_run.mjs), whose stdin does not block.
if [[ " ${TARGETS[*]} " == *" wasm32-wasip1 "* ]]; then
  wasm_dir=$TARGET_DIR/wasm32-wasip1/release/examples
  for mode in "${modes[@]}"; do
    flags=()
    [[ "$mode" == v2025 ]] && flags+=(--v2025)
    run_counted "node/$mode" wasi.py env WASI_RUNNER=node "$VENV/bin/python" "$PY_DIR/wasi.py" \
      "$wasm_dir/minimal.wasm" "$wasm_dir/wasi_glossary.wasm" --label "wasm32-wasip1 node:wasi" \
      "${flags[@]}" --timeout "$RUN_TIMEOUT"
  done
fi

# --- sizes ---
# wasm-opt from PATH, else Binaryen's npm package (npm ci only when
# node_modules does not match the lock); prints its path, or nothing.
find_wasm_opt() {
  [[ "${WASI_WASM_OPT:-1}" == 0 ]] && return 0
  if command -v wasm-opt >/dev/null; then
    command -v wasm-opt
    return 0
  fi
  local dir=$ROOT/tests/interop/wasi
  local bin=$dir/node_modules/binaryen/bin/wasm-opt
  local want
  want=$(node -p 'require(process.argv[1]).packages["node_modules/binaryen"].version' "$dir/package-lock.json")
  if [[ ! -x "$bin" || "$(node -p 'require(process.argv[1]).version' "$dir/node_modules/binaryen/package.json" 2>/dev/null)" != "$want" ]]; then
    echo "$TAG: installing Binaryen $want from npm (npm ci)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline >&2) || return 0
  fi
  [[ -x "$bin" ]] && echo "$bin"
}
WASM_OPT=$(find_wasm_opt)
for name in "${EXAMPLES[@]}"; do
  echo "size $name native (release): $(stat -c %s "$NATIVE_DIR/$name") bytes"
  for target in "${TARGETS[@]}"; do
    wasm=$TARGET_DIR/$target/release/examples/$name.wasm
    line="size $name $target: $(stat -c %s "$wasm") bytes"
    # wasm-opt takes core modules; a component is left as it is.
    if [[ -z "$WASM_OPT" ]]; then
      line+=" (no wasm-opt)"
    elif [[ "$target" == wasm32-wasip1 ]]; then
      if "$WASM_OPT" -Oz "$wasm" -o "$OPT_DIR/$name.wasm" >&2; then
        line+=", $(stat -c %s "$OPT_DIR/$name.wasm") after wasm-opt -Oz"
      else
        line+=", wasm-opt -Oz failed"
      fi
    fi
    echo "$line"
  done
done

# --- start-up: native, Wasmtime with its cache warm, Wasmtime compiling each time ---
for name in "${EXAMPLES[@]}"; do
  "$VENV/bin/python" "$PY_DIR/wasi_startup.py" "$NATIVE_DIR/$name" --label "$name native" || true
  for target in "${TARGETS[@]}"; do
    wasm=$TARGET_DIR/$target/release/examples/$name.wasm
    "$VENV/bin/python" "$PY_DIR/wasi_startup.py" "$wasm" --label "$name $target, cached" || true
    WASI_RUN_NO_CACHE=1 "$VENV/bin/python" "$PY_DIR/wasi_startup.py" "$wasm" \
      --label "$name $target, compiled each start" || true
  done
done

echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
