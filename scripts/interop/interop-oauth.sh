#!/usr/bin/env bash
# OAuth interop test: the official MCP Python SDK client (mcp 2.3.0 from PyPI, pinned in
# tests/interop/python/requirements.txt) and the official TypeScript SDK client
# (@modelcontextprotocol/sdk 1.32.2, pinned in tests/interop/ts/package.json) authenticate
# with OAuth 2.1 against our `everything` example server and call tools over Streamable HTTP;
# and this crate's own client (tests/fixtures/oauth_client) logs in to `everything` and to
# the Python SDK's `simple-auth` example (its login form), as does `mcp login`.
#
# Usage: scripts/interop/interop-oauth.sh [--python] [--ts] [--rust] [--jwt] [--v2025 | --v2026]
#   --python    the Python client (both modes, or the one named)
#   --ts        the TypeScript client (tests/interop/ts/oauth.mjs; 2025-11-25 only)
#   --rust      this crate's client (both eras, or the one named) and `mcp login`
#   --jwt       the Python client against `everything` built with the `jwt` feature and
#               started with --jwks-url AS/jwks: the authorization server (`serve-as --jwt`)
#               issues RS256 JWT access tokens, as a hosted identity provider does, and the
#               server checks them with `JwtVerifier` (both eras, or the one named; labels
#               oauth/jwt/MODE). Only with the flag: it needs its own build of the server.
#   --v2025     only the 2025-11-25 mode (initialize handshake, session)
#   --v2026     only the 2026-07-28 mode (server/discover); --default is an alias
# Client flags add up. Without a client or mode flag every client runs (a mode flag alone:
# the Python and Rust clients); without a mode flag both modes run.
# Environment:
#   EVERYTHING_BIN   use this server binary instead of building the example
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of one client run, in seconds (default 180)
#   INTEROP_PY_SDIST where the mcp sdist (for examples/servers/simple-auth) is downloaded
#                    and kept (default /tmp/tiny-mcp-mcp-sdist)
#   MCP_BIN          use this `mcp` CLI instead of building cli/ (package tiny-mcp-cli)
#
# First `oauth.py selftest` exercises the test authorization server on its own. Then the
# authorization server (`oauth.py serve-as`, the SDK's authorization-server routes with an
# approve-everything provider, RFC 7662 introspection and a test-only token mint) runs on
# 127.0.0.1:<free port> for the whole run, and for each mode the server runs as
#   $BIN --http 127.0.0.1:<port> --introspect <AS>/introspect --auth-issuer <AS>
# while `oauth.py check` drives it (see tests/interop/python/oauth.py for the checks);
# then a fresh server runs the same way for `node oauth.mjs URL --as AS` (label oauth/ts,
# see tests/interop/ts/oauth.mjs), which needs node >= 18 (missing: a FAIL line).
#
# The Rust runs (scripts/interop/lib/oauth-rust.sh): for each era a fresh `everything`,
# `oauth_client --checks login,step-up,refresh` then a second process with `--checks reuse`
# on the same token file (labels oauth/rust/everything/MODE[/reuse]); then the Python SDK's
# simple-auth authorization and resource servers (from the mcp sdist, downloaded once with
# `pip download --no-binary :all:`) with `--checks login` and `reuse` in each era (labels
# oauth/rust/simple-auth/MODE[/reuse]); then `mcp login URL` with
# scripts/interop/lib/headless-browser.py as BROWSER (label oauth/cli/login; a `note ...
# skipped` line while the CLI has no login command).
#
# The virtualenv is the one scripts/interop/interop-python.sh uses (tests/interop/python/.venv),
# made or refreshed the same way when missing or stale (the authorization server is
# Python, so it is needed for --ts too); the npm dependencies are the ones
# scripts/interop/interop-ts.sh uses, installed with `npm ci` only when they do not match the lock.
#
# Prints one `ok`/`FAIL` line per check (and `note` lines) and, last, the combined
# `N passed, M failed`; exits 1 if any check or run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-180}

TS_DIR=$ROOT/tests/interop/ts

modes=()
want_python=0
want_ts=0
want_rust=0
want_jwt=0
for arg in "$@"; do
  case "$arg" in
    --v2025) modes+=(v2025) ;;
    --v2026 | --default) modes+=(v2026) ;;
    --python) want_python=1 ;;
    --ts) want_ts=1 ;;
    --rust) want_rust=1 ;;
    --jwt) want_jwt=1 ;;
    -h | --help) sed -n '2,49p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--python] [--ts] [--rust] [--v2025 | --v2026]" >&2; exit 2 ;;
  esac
done
[[ ${#modes[@]} -gt 0 ]] || modes=(v2026 v2025)
if [[ "$want_python" == 0 && "$want_ts" == 0 && "$want_rust" == 0 && "$want_jwt" == 0 ]]; then
  want_python=1
  want_rust=1
  # A mode flag alone names eras: the clients that have both, not the TypeScript one.
  [[ $# -gt 0 ]] || want_ts=1
fi

TAG=interop-oauth
# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/interop/lib/npm-deps.sh"
# shellcheck source=lib/oauth-rust.sh
source "$ROOT/scripts/interop/lib/oauth-rust.sh"
ensure_venv
example_bin
[[ "$want_rust" == 0 ]] || rust_bins

# --- process life cycle (the authorization server and the MCP server) ---
SERVER_PID=
AS_PID=
stop_server() { stop_pid "$SERVER_PID"; SERVER_PID=; }
stop_as() { stop_pid "$AS_PID"; AS_PID=; }
OUT=$(mktemp)
WORK=$(mktemp -d)
cleanup() {
  stop_server
  stop_simple_auth
  stop_as
  rm -rf "$OUT" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Starts the MCP server on a free port, protected by the authorization server (start_as
# of lib/python-interop.sh); sets SERVER_PID and URL.
start_server() { start_everything --introspect "$AS_URL/introspect" --auth-issuer "$AS_URL"; }

# The server that checks JWTs itself (no introspection): `everything` built with the
# `jwt` feature, kept as everything-jwt so that the default build stays as it was.
jwt_example_bin() {
  if [[ -n "${EVERYTHING_JWT_BIN:-}" ]]; then
    JWT_BIN=$EVERYTHING_JWT_BIN
  else
    (cd "$ROOT" && cargo build --example everything --features jwt >&2)
    local dir=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples
    cp "$dir/everything" "$dir/everything-jwt"
    JWT_BIN=$dir/everything-jwt
  fi
}
start_jwt_server() {
  BIN=$JWT_BIN start_everything --jwks-url "$AS_URL/jwks" --auth-issuer "$AS_URL"
}
[[ "$want_jwt" == 0 ]] || jwt_example_bin

total_passed=0
total_failed=0

# Runs one oauth.py command under a timeout and adds its summary to the totals.
run_python() {
  local label=$1
  shift
  run_counted "$label" oauth.py "$VENV/bin/python" "$PY_DIR/oauth.py" "$@" --timeout "$RUN_TIMEOUT"
}

# Checks that node (>= 18) and the npm dependencies are there, installing the latter
# with `npm ci` when they do not match the lock; prints why not and fails otherwise.
ensure_node() {
  if ! command -v node >/dev/null; then
    echo "node is not installed (the TypeScript client needs node >= 18)"
    return 1
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [[ ! "$major" =~ ^[0-9]+$ || "$major" -lt 18 ]]; then
    echo "node $(node --version 2>/dev/null || echo '?') is too old (the TypeScript client needs node >= 18)"
    return 1
  fi
  if deps_up_to_date; then
    echo "$TAG: npm dependencies up to date (node $(node --version))" >&2
    return 0
  fi
  if ! command -v npm >/dev/null; then
    echo "the npm dependencies in $TS_DIR are missing or stale and npm is not installed"
    return 1
  fi
  echo "$TAG: installing npm dependencies (npm ci)" >&2
  if ! (cd "$TS_DIR" && timeout -k 5 300 npm ci --no-audit --no-fund --prefer-offline >&2); then
    echo "npm ci failed in $TS_DIR"
    return 1
  fi
}

# Runs oauth.mjs against a fresh server under a timeout and adds its summary to the totals.
run_ts() {
  local label=oauth/ts why
  if ! why=$(ensure_node); then
    echo "FAIL $label: $why"
    total_failed=$((total_failed + 1))
    return 0
  fi
  if ! start_server; then
    echo "FAIL $label: server start"
    total_failed=$((total_failed + 1))
    stop_server
    return 0
  fi
  run_counted "$label" oauth.mjs node "$TS_DIR/oauth.mjs" "$URL" --as "$AS_URL" --timeout "$RUN_TIMEOUT"
  stop_server
}

# --- runs ---
run_python "authorization server self-test" selftest

as_up=0
as_flags=()
[[ "$want_jwt" == 0 ]] || as_flags+=(--jwt)
if ! start_as "${as_flags[@]}"; then
  echo "FAIL authorization server start"
  total_failed=$((total_failed + 1))
else
  as_up=1
fi
# The Python checks in each mode against a fresh server: $1 labels the runs
# (oauth or oauth/jwt), $2 starts the server, the rest are extra check flags.
run_python_modes() {
  local prefix=$1 start=$2 label mode flags
  shift 2
  for mode in "${modes[@]}"; do
    label="$prefix/$mode"
    flags=("$@")
    [[ "$mode" == v2025 ]] && flags+=(--v2025)
    if ! "$start"; then
      echo "FAIL $label: server start"
      total_failed=$((total_failed + 1))
      stop_server
      continue
    fi
    run_python "$label" check "$URL" --as "$AS_URL" "${flags[@]}"
    stop_server
  done
}
if [[ "$as_up" == 1 && "$want_python" == 1 ]]; then
  run_python_modes oauth start_server
fi
if [[ "$as_up" == 1 && "$want_jwt" == 1 ]]; then
  run_python_modes oauth/jwt start_jwt_server --jwt
fi
if [[ "$as_up" == 1 && "$want_ts" == 1 ]]; then
  run_ts
fi
if [[ "$as_up" == 1 && "$want_rust" == 1 ]]; then
  run_rust_everything
  run_cli_login
fi
stop_as
if [[ "$want_rust" == 1 ]]; then
  run_rust_simple_auth
fi

echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
