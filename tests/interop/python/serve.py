#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK client (mcp 2.3.0) drives the
official TypeScript ``server-everything`` (a stdio server) through
``mcp serve`` (scripts/interop/interop-serve.sh starts both).

Usage:
    serve.py URL EXPIRY_URL EXPIRY_PID [--timeout SECONDS]

URL is an ``mcp serve`` with the default settings; EXPIRY_URL one started
with ``--session-timeout 1`` whose process id is EXPIRY_PID (its children are
counted in /proc).

Checks, in the 2025-11-25 era (the SDK's ``mode="legacy"``): list, call,
progress, cancellation, an elicitation round trip, and remote session
expiry (the session's child ends with it; the id then gets 404); then a
2026-07-28 client (``mode="auto"``) lists and calls through the session the
proxy holds, the child's elicitation becoming an ``input_required`` round.
Prints ``ok <check>`` or ``FAIL <check>: <reason>`` and, last,
``N passed, M failed``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import anyio
import httpx2 as httpx
import mcp_types as types
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from checks import REPORT, check, expect, run_bounded, short

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

NAME = "Ada Lovelace"


class Callbacks:
    def __init__(self) -> None:
        self.elicited: list[str] = []

    async def on_elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicited.append(params.message)
        return types.ElicitResult(action="accept", content={"name": NAME})


def text_of(result: types.CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def v2025(url: str) -> None:
    callbacks = Callbacks()
    client = Client(
        url,
        mode="legacy",
        read_timeout_seconds=30.0,
        elicitation_callback=callbacks.on_elicitation,
        client_info=types.Implementation(name="python-through-mcp-serve", version="2.3.0"),
    )
    async with client:
        REPORT.ok(f"2025-11-25: connect (protocol {client.protocol_version})")
        tools: list[types.Tool] = []

        async def list_tools() -> None:
            tools.extend((await client.list_tools()).tools)
            names = {t.name for t in tools}
            for want in ("echo", "trigger-long-running-operation", "trigger-elicitation-request"):
                expect(want in names, f"{want} missing from {sorted(names)}")

        async def call() -> None:
            result = await client.call_tool("echo", {"message": "through mcp serve"})
            expect(text_of(result) == "Echo: through mcp serve", short(result.model_dump()))

        async def progress() -> None:
            seen: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            args = {"duration": 1, "steps": 2}
            result = await client.call_tool("trigger-long-running-operation", args, progress_callback=on_progress)
            expect("completed" in text_of(result), short(result.model_dump()))
            expect(seen == [1, 2], f"progress {seen}")

        async def cancellation() -> None:
            started = anyio.Event()

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                started.set()

            began = time.monotonic()
            async with anyio.create_task_group() as group:

                async def long_call() -> None:
                    args = {"duration": 20, "steps": 20}
                    await client.call_tool("trigger-long-running-operation", args, progress_callback=on_progress)

                group.start_soon(long_call)
                await started.wait()
                group.cancel_scope.cancel()
            expect(time.monotonic() - began < 10, "the cancelled call did not end at once")
            # The session serves on after the cancel.
            result = await client.call_tool("echo", {"message": "after the cancel"})
            expect(text_of(result) == "Echo: after the cancel", short(result.model_dump()))

        async def elicitation() -> None:
            result = await client.call_tool("trigger-elicitation-request", {})
            expect(len(callbacks.elicited) == 1, f"elicitations: {callbacks.elicited}")
            expect(NAME in text_of(result), short(result.model_dump()))

        await check("2025-11-25: list tools", list_tools)
        await check("2025-11-25: call echo", call)
        await check("2025-11-25: progress", progress)
        await check("2025-11-25: cancellation", cancellation)
        await check("2025-11-25: elicitation round trip", elicitation)
    REPORT.ok("2025-11-25: disconnect")


def children(pid: int) -> set[int]:
    """The process ids whose parent is `pid`."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(entry))
    return found


async def expiry(url: str, pid: int) -> None:
    """A session left idle (no GET stream) past `--session-timeout 1`."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    before = children(pid)
    async with httpx.AsyncClient(timeout=30.0) as http:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "expiry-check", "version": "1"},
            },
        }
        answer = await http.post(url, json=init, headers=headers)
        expect(answer.status_code == 200, f"initialize: {answer.status_code} {answer.text[:200]}")
        session = answer.headers.get("mcp-session-id")
        expect(session is not None, "no Mcp-Session-Id")
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-11-25"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(url, json=note, headers=headers)
        started = children(pid) - before
        expect(len(started) == 1, f"children started for the session: {sorted(started)}")
        deadline = time.monotonic() + 10
        while started & children(pid):
            expect(time.monotonic() < deadline, "the session's child still runs 10 s later")
            await anyio.sleep(0.1)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        answer = await http.post(url, json=listing, headers=headers)
        expect(answer.status_code == 404, f"expired session: {answer.status_code} {answer.text[:200]}")


async def v2026(url: str) -> None:
    callbacks = Callbacks()
    client = Client(url, read_timeout_seconds=30.0, elicitation_callback=callbacks.on_elicitation)
    async with client:
        expect(client.protocol_version == "2026-07-28", f"protocol {client.protocol_version}")

        async def list_and_call() -> None:
            names = {t.name for t in (await client.list_tools()).tools}
            expect("echo" in names, f"echo missing from {sorted(names)}")
            result = await client.call_tool("echo", {"message": "new era"})
            expect(text_of(result) == "Echo: new era", short(result.model_dump()))

        async def elicitation() -> None:
            # The child's elicitation/create becomes an input_required round.
            result = await client.call_tool("trigger-elicitation-request", {})
            expect(len(callbacks.elicited) == 1, f"elicitations: {callbacks.elicited}")
            expect(NAME in text_of(result), short(result.model_dump()))

        await check("2026-07-28: list and call (the proxy holds the session)", list_and_call)
        await check("2026-07-28: elicitation as an input_required round", elicitation)


async def run(args: argparse.Namespace) -> None:
    try:
        await v2025(args.url)
    except Exception as exc:  # noqa: BLE001
        REPORT.fail("2025-11-25: session", str(exc) or type(exc).__name__)
    await check("2025-11-25: remote session expiry", lambda: expiry(args.expiry_url, args.expiry_pid))
    try:
        await v2026(args.url)
    except Exception as exc:  # noqa: BLE001
        REPORT.fail("2026-07-28: session", str(exc) or type(exc).__name__)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("expiry_url")
    parser.add_argument("expiry_pid", type=int)
    parser.add_argument("--timeout", type=float, default=120.0)
    return run_bounded(run, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
