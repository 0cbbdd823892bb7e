# shellcheck shell=bash disable=SC2034
# What the test suite installs beyond the repository's own build, and where
# it writes. One list: the scripts that install a Debian package take its
# name from here (test-all.sh's redis step, check/multi-instance.sh,
# interop/apps-browser.sh, check/msrv-check.sh, check/debian-crates-check.sh),
# and test-all.sh prints footprint_notice before its first step and
# footprint_report before its last line. Sourced; it defines variables and
# functions and does nothing else. `apt_install` is the one way they install.
#
# Sizes: Debian 12 (bookworm, amd64) on 2026-12-07, `apt-get -s install`
# on a machine without the packages, summing apt-cache's Installed-Size;
# the npm and Python folders measured after their install. They move with
# the packages' updates.

# --- Debian packages, installed with apt-get when missing ---
# The redis step of test-all.sh and check/multi-instance.sh (which runs
# both as its own processes, never as services); sudo when not root.
APT_REDIS="redis-server"
APT_NGINX="nginx"
# interop/apps-browser.sh, with its recommends; sudo when not root.
APT_BROWSER="chromium"
# check/msrv-check.sh: Debian 12's rustc 1.63 and cargo, into /usr/bin; root only.
APT_MSRV="rustc cargo"
# check/debian-crates-check.sh: the same toolchain and the packaged crates
# tiny-mcp depends on (their own dependencies come along); root only.
APT_DEBIAN_CRATES="rustc cargo librust-serde-dev librust-serde+derive-dev librust-serde-json-dev
    librust-httparse-dev librust-crossbeam-channel-dev librust-parking-lot-dev
    librust-uuid-dev librust-uuid+v4-dev librust-log-dev librust-tiny-http-dev
    librust-hmac-dev librust-sha2-dev librust-nix-dev"

# --- where the suite writes besides target/ ---
# node_modules/ (npm ci from the committed package-lock.json) under these:
NPM_DIRS="tests/interop/ts tests/interop/apps tests/interop/npm-servers tests/apps_browser"
# Python virtualenvs (python3 -m venv; pip install -r requirements.txt):
VENV_DIRS="tests/interop/python/.venv tests/interop/fastmcp/.venv"
VENV_SIZES="75 MB and 140 MB"
# The scratch trees test-all.sh removes after their step (TINY_MCP_KEEP_SCRATCH=1 keeps them).
SCRATCH_DIRS="tests/otel/target ${INTEROP_PY_SDIST:-/tmp/tiny-mcp-mcp-sdist}
    ${INTEROP_RMCP_TARGET:-/tmp/tiny-mcp-interop-rmcp-target} target/msrv target/min-versions
    target/debian target/static-check fuzz/target target/platforms tests/interop/wasi/node_modules"

# apt-get install -y $@ (sudo when not root), and once more after
# apt-get update when that fails (a fresh machine's package lists may be
# stale or empty). Its output goes to stderr.
apt_install() {
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >&2 \
        || { "${sudo[@]}" apt-get update >&2 \
            && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >&2; }
}

# "installed", or what is missing of the Debian packages $@ (names, or a
# count when there are many); "unknown" without dpkg.
apt_state() {
    local pkg missing=()
    command -v dpkg-query >/dev/null || { echo "unknown (no dpkg-query)"; return 0; }
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$pkg")
    done
    if [ "${#missing[@]}" = 0 ]; then
        echo "installed"
    elif [ "${#missing[@]}" -le 3 ]; then
        echo "missing: ${missing[*]}"
    else
        echo "missing: ${#missing[@]} of the $# named"
    fi
}

# One line of the notice: packages, the steps that install them, the
# Debian 12 figures, and what is missing now.
apt_line() {
    local names=$1 steps=$2 figures=$3
    shift 3
    printf '  %-30s %-22s %-22s %s\n' "$names" "$steps" "$figures" "$(apt_state "$@")"
}

# Prints what a run installs and where it writes; $1 is 1 for --quick.
footprint_notice() {
    local quick=$1 who="as root"
    local crates
    # shellcheck disable=SC2086
    crates=$(echo $APT_DEBIAN_CRATES | wc -w)
    [ "$(id -u)" = 0 ] || who="with sudo (msrv and debian-crates need root)"
    echo "=== What this run installs and where it writes (--plan: print this and exit)"
    echo "apt-get install $who, when missing (Debian 12 figures):"
    # shellcheck disable=SC2086
    apt_line "$APT_REDIS" "redis, multi-instance" "4 packages, 7 MB" $APT_REDIS
    if [ "$quick" = 1 ]; then
        echo "builds: target/ (CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-unset}) and tests/otel/target (removed after its step)"
        echo "--quick: no other package, npm, virtualenv or toolchain"
        return 0
    fi
    # shellcheck disable=SC2086
    {
        apt_line "$APT_NGINX" "multi-instance" "2 more, 2 MB" $APT_NGINX
        apt_line "$APT_BROWSER" "apps-browser" "131 packages, 530 MB" $APT_BROWSER
        apt_line "rustc cargo + $((crates - 2)) librust-*-dev" "msrv, debian-crates" \
            "240 packages, 660 MB" $APT_DEBIAN_CRATES
    }
    echo "  (about 250 MB to download, 1.2 GB installed when none is there)"
    echo "npm ci (committed lockfiles) into node_modules/ of $NPM_DIRS: 120 MB"
    echo "  the conformance suites (and Node 22 when node is older) into target/conformance, target/conformance-next"
    echo "virtualenvs (python3 -m venv, pip install -r requirements.txt): $VENV_DIRS: $VENV_SIZES"
    echo "  the mcp sdist (pip download) into ${INTEROP_PY_SDIST:-/tmp/tiny-mcp-mcp-sdist}"
    echo "rustup, when missing: the nightly toolchain (minimal profile; min-versions, fuzz), the x86_64-unknown-linux-musl target (static-binary),"
    echo "  wasm32-wasip1 and wasm32-wasip2 (interop-wasi), x86_64-pc-windows-msvc, x86_64-pc-windows-gnu, aarch64-apple-darwin,"
    echo "  aarch64-unknown-linux-gnu (platforms): the standard library of each, 96-152 MB each"
    echo "cargo install --locked cargo-fuzz into ~/.cargo/bin, when missing; caches in ~/.cargo/registry, ~/.npm, ~/.cache/pip"
    echo "builds: target/ (CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-unset}); scratch trees removed after their step$(
        [ "${TINY_MCP_KEEP_SCRATCH:-0}" = 1 ] && echo " (not now: TINY_MCP_KEEP_SCRATCH=1)"):"
    # shellcheck disable=SC2086
    echo "  "$SCRATCH_DIRS
    echo "disk, when none of it is there: about 1.5 GB for the packages, npm folders and virtualenvs, then the"
    echo "  toolchains and target/ (its size at the end of a fresh-clone run, and the time: README.md)"
    echo "--quick skips all of this but redis-server and target/"
}

# The disk use after the last step, for the log: target/ and its biggest
# folders, then the other places the suite writes that exist now; $1 is
# the run's start (date +%s).
footprint_report() {
    local started=$1 dir places=()
    if [ -d target ]; then
        echo "disk: target/ $(du -sh target | cut -f1) ($(top_dirs target))"
        [ -d target/debug ] && echo "disk: target/debug/ ($(top_dirs target/debug))"
    fi
    # shellcheck disable=SC2086
    for dir in $NPM_DIRS; do
        [ -d "$dir/node_modules" ] && places+=("$dir/node_modules")
    done
    # shellcheck disable=SC2086
    for dir in $VENV_DIRS $SCRATCH_DIRS; do
        case "$dir" in target/*) continue ;; esac
        [ -d "$dir" ] && places+=("$dir")
    done
    if [ "${#places[@]}" -gt 0 ]; then
        echo "disk: outside target/: $(du -sh "${places[@]}" | awk '{printf "%s%s %s", sep, $2, $1; sep = ", "}')"
    fi
    local took
    took=$(($(date +%s) - started))
    echo "time: $((took / 60)) min $((took % 60)) s"
}

# The five biggest entries of folder $1 with their sizes, on one line.
top_dirs() {
    [ -d "$1" ] || return 0
    du -sh "$1"/* 2>/dev/null | sort -rh | head -n 5 |
        awk -v base="$1/" '{sub("^" base, "", $2); printf "%s%s %s", sep, $2, $1; sep = ", "}'
}
