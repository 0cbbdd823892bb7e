# The runs of interop-oauth.sh with this crate's own OAuth client: the
# oauth_client fixture (tests/fixtures/oauth_client) against `everything`
# with the repo's authorization server and against the Python SDK's
# `simple-auth` example, and `mcp login` (cli/) with
# headless-browser.py as its BROWSER. Sourced by interop-oauth.sh.
#
# Reads: ROOT, VENV, PY_DIR, PYTHON, TAG, BIN, AS_URL, RUN_TIMEOUT, OUT,
# modes, and start_server/stop_server of the caller (they set URL and
# SERVER_PID); WORK, a scratch directory the caller removes. Sets
# OAUTH_CLIENT, MCP_BIN, SA_AS_PID, SA_RS_PID (stopped by stop_simple_auth).

# The mcp version pinned in requirements.txt: the sdist of the same
# version holds the examples (the wheel does not).
SDIST_DIR=${INTEROP_PY_SDIST:-/tmp/tiny-mcp-mcp-sdist}
SA_AS_PID=
SA_RS_PID=

era_of() { [[ "$1" == v2025 ]] && echo 2025-11-25 || echo 2026-07-28; }

# Builds the driver and the CLI (cargo is a no-op when they are fresh).
rust_bins() {
  (cd "$ROOT" && cargo build --example oauth_client -p tiny-mcp --bin mcp -p tiny-mcp-cli >&2)
  local dir=${CARGO_TARGET_DIR:-$ROOT/target}/debug
  OAUTH_CLIENT=$dir/examples/oauth_client
  MCP_BIN=${MCP_BIN:-$dir/mcp}
}

# One oauth_client run, counted; $1 labels it, the rest are its options.
run_rust() {
  local label=$1
  shift
  run_counted "$label" oauth_client "$OAUTH_CLIENT" --timeout 20 "$@"
}

# (a) everything + the repo's authorization server (refresh tokens,
# /revoke, mcp:admin step-up): a fresh server per era, then login,
# step-up, refresh, and a second process reusing the token file.
run_rust_everything() {
  local mode label era
  for mode in "${modes[@]}"; do
    label="oauth/rust/everything/$mode"
    era=$(era_of "$mode")
    if ! start_server; then
      echo "FAIL $label: server start"
      total_failed=$((total_failed + 1))
      stop_server
      continue
    fi
    run_rust "$label" --url "$URL" --era "$era" --store "$WORK/everything-$mode.json" \
      --checks login,step-up,refresh
    run_rust "$label/reuse" --url "$URL" --era "$era" --store "$WORK/everything-$mode.json" \
      --checks reuse
    stop_server
  done
}

# The simple-auth example from the mcp sdist, downloaded once into
# SDIST_DIR (pip download: only the package index is needed). Sets SA_DIR.
ensure_simple_auth() {
  local version
  version=$(sed -n 's/^mcp==//p' "$PY_DIR/requirements.txt")
  SA_DIR=$SDIST_DIR/mcp-$version/examples/servers/simple-auth
  [[ -d "$SA_DIR/mcp_simple_auth" ]] && return 0
  echo "$TAG: downloading the mcp $version sdist for examples/servers/simple-auth" >&2
  mkdir -p "$SDIST_DIR"
  "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary :all: "mcp==$version" -d "$SDIST_DIR" >&2 &&
    tar xzf "$SDIST_DIR/mcp-$version.tar.gz" -C "$SDIST_DIR" &&
    [[ -d "$SA_DIR/mcp_simple_auth" ]]
}

# Starts simple-auth's authorization server and resource server (both
# bind localhost; the resource is http://localhost:P/mcp). Sets SA_URL.
start_simple_auth() {
  local as_port rs_port
  as_port=$(free_port)
  rs_port=$(free_port)
  PYTHONPATH=$SA_DIR "$VENV/bin/python" -m mcp_simple_auth.auth_server --port "$as_port" \
    >"$WORK/simple-auth-as.log" 2>&1 &
  SA_AS_PID=$!
  wait_http "$SA_AS_PID" "http://localhost:$as_port/.well-known/oauth-authorization-server" 200 \
    "simple-auth authorization server" || return 1
  PYTHONPATH=$SA_DIR "$VENV/bin/python" -m mcp_simple_auth.server --port "$rs_port" \
    --auth-server "http://localhost:$as_port" --transport streamable-http \
    >"$WORK/simple-auth-rs.log" 2>&1 &
  SA_RS_PID=$!
  SA_URL="http://localhost:$rs_port/mcp"
  wait_http "$SA_RS_PID" "$SA_URL" any "simple-auth resource server"
}

stop_simple_auth() {
  stop_pid "$SA_RS_PID"
  SA_RS_PID=
  stop_pid "$SA_AS_PID"
  SA_AS_PID=
}

# (b) the Python SDK's simple-auth example (a login form, no iss, an
# issuer with a trailing slash, a 401 without scope, no refresh tokens,
# no per-tool scopes): one server pair, login then reuse in each era.
run_rust_simple_auth() {
  local mode label era
  if ! ensure_simple_auth; then
    echo "FAIL oauth/rust/simple-auth: cannot get examples/servers/simple-auth from the mcp sdist"
    total_failed=$((total_failed + 1))
    return 0
  fi
  if ! start_simple_auth; then
    echo "FAIL oauth/rust/simple-auth: server start"
    cat "$WORK"/simple-auth-*.log >&2 || true
    total_failed=$((total_failed + 1))
    stop_simple_auth
    return 0
  fi
  for mode in "${modes[@]}"; do
    label="oauth/rust/simple-auth/$mode"
    era=$(era_of "$mode")
    run_rust "$label" --url "$SA_URL" --era "$era" --store "$WORK/simple-auth-$mode.json" \
      --checks login
    run_rust "$label/reuse" --url "$SA_URL" --era "$era" --store "$WORK/simple-auth-$mode.json" \
      --checks reuse
  done
  stop_simple_auth
}

# `mcp login URL` with headless-browser.py as BROWSER, against a fresh
# everything: the CLI prints the authorization URL, runs $BROWSER, and
# takes the redirect on its loopback listener. Skipped while the CLI has
# no login command. HOME and XDG_CONFIG_HOME point into WORK, so that
# whatever the CLI keeps stays there.
run_cli_login() {
  local label=oauth/cli/login visited=$WORK/browser.log rc=0
  if ! { "$MCP_BIN" --help 2>&1 || true; } | grep -qw login; then
    echo "note $label skipped: mcp has no login command"
    return 0
  fi
  if ! start_server; then
    echo "FAIL $label: server start"
    total_failed=$((total_failed + 1))
    stop_server
    return 0
  fi
  echo "$TAG: --- $label ---" >&2
  HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config HEADLESS_BROWSER_LOG=$visited \
    BROWSER=$ROOT/scripts/interop/lib/headless-browser.py \
    timeout -k 5 "$RUN_TIMEOUT" "$MCP_BIN" login "$URL" </dev/null >"$OUT" 2>&1 || rc=$?
  stop_server
  if [[ "$rc" == 0 ]] && grep -q '^http://127\.0\.0\.1:[0-9]*/callback?' "$visited" 2>/dev/null; then
    echo "ok $label"
    total_passed=$((total_passed + 1))
  else
    echo "FAIL $label: mcp login exited with status $rc; the browser visited: $(tr '\n' ' ' <"$visited" 2>/dev/null)"
    sed 's/^/  mcp: /' "$OUT"
    total_failed=$((total_failed + 1))
  fi
}
