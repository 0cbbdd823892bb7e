#!/usr/bin/env python3
"""Longest functions and files under src/ (the limits in docs/STYLE.md: no
function over 80 lines, no file over 700).

Usage: python3 scripts/check/code-size.py [ROOT] [--top N]

A function runs from the line of its `fn` keyword to the line of the brace
that closes its body, both included, comments and blank lines counted; the
body's braces are matched by counting `{` and `}` outside string and char
literals and comments. Test modules count too. Exits 1 when a limit is
exceeded."""

import os
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)")
MAX_FN, MAX_FILE = 80, 700


def strip(line, state):
    """The line without literals and comments; `state` carries block comments."""
    out, i = [], 0
    while i < len(line):
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"], i = False, end + 2
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"], i = True, i + 2
            continue
        if c == '"':
            i += 1
            while i < len(line) and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if c == "'" and re.match(r"'(\\.|[^\\'])'", line[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", line[i:]).group(0))
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    state = {"block": False}
    clean = [strip(line, state) for line in lines]
    found = []
    for start, line in enumerate(clean):
        match = FN.match(line)
        if not match:
            continue
        depth, opened = 0, False
        for end in range(start, len(clean)):
            if not opened and ";" in clean[end] and "{" not in clean[end]:
                break  # a declaration without a body
            depth += clean[end].count("{") - clean[end].count("}")
            opened = opened or "{" in clean[end]
            if opened and depth <= 0:
                found.append((end - start + 1, match.group(5), start + 1))
                break
    return found, len(lines) - (1 if lines and lines[-1] == "" else 0)


def main():
    args = sys.argv[1:]
    top = 5
    if "--top" in args:
        top = int(args[args.index("--top") + 1])
        del args[args.index("--top") : args.index("--top") + 2]
    root = args[0] if args else "."
    fns, files = [], []
    walked = [w for d in ("src", "cli/src") for w in os.walk(os.path.join(root, d))]
    for folder, _, names in walked:
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                found, count = functions(path)
                rel = os.path.relpath(path, root)
                fns += [(n, f"{rel}:{line} {fn}") for n, fn, line in found]
                files.append((count, rel))
    fns.sort(reverse=True)
    files.sort(reverse=True)
    print(f"longest functions (limit {MAX_FN} lines):")
    for n, where in fns[:top]:
        print(f"  {n:5} {where}")
    print(f"longest files (limit {MAX_FILE} lines):")
    for n, where in files[:top]:
        print(f"  {n:5} {where}")
    over = [f for f in fns if f[0] > MAX_FN] + [f for f in files if f[0] > MAX_FILE]
    print(f"{len(fns)} functions in {len(files)} files; {len(over)} over a limit")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
