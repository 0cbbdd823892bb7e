# What the Python SDK interop scripts share. Sourced by interop-python.sh,
# interop-oauth.sh, interop-client.sh, ../check/multi-instance.sh and
# ../measure/bench-client.sh.
#
# Reads: ROOT, PY_DIR, VENV, STAMP, PYTHON, TAG (message prefix), and
# EVERYTHING_BIN (optional); PY_DIR, VENV, STAMP and PYTHON default to
# tests/interop/python, its .venv, the stamp in it, and $INTEROP_PYTHON
# (else python3). ensure_venv makes the virtualenv; example_bin
# sets BIN; stop_pid stops and reaps one process; free_port prints a free
# loopback port; wait_http waits for a process to answer HTTP;
# start_everything starts BIN over HTTP (sets SERVER_PID and URL) and
# start_as the test authorization server (sets AS_PID and AS_URL);
# run_counted runs a client and adds its `N passed, M failed` to
# total_passed and total_failed (reads OUT and RUN_TIMEOUT).

PY_DIR=${PY_DIR:-$ROOT/tests/interop/python}
VENV=${VENV:-$PY_DIR/.venv}
STAMP=${STAMP:-$VENV/.interop-stamp}
PYTHON=${PYTHON:-${INTEROP_PYTHON:-python3}}

# The virtualenv: made or refreshed only when its stamp (Python version and
# requirements.txt) is missing or stale.
ensure_venv() {
  command -v "$PYTHON" >/dev/null || { echo "$TAG: $PYTHON is not installed" >&2; return 1; }
  local want_stamp
  want_stamp=$(
    {
      "$PYTHON" -c 'import sys; print(sys.version)'
      cat "$PY_DIR/requirements.txt"
    } | sha256sum | cut -d' ' -f1
  )
  if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want_stamp" ]] &&
    "$VENV/bin/python" -c 'import mcp.client' 2>/dev/null; then
    echo "$TAG: virtualenv up to date" >&2
  else
    echo "$TAG: making the virtualenv (python3 -m venv; pip install -r requirements.txt)" >&2
    rm -f "$STAMP"
    "$PYTHON" -m venv --clear "$VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
      -r "$PY_DIR/requirements.txt" >&2
    echo "$want_stamp" >"$STAMP"
  fi
  "$VENV/bin/python" -c 'import importlib.metadata as m, sys; print(sys.argv[1] + ": mcp", m.version("mcp"))' "$TAG" >&2
}

# The server binary: EVERYTHING_BIN, or the example built now.
example_bin() {
  if [[ -n "${EVERYTHING_BIN:-}" ]]; then
    BIN=$EVERYTHING_BIN
  else
    (cd "$ROOT" && cargo build --example everything >&2)
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/everything
  fi
  [[ -x "$BIN" ]] || { echo "$TAG: server binary not found or not executable: $BIN" >&2; return 1; }
}

# Stops process $1: TERM, up to 5 s, then KILL; reaps it.
stop_pid() {
  local pid=$1
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits (bounded: 10 s) until process $1 answers an HTTP GET of $2 with status $3
# (or with any status when $3 is "any"); fails if the process exits first.
wait_http() {
  local pid=$1 url=$2 want=$3 what=$4
  for _ in $(seq 1 100); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$TAG: $what exited before it was ready" >&2
      return 1
    fi
    if "$PYTHON" - "$url" "$want" 2>/dev/null <<'EOF'; then
import sys, urllib.error, urllib.request
url, want = sys.argv[1], sys.argv[2]
try:
    status = urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=1).status
except urllib.error.HTTPError as e:
    status = e.code  # any HTTP status is an answer
sys.exit(0 if want == "any" or str(status) == want else 1)
EOF
      return 0
    fi
    sleep 0.1
  done
  echo "$TAG: $what did not answer on $url within 10 s" >&2
  return 1
}

# Starts $BIN --http on a free loopback port with the options $@; sets
# SERVER_PID and URL (http://127.0.0.1:PORT/mcp).
start_everything() {
  local port
  port=$(free_port)
  URL="http://127.0.0.1:$port/mcp"
  "$BIN" --http "127.0.0.1:$port" "$@" &
  SERVER_PID=$!
  wait_http "$SERVER_PID" "$URL" any "server"
}

# Starts the test authorization server (tests/interop/python/oauth.py
# serve-as) on a free loopback port, with extra serve-as flags $@ (--jwt);
# sets AS_PID and AS_URL.
start_as() {
  local port
  port=$(free_port)
  AS_URL="http://127.0.0.1:$port"
  "$VENV/bin/python" "$PY_DIR/oauth.py" serve-as --port "$port" "$@" &
  AS_PID=$!
  wait_http "$AS_PID" "$AS_URL/.well-known/oauth-authorization-server" 200 "authorization server"
}

# Runs one client command ($3...) under a timeout and adds its summary to the totals;
# $1 labels the run, $2 names the program in failure messages.
run_counted() {
  local label=$1 what=$2
  shift 2
  echo "$TAG: --- $label ---" >&2
  set +e
  timeout -k 5 $((RUN_TIMEOUT + 30)) "$@" | tee "$OUT"
  local rc=${PIPESTATUS[0]}
  set -e
  local last
  last=$(tail -n 1 "$OUT")
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
    if [[ "$rc" != 0 && "${BASH_REMATCH[2]}" == 0 ]]; then
      echo "FAIL $label: $what exited with status $rc"
      total_failed=$((total_failed + 1))
    fi
  else
    echo "FAIL $label: $what exited with status $rc without a summary"
    total_failed=$((total_failed + 1))
  fi
}
