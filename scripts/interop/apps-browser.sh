#!/usr/bin/env bash
# MCP Apps in a real browser: the test host (tests/fixtures/apps_host, our
# Client) runs the `apps` example over stdio and serves its view in a
# sandboxed iframe; Debian's Chromium, driven by playwright-core
# (tests/apps_browser, pinned in package.json / package-lock.json), checks
# that the view renders the tool result, that its button calls the
# app-only tool through the host, and what the host refuses.
#
# Usage: scripts/interop/apps-browser.sh
#
# Installs Debian's `chromium` when /usr/bin/chromium is missing (once;
# with sudo when not root) and the npm package when node_modules does not
# match the lock. Prints one `ok`/`FAIL` line per check and
# `N passed, M failed`; the screenshot of the rendered view is
# target/apps-browser/view.png (the whole page: host.png). Exits non-zero
# on any failure; the host and the server are stopped on every exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TS_DIR=$ROOT/tests/apps_browser
SHOTS=$ROOT/target/apps-browser
STARTED=$(date +%s)

case "${1:-}" in
  "") ;;
  -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0" >&2; exit 2 ;;
esac

# --- Chromium, from Debian's packages (APT_BROWSER) ---
# shellcheck source=../check/lib/footprint.sh
source "$ROOT/scripts/check/lib/footprint.sh"
if [[ ! -x /usr/bin/chromium ]]; then
  echo "apps-browser: installing chromium (apt-get)" >&2
  # shellcheck disable=SC2086
  apt_install $APT_BROWSER
fi
command -v node >/dev/null || { echo "apps-browser: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "apps-browser: npm is not installed" >&2; exit 1; }

# --- npm dependencies: `npm ci` only when node_modules does not match the lock ---
# shellcheck source=lib/npm-deps.sh
source "$ROOT/scripts/interop/lib/npm-deps.sh"
if deps_up_to_date; then
  echo "apps-browser: npm dependencies up to date" >&2
else
  echo "apps-browser: installing npm dependencies (npm ci)" >&2
  (cd "$TS_DIR" && npm ci --no-audit --no-fund --prefer-offline >&2)
fi

# --- the server and the host ---
(cd "$ROOT" && cargo build --example apps --example apps_host >&2)
EXAMPLES=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples
WORK=$(mktemp -d)
: >"$WORK/url"
"$EXAMPLES/apps_host" "$EXAMPLES/apps" --stdio >"$WORK/url" 2>"$WORK/host.log" </dev/null &
HOST_PID=$!
cleanup() {
  if kill -0 "$HOST_PID" 2>/dev/null; then
    kill "$HOST_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$HOST_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$HOST_PID" 2>/dev/null || true
  fi
  wait "$HOST_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The host prints its URL once the server answered and it listens
# (bounded: 20 s).
URL=
for _ in $(seq 1 200); do
  URL=$(head -n 1 "$WORK/url")
  [[ -n "$URL" ]] && break
  if ! kill -0 "$HOST_PID" 2>/dev/null; then
    echo "apps-browser: the host exited before it was ready:" >&2
    cat "$WORK/host.log" >&2
    exit 1
  fi
  sleep 0.1
done
[[ -n "$URL" ]] || { echo "apps-browser: the host printed no URL within 20 s" >&2; exit 1; }
echo "apps-browser: host at $URL" >&2

# --- the browser ---
set +e
(cd "$TS_DIR" && node browser.mjs "$URL" "$SHOTS")
rc=$?
set -e
if [[ "$rc" != 0 ]]; then
  echo "apps-browser: the host's log:" >&2
  cat "$WORK/host.log" >&2
fi
echo "apps-browser: $(($(date +%s) - STARTED)) s" >&2
exit "$rc"
