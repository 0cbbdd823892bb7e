"""Interop server: FastMCP (PyPI `fastmcp`, pinned in requirements.txt
beside this file) for tiny-mcp's blocking client to drive
(tests/fixtures/interop_client/, profile `core`).

Usage:
    python server.py --stdio          serve over stdin/stdout
    python server.py --http PORT      serve Streamable HTTP on http://127.0.0.1:PORT/mcp

Tools: `echo {text}`, `add {a, b}`, `progress {steps}` (one progress
notification per step when the call asks for progress), `slow {seconds}`
(one progress notification, then sleeps until the seconds pass or the call
is cancelled), `cancelled` (how many `slow` calls were cancelled so far in
this process) and `fail` (isError). Resource `interop://greeting`
(text/plain); prompt `greet {name}`.

Run by scripts/interop/interop-client.sh.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

server = FastMCP("fastmcp-interop-server", version="4.2.3-interop")
cancelled_calls = 0


@server.tool
def echo(text: str) -> str:
    """Returns `text` unchanged."""
    return text


@server.tool
def add(a: float, b: float) -> str:
    """Adds two numbers; the sum as text."""
    total = a + b
    return str(int(total)) if total == int(total) else str(total)


@server.tool
async def progress(steps: int, ctx: Context) -> str:
    """Reports `steps` progress notifications (when the request has a progressToken)."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
    return f"did {steps} steps"


@server.tool
async def slow(seconds: float, ctx: Context) -> str:
    """One progress notification, then sleeps `seconds` or until cancelled."""
    global cancelled_calls
    await ctx.report_progress(0, 1)
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        cancelled_calls += 1
        raise
    return f"slept {seconds} s"


@server.tool
def cancelled() -> str:
    """How many `slow` calls were cancelled so far."""
    return str(cancelled_calls)


@server.tool
def fail() -> str:
    """Always fails: a result with isError true."""
    raise ToolError("failed: as asked")


@server.resource("interop://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed text resource."""
    return "hello from fastmcp"


@server.prompt
def greet(name: str) -> str:
    """A one-message prompt that greets `name`."""
    return f"Please greet {name}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    group.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    if args.stdio:
        server.run("stdio", show_banner=False)
    else:
        print(f"fastmcp-interop-server: http://127.0.0.1:{args.http}/mcp", file=sys.stderr)
        server.run("http", host="127.0.0.1", port=args.http, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
