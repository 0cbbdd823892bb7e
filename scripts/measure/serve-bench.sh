#!/usr/bin/env bash
# What `mcp serve` costs a call: `tools/call` from the crate's Client
# straight to a stdio server, then through `mcp serve` over Streamable HTTP
# in both eras (cli/examples/serve_bench.rs), on release builds. The servers:
# the small `serve_child` example (echo), and the official TypeScript
# server-everything when its npm pin is installed
# (scripts/interop/interop-serve.sh installs it).
#
# Usage: scripts/measure/serve-bench.sh [CALLS]   (default 3000)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CALLS=${1:-3000}
cd "$ROOT"
cargo build --release -p tiny-mcp-cli --bins --examples >&2
R=${CARGO_TARGET_DIR:-$ROOT/target}/release
echo "serve_child (Rust, tiny-mcp), echo:"
"$R/examples/serve_bench" "$R/mcp" "$CALLS" "$R/examples/serve_child" echo '{"text":"hi"}'
EVERYTHING=$ROOT/tests/interop/npm-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js
if [[ -f "$EVERYTHING" ]] && command -v node >/dev/null; then
  echo "server-everything (TypeScript), echo:"
  "$R/examples/serve_bench" "$R/mcp" "$CALLS" "node $EVERYTHING stdio" echo '{"message":"hi"}' 2>/dev/null
fi
