#!/usr/bin/env python3
"""Runs a WASI preview 1 program (a ``wasm32-wasip1`` ``.wasm``) under
Wasmtime, from the ``wasmtime`` package on PyPI (pinned in requirements.txt),
with this process's stdin, stdout, stderr, arguments and environment.

Usage:
    wasi_run.py PROGRAM.wasm [ARGS...]

An MCP client starts this as its stdio server: the program reads the
client's messages from stdin and writes its own to stdout. It gets no
directory and no socket. Exits with the program's exit status (``proc_exit``),
0 when ``_start`` returns, 1 with the trap's message on stderr when it traps.

Compiled code is cached by Wasmtime (its default cache, under the user's
cache directory) unless ``WASI_RUN_NO_CACHE`` is set, so only the first
start of a new build pays for the compilation.
"""

from __future__ import annotations

import os
import sys

import wasmtime


def engine() -> wasmtime.Engine:
    config = wasmtime.Config()
    if not os.environ.get("WASI_RUN_NO_CACHE"):
        try:
            config.cache = True
        except wasmtime.WasmtimeError as exc:  # no cache directory: compile each time
            print(f"wasi_run: no compilation cache ({exc})", file=sys.stderr)
    return wasmtime.Engine(config)


def run(path: str, args: list[str]) -> int:
    eng = engine()
    module = wasmtime.Module.from_file(eng, path)
    linker = wasmtime.Linker(eng)
    linker.define_wasi()
    store = wasmtime.Store(eng)
    wasi = wasmtime.WasiConfig()
    wasi.argv = [os.path.basename(path), *args]
    wasi.inherit_env()
    wasi.inherit_stdin()
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    store.set_wasi(wasi)
    instance = linker.instantiate(store, module)
    start = instance.exports(store)["_start"]
    try:
        start(store)
    except wasmtime.ExitTrap as exc:
        return exc.code
    except wasmtime.Trap as exc:
        print(f"wasi_run: {os.path.basename(path)} trapped: {exc}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return run(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
