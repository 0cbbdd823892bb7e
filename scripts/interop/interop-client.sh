#!/usr/bin/env bash
# Interop test of our blocking client (tiny_mcp::Client, driven by
# tests/fixtures/interop_client/) against servers nobody here wrote. Each run is
# SERVER/TRANSPORT[/ERA]; the driver's --profile decides the checks, as what
# each server offers allows:
#
#   server            transports       what it is; checks (profile)
#   python            stdio http       Python SDK MCPServer (mcp, tests/interop/python);
#                                      fixture: tools, isError, x-mcp-header, progress,
#                                      elicitation, sampling, resource, prompt, ping
#   ts                stdio http       TypeScript SDK McpServer (tests/interop/ts); fixture
#   python-stateless  http             the Python server with stateless_http=True,
#                                      json_response=True; stateless: no session, tools,
#                                      x-mcp-header, elicitation + sampling on 2026-07-28
#                                      only (input_required; 2025-11-25 has no stream for
#                                      them), no progress (no stream), resource, prompt
#   everything        stdio http sse   @modelcontextprotocol/server-everything
#                                      (tests/interop/npm-servers); everything: echo,
#                                      get-sum, isError on invalid arguments, progress and
#                                      cancellation (trigger-long-running-operation),
#                                      sampling, elicitation, resources (list, read a
#                                      template), prompts, ping. `sse` is its old
#                                      HTTP+SSE mode (2024-11-05), reached through the
#                                      client's fallback to that transport
#   rmcp              stdio http       the official Rust SDK (tests/interop/rmcp); core:
#                                      tools, isError, progress, cancellation seen by the
#                                      server's handler, resource, prompt, ping
#   fastmcp           stdio http       FastMCP (PyPI fastmcp, tests/interop/fastmcp); core
#   filesystem        stdio            @modelcontextprotocol/server-filesystem on a
#                                      temporary directory: list_directory,
#                                      read_text_file, a path outside refused; no
#                                      resources, prompts, progress or cancellation
#   memory            stdio            @modelcontextprotocol/server-memory (a temporary
#                                      MEMORY_FILE_PATH): create_entities, read_graph,
#                                      search_nodes; no resources, prompts, progress
#
# Every HTTP run (not sse) also checks `session expiry`: the driver starts
# the server itself, stops it mid-session, starts it again on the same port,
# and the next call must succeed. HTTP runs use the client's default
# negotiation (2026-07-28 first, 2025-11-25 when the server does not serve
# it); against servers that serve both eras (python, python-stateless,
# rmcp, fastmcp) 2025-11-25 is pinned in a second run (sessions exist only
# there).
#
# Usage: scripts/interop/interop-client.sh [--only SERVER[/TRANSPORT]]... [--python | --ts] [--stdio | --http | --sse]
#   --only SERVER[/TRANSPORT]  only that server (and transport); repeatable;
#                              e.g. --only everything/sse, --only rmcp
#   --python / --ts            only that SDK's server (same as --only)
#   --stdio / --http / --sse   only that transport (default: every one)
#   --list                     print the runs it would make, and exit
# Environment:
#   INTEROP_PYTHON       the Python used to make the virtualenvs (default: python3)
#   INTEROP_TIMEOUT      overall timeout of one driver run, in seconds (default 120)
#   INTEROP_RMCP_TARGET  cargo target directory of the rmcp server (default
#                        /tmp/tiny-mcp-interop-rmcp-target, kept for the next run;
#                        test-all.sh removes it after its step unless
#                        TINY_MCP_KEEP_SCRATCH=1)
#
# Installs only what the chosen runs need, each bounded and skipped when
# up to date: the virtualenvs in tests/interop/python/.venv and
# tests/interop/fastmcp/.venv, `npm ci` in tests/interop/ts and
# tests/interop/npm-servers when node_modules does not match the lock, the
# rmcp server (`cargo build --locked`, debug); builds the example; prints one
# `ok`/`FAIL` line per check (labelled with the run), `note` lines, and,
# last, the combined `N passed, M failed`; exits 1 if any check or run
# failed. Every wait is bounded; every process it starts is stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
INTEROP=$ROOT/tests/interop
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-120}
RMCP_TARGET=${INTEROP_RMCP_TARGET:-/tmp/tiny-mcp-interop-rmcp-target}
INSTALL_TIMEOUT=900
TAG=interop-client

# The runs: server, transport, eras ("default" = the client's negotiation).
ALL_RUNS=(
  "python stdio default"
  "python http default,2025-11-25"
  "ts stdio default"
  "ts http default"
  "python-stateless http default,2025-11-25"
  "everything stdio default"
  "everything http default"
  "everything sse default"
  "rmcp stdio default"
  "rmcp http default,2025-11-25"
  "fastmcp stdio default"
  "fastmcp http default,2025-11-25"
  "filesystem stdio default"
  "memory stdio default"
)

only=()
transports=()
list=0
usage() {
  echo "usage: $0 [--only SERVER[/TRANSPORT]]... [--python | --ts] [--stdio | --http | --sse] [--list]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --only) [[ $# -ge 2 ]] || usage; only+=("$2"); shift ;;
    --python) only+=(python) ;;
    --ts) only+=(ts) ;;
    --stdio) transports+=(stdio) ;;
    --http) transports+=(http) ;;
    --sse) transports+=(sse) ;;
    --list) list=1 ;;
    -h | --help) sed -n '2,64p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
  esac
  shift
done

# `true` when the run (server $1, transport $2) is chosen.
chosen() {
  local server=$1 transport=$2 want
  if [[ ${#transports[@]} -gt 0 && " ${transports[*]} " != *" $transport "* ]]; then
    return 1
  fi
  [[ ${#only[@]} -gt 0 ]] || return 0
  for want in "${only[@]}"; do
    [[ "$want" == "$server" || "$want" == "$server/$transport" ]] && return 0
  done
  return 1
}

RUNS=()
for run in "${ALL_RUNS[@]}"; do
  read -r server transport _ <<<"$run"
  chosen "$server" "$transport" && RUNS+=("$run")
done
if [[ ${#RUNS[@]} -eq 0 ]]; then
  echo "$TAG: no run matches (servers: python ts python-stateless everything rmcp fastmcp filesystem memory)" >&2
  exit 2
fi
if [[ "$list" == 1 ]]; then
  printf '%s\n' "${RUNS[@]}"
  exit 0
fi
# `true` when a chosen run uses server $1.
needs() { [[ " ${RUNS[*]} " == *" $1 "* ]]; }

# shellcheck source=lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/interop/lib/npm-deps.sh"
# shellcheck source=lib/interop-servers.sh
source "$ROOT/scripts/interop/lib/interop-servers.sh"

# --- what this script starts, stopped on exit ---
DRIVER_PID=
OUT=$(mktemp)
WORK=$(mktemp -d)
cleanup() {
  stop_pid "$DRIVER_PID"
  rm -rf "$OUT" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

total_passed=0
total_failed=0
notes=()
fail_run() {
  echo "FAIL $1: $2"
  total_failed=$((total_failed + 1))
}

install_all

DRIVER=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/interop_client
if ! (cd "$ROOT" && timeout -k 5 "$INSTALL_TIMEOUT" cargo build --example interop_client >&2) ||
  [[ ! -x "$DRIVER" ]]; then
  fail_run build "cargo build --example interop_client"
  echo "$total_passed passed, $total_failed failed"
  exit 1
fi

# Runs the driver (arguments $2...) under a timeout, labels its lines with $1,
# and adds its summary to the totals.
run_driver() {
  local label=$1
  shift
  echo "$TAG: --- $label ---" >&2
  local start=$SECONDS
  # In the background, so that an INT or TERM reaches the EXIT trap, which
  # stops it (timeout passes the signal on to the driver and its children,
  # the servers it started among them). TMPDIR: the driver's server log
  # goes to WORK, which the EXIT trap removes even if the driver was killed.
  TMPDIR=$WORK timeout -k 5 "$RUN_TIMEOUT" "$DRIVER" "$@" >"$OUT" &
  DRIVER_PID=$!
  local rc=0
  wait "$DRIVER_PID" || rc=$?
  DRIVER_PID=
  local line last
  while IFS= read -r line; do
    case "$line" in
      "ok "*) echo "ok $label: ${line#ok }" ;;
      "FAIL "*) echo "FAIL $label: ${line#FAIL }" ;;
      "note era: "*) echo "note $label: era ${line#note era: }"; notes+=("$label: era ${line#note era: }") ;;
      "note "*) echo "note $label: ${line#note }" ;;
      *) echo "$line" ;;
    esac
  done < <(grep -Ev '^[0-9]+ passed, [0-9]+ failed$' "$OUT")
  last=$(tail -n 1 "$OUT")
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    echo "note $label: $last in this run ($((SECONDS - start)) s)"
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
    if [[ "$rc" != 0 && "${BASH_REMATCH[2]}" == 0 ]]; then
      fail_run "$label" "the driver exited with status $rc"
    fi
  else
    fail_run "$label" "the driver exited with status $rc without a summary"
  fi
}

# One server and transport, once per era in $3 (comma-separated).
run_one() {
  local server=$1 transport=$2 era
  IFS=, read -r -a eras <<<"$3"
  if ! ready "$server"; then
    fail_run "$server/$transport" "not run: its install failed (above)"
    return
  fi
  for era in "${eras[@]}"; do
    local label="$server/$transport" flags=(--profile "$(profile "$server")")
    if [[ "$era" != default ]]; then
      label="$label/$era"
      flags+=(--era "$era")
    fi
    [[ "$server" == filesystem ]] && flags+=(--dir "$WORK/files")
    if [[ "$transport" == stdio ]]; then
      server_argv "$server" stdio
      run_driver "$label" "${flags[@]}" --stdio "$(quoted_argv)"
    else
      local port path=/mcp
      port=$(free_port)
      server_argv "$server" "$transport" "$port"
      if [[ "$transport" == sse ]]; then
        path=/sse
        flags+=(--no-expiry)
      fi
      run_driver "$label" "${flags[@]}" --serve "$(quoted_argv)" --http "http://127.0.0.1:$port$path"
    fi
  done
}

for run in "${RUNS[@]}"; do
  read -r server transport eras <<<"$run"
  run_one "$server" "$transport" "$eras"
done

for note in "${notes[@]}"; do
  echo "note $note"
done
echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
