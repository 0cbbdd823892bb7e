#!/usr/bin/env bash
# Multi-instance test (issues 10 and 30): three instances of the `everything` example
# behind a real nginx, sharing one sealed requestState key file and one Redis (the crate's
# RedisChangeBus and RedisTaskStore), driven by
# tests/interop/python/multi.py (raw HTTP with httpx2 and the official MCP Python SDK
# client, mcp 2.3.0, pinned in tests/interop/python/requirements.txt).
#
# Usage: scripts/check/multi-instance.sh [--keep-logs] [--hang-probe] [--bench [BENCH OPTIONS]]
#   --keep-logs   keep the temporary folder (configs and logs) and print its path
#   --hang-probe  instead of the checks, measure what a paused (SIGSTOP) instance costs:
#                 pause_probe with 30 calls at once and 30 one by one, each latency printed
#   --bench       instead of the checks, measure: the same deployment from a release
#                 build, then `cargo bench --bench http` drives 2026-07-28 tools/call
#                 at instance a directly and through nginx, alternating, in one run
#                 (`--at direct=… --at nginx=…`); the options after --bench go to it
#                 (default: --clients 16 --runs 5; --no-memory is always given)
# Environment:
#   EVERYTHING_BIN   use this server binary instead of building the example
#                    (it must be built with --features sealed-state,redis)
#   INTEROP_PYTHON   the Python used to make the virtualenv (default: python3)
#   INTEROP_TIMEOUT  overall timeout of the multi.py run, in seconds (default 300)
#
# Needs Debian's nginx and redis-server; when either is missing it is installed with
# `apt-get install -y nginx redis-server` (as root, or with sudo). Neither system
# service is enabled or started: both run here as this script's own processes, with
# their own config files in a temporary folder, on free loopback ports:
#   redis-server  127.0.0.1:<R> (no persistence)
#   instances a, b, c:  $BIN --http 127.0.0.1:<port> --instance X --session-prefix X.
#                       --no-per-peer-shares (every client here is 127.0.0.1, via nginx)
#                       --state-key-file <tmp>/keys --redis redis://127.0.0.1:<R>/
#   nginx         127.0.0.1:<N>, upstream of the three (round-robin, keepalive), routing
#                 Mcp-Session-Id values that start with X. to instance X, in three lanes
#                 (docs/deploy.md): streams 300 s, 2025-11-25 session POSTs 30 s, the
#                 rest SHORT_READ_S (5 s) and retried on another instance
# and multi.py gets the nginx URL, each instance's direct URL, and Redis's port and
# configuration, which its fault checks (faults.py) stop and start again (see their
# docstrings for the checks); then pause_probe stops one instance (SIGSTOP) and checks
# that calls fail over. Everything started here is stopped on exit, also on failure or
# interrupt.
#
# Prints one `ok`/`FAIL` line per check (and `note` lines) and, last, the combined
# `N passed, M failed`; exits 1 if any check or run failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY_DIR=$ROOT/tests/interop/python
VENV=$PY_DIR/.venv
STAMP=$VENV/.interop-stamp
PYTHON=${INTEROP_PYTHON:-python3}
RUN_TIMEOUT=${INTEROP_TIMEOUT:-300}

keep_logs=0
hang=0
bench=0
bench_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep-logs) keep_logs=1 ;;
    --hang-probe) hang=1 ;;
    --bench) bench=1; shift; bench_args=("$@"); break ;;
    -h | --help) sed -n '2,38p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--keep-logs] [--hang-probe] [--bench [BENCH OPTIONS]]" >&2; exit 2 ;;
  esac
  shift
done
[[ ${#bench_args[@]} -gt 0 ]] || bench_args=(--clients 16 --runs 5)

TAG=multi-instance
# nginx's read timeout for requests that are not streams (the "short" lane), in seconds.
SHORT_READ_S=5
# shellcheck source=../interop/lib/python-interop.sh
source "$ROOT/scripts/interop/lib/python-interop.sh"
# shellcheck source=lib/footprint.sh
source "$ROOT/scripts/check/lib/footprint.sh"

# --- nginx and redis-server: Debian's packages, never their services ---
ensure_packages() {
  local missing=()
  command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v redis-cli >/dev/null || missing+=(redis-tools)
  [[ ${#missing[@]} -gt 0 ]] || return 0
  echo "$TAG: installing ${missing[*]} (apt-get install -y $APT_NGINX $APT_REDIS)" >&2
  # shellcheck disable=SC2086
  apt_install $APT_NGINX $APT_REDIS
}
ensure_packages
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

profile=debug
if [[ "$bench" == 1 ]]; then
  profile=release
else
  ensure_venv
fi
if [[ -n "${EVERYTHING_BIN:-}" ]]; then
  BIN=$EVERYTHING_BIN
else
  release=()
  [[ "$profile" == release ]] && release=(--release)
  (cd "$ROOT" && cargo build "${release[@]}" --features sealed-state,redis --example everything >&2)
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/$profile/examples/everything
fi
[[ -x "$BIN" ]] || { echo "$TAG: server binary not found or not executable: $BIN" >&2; exit 1; }

# --- process life cycle ---
TMP=$(mktemp -d /tmp/tiny-mcp-multi.XXXXXX)
NAMES=(a b c)
declare -A PIDS=() PORTS=()
REDIS_PID=
NGINX_PID=
OUT=$TMP/multi.out
cleanup() {
  local name
  for name in "${NAMES[@]}"; do stop_pid "${PIDS[$name]:-}"; done
  stop_pid "$NGINX_PID"
  stop_pid "$REDIS_PID"
  # The fault checks start Redis again themselves: stop whatever answers on its port.
  [[ -z "${REDIS_PORT:-}" ]] || timeout 5 redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  if [[ "$keep_logs" == 1 ]]; then
    echo "$TAG: configs and logs kept in $TMP" >&2
  else
    rm -rf "$TMP"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


# Waits (bounded: 10 s) until redis-server answers PING.
wait_redis() {
  for _ in $(seq 1 100); do
    kill -0 "$REDIS_PID" 2>/dev/null || { echo "$TAG: redis-server exited before it was ready" >&2; return 1; }
    [[ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]] && return 0
    sleep 0.1
  done
  echo "$TAG: redis-server did not answer PING within 10 s" >&2
  return 1
}

start_redis() {
  REDIS_PORT=$(free_port)
  mkdir -p "$TMP/redis"
  cat >"$TMP/redis/redis.conf" <<EOF
bind 127.0.0.1
port $REDIS_PORT
protected-mode yes
daemonize no
save ""
appendonly no
dir $TMP/redis
logfile $TMP/redis/redis.log
EOF
  redis-server "$TMP/redis/redis.conf" &
  REDIS_PID=$!
  wait_redis
}

# The key file every instance reads: newest first (two keys, as during a rotation).
make_keys() {
  {
    echo "# newest first: the first key signs, every key verifies"
    od -An -tx1 -N32 /dev/urandom | tr -d ' \n'
    echo
    od -An -tx1 -N32 /dev/urandom | tr -d ' \n'
    echo
  } >"$TMP/keys"
  chmod 600 "$TMP/keys"
}

start_instance() {
  local name=$1 port
  port=$(free_port)
  PORTS[$name]=$port
  local flags=(--http "127.0.0.1:$port" --instance "$name" --session-prefix "$name."
    --state-key-file "$TMP/keys" --no-per-peer-shares --redis "redis://127.0.0.1:$REDIS_PORT/")
  "$BIN" "${flags[@]}" 2>"$TMP/instance-$name.log" &
  PIDS[$name]=$!
  # multi.py kills one instance: no "Killed" job report from bash for it.
  disown "${PIDS[$name]}"
  wait_http "${PIDS[$name]}" "http://127.0.0.1:$port/mcp" any "instance $name"
}

start_nginx() {
  NGINX_PORT=$(free_port)
  mkdir -p "$TMP/nginx/logs" "$TMP/nginx/temp"
  local user_line=""
  # As root the workers would switch to the distribution's user; keep them ours.
  [[ "$(id -u)" == 0 ]] && user_line="user $(id -un) $(id -gn);"
  {
    cat <<EOF
$user_line
worker_processes 2;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log info;
events { worker_connections 1024; }
http {
    access_log $TMP/nginx/logs/access.log;
    client_body_temp_path $TMP/nginx/temp/body;
    proxy_temp_path $TMP/nginx/temp/proxy;
    fastcgi_temp_path $TMP/nginx/temp/fastcgi;
    uwsgi_temp_path $TMP/nginx/temp/uwsgi;
    scgi_temp_path $TMP/nginx/temp/scgi;

    # Stateless traffic (2026-07-28, and 2025-11-25 initialize): any instance.
    # The zone shares max_fails/fail_timeout between the workers.
    upstream mcp_all {
        zone mcp_all 64k;
        server 127.0.0.1:${PORTS[a]} max_fails=1 fail_timeout=10s;
        server 127.0.0.1:${PORTS[b]} max_fails=1 fail_timeout=10s;
        server 127.0.0.1:${PORTS[c]} max_fails=1 fail_timeout=10s;
        keepalive 16;
    }
EOF
    local name other
    for name in "${NAMES[@]}"; do
      echo "    # Sessions minted by $name (ids \"$name.…\"): $name, the others only when it is down (they answer 404)."
      echo "    upstream mcp_$name {"
      echo "        zone mcp_$name 64k;"
      echo "        server 127.0.0.1:${PORTS[$name]} max_fails=1 fail_timeout=10s;"
      for other in "${NAMES[@]}"; do
        [[ "$other" == "$name" ]] || echo "        server 127.0.0.1:${PORTS[$other]} backup;"
      done
      echo "        keepalive 16;"
      echo "    }"
    done
    echo '    map $http_mcp_session_id $mcp_backend {'
    echo '        default mcp_all;'
    for name in "${NAMES[@]}"; do echo "        \"~^$name\\.\" mcp_$name;"; done
    echo '    }'
    cat <<EOF
    # The lane: stream (GET streams, listen streams, tasks/result), session
    # (2025-11-25 POSTs in a session: no Mcp-Method), short (everything else).
    map "\$request_method|\$http_mcp_method|\$http_mcp_session_id" \$mcp_lane {
        default short;
        "~^GET\|" stream;
        "~^POST\|subscriptions/listen\|" stream;
        "~^POST\|tasks/result\|" stream;
        "~^POST\|\|." session;
    }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        # A client that makes many calls on one connection keeps it (default 1000).
        keepalive_requests 100000;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host \$http_host;
        proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
        proxy_buffering off;
        proxy_cache off;
        proxy_request_buffering off;
        proxy_connect_timeout 1s;
        proxy_send_timeout 300s;
        proxy_next_upstream_tries 3;
        location /mcp {
            rewrite ^ /_mcp_\$mcp_lane last;
        }
        location = /_mcp_short {
            internal;
            proxy_pass http://\$mcp_backend\$request_uri;
            proxy_read_timeout ${SHORT_READ_S}s;
            proxy_next_upstream error timeout non_idempotent;
            proxy_next_upstream_timeout $((SHORT_READ_S + 1))s;
        }
        location = /_mcp_session {
            internal;
            proxy_pass http://\$mcp_backend\$request_uri;
            proxy_read_timeout 30s;
            proxy_next_upstream error timeout non_idempotent;
            proxy_next_upstream_timeout 35s;
        }
        location = /_mcp_stream {
            internal;
            proxy_pass http://\$mcp_backend\$request_uri;
            proxy_read_timeout 300s;
            proxy_next_upstream error timeout;
            proxy_next_upstream_timeout 10s;
        }
    }
}
EOF
  } >"$TMP/nginx/nginx.conf"
  "$NGINX" -t -q -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/logs/error.log"
  "$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/logs/error.log" &
  NGINX_PID=$!
  wait_http "$NGINX_PID" "http://127.0.0.1:$NGINX_PORT/mcp" any nginx
}

total_passed=0
total_failed=0
fail() { echo "FAIL $1"; total_failed=$((total_failed + 1)); }

# Issue 30: a hung instance is taken out quickly. Pauses instance $1 (SIGSTOP), sends
# $2 (default 12) 2026-07-28 tools/call through nginx all at once and then as many one
# after another, resumes it (SIGCONT), and checks that every call was answered (200, a
# result, by another instance) within SHORT_READ_S + 2 s, and that at least one waited
# for the paused instance (else the probe proved nothing). Prints each latency with -v.
pause_probe() {
  local name=$1 count=${2:-12} verbose=${3:-} pid=${PIDS[$1]} limit=$((SHORT_READ_S + 2))
  local dir=$TMP/pause-$name i f code secs who pids=() bad=0 slow=0 max=0 all=()
  local call=(curl -s --max-time 60 -w '%{http_code} %{time_total}' "http://127.0.0.1:$NGINX_PORT/mcp"
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: session_info'
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"session_info","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
  mkdir -p "$dir"
  kill -STOP "$pid"
  for i in $(seq 1 "$count"); do
    "${call[@]}" -o "$dir/burst-$i.body" -D "$dir/burst-$i.head" >"$dir/burst-$i.w" &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  for i in $(seq 1 "$count"); do
    "${call[@]}" -o "$dir/seq-$i.body" -D "$dir/seq-$i.head" >"$dir/seq-$i.w" || true
  done
  kill -CONT "$pid"
  for f in "$dir"/*.w; do
    read -r code secs <"$f" || true
    who=$(sed -n 's/^Mcp-Instance: *\([^[:space:]]*\).*/\1/ip' "${f%.w}.head" 2>/dev/null)
    all+=("${secs:-?}")
    if [[ "$code" != 200 || "$who" == "$name" || -z "$who" ]] || ! grep -q '"result"' "${f%.w}.body" ||
      awk -v t="$secs" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
      bad=$((bad + 1))
      echo "note pause_probe: ${f##*/}: HTTP $code in ${secs}s from '${who}'"
    fi
    awk -v t="$secs" -v s="$SHORT_READ_S" 'BEGIN { exit !(t >= s - 0.2) }' && slow=$((slow + 1))
    max=$(awk -v t="$secs" -v m="$max" 'BEGIN { print (t > m ? t : m) }')
  done
  [[ -n "$verbose" ]] && echo "note pause_probe latencies (s): burst then one by one: ${all[*]}"
  echo "note pause_probe: $name paused: $((2 * count)) calls, $slow waited the ${SHORT_READ_S}s read timeout and went elsewhere, max ${max}s"
  if [[ "$bad" == 0 && "$slow" -gt 0 ]]; then
    echo "ok pause_probe: with $name paused every call is answered elsewhere within ${limit}s"
    total_passed=$((total_passed + 1))
  else
    fail "pause_probe: with $name paused, $bad of $((2 * count)) calls failed or took over ${limit}s; $slow reached it"
  fi
}

started=0
make_keys
if ! start_redis; then
  fail "redis-server start"
elif ! start_instance a || ! start_instance b || ! start_instance c; then
  fail "instance start"
elif ! start_nginx; then
  fail "nginx start"
else
  started=1
fi

if [[ "$started" == 1 && "$bench" == 1 ]]; then
  echo "$TAG: nginx on 127.0.0.1:$NGINX_PORT, instances a=${PORTS[a]} b=${PORTS[b]} c=${PORTS[c]}" >&2
  # The memory figures are the bench's own servers', not the deployment's.
  (cd "$ROOT" && cargo bench --features sealed-state,redis --bench http -- \
    --at "direct=127.0.0.1:${PORTS[a]}" --at "nginx=127.0.0.1:$NGINX_PORT" --no-memory "${bench_args[@]}")
  exit $?
fi

if [[ "$started" == 1 && "$hang" == 1 ]]; then
  echo "$TAG: nginx on 127.0.0.1:$NGINX_PORT, instances a=${PORTS[a]} b=${PORTS[b]} c=${PORTS[c]}" >&2
  pause_probe a 30 verbose
elif [[ "$started" == 1 ]]; then
  echo "$TAG: nginx on 127.0.0.1:$NGINX_PORT, instances a=${PORTS[a]} b=${PORTS[b]} c=${PORTS[c]}, redis on $REDIS_PORT" >&2
  run_counted multi-instance multi.py "$VENV/bin/python" "$PY_DIR/multi.py" \
    --nginx "http://127.0.0.1:$NGINX_PORT/mcp" \
    --instance "a=http://127.0.0.1:${PORTS[a]}/mcp" \
    --instance "b=http://127.0.0.1:${PORTS[b]}/mcp" \
    --instance "c=http://127.0.0.1:${PORTS[c]}/mcp" \
    --kill-pid "c=${PIDS[c]}" \
    --redis-port "$REDIS_PORT" --redis-conf "$TMP/redis/redis.conf" \
    --timeout "$RUN_TIMEOUT"
  # multi.py has killed c; a is paused, b answers.
  pause_probe a
  if [[ "$total_failed" != 0 ]]; then
    echo "$TAG: --- nginx error log (last 20 lines) ---" >&2
    tail -n 20 "$TMP/nginx/logs/error.log" >&2 || true
  fi
fi

echo "$total_passed passed, $total_failed failed"
[[ "$total_failed" == 0 ]]
