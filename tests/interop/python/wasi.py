#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK client (mcp 2.3.0) against the
``minimal`` and ``wasi_glossary`` examples built for ``wasm32-wasip1`` (or
``wasm32-wasip2``) and run under Wasmtime (wasi_run.py, the ``wasmtime``
package from PyPI), over stdio.

Usage:
    wasi.py MINIMAL GLOSSARY [--v2025] [--label TEXT] [--timeout SECONDS]

MINIMAL and GLOSSARY are the two programs: a path ending in ``.wasm`` runs
under wasi_run.py (with this Python), anything else is started as a native
binary (the same checks, to tell a WASI failure from a wrong check).
``--label`` starts each check's name (default ``wasi``).

Default mode is the client's own (``mode="auto"``): ``server/discover``, and
it must end up on 2026-07-28; ``--v2025`` forces the ``initialize`` handshake
and must end up on 2025-11-25. In each: minimal lists its ``echo`` tool and
answers a call; the glossary lists its tools with their output schemas,
answers the typed ``define`` with ``structuredContent`` that the SDK checks
against the schema, lists its resource template and reads a term through it,
renders the ``explain`` prompt, and asks through the elicitation callback in
``add_term`` (a server->client request in 2025-11-25, an ``input_required``
round in 2026-07-28), after which the new term reads back.

Prints ``ok <check>`` or ``FAIL <check>: <reason>`` per check and, last,
``N passed, M failed``. Exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from checks import REPORT, check, describe, expect, run_bounded, short

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

WASI_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wasi_run.py")
NEW_DEFINITION = "The binary instruction format that WASI programs are compiled to."


NODE_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wasi", "node_run.mjs")


def server(target: str) -> StdioServerParameters:
    """How the client starts `target`: under wasi_run.py when it is a `.wasm`
    (under Node's node:wasi, node_run.mjs, with WASI_RUNNER=node)."""
    if target.endswith(".wasm") and os.environ.get("WASI_RUNNER") == "node":
        return StdioServerParameters(command="node", args=["--no-warnings", NODE_RUN, target])
    if target.endswith(".wasm"):
        return StdioServerParameters(command=sys.executable, args=[WASI_RUN, target])
    return StdioServerParameters(command=target, args=[])


def text_of(blocks: list[Any]) -> str:
    return " ".join(getattr(block, "text", "") for block in blocks)


class Asked:
    """The elicitation callback: answers every form with a definition."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def on_elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="decline")
        self.messages.append(params.message)
        return types.ElicitResult(action="accept", content={"definition": NEW_DEFINITION})


def client_for(target: str, v2025: bool, asked: Asked | None = None) -> Client:
    return Client(
        server(target),
        mode="legacy" if v2025 else "auto",  # the SDK's name for its 2025-11-25 mode
        read_timeout_seconds=30.0,
        elicitation_callback=asked.on_elicitation if asked else None,
        client_info=types.Implementation(name="tiny-mcp-wasi-interop", version="2.3.0"),
    )


async def minimal(args: argparse.Namespace, label: str) -> None:
    want = "2025-11-25" if args.v2025 else "2026-07-28"
    async with client_for(args.minimal, args.v2025) as client:
        REPORT.ok(f"{label}/minimal: connect")

        async def version() -> None:
            got = client.protocol_version
            expect(got == want, f"negotiated {got!r}, expected {want!r}")

        await check(f"{label}/minimal: protocol version is {want}", version)

        async def listed() -> None:
            names = [tool.name for tool in (await client.list_tools()).tools]
            expect(names == ["echo"], f"tools {names}")

        await check(f"{label}/minimal: tools/list has echo", listed)

        async def echo() -> None:
            result = await client.call_tool("echo", {"text": "hello from wasm"})
            expect(not result.is_error, text_of(result.content))
            expect(text_of(result.content) == "hello from wasm", f"text {text_of(result.content)!r}")

        await check(f"{label}/minimal: echo answers its text", echo)


async def glossary(args: argparse.Namespace, label: str) -> None:
    want = "2025-11-25" if args.v2025 else "2026-07-28"
    asked = Asked()
    async with client_for(args.glossary, args.v2025, asked) as client:
        REPORT.ok(f"{label}/glossary: connect")

        async def version() -> None:
            got = client.protocol_version
            expect(got == want, f"negotiated {got!r}, expected {want!r}")
            caps = client.server_capabilities
            expect(caps.tools is not None and caps.resources is not None, "no tools or resources capability")
            expect(caps.prompts is not None, "no prompts capability")

        await check(f"{label}/glossary: protocol version is {want}, with tools, resources and prompts", version)

        async def listed() -> None:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            expect(sorted(tools) == ["add_term", "define"], f"tools {sorted(tools)}")
            expect(all(tool.output_schema for tool in tools.values()), "a tool without outputSchema")

        await check(f"{label}/glossary: tools/list has define and add_term with output schemas", listed)

        async def define() -> None:
            result = await client.call_tool("define", {"term": "WASI"})
            expect(not result.is_error, text_of(result.content))
            structured = result.structured_content or {}
            expect(structured.get("term") == "wasi", f"structuredContent {short(structured)}")
            definition = str(structured.get("definition", ""))
            expect(definition.startswith("WebAssembly System Interface"), f"definition {definition!r}")

        await check(f"{label}/glossary: define's structured result passes the SDK's output check", define)

        async def template() -> None:
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            expect(templates == ["glossary://{term}"], f"templates {templates}")
            read = await client.read_resource("glossary://mcp")
            content = read.contents[0]
            expect(content.mime_type == "text/markdown", f"mimeType {content.mime_type}")
            text = getattr(content, "text", "")
            expect(text.startswith("# mcp\n\nModel Context Protocol"), f"text {short(text)!r}")

        await check(f"{label}/glossary: glossary://mcp reads through the template", template)

        async def prompt() -> None:
            result = await client.get_prompt("explain", {"term": "stdio", "audience": "a shell user"})
            text = text_of([message.content for message in result.messages])
            expect(text.startswith('Explain "stdio" to a shell user'), f"text {short(text)!r}")

        await check(f"{label}/glossary: the explain prompt renders its arguments", prompt)

        async def elicit() -> None:
            result = await client.call_tool("add_term", {"term": "Wasm"})
            expect(not result.is_error, text_of(result.content))
            expect(asked.messages == ['What does "wasm" mean?'], f"asked {asked.messages}")
            structured = result.structured_content or {}
            expect(structured == {"term": "wasm", "added": True}, f"structuredContent {short(structured)}")
            read = await client.read_resource("glossary://wasm")
            text = getattr(read.contents[0], "text", "")
            expect(text == f"# wasm\n\n{NEW_DEFINITION}\n", f"text {short(text)!r}")

        await check(f"{label}/glossary: add_term asks through the elicitation callback and keeps the answer", elicit)


async def run(args: argparse.Namespace) -> None:
    label = f"{args.label}/v2025" if args.v2025 else args.label
    for name, body in (("minimal", minimal), ("glossary", glossary)):
        try:
            await body(args, label)
        except Exception as exc:  # noqa: BLE001 - a failed start or close is a failed check
            REPORT.fail(f"{label}/{name}: session", describe(exc))


def main() -> int:
    parser = argparse.ArgumentParser(description="MCP Python SDK client against the examples under WASI")
    parser.add_argument("minimal", help="minimal.wasm (or the native minimal binary)")
    parser.add_argument("glossary", help="wasi_glossary.wasm (or the native binary)")
    parser.add_argument("--v2025", action="store_true", help="force the initialize handshake (2025-11-25)")
    parser.add_argument("--label", default="wasi", help="what each check's name starts with")
    parser.add_argument("--timeout", type=float, default=120.0, help="overall timeout in seconds")
    return run_bounded(run, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
