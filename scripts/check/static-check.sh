#!/usr/bin/env bash
# scripts/check/static-check.sh - build the `everything` example and the `mcp`
# client as static binaries (the README's recipe), check that they are
# statically linked, run a stdio exchange and an HTTP initialize against
# the server, let the static `mcp` call it over stdio and HTTP, and report
# both sizes. Built without the default `tasks` and `skills` features,
# as a server that uses neither would be (with them: about 180 KB more).
#
# Usage (from the repository root): bash scripts/check/static-check.sh
# Last line: "static binary: ok (N bytes)" (exit 0) or
# "static binary: FAILED (why)" (exit 1). The size limits: 2.0 MiB for the
# server; 2.25 MiB for `mcp`, whose client gained session renewal, the
# 2024-11-05 transport, redirects, tasks and process-group shutdown in
# issue 23 (2.06 MiB then).
set -uo pipefail

ROOT=$(pwd -P)
TARGET=x86_64-unknown-linux-gnu
LIMIT=$((2 * 1024 * 1024))
MCP_LIMIT=$((9 * 1024 * 1024 / 4))
OUT="$ROOT/target/static-check"
BIN="$OUT/$TARGET/static/examples/everything"
MCP="$OUT/$TARGET/static/mcp"
log() { echo "static-check: $*" >&2; }
die() { echo "static binary: FAILED ($*)"; exit 1; }

[ -f Cargo.toml ] || die "run from the repository root"
mkdir -p "$OUT"
RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
    cargo build --profile static --no-default-features -p tiny-mcp --example everything -p tiny-mcp-cli --bin mcp \
    --target "$TARGET" \
    --target-dir "$OUT" || die "the static build failed"

# A static executable has no program interpreter and needs no library.
for bin in "$BIN" "$MCP"; do
    if readelf -l "$bin" | grep -q 'Requesting program interpreter'; then
        die "$bin asks for a dynamic loader"
    fi
    if readelf -d "$bin" 2>/dev/null | grep -q '(NEEDED)'; then
        die "$bin needs shared libraries"
    fi
    log "$(basename "$bin"): $(file -b "$bin" | cut -d, -f1-4)"
done

# stdio: the README's first exchange.
answer=$(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}' \
    | "$BIN" --stdio 2>/dev/null)
case "$answer" in
    *'"text":"hello"'*) log "stdio: answered" ;;
    *) echo "$answer" >&2; die "no stdio answer" ;;
esac

# HTTP: bind port 0, read the URL from stderr, POST initialize.
"$BIN" --http 127.0.0.1:0 2>"$OUT/http.err" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
url=
for _ in $(seq 1 100); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$OUT/http.err" | head -1)
    [ -n "$url" ] && break
    sleep 0.05
done
[ -n "$url" ] || die "the HTTP server printed no URL"
reply=$(curl -s -m 10 -D "$OUT/http.head" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
    "$url") || die "curl $url failed"
grep -qi '^mcp-session-id:' "$OUT/http.head" || die "no Mcp-Session-Id from $url"
case "$reply" in
    *'"protocolVersion":"2025-11-25"'*) log "HTTP: initialize answered at $url" ;;
    *) echo "$reply" >&2; die "no initialize result over HTTP" ;;
esac

# The static client against the static server, both eras' default path.
out=$("$MCP" --stdio "$BIN --stdio" --pretty call echo text=hello 2>&1) || die "mcp over stdio: $out"
[ "$out" = hello ] || die "mcp over stdio printed: $out"
out=$("$MCP" --http "$url" --pretty call echo text=hello 2>&1) || die "mcp over HTTP: $out"
[ "$out" = hello ] || die "mcp over HTTP printed: $out"
log "mcp: called echo over stdio and HTTP"

size=$(stat -c %s "$BIN")
mcp_size=$(stat -c %s "$MCP")
mib() { awk -v s="$1" 'BEGIN {printf "%.2f MB, %.2f MiB", s / 1e6, s / 1048576}'; }
log "everything: $size bytes ($(mib "$size")); mcp: $mcp_size bytes ($(mib "$mcp_size"))"
[ "$size" -le "$LIMIT" ] || die "everything: $size bytes is over the 2.0 MiB limit"
[ "$mcp_size" -le "$MCP_LIMIT" ] || die "mcp: $mcp_size bytes is over the 2.25 MiB limit"
echo "static binary: ok ($size bytes; mcp $mcp_size bytes)"
