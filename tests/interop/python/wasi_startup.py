#!/usr/bin/env python3
"""Start-up time of a stdio MCP server: launch it, send ``initialize``, read
the answer. A path ending in ``.wasm`` runs under wasi_run.py (with this
Python, so the time includes starting Python and loading Wasmtime).

Usage:
    wasi_startup.py PROGRAM [--runs N] [--label TEXT]

Prints one line, ``startup LABEL: median M ms of N runs (min A, max B)``,
or ``startup LABEL: not measured, <why>`` and exits 1 when a run gets no answer
within 30 s. Plain JSON-RPC, no SDK: the SDK's own start would dominate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

WASI_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wasi_run.py")
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tiny-mcp-startup", "version": "1"},
        },
    }
)
ANSWER_TIMEOUT = 30.0  # seconds


def command(program: str) -> list[str]:
    if program.endswith(".wasm"):
        return [sys.executable, WASI_RUN, program]
    return [program]


def one_run(program: str) -> float:
    """Seconds from launch to the initialize result's line; raises if none comes."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command(program), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    # A server that never answers must not hang the run: kill it at the deadline.
    timer = threading.Timer(ANSWER_TIMEOUT, child.kill)
    timer.start()
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(INITIALIZE.encode() + b"\n")
        child.stdin.flush()
        line = child.stdout.readline()
        elapsed = time.perf_counter() - start
    finally:
        timer.cancel()
        # Closes stdin (the end of input: the server exits) and reaps it.
        _, stderr = child.communicate(timeout=ANSWER_TIMEOUT)
    answer = json.loads(line) if line.strip() else {}
    if "result" not in answer:
        why = stderr.decode(errors="replace").strip() or f"exit status {child.returncode}"
        raise RuntimeError(f"no initialize result ({line.decode(errors='replace').strip() or why})")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--label", default=None)
    args = parser.parse_args()
    label = args.label or os.path.basename(args.program)
    try:
        times = [one_run(args.program) * 1000 for _ in range(args.runs)]
    except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        print(f"startup {label}: not measured, {' '.join(str(exc).split())}")
        return 1
    print(
        f"startup {label}: median {statistics.median(times):.1f} ms of {len(times)} runs"
        f" (min {min(times):.1f}, max {max(times):.1f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
