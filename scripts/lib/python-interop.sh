# What the Python SDK interop scripts share. Sourced by interop-python.sh and
# interop-oauth.sh.
#
# Reads: ROOT, PY_DIR, VENV, STAMP, PYTHON, TAG (message prefix), and
# EVERYTHING_BIN (optional). ensure_venv makes the virtualenv; example_bin
# sets BIN; stop_pid stops and reaps one process.

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
