#!/usr/bin/env bash
# scripts/check/msrv-check.sh - check that tiny-mcp (lib, tests, examples) really
# compiles with Debian 12's packaged toolchain: rustc 1.63 + cargo 0.66.
#
# Usage (from the repository root):  bash scripts/check/msrv-check.sh
#
# Steps:
#  1. apt-get install rustc cargo if /usr/bin/rustc is missing or not 1.63.
#  2. Copy the project (no target/, no .git) to target/msrv/work and turn the
#     committed Cargo.lock into lockfile version 3 there (cargo 0.66 cannot
#     read version 4).  The committed lockfile itself is never modified.
#  3. Vendor every locked crate with the current (rustup) cargo into
#     target/msrv/vendor.  Crates that are not built for this host
#     (windows/wasm/uefi-only) but use edition 2024 or resolver 3 get those
#     keys lowered, because cargo 0.66 refuses to even parse such manifests.
#     Crates that ARE built are left alone, so real breakage still shows.
#     The vendor dir is reused while Cargo.lock/Cargo.toml/this script are
#     unchanged and target/msrv is kept (test-all.sh removes it after this
#     step unless TINY_MCP_KEEP_SCRATCH=1).
#  4. Offline, with /usr/bin/cargo + /usr/bin/rustc only:
#       cargo build --lib   and   cargo test --no-run
#  5. Last line: "MSRV 1.63: ok" (exit 0) or "MSRV 1.63: FAILED (why)" (exit 1).
#
# Optional environment: MSRV_NEW_CARGO (cargo used for vendoring; default: the
# rustup cargo on PATH or in ~/.cargo/bin); CARGO_INCREMENTAL (default 0 here:
# the scratch tree is built once, test-all.sh removes it after this step).
# The Debian packages are APT_MSRV in scripts/check/lib/footprint.sh.

set -uo pipefail

MSRV=1.63
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
# shellcheck source=lib/footprint.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/footprint.sh"
OLD_CARGO=/usr/bin/cargo
OLD_RUSTC=/usr/bin/rustc
START=$(date +%s)

log() { echo "msrv-check: $*" >&2; }
elapsed() { echo "$(($(date +%s) - START))s"; }
ok() { log "done in $(elapsed)"; echo "MSRV $MSRV: ok"; exit 0; }
die() { log "gave up after $(elapsed)"; echo "MSRV $MSRV: FAILED ($*)"; exit 1; }

[ -f Cargo.toml ] && [ -f Cargo.lock ] || die "run from the repo root (Cargo.toml and Cargo.lock needed)"
ROOT=$(pwd -P)
OUT="$ROOT/target/msrv"
WORK="$OUT/work"
VENDOR="$OUT/vendor"
mkdir -p "$OUT" || die "cannot create $OUT"
# one run at a time per checkout
exec 9>"$OUT/.lock"
flock 9 || die "cannot lock $OUT/.lock"

# ---- 1. Debian's old toolchain ------------------------------------------
have_old() {
    [ -x "$OLD_CARGO" ] && "$OLD_RUSTC" --version 2>/dev/null | grep -q "^rustc $MSRV\."
}
if ! have_old; then
    [ "$(id -u)" = 0 ] || die "need root to apt-get install rustc cargo"
    log "installing Debian rustc + cargo (apt-get)"
    apt-get update -qq >"$OUT/apt.log" 2>&1 || log "apt-get update failed, trying install anyway"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $APT_MSRV \
        >>"$OUT/apt.log" 2>&1 || die "apt-get install rustc cargo failed, see $OUT/apt.log"
    have_old || die "$OLD_RUSTC is not $MSRV after install: $("$OLD_RUSTC" --version 2>&1)"
fi
HOST=$("$OLD_RUSTC" -vV | sed -n 's/^host: //p')
log "old toolchain: $("$OLD_RUSTC" --version), $("$OLD_CARGO" --version)"

# ---- 2. scratch copy with a v3 lockfile ---------------------------------
rm -rf "$WORK" && mkdir -p "$WORK" || die "cannot recreate $WORK"
# tar keeps mtimes, so the old cargo's fingerprints in $OUT/target (when kept) stay valid
tar -C "$ROOT" --exclude=./target --exclude=./.git -cf - . | tar -C "$WORK" -xf - \
    || die "copying the project to $WORK failed"
sed -i 's/^version = 4$/version = 3/' "$WORK/Cargo.lock"
# The `redis` feature's floor is Rust 1.88 (MSRV.md), and the redis crate's
# manifest is one cargo 1.65 cannot resolve ("rustls/std" beside
# "dep:rustls"), even unused: the feature and its two dependencies leave
# the copy, and the copy's lockfile drops what only they needed (the new
# cargo, offline: nothing else moves).
sed -i -e '/^redis = /d' -e '/^rustls-redis = /d' \
    -e 's/, "redis?\/tls-rustls-webpki-roots", "rustls-redis?\/ring"//' "$WORK/Cargo.toml"
sed -i '/^\[\[bench\]\]$/{N;/\nname = "redis"$/{N;N;d}}' "$WORK/Cargo.toml"
if grep -nE '^(redis|rustls-redis) = |redis\?/|"redis"' "$WORK/Cargo.toml" >&2; then
    die "the copy still names redis"
fi
PRUNE_CARGO=${MSRV_NEW_CARGO:-${CARGO_HOME:-$HOME/.cargo}/bin/cargo}
# Offline needs every crate of the lockfile at hand, also those only other
# targets use (bumpalo, for wasm32-unknown-unknown), which no build here
# downloaded: fetch them first.
(cd "$ROOT" && "$PRUNE_CARGO" fetch --locked >/dev/null 2>"$OUT/fetch.log") \
    || { tail -n 20 "$OUT/fetch.log" >&2; die "cannot fetch the lockfile's crates"; }
(cd "$WORK" && "$PRUNE_CARGO" metadata --offline --format-version 1 >/dev/null 2>"$OUT/prune.log") \
    || { tail -n 20 "$OUT/prune.log" >&2; die "cannot drop redis from the copy's lockfile"; }
# The redis crate's proc macros (zerovec-derive, under url) need quote
# 1.0.44 or later, which need Rust 1.71, so Cargo.lock holds quote 1.0.47;
# without them, 1.0.41 (Rust 1.56) is what the 1.63 build takes.
(cd "$WORK" && "$PRUNE_CARGO" update --offline -p quote --precise 1.0.41 >>"$OUT/prune.log" 2>&1) \
    || { tail -n 20 "$OUT/prune.log" >&2; die "cannot lower quote in the copy's lockfile"; }
sed -i 's/^version = 4$/version = 3/' "$WORK/Cargo.lock"

# ---- 3. vendor with the new cargo (skipped when nothing changed) --------
KEY=$(cat "$WORK/Cargo.lock" "$WORK/Cargo.toml" "$0" | sha256sum | cut -d' ' -f1)
if [ -d "$VENDOR" ] && [ "$(cat "$OUT/vendor.stamp" 2>/dev/null)" = "$KEY" ]; then
    log "reusing vendored crates in target/msrv/vendor"
else
    NEW_CARGO=${MSRV_NEW_CARGO:-$(command -v cargo)}
    if [ "$NEW_CARGO" = "$OLD_CARGO" ] || [ -z "$NEW_CARGO" ]; then
        NEW_CARGO="${CARGO_HOME:-$HOME/.cargo}/bin/cargo"
    fi
    new_ver=$("$NEW_CARGO" --version 2>/dev/null | awk '{print $2}')
    [ -n "$new_ver" ] || die "no rustup cargo found (set MSRV_NEW_CARGO)"
    # cargo >= 1.85 understands edition 2024 manifests and v4 lockfiles
    [ "$(printf '1.85.0\n%s\n' "${new_ver%%-*}" | sort -V | head -1)" = 1.85.0 ] \
        || die "vendoring needs cargo >= 1.85, $NEW_CARGO is $new_ver"
    log "vendoring with $NEW_CARGO ($new_ver)"
    rm -f "$OUT/vendor.stamp"
    rm -rf "$VENDOR" "$VENDOR.tmp"
    (cd "$WORK" && "$NEW_CARGO" vendor --locked --versioned-dirs "$VENDOR.tmp") \
        >/dev/null 2>"$OUT/vendor.log" || { tail -n 20 "$OUT/vendor.log" >&2; die "cargo vendor --locked failed"; }

    # which name-version dirs does this host actually compile?
    (cd "$WORK" && "$NEW_CARGO" tree --locked -e normal,build,dev --target "$HOST" \
        --prefix none --format '{p}') 2>"$OUT/tree.log" \
        | awk '{sub(/^v/, "", $2); print $1 "-" $2}' | sort -u >"$OUT/host-crates.txt"
    [ -s "$OUT/host-crates.txt" ] || { cat "$OUT/tree.log" >&2; die "cargo tree failed"; }

    for dir in "$VENDOR.tmp"/*/; do
        dir=${dir%/}
        man="$dir/Cargo.toml"
        grep -qxF "${dir##*/}" "$OUT/host-crates.txt" && continue
        grep -qE '^(edition = "2024"|resolver = "3")' "$man" || continue
        before=$(sha256sum "$man" | cut -d' ' -f1)
        sed -i 's/^edition = "2024"/edition = "2021"/; s/^resolver = "3"/resolver = "2"/' "$man"
        after=$(sha256sum "$man" | cut -d' ' -f1)
        # the per-file hash of Cargo.toml under "files"; "package" is the
        # .crate hash from Cargo.lock and must stay as it is
        sed -i "s/\"Cargo.toml\":\"$before\"/\"Cargo.toml\":\"$after\"/" "$dir/.cargo-checksum.json"
        grep -q "\"Cargo.toml\":\"$after\"" "$dir/.cargo-checksum.json" \
            || die "could not update the checksum of ${dir##*/}"
        log "lowered edition/resolver of ${dir##*/} (not compiled for $HOST)"
    done
    mv "$VENDOR.tmp" "$VENDOR" || die "cannot move vendor dir into place"
    echo "$KEY" >"$OUT/vendor.stamp"
    log "vendored $(ls "$VENDOR" | wc -l) crates ($(elapsed))"
fi

# ---- 4. offline build with Debian's cargo + rustc -----------------------
OLD_HOME="$OUT/cargo-home"
mkdir -p "$OLD_HOME"
printf '[source.crates-io]\nreplace-with = "vendored"\n\n[source.vendored]\ndirectory = "%s"\n' \
    "$VENDOR" >"$OLD_HOME/config.toml"

old_cargo() {
    (cd "$WORK" && env -u RUSTUP_TOOLCHAIN -u RUSTC_WRAPPER -u RUSTC_WORKSPACE_WRAPPER \
        -u CARGO_BUILD_RUSTC_WRAPPER -u CARGO_BUILD_TARGET -u CARGO_ENCODED_RUSTFLAGS \
        -u CARGO_BUILD_RUSTFLAGS -u RUSTFLAGS -u RUSTDOCFLAGS \
        -u CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS \
        PATH="/usr/bin:$PATH" CARGO_HOME="$OLD_HOME" CARGO_TARGET_DIR="$OUT/target" \
        RUSTC="$OLD_RUSTC" RUSTDOC=/usr/bin/rustdoc CARGO_TERM_COLOR=never \
        "$OLD_CARGO" "$@" --offline --locked)
}
old_cargo build --lib || die "cargo build --lib with rustc $MSRV"
log "lib builds ($(elapsed))"
old_cargo test --no-run || die "cargo test --no-run (tests/examples) with rustc $MSRV"
log "tests and examples build"
old_cargo build -p tiny-mcp-cli --features tls || die "cargo build -p tiny-mcp-cli (the mcp command) with rustc $MSRV"
# Every optional feature whose floor is 1.63, in one build: features add code,
# so their union compiles all of it (each feature alone is compiled by its
# clippy step on the current toolchain); one build instead of one per feature
# saves about five minutes of CI.
MSRV_FEATURES="sealed-state tls jwt tiny_http schemars"
old_cargo test --no-run --features "$MSRV_FEATURES" \
    || die "cargo test --no-run --features \"$MSRV_FEATURES\" with rustc $MSRV"
log "the features $MSRV_FEATURES build ($(elapsed))"
ok
