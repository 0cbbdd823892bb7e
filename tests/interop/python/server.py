"""Interop server: the official MCP Python SDK's high-level server (`MCPServer`,
mcp 2.x; v1 called it `FastMCP`) for tiny-mcp's blocking client to drive.

Usage:
    python server.py --stdio          serve over stdin/stdout
    python server.py --http PORT      serve Streamable HTTP on http://127.0.0.1:PORT/mcp
    python server.py --http PORT --stateless
                                      the same, stateless (`stateless_http=True`) with
                                      one JSON body per answer (`json_response=True`)

It offers the tools `echo`, `add`, `progress` (reports `steps` progress
notifications when the call asks for progress), `elicit` (asks the client
for a name), `sample` (asks the client's model), `fail` (returns isError),
`route` and `route_zone` (an argument marked `x-mcp-header`, which the SDK
checks against the `Mcp-Param-*` header of a 2026-07-28 HTTP request), the
resource `interop://greeting` and the prompt `greet`. Elicitation and
sampling go through the SDK's resolvers (`Resolve(...)` returning `Elicit`
or `Sample`), which send a server request in 2025-11-25 and answer
`input_required` in 2026-07-28, so both eras are served.

Run by scripts/interop/interop-client.sh (tests/fixtures/interop_client/ is the client).
"""

from __future__ import annotations

import argparse
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp_types import CallToolResult, CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

server = MCPServer("python-interop-server", version="2.3.0-interop")


class Person(BaseModel):
    """The form the `elicit` tool asks the client to fill."""

    name: str


@server.tool()
def echo(text: str) -> str:
    """Returns `text` unchanged."""
    return text


@server.tool()
def add(a: float, b: float) -> str:
    """Adds two numbers; the sum as text."""
    total = a + b
    return str(int(total)) if total == int(total) else str(total)


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Reports `steps` progress notifications (when the request has a progressToken)."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"did {steps} steps"


@server.tool()
def fail(reason: str = "as asked") -> CallToolResult:
    """Always fails: a result with isError true."""
    return CallToolResult(content=[TextContent(type="text", text=f"failed: {reason}")], is_error=True)


@server.tool()
def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Returns `region`, which a 2026-07-28 HTTP client mirrors in `Mcp-Param-Region`."""
    return f"routed to {region}"


@server.tool()
def route_zone(zone: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Geo.Zone"})]) -> str:
    """Like `route`, with a header name that is an RFC 9110 token but not only letters, digits and `-`."""
    return f"routed to {zone}"


def ask_name(question: str) -> Elicit[Person]:
    """The resolver of `elicit`: a form with one `name` field."""
    return Elicit(question, Person)


@server.tool()
def elicit(question: str, person: Annotated[Person, Resolve(ask_name)]) -> str:
    """Asks the client (elicitation) for a name and greets it."""
    return f"hello {person.name}"


def ask_model(prompt: str) -> Sample:
    """The resolver of `sample`: one user message."""
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=50)


@server.tool()
def sample(prompt: str, answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Asks the client's model (sampling) and returns what it said."""
    content = answer.content
    text = getattr(content, "text", None)
    return f"model said: {text}" if text is not None else f"model said: {content!r}"


@server.resource("interop://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed text resource."""
    return "hello from python"


@server.prompt()
def greet(name: str) -> str:
    """A one-message prompt that greets `name`."""
    return f"Please greet {name}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    group.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--stateless", action="store_true", help="with --http: no sessions, JSON responses")
    args = parser.parse_args()
    if args.stdio:
        server.run("stdio")
    else:
        print(f"python-interop-server: http://127.0.0.1:{args.http}/mcp", file=sys.stderr)
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=args.http,
            streamable_http_path="/mcp",
            stateless_http=args.stateless,
            json_response=args.stateless,
        )


if __name__ == "__main__":
    main()
