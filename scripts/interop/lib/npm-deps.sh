# The npm dependencies of the TypeScript interop tests. Sourced by
# interop-ts.sh, interop-oauth.sh (TS_DIR: tests/interop/ts) and
# interop-apps.sh (TS_DIR: tests/interop/apps). Reads: TS_DIR.

# `true` when node_modules in TS_DIR matches package-lock.json.
deps_up_to_date() {
  (cd "$TS_DIR" && node -e '
    const fs = require("fs");
    const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
    for (const [path, meta] of Object.entries(lock.packages || {})) {
      if (path === "" || meta.optional || meta.dev) continue;
      let installed;
      try { installed = JSON.parse(fs.readFileSync(path + "/package.json", "utf8")); }
      catch { process.exit(1); }
      if (meta.version && installed.version !== meta.version) process.exit(1);
    }
  ' 2>/dev/null)
}
