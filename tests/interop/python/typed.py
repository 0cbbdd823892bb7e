#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK client (mcp 2.3.0) against the
``typed_tools`` example, whose tools declare an ``outputSchema``.

Usage:
    typed.py BINARY [--v2025] [--timeout SECONDS]

The SDK's client checks every ``tools/call`` result of a tool with an output
schema: it raises when ``structuredContent`` is missing or does not validate
(server/tools "Output Schema": clients SHOULD validate). Each check calls a
typed tool and expects the SDK to accept its structured result; one more
expects an ``isError`` result naming the argument the inputSchema refuses.

Prints ``ok <check>`` or ``FAIL <check>: <reason>`` per check and, last,
``N passed, M failed``. Exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from checks import check, expect, run_bounded, short

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)


def text_of(result: types.CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def run(args: argparse.Namespace) -> None:
    label = "typed/v2025" if args.v2025 else "typed"
    client = Client(
        StdioServerParameters(command=args.target, args=[]),
        mode="legacy" if args.v2025 else "auto",  # the SDK's name for its 2025-11-25 mode
        read_timeout_seconds=30.0,
        client_info=types.Implementation(name="tiny-mcp-typed-interop", version="2.3.0"),
    )
    async with client:

        async def listed() -> None:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            expect(set(tools) >= {"convert", "word_stats"}, f"tools: {sorted(tools)}")
            for name in ("convert", "word_stats"):
                expect(tools[name].output_schema is not None, f"{name} has no outputSchema")

        await check(f"{label}: both tools list an outputSchema", listed)

        async def convert() -> None:
            result = await client.call_tool("convert", {"value": 2, "from": "km", "to": "m"})
            expect(not result.is_error, text_of(result))
            structured = result.structured_content or {}
            expect(structured.get("value") == 2000, f"structuredContent {short(structured)}")
            expect(structured.get("unit") == "m", f"structuredContent {short(structured)}")

        await check(f"{label}: convert's structured result passes the SDK's output check", convert)

        async def stats() -> None:
            result = await client.call_tool("word_stats", {"text": "a b a", "top": 1})
            expect(not result.is_error, text_of(result))
            structured = result.structured_content or {}
            expect(structured.get("unique") == 2, f"structuredContent {short(structured)}")

        await check(f"{label}: word_stats's structured result passes the SDK's output check", stats)

        async def refused() -> None:
            result = await client.call_tool("word_stats", {"text": "a b", "top": 0})
            expect(bool(result.is_error), f"expected isError, got {text_of(result)}")
            expect('"top"' in text_of(result), f"the message does not name top: {text_of(result)}")

        await check(f"{label}: a refused argument is an isError result naming it", refused)


def main() -> int:
    parser = argparse.ArgumentParser(description="MCP Python SDK client against typed_tools")
    parser.add_argument("target", help="the typed_tools binary")
    parser.add_argument("--v2025", action="store_true", help="force the initialize handshake (2025-11-25)")
    parser.add_argument("--timeout", type=float, default=120.0, help="overall timeout in seconds")
    return run_bounded(run, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
