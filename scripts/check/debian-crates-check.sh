#!/usr/bin/env bash
# scripts/check/debian-crates-check.sh - build and test tiny-mcp the way Debian 12
# users do: Debian's rustc 1.63 and cargo, offline, against Debian's
# packaged crates (librust-*-dev under /usr/share/cargo/registry, through a
# cargo source replacement), with no lockfile; then build a fresh
# downstream project that depends on tiny-mcp by path the same way, and
# run it over stdio. The recipe is the one MSRV.md gives users.
#
# Usage (from the repository root): bash scripts/check/debian-crates-check.sh
# Last line: "Debian crates: ok" (exit 0) or "Debian crates: FAILED (why)".
set -uo pipefail

ROOT=$(pwd -P)
OUT="$ROOT/target/debian"
log() { echo "debian-crates: $*" >&2; }
die() { echo "Debian crates: FAILED ($*)"; exit 1; }
# The packages (about 240 with their dependencies): APT_DEBIAN_CRATES.
# shellcheck source=lib/footprint.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/footprint.sh"
PACKAGES=$APT_DEBIAN_CRATES
# Built once (test-all.sh removes target/debian after this step): no
# incremental data unless CARGO_INCREMENTAL says so.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

[ -f Cargo.toml ] || die "run from the repository root"
mkdir -p "$OUT" || die "cannot create $OUT"
# shellcheck disable=SC2086
if ! dpkg -s $PACKAGES >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || die "need root to apt-get install the packaged crates"
    log "installing Debian's rustc, cargo and packaged crates (apt-get)"
    apt-get update -qq >"$OUT/apt.log" 2>&1 || log "apt-get update failed, trying anyway"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES \
        >>"$OUT/apt.log" 2>&1 || { tail -n 20 "$OUT/apt.log" >&2; die "apt-get install"; }
fi
log "$(/usr/bin/rustc --version), $(/usr/bin/cargo --version)"

# A cargo home whose crates.io is Debian's registry, offline.
HOME_DIR="$OUT/cargo-home"
mkdir -p "$HOME_DIR"
cat >"$HOME_DIR/config.toml" <<'TOML'
[source.crates-io]
replace-with = "debian-packages"

[source.debian-packages]
directory = "/usr/share/cargo/registry"

[net]
offline = true
TOML
debian_cargo() {
    env -u RUSTUP_TOOLCHAIN -u RUSTC_WRAPPER -u RUSTFLAGS -u RUSTDOCFLAGS \
        -u CARGO_BUILD_RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_TARGET \
        PATH="/usr/bin:$PATH" CARGO_HOME="$HOME_DIR" RUSTC=/usr/bin/rustc \
        RUSTDOC=/usr/bin/rustdoc CARGO_TERM_COLOR=never /usr/bin/cargo "$@"
}

# The crate, without its lockfile: Debian's versions are what resolves.
WORK="$OUT/work"
rm -rf "$WORK" && mkdir -p "$WORK" || die "cannot recreate $WORK"
tar -C "$ROOT" --exclude=./target --exclude=./.git -cf - . | tar -C "$WORK" -xf - \
    || die "copying the project failed"
rm -f "$WORK/Cargo.lock"
# Debian 12 packages rustls 0.20, not the 0.22 of the `tls` feature, and
# cargo resolves optional dependencies too: the feature and its two
# dependencies are taken out of this build (MSRV.md says so).
sed -i -e '/^rustls = /d' -e '/^webpki-roots = /d' -e '/^tls = /d' "$WORK/Cargo.toml" "$WORK/cli/Cargo.toml" \
    || die "cannot drop the tls feature from the copy"
# Nor does it package ring 0.17 (Debian 12 has 0.16): the `jwt` feature
# and ring go the same way.
sed -i -e '/^ring = /d' -e '/^jwt = /d' "$WORK/Cargo.toml" \
    || die "cannot drop the jwt feature from the copy"
# Nor does it package schemars: the `schemars` feature goes the same way.
sed -i -e '/^schemars = /d' "$WORK/Cargo.toml" \
    || die "cannot drop the schemars feature from the copy"
# Nor tracing 0.1.41 (Debian 12 has 0.1.37), tracing-opentelemetry or
# opentelemetry: the `tracing` and `opentelemetry` features (each line
# `tracing = ...` / `opentelemetry = ...` is a dependency or a feature) go.
sed -i -e '/^tracing = /d' -e '/^tracing-opentelemetry = /d' -e '/^opentelemetry = /d' "$WORK/Cargo.toml" \
    || die "cannot drop the tracing and opentelemetry features from the copy"
# Nor any Redis client: the `redis` feature (and its rustls 0.23) goes, with
# the bench that needs it.
sed -i -e '/^redis = /d' -e '/^rustls-redis = /d' -e '/^\[\[bench\]\]$/{N;/\nname = "redis"$/{N;N;d}}' \
    "$WORK/Cargo.toml" || die "cannot drop the redis feature from the copy"
export CARGO_TARGET_DIR="$OUT/target"
(cd "$WORK" && debian_cargo build --lib) || die "cargo build --lib"
(cd "$WORK" && debian_cargo build --examples) || die "cargo build --examples"
# The `mcp` command first: the integration tests run it.
(cd "$WORK" && debian_cargo build -p tiny-mcp-cli) || die "cargo build -p tiny-mcp-cli (the mcp command)"
(cd "$WORK" && debian_cargo test) || die "cargo test"
(cd "$WORK" && debian_cargo test --features sealed-state --lib) \
    || die "cargo test --features sealed-state (hmac, sha2 from Debian)"
log "resolved: $(grep -A1 -E '^name = "(serde|serde_json|uuid|log|httparse|parking_lot|crossbeam-channel)"$' \
    "$WORK/Cargo.lock" | grep version | tr -d '"' | awk '{print $3}' | tr '\n' ' ')"

# A downstream project that depends on tiny-mcp by path.
DOWN="$OUT/downstream"
rm -rf "$DOWN" && mkdir -p "$DOWN/src" || die "cannot recreate $DOWN"
cat >"$DOWN/Cargo.toml" <<TOML
[package]
name = "downstream"
version = "0.1.0"
edition = "2021"
rust-version = "1.63"

[dependencies]
tiny-mcp = { path = "$WORK" }
serde_json = "1"

# A project of its own: not a member of tiny-mcp's workspace, whose root
# is above target/.
[workspace]
TOML
cat >"$DOWN/src/main.rs" <<'RUST'
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

fn main() -> Result<(), tiny_mcp::Error> {
    Server::builder("downstream", "0.1.0")
        .tool(
            Tool::new("hello", serde_json::json!({"type": "object"})),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("hello from downstream")),
        )
        .build()
        .serve_stdio()
}
RUST
(cd "$DOWN" && CARGO_TARGET_DIR="$OUT/downstream-target" debian_cargo build) \
    || die "the downstream project does not build"
answer=$(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}' \
    | "$OUT/downstream-target/debug/downstream")
case "$answer" in
    *'hello from downstream'*) log "the downstream project answers over stdio" ;;
    *) echo "$answer" >&2; die "the downstream project did not answer" ;;
esac
echo "Debian crates: ok"
