#!/usr/bin/env bash
# The whole test suite, as the README and CI run it:
#   formatting, clippy, unit + integration + doc tests, rustdoc without
#   warnings, the size limits of docs/STYLE.md (functions, files), the TypeScript and
#   Python SDK interop tests over stdio and HTTP, the examples built for
#   WASI (preview 1 and 2) under Wasmtime with the Python SDK client, MCP Apps against the
#   TypeScript SDK client and the ext-apps server helpers' shapes, `mcp serve` in front of the
#   TypeScript server-everything, the client against servers
#   nobody here wrote (the Python and TypeScript SDKs, server-everything in its
#   three modes, rmcp, FastMCP, server-filesystem, server-memory), the MCP Apps
#   example's view in Debian's Chromium behind a test host made with our
#   client (playwright-core; installs chromium once), the Python SDK's OAuth
#   client against the protected example (both eras), the Python SDK's
#   stdio client through `mcp bridge` to the example over HTTP (both
#   remote eras, with and without OAuth), three instances
#   behind nginx with a Redis bus, the official MCP
#   conformance suite (release and pre-release) against the `everything`
#   example, a build with Debian's rustc 1.63 (locked), `cargo check` for
#   Windows, macOS and Linux aarch64, a build at the
#   lowest declared dependency versions, a build and test with Debian's
#   rustc and packaged crates (and a downstream project), the static
#   binary of the README, and each fuzz target for a short while.
#
# Usage: bash scripts/test-all.sh [--quick] [--plan]
#   --quick   only the cargo and size steps (no npm, no MSRV toolchain)
#   --plan    print what the run would install and where it writes, and exit
# Environment:
#   CARGO_INCREMENTAL       default 0 here: no incremental data in target/
#                           (each tree is built once per run); 1 keeps it
#   CARGO_PROFILE_DEV_DEBUG default 0 here: debug builds without debug info
#                           (a third of the disk); set it to keep it
#   TINY_MCP_KEEP_SCRATCH   1 keeps each step's scratch tree (below)
#
# Before the first step it prints what the run installs (Debian packages
# with apt-get, npm packages, virtualenvs, toolchains; the lists are in
# scripts/check/lib/footprint.sh) and where it writes. Every step runs
# even if an earlier one failed; then come the disk use of target/ (and
# of the other places written), the time taken, and, last,
# "steps: N passed, M failed" counting steps; the exit status is 1 if any failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
QUICK=0
PLAN=0
for arg in "$@"; do
    case "$arg" in
        --quick) QUICK=1 ;;
        --plan) PLAN=1 ;;
        *) echo "usage: bash scripts/test-all.sh [--quick] [--plan]" >&2; exit 2 ;;
    esac
done
STARTED=$(date +%s)
# No incremental compilation data: a run builds each feature set once, so
# the data would only take disk (gigabytes: README.md); the heavy checks'
# builds inherit it. An explicit CARGO_INCREMENTAL wins.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
# No debug info in the debug builds either: no test reads it, and it is
# most of their size (the cargo steps' builds: 4.85 GB with it, 1.49 GB
# without). An explicit CARGO_PROFILE_DEV_DEBUG wins.
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-0}
# shellcheck source=check/lib/footprint.sh
. "$ROOT/scripts/check/lib/footprint.sh"
footprint_notice "$QUICK"
[ "$PLAN" = 1 ] && exit 0

# A step's scratch tree (its own copy of the project, its target
# directory, a download) is removed once the step is done, so that the
# whole run fits a small disk (README.md); TINY_MCP_KEEP_SCRATCH=1 keeps
# them, to look into a failure or to rerun a check sooner.
scratch() {
    if [ "${TINY_MCP_KEEP_SCRATCH:-0}" != 1 ]; then
        rm -rf "$1"
    fi
}

passed=0
failed=0
failures=()
step() {
    local name=$1
    shift
    echo
    echo "=== $name: $*"
    local start
    start=$(date +%s)
    if "$@"; then
        passed=$((passed + 1))
        echo "=== $name: ok ($(($(date +%s) - start)) s)"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "=== $name: FAILED ($(($(date +%s) - start)) s)"
    fi
}

step fmt cargo fmt --all -- --check
step clippy cargo clippy --all-targets -- -D warnings
step clippy-sealed-state cargo clippy --all-targets --features sealed-state -- -D warnings
# Without the default `tasks`, `skills` and `metrics` features: clippy, the unit tests and the in-memory dispatcher's tests.
step no-default-features bash -c \
    'cargo clippy --all-targets --no-default-features -- -D warnings && cargo test --no-default-features --lib && cargo test --no-default-features --test tests memory::'
# The stdio tests run the example binaries: build them as programs first
# (`--all-targets` alone builds examples as test harnesses only).
step build-examples bash -c 'cargo build --examples && cargo build -p tiny-mcp-cli'
step test cargo test --all-targets
# The same with the sealed-state feature, examples included (then the
# steps below rebuild the default example).
step test-sealed-state bash -c \
    'cargo build --features sealed-state --examples && cargo test --features sealed-state --all-targets'
# The client over https:// (feature `tls`, rustls): clippy, and the client
# tests with it (they include the TLS ones).
step tls bash -c \
    'cargo clippy --all-targets --features tls -- -D warnings && cargo test --features tls --test tests client::'
# The OAuth client's signed assertions and the JWT verifier (feature
# `jwt`, ring): clippy, the OAuth unit tests, and the verifier tests with
# real signed tokens (tests/verify/; the `everything` example built with
# the feature, for its --jwks-url).
step jwt bash -c \
    'cargo clippy --all-targets --features jwt -- -D warnings && cargo test --features jwt --lib client::oauth && cargo build --features jwt --example everything && cargo test --features jwt --test tests verify::'
# The endpoint mounted in a program's own tiny_http server (feature
# `tiny_http`): clippy, its example built as a program (the tests run it),
# and the authoring tests, which include the tiny_http ones.
step tiny-http bash -c \
    'cargo clippy --all-targets --features tiny_http -- -D warnings && cargo build --features tiny_http --examples && cargo test --features tiny_http --test tests authoring::'
# Tool schemas generated from types (feature `schemars`): clippy, the
# authoring tests with it, its unit tests and its doc examples.
step schemars bash -c \
    'cargo clippy --all-targets --features schemars -- -D warnings && cargo test --features schemars --lib --test tests authoring:: && cargo test --features schemars --lib protocol::schema:: && cargo test --features schemars --doc protocol/schema.rs'
# The `mcp` command (cli/, package tiny-mcp-cli): clippy with and without
# https://, its own tests, and `cargo install --path cli` as the README
# says (a debug build into target/install, reusing this tree's build);
# the integration tests run the binary (tests/client/bridge.rs, mcp_cli.rs).
step cli bash -c \
    'cargo clippy -p tiny-mcp-cli --all-targets -- -D warnings && cargo clippy -p tiny-mcp-cli --all-targets --features tls -- -D warnings && cargo test -p tiny-mcp-cli && CARGO_TARGET_DIR=target cargo install --quiet --debug --locked --force --path cli --root target/install && target/install/bin/mcp --help | grep -q "mcp bridge"'
# One `tracing` span per request (feature `tracing`): clippy and its test;
# then the feature `opentelemetry` (Rust 1.75): clippy, the traceparent
# unit test, and tests/otel (a crate of its own: opentelemetry_sdk's
# in-memory exporter sees the client's trace continue).
step tracing bash -c \
    'cargo clippy --all-targets --features tracing -- -D warnings && cargo test --features tracing --test tests tracing_span::'
step opentelemetry bash -c \
    'cargo clippy --all-targets --features opentelemetry -- -D warnings && cargo test --features opentelemetry --lib trace_parent && cargo test --manifest-path tests/otel/Cargo.toml'
scratch tests/otel/target
# Feature `redis` (Rust 1.88): clippy, and `RedisChangeBus` against Debian's
# redis-server started by the tests themselves (installed here when
# missing; the tests fail, not skip, without it).
step redis bash -c \
    '. scripts/check/lib/footprint.sh; command -v redis-server >/dev/null || apt_install $APT_REDIS; cargo clippy --all-targets --features redis -- -D warnings && cargo test --features redis --test tests redis && cargo test --features redis --bench redis && cargo test --features redis --doc -- Redis'
step doctest cargo test --doc
step doc env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
step code-size python3 scripts/check/code-size.py
if [ "$QUICK" = 0 ]; then
    step interop-stdio bash scripts/interop/interop-ts.sh --stdio
    step interop-http bash scripts/interop/interop-ts.sh --http
    step interop-apps bash scripts/interop/interop-apps.sh
    step interop-python bash scripts/interop/interop-python.sh
    # The examples built for wasm32-wasip1 and -wasip2 under Wasmtime (PyPI),
    # driven by the Python SDK client in both eras; prints sizes and start-up
    # times (issue 31; about 3 min cold, most of it the release builds).
    step interop-wasi bash scripts/interop/interop-wasi.sh
    scratch tests/interop/wasi/node_modules
    # The metrics path after a known workload, read with the official
    # Prometheus text parser in the same virtualenv (a few seconds).
    step metrics-scrape bash scripts/interop/metrics-scrape.sh
    # `mcp serve` in front of the TypeScript server-everything, driven by the
    # Python SDK client (about 7 s once npm and the virtualenv are in place).
    step interop-serve bash scripts/interop/interop-serve.sh
    step interop-oauth bash scripts/interop/interop-oauth.sh
    # The Python SDK client through a full login against an OIDC-shaped issuer
    # that signs RS256 JWT access tokens, the server verifying them with
    # `JwtVerifier` (`everything --features jwt --jwks-url`), both eras.
    step interop-jwt bash scripts/interop/interop-oauth.sh --jwt
    scratch "${INTEROP_PY_SDIST:-/tmp/tiny-mcp-mcp-sdist}"
    step interop-bridge bash scripts/interop/interop-bridge.sh
    step interop-client bash scripts/interop/interop-client.sh
    scratch "${INTEROP_RMCP_TARGET:-/tmp/tiny-mcp-interop-rmcp-target}"
    # The `apps` example's view rendered and clicked in Chromium (about
    # 6 s once chromium and the npm package are installed).
    step apps-browser bash scripts/interop/apps-browser.sh
    step multi-instance bash scripts/check/multi-instance.sh
    # The 10,000-connection measurement (docs/perf.md, section 20), at 200:
    # every stream must get one notify_changed.
    step connections bash -c \
        "cargo build --release --example everything && python3 scripts/measure/ten-thousand.py --n 200"
    step conformance bash scripts/check/conformance-run.sh
    step conformance-client bash scripts/check/conformance-client.sh
    step msrv bash scripts/check/msrv-check.sh
    scratch target/msrv
    # `cargo check` for Windows (MSVC, GNU), macOS (aarch64) and Linux
    # aarch64: the library, its examples and `mcp` build there (nothing
    # runs; the script removes target/platforms itself under CI).
    step platforms bash scripts/check/platforms-check.sh
    scratch target/platforms
    step min-versions bash scripts/check/min-versions-check.sh
    scratch target/min-versions
    step debian-crates bash scripts/check/debian-crates-check.sh
    scratch target/debian
    step static-binary bash scripts/check/static-check.sh
    scratch target/static-check
    step fuzz bash scripts/check/fuzz-check.sh
    scratch fuzz/target
fi

echo
footprint_report "$STARTED"
[ "$failed" -gt 0 ] && echo "failed steps: ${failures[*]}"
echo "steps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
