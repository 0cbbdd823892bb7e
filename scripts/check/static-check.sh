#!/usr/bin/env bash
# scripts/check/static-check.sh - build the `everything` example and the `mcp`
# client as static binaries (the README's recipe: the musl target,
# `--profile static`, the features tasks and skills), check that they are statically
# linked, run a stdio exchange and an HTTP initialize against the server,
# let the static `mcp` call it over stdio and HTTP, and report both sizes.
# Then the README's second recipe, glibc linked statically: the server
# only, checked to be static and to answer on stdio, its size reported
# (no limit; glibc's static build is the larger).
#
# Usage (from the repository root): bash scripts/check/static-check.sh [--tls]
#   --tls   also build `mcp --features tls` (rustls on ring, whose C code
#           needs musl-gcc: apt-get install musl-tools) and report its size
# Last line: "static binary: ok (N bytes; mcp M bytes)" (exit 0) or
# "static binary: FAILED (why)" (exit 1). The size limits: 1.64 MB
# (1,640,000 bytes) for the server (issue 26 set 1.5 MB, met at 1,495,840
# bytes; issue 27's fair shares of workers, sessions, tasks, stored
# state and connections brought it to 1,536,800; issue 28 to 1,569,568:
# MCP Apps' per-request listing and declaration about 8 KB, the checks of
# elicitation answers, cancellable waits, URL elicitation and MIME types
# about 20 KB, the epoll watch of streams' hang-ups 4 KB; issue 29 to
# 1,573,664 without `metrics`, 1,602,336 with it; then 1,631,008, as
# `everything --introspect` now uses `IntrospectionVerifier`, whose HTTP
# exchange is the client's code, about 57 KB; a server without a
# verifier does not carry it); 2.2 MB
# (2,200,000 bytes) for `mcp`, which carries the client, its OAuth login,
# the bridge and, for `mcp serve`, the whole server (2,077,408 bytes when
# `mcp serve` came; issue 26 asked for 1.5 MB, which that cannot meet).
set -uo pipefail

ROOT=$(pwd -P)
TARGET=x86_64-unknown-linux-musl
GNU=x86_64-unknown-linux-gnu
# What the static binary needs: the default features but `metrics`
# (issue 29: about 33 KB; a server that wants them builds with them).
FEATURES=tiny-mcp/tasks,tiny-mcp/skills
LIMIT=1640000
MCP_LIMIT=2200000
OUT="$ROOT/target/static-check"
BIN="$OUT/$TARGET/static/examples/everything"
MCP="$OUT/$TARGET/static/mcp"
GNU_BIN="$OUT/$GNU/static/examples/everything"
TLS=0
[ "${1:-}" = --tls ] && TLS=1
log() { echo "static-check: $*" >&2; }
die() { echo "static binary: FAILED ($*)"; exit 1; }
mb() { awk -v s="$1" 'BEGIN {printf "%.2f MB, %.2f MiB", s / 1e6, s / 1048576}'; }

[ -f Cargo.toml ] || die "run from the repository root"
mkdir -p "$OUT"
# The `static` profile inherits release's (no incremental data); kept
# explicit for the tree test-all.sh removes after this step.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

# The musl target's standard library (rustup's; a toolchain without
# rustup must bring its own).
libdir=$(rustc --print target-libdir --target "$TARGET" 2>/dev/null)
if ! ls "$libdir"/libstd-*.rlib >/dev/null 2>&1; then
    command -v rustup >/dev/null || die "no $TARGET standard library and no rustup to add it"
    log "rustup target add $TARGET"
    rustup target add "$TARGET" >&2 || die "rustup target add $TARGET failed"
fi

cargo build --profile static -p tiny-mcp --example everything -p tiny-mcp-cli --bin mcp \
    --no-default-features --features "$FEATURES" \
    --target "$TARGET" --target-dir "$OUT" || die "the static build failed"

# A static executable has no program interpreter and needs no library
# (the musl target's default is static-pie: no interpreter either).
check_static() {
    if readelf -l "$1" | grep -q 'Requesting program interpreter'; then
        die "$1 asks for a dynamic loader"
    fi
    if readelf -d "$1" 2>/dev/null | grep -q '(NEEDED)'; then
        die "$1 needs shared libraries"
    fi
    log "$(basename "$1") ($2): $(file -b "$1" | cut -d, -f1-4)"
}
check_static "$BIN" musl
check_static "$MCP" musl

# stdio: the README's first exchange.
stdio_exchange() {
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}' \
        | "$1" --stdio 2>/dev/null
}
answer=$(stdio_exchange "$BIN")
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
kill $pid 2>/dev/null

size=$(stat -c %s "$BIN")
mcp_size=$(stat -c %s "$MCP")
log "musl: everything $size bytes ($(mb "$size")); mcp $mcp_size bytes ($(mb "$mcp_size"))"

# The second recipe: glibc, linked statically (the server only).
RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
    cargo build --profile static -p tiny-mcp --example everything \
    --no-default-features --features "$FEATURES" \
    --target "$GNU" --target-dir "$OUT" || die "the glibc static build failed"
check_static "$GNU_BIN" glibc
case "$(stdio_exchange "$GNU_BIN")" in
    *'"text":"hello"'*) ;;
    *) die "no stdio answer from the glibc build" ;;
esac
gnu_size=$(stat -c %s "$GNU_BIN")
log "glibc: everything $gnu_size bytes ($(mb "$gnu_size")), answered on stdio"

if [ "$TLS" = 1 ]; then
    if ! command -v musl-gcc >/dev/null; then
        [ "$(id -u)" = 0 ] || die "--tls needs musl-gcc (apt-get install musl-tools)"
        log "apt-get install musl-tools"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >"$OUT/apt.log" 2>&1 \
            || { apt-get update -qq >>"$OUT/apt.log" 2>&1 \
                && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >>"$OUT/apt.log" 2>&1; } \
            || { tail -n 20 "$OUT/apt.log" >&2; die "apt-get install musl-tools"; }
    fi
    CC_x86_64_unknown_linux_musl=musl-gcc cargo build --profile static -p tiny-mcp-cli --bin mcp \
        --features tls --target "$TARGET" --target-dir "$OUT/tls" || die "the tls build failed"
    check_static "$OUT/tls/$TARGET/static/mcp" "musl, tls"
    tls_size=$(stat -c %s "$OUT/tls/$TARGET/static/mcp")
    log "musl: mcp --features tls $tls_size bytes ($(mb "$tls_size"))"
fi

[ "$size" -le "$LIMIT" ] || die "everything: $size bytes is over the $LIMIT-byte limit"
[ "$mcp_size" -le "$MCP_LIMIT" ] || die "mcp: $mcp_size bytes is over the $MCP_LIMIT-byte limit"
echo "static binary: ok ($size bytes; mcp $mcp_size bytes)"
