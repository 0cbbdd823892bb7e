#!/usr/bin/env bash
# scripts/measure/count-lines.sh - code lines per file: lines that are not blank,
# not `//` comments (which covers `//!` and `///` docs). Lines inside
# `/* ... */` are counted (the examples have none).
#
# Usage: scripts/measure/count-lines.sh FILE...    (`-` reads stdin)
#
# e.g. the tool definitions of examples/notes.rs, from its "The tools"
# comment to its "The resources" comment:
#   sed -n '/^\/\/ The tools/,/^\/\/ The resources/p' examples/notes.rs \
#     | scripts/measure/count-lines.sh -

set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
for file in "$@"; do
    count=$(grep -cvE '^[[:space:]]*($|//)' -- "$file" || true)
    printf '%6d %s\n' "$count" "$file"
done
