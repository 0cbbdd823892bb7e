# The servers of scripts/interop/interop-client.sh: their installs, command lines
# and driver profiles. Sourced by interop-client.sh after python-interop.sh
# and npm-deps.sh.
#
# Reads: ROOT, INTEROP, PYTHON, TAG, RUNS (through `needs`), RMCP_TARGET,
# INSTALL_TIMEOUT, WORK (a temporary directory), and fail_run. install_all
# installs what the chosen runs need and records which servers are ready;
# `ready SERVER` tells; `profile SERVER` prints the driver's profile;
# server_argv sets SERVER_ARGV; quoted_argv prints it as --stdio and
# --serve take it.

NPM_SERVERS=$INTEROP/npm-servers/node_modules/@modelcontextprotocol
RMCP_BIN=$RMCP_TARGET/debug/rmcp-interop-server
ready_list=" "

# Makes or refreshes the virtualenv of tests/interop/$1 (a child shell, so
# that `timeout` bounds it).
install_venv() {
  local dir=$INTEROP/$1
  PY_DIR=$dir VENV=$dir/.venv STAMP=$dir/.venv/.interop-stamp ROOT=$ROOT PYTHON=$PYTHON TAG=$TAG \
    timeout -k 5 "$INSTALL_TIMEOUT" bash -c \
    'set -euo pipefail; source "$ROOT/scripts/interop/lib/python-interop.sh"; ensure_venv'
}

# `npm ci` in tests/interop/$1 unless node_modules matches the lock.
install_npm() {
  local dir=$INTEROP/$1
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "$TAG: node or npm is not installed" >&2
    return 1
  fi
  if TS_DIR=$dir deps_up_to_date; then
    echo "$TAG: npm dependencies of $1 up to date" >&2
    return 0
  fi
  echo "$TAG: installing the npm dependencies of $1 (npm ci)" >&2
  (cd "$dir" && timeout -k 5 "$INSTALL_TIMEOUT" npm ci --no-audit --no-fund --prefer-offline >&2)
}

# The rmcp server, built (debug: quicker to build than release; no
# incremental data unless CARGO_INCREMENTAL says so) into RMCP_TARGET; cargo
# skips an up-to-date build when the folder is kept (test-all.sh removes it
# after its step unless TINY_MCP_KEEP_SCRATCH=1).
install_rmcp() {
  echo "$TAG: building the rmcp server into $RMCP_TARGET" >&2
  CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0} CARGO_TARGET_DIR=$RMCP_TARGET timeout -k 5 "$INSTALL_TIMEOUT" \
    cargo build --locked --quiet --manifest-path "$INTEROP/rmcp/Cargo.toml" >&2 &&
    [[ -x "$RMCP_BIN" ]]
}

# Runs install step $2 (with argument $3) for the servers $1 (space-separated)
# when a chosen run needs one of them.
install_for() {
  local servers=$1 step=$2 arg=${3:-} server wanted=0
  for server in $servers; do
    needs "$server" && wanted=1
  done
  [[ "$wanted" == 1 ]] || return 0
  if "$step" $arg; then
    ready_list+="$servers "
  else
    fail_run "install" "$step $arg failed (needed by: $servers)"
  fi
}

install_all() {
  install_for "python python-stateless" install_venv python
  install_for fastmcp install_venv fastmcp
  install_for ts install_npm ts
  install_for "everything filesystem memory" install_npm npm-servers
  install_for rmcp install_rmcp
  mkdir -p "$WORK/files"
  echo "hello from the filesystem" >"$WORK/files/hello.txt"
}

ready() { [[ "$ready_list" == *" $1 "* ]]; }

profile() {
  case "$1" in
    python | ts) echo fixture ;;
    python-stateless) echo stateless ;;
    rmcp | fastmcp) echo core ;;
    *) echo "$1" ;;
  esac
}

# Sets SERVER_ARGV to server $1's command line for transport $2 (stdio,
# http or sse), on port $3 for http and sse.
server_argv() {
  local server=$1 transport=$2 port=${3:-}
  local how=(--stdio)
  [[ "$transport" == stdio ]] || how=(--http "$port")
  case "$server" in
    python) SERVER_ARGV=("$INTEROP/python/.venv/bin/python" "$INTEROP/python/server.py" "${how[@]}") ;;
    python-stateless)
      SERVER_ARGV=("$INTEROP/python/.venv/bin/python" "$INTEROP/python/server.py" "${how[@]}" --stateless) ;;
    ts) SERVER_ARGV=(node "$INTEROP/ts/server.mjs" "${how[@]}") ;;
    fastmcp) SERVER_ARGV=("$INTEROP/fastmcp/.venv/bin/python" "$INTEROP/fastmcp/server.py" "${how[@]}") ;;
    rmcp) SERVER_ARGV=("$RMCP_BIN" "${how[@]}") ;;
    everything)
      case "$transport" in
        stdio) SERVER_ARGV=(node "$NPM_SERVERS/server-everything/dist/index.js" stdio) ;;
        http) SERVER_ARGV=(env "PORT=$port" node "$NPM_SERVERS/server-everything/dist/index.js" streamableHttp) ;;
        sse) SERVER_ARGV=(env "PORT=$port" node "$NPM_SERVERS/server-everything/dist/index.js" sse) ;;
      esac ;;
    filesystem) SERVER_ARGV=(node "$NPM_SERVERS/server-filesystem/dist/index.js" "$WORK/files") ;;
    memory)
      SERVER_ARGV=(env "MEMORY_FILE_PATH=$WORK/memory-$RANDOM.jsonl" node "$NPM_SERVERS/server-memory/dist/index.js") ;;
  esac
}

# SERVER_ARGV as one line: each word in single quotes.
quoted_argv() {
  local word line=
  for word in "${SERVER_ARGV[@]}"; do
    line+="'${word//\'/}' "
  done
  echo "$line"
}
