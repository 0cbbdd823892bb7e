#!/usr/bin/env python3
"""Runs a WASI program under Wasmtime, from the ``wasmtime`` package on PyPI
(pinned in requirements.txt), with this process's stdin, stdout, stderr,
arguments and environment: a preview 1 module (``wasm32-wasip1``, its
``_start``) or a preview 2 component (``wasm32-wasip2``, its
``wasi:cli/run`` export).

Usage:
    wasi_run.py PROGRAM.wasm [ARGS...]

An MCP client starts this as its stdio server: the program reads the
client's messages from stdin and writes its own to stdout. It gets no
directory and no socket. Exits with the program's exit status (``proc_exit``),
0 when ``_start`` returns (or ``run`` returns ``ok``), 1 with the trap's
message on stderr when it traps.

Compiled code is cached by Wasmtime (its default cache, under the user's
cache directory) unless ``WASI_RUN_NO_CACHE`` is set, so only the first
start of a new build pays for the compilation.
"""

from __future__ import annotations

import os
import sys

import wasmtime
import wasmtime.component

# The first 8 bytes of a component: the magic, then version 0x0d and layer 1
# (a core module has version 1, layer 0).
COMPONENT_HEADER = b"\0asm\x0d\x00\x01\x00"
# The interface a WASI command component exports (wasi:cli/command), at
# whichever version it was built with (Rust 1.95: 0.2.0).
CLI_RUN = "wasi:cli/run@"


def engine() -> wasmtime.Engine:
    config = wasmtime.Config()
    if not os.environ.get("WASI_RUN_NO_CACHE"):
        try:
            config.cache = True
        except wasmtime.WasmtimeError as exc:  # no cache directory: compile each time
            print(f"wasi_run: no compilation cache ({exc})", file=sys.stderr)
    return wasmtime.Engine(config)


def store_for(eng: wasmtime.Engine, path: str, args: list[str]) -> wasmtime.Store:
    """A store whose WASI context shares this process's stdio, arguments and environment."""
    store = wasmtime.Store(eng)
    wasi = wasmtime.WasiConfig()
    wasi.argv = [os.path.basename(path), *args]
    wasi.inherit_env()
    wasi.inherit_stdin()
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    store.set_wasi(wasi)
    return store


def run_module(eng: wasmtime.Engine, path: str, args: list[str]) -> int:
    module = wasmtime.Module.from_file(eng, path)
    linker = wasmtime.Linker(eng)
    linker.define_wasi()
    store = store_for(eng, path, args)
    instance = linker.instantiate(store, module)
    instance.exports(store)["_start"](store)
    return 0


def run_component(eng: wasmtime.Engine, path: str, args: list[str]) -> int:
    component = wasmtime.component.Component.from_file(eng, path)
    linker = wasmtime.component.Linker(eng)
    linker.add_wasip2()
    runs = [name for name in component.type.exports(eng) if name.startswith(CLI_RUN)]
    if not runs:
        print(f"wasi_run: {os.path.basename(path)} does not export {CLI_RUN}*", file=sys.stderr)
        return 1
    store = store_for(eng, path, args)
    instance = linker.instantiate(store, component)
    interface = instance.get_export_index(store, runs[0])
    run_index = instance.get_export_index(store, "run", interface) if interface else None
    if run_index is None:
        print(f"wasi_run: {os.path.basename(path)} has no run in {runs[0]}", file=sys.stderr)
        return 1
    outcome = instance.get_func(store, run_index)(store)
    return 0 if getattr(outcome, "tag", None) == "ok" else 1


def run(path: str, args: list[str]) -> int:
    with open(path, "rb") as file:
        component = file.read(len(COMPONENT_HEADER)) == COMPONENT_HEADER
    try:
        return (run_component if component else run_module)(engine(), path, args)
    except wasmtime.ExitTrap as exc:
        return exc.code
    except wasmtime.Trap as exc:
        print(f"wasi_run: {os.path.basename(path)} trapped: {exc}", file=sys.stderr)
        return 1


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return run(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
