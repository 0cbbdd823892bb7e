#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK client (mcp 2.3.0) talks through
``mcp bridge`` to a remote Streamable HTTP server (our ``everything`` example).

Usage:
    bridge.py MCP_BIN URL --era ERA --label LABEL --token-file PATH
              [--login first|reuse --browser BROWSER] [--timeout SECONDS]

The SDK's stdio client (``mcp.client.stdio.stdio_client`` with
``StdioServerParameters``) starts ``MCP_BIN bridge --to URL --era ERA
--token-file PATH`` and speaks the initialize era to it (``mode="legacy"``),
while the bridge speaks ERA (2025-11-25 or 2026-07-28) to the server. Checks,
each named LABEL/CHECK:

- initialize: the handshake answers protocol 2025-11-25 with the server's
  identity and tools capability;
- login (``--login first``): the bridge logged in, running BROWSER (scripts/
  interop/lib/headless-browser.py) exactly once, which reached the bridge's
  loopback callback; no-login (``--login reuse``): it used the token kept in the
  token file, running no BROWSER and printing no login URL;
- era: the server saw protocol ERA (``session_info``), and with a login a
  principal holding the scope mcp:tools;
- tools, echo: tools/list and a call of ``echo``;
- progress: ``test_tool_with_progress`` reports 0, 50, 100 to the progress callback;
- sampling, elicitation, roots: ``test_sampling``, ``test_elicitation`` and
  ``test_roots`` reach the SDK's callbacks (server requests in 2025-11-25,
  ``input_required`` rounds in 2026-07-28, both requests to the local client),
  and the callbacks' answers come back in the tool results;
- cancel: a ``slow`` call (30 s) is abandoned by its caller (an anyio cancel
  scope: the SDK sends ``notifications/cancelled``) once progress arrived; the
  server's handler sees the cancellation (``session_info`` cancelledHandlers);
- after-cancel: the bridge still answers (``echo``, a short ``slow`` call);
- auto-mode: a second bridge, and the SDK in its default mode (``mode="auto"``):
  its ``server/discover`` probe gets -32601 and it falls back to ``initialize``
  (2025-11-25); the server sees ERA, and sampling works;
- disconnect: the first client closed cleanly, no transport errors, no panic
  in the bridge's stderr.

The bridge's stderr is kept in a file next to the token file and printed as
``note`` lines when a check failed. Passed checks print ``PASS <label>``,
failed ones ``FAIL <label>: <reason>``, and, last, ``N passed, M failed``.
Exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning
from checks import REPORT, check, describe, expect, prompt_text, run_bounded, sampling_result, short

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

LOCAL_VERSION = "2025-11-25"
SAMPLING_ANSWER = "Hello through the bridge"
USERNAME = "bridge-user"
EMAIL = "bridge@example.com"
ROOT_URI = "file:///tmp/tiny-mcp-bridge-root"
ECHO_TEXT = "through the bridge: ünïcödé ✓"
LOGIN_LINE = "to log in, open this URL"
CANCEL_SEEN_WITHIN = 10.0  # seconds for the server to see a cancellation
REQUIRED_TOOLS = {
    "echo",
    "slow",
    "session_info",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_roots",
}


def text_of(result: types.CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


class Callbacks:
    def __init__(self) -> None:
        self.sampling: list[str] = []
        self.elicitation: list[str] = []
        self.roots = 0
        self.transport_errors: list[str] = []

    async def on_sampling(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.sampling.append(prompt_text(params))
        return sampling_result(SAMPLING_ANSWER, "bridge-interop-model")

    async def on_elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitation.append(getattr(params, "message", ""))
        return types.ElicitResult(action="accept", content={"username": USERNAME, "email": EMAIL})

    async def on_list_roots(self, context: Any) -> types.ListRootsResult:
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name="bridge-root")])

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.transport_errors.append(describe(message))


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.label = args.label
        self.cb = Callbacks()
        work = os.path.dirname(os.path.abspath(args.token_file))
        stem = os.path.join(work, os.path.basename(args.label.replace("/", "-")))
        self.stderr_path = stem + ".stderr"
        self.browser_log = stem + ".browser"
        for path in (self.stderr_path, self.browser_log):
            if os.path.exists(path):
                os.remove(path)

    def params(self) -> StdioServerParameters:
        a = self.args
        argv = ["bridge", "--to", a.url, "--era", a.era, "--token-file", a.token_file, "--login-timeout", "60"]
        env = {"BROWSER": "", "HEADLESS_BROWSER_LOG": self.browser_log}
        if a.login:
            env["BROWSER"] = a.browser
        return StdioServerParameters(command=a.mcp, args=argv, env=env)

    def stderr_text(self) -> str:
        try:
            with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def browser_visits(self) -> list[str]:
        try:
            with open(self.browser_log, encoding="utf-8") as f:
                return [line.strip() for line in f if line.strip()]
        except OSError:
            return []

    def name(self, check_name: str) -> str:
        return f"{self.label}/{check_name}"

    async def session_info(self, client: Client) -> dict[str, Any]:
        result = await client.call_tool("session_info", {})
        expect(not result.is_error, f"session_info: {text_of(result)}")
        return json.loads(text_of(result))

    async def checks(self, client: Client) -> None:
        cb = self.cb

        async def era() -> None:
            info = await self.session_info(client)
            got = info.get("protocolVersion")
            expect(got == self.args.era, f"the server saw protocol {got!r}, expected {self.args.era!r}")
            principal = info.get("principal")
            if self.args.login:
                scopes = (principal or {}).get("scopes") or []
                expect("mcp:tools" in scopes, f"principal {short(principal)}")
            else:
                expect(principal is None, f"a principal without a login: {short(principal)}")

        async def tools() -> None:
            names = {t.name for t in (await client.list_tools()).tools}
            missing = REQUIRED_TOOLS - names
            expect(not missing, f"tools/list lacks {sorted(missing)}")

        async def echo() -> None:
            result = await client.call_tool("echo", {"text": ECHO_TEXT})
            expect(not result.is_error and text_of(result) == ECHO_TEXT, f"echo answered {text_of(result)!r}")

        async def progress() -> None:
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append((value, total, message))

            result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            expect(not result.is_error, text_of(result))
            expect([p[0] for p in seen] == [0, 50, 100], f"progress {seen}")
            expect(all(p[1] == 100 for p in seen), f"progress totals {seen}")
            text = text_of(result)
            expect(text and text != "no progress token", f"the server got no progress token: {text!r}")

        async def sampling() -> None:
            before = len(cb.sampling)
            result = await client.call_tool("test_sampling", {"prompt": "Say hello through the bridge"})
            expect(len(cb.sampling) > before, "the sampling callback was not called")
            expect("Say hello through the bridge" in cb.sampling[-1], f"the callback got {cb.sampling[-1]!r}")
            text = text_of(result)
            expect(f"LLM response: {SAMPLING_ANSWER}" in text, f"result {text!r}")

        async def elicitation() -> None:
            before = len(cb.elicitation)
            result = await client.call_tool("test_elicitation", {"message": "Who is on the other side?"})
            expect(len(cb.elicitation) > before, "the elicitation callback was not called")
            expect(cb.elicitation[-1] == "Who is on the other side?", f"the callback got {cb.elicitation[-1]!r}")
            text = text_of(result)
            expect("action=accept" in text and USERNAME in text and EMAIL in text, f"result {text!r}")

        async def roots() -> None:
            before = cb.roots
            result = await client.call_tool("test_roots", {})
            expect(cb.roots > before, "the roots callback was not called")
            expect(not result.is_error and ROOT_URI in text_of(result), f"result {short(text_of(result))!r}")

        async def cancel() -> None:
            before = (await self.session_info(client)).get("cancelledHandlers", 0)
            started = anyio.Event()
            finished: list[Any] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                started.set()

            async def call_slow() -> None:
                finished.append(await client.call_tool("slow", {"seconds": 30}, progress_callback=on_progress))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call_slow)
                with anyio.fail_after(10):
                    await started.wait()  # the server runs the handler
                tg.cancel_scope.cancel()  # the caller gives up: notifications/cancelled
            expect(not finished, f"slow finished: {finished}")
            # The handler stops at its next step (100 ms) once the cancellation reaches it.
            with anyio.move_on_after(CANCEL_SEEN_WITHIN):
                while True:
                    now = (await self.session_info(client)).get("cancelledHandlers", 0)
                    if now > before:
                        return
                    await anyio.sleep(0.1)
            raise AssertionError(f"the server saw no cancellation within {CANCEL_SEEN_WITHIN:.0f} s")

        async def after_cancel() -> None:
            await echo()
            seen: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            result = await client.call_tool("slow", {"seconds": 0.3}, progress_callback=on_progress)
            expect(not result.is_error, f"slow: {text_of(result)}")
            expect(seen, "no progress from a short slow call")

        await check(self.name("era"), era)
        await check(self.name("tools"), tools)
        await check(self.name("echo"), echo)
        await check(self.name("progress"), progress)
        await check(self.name("sampling"), sampling)
        await check(self.name("elicitation"), elicitation)
        await check(self.name("roots"), roots)
        await check(self.name("cancel"), cancel)
        await check(self.name("after-cancel"), after_cancel)

    def check_login(self) -> None:
        visits = self.browser_visits()
        callbacks = [v for v in visits if "/callback?" in v]
        logins = self.stderr_text().count(LOGIN_LINE)
        if self.args.login == "first":
            name = self.name("login")
            ok = logins == 1 and len(callbacks) == 1 and os.path.exists(self.args.token_file)
        else:
            name = self.name("no-login")
            ok = logins == 0 and not visits
        why = f"{logins} login URL(s) on stderr, browser visits {visits}"
        if ok:
            REPORT.ok(name)
        else:
            REPORT.fail(name, why)


def make_client(r: Run, errlog: Any, mode: str) -> Client:
    return Client(
        stdio_client(r.params(), errlog=errlog),
        mode=mode,  # type: ignore[arg-type]
        read_timeout_seconds=60.0,  # initialize may wait for the login
        sampling_callback=r.cb.on_sampling,
        elicitation_callback=r.cb.on_elicitation,
        list_roots_callback=r.cb.on_list_roots,
        message_handler=r.cb.on_message,
        client_info=types.Implementation(name="tiny-mcp-bridge-interop", version="2.3.0"),
    )


async def auto_mode(r: Run, errlog: Any) -> None:
    """The SDK's default mode probes server/discover first; the bridge answers -32601 as a
    server of the initialize era, and the SDK falls back to initialize (a second bridge)."""
    async with make_client(r, errlog, "auto") as client:
        session = client.session
        expect(client.protocol_version == LOCAL_VERSION, f"negotiated {client.protocol_version!r}")
        expect(session.initialize_result is not None and session.discover_result is None, "no fallback to initialize")
        info = await r.session_info(client)
        expect(info.get("protocolVersion") == r.args.era, f"the server saw {info.get('protocolVersion')!r}")
        result = await client.call_tool("test_sampling", {"prompt": "auto mode"})
        expect(f"LLM response: {SAMPLING_ANSWER}" in text_of(result), f"result {text_of(result)!r}")


async def run(args: argparse.Namespace) -> None:
    r = Run(args)
    with open(r.stderr_path, "w", encoding="utf-8") as errlog:
        # The bridge's local side speaks the initialize era: the SDK's 2025-11-25 mode.
        client = make_client(r, errlog, "legacy")
        phase = "initialize"
        try:
            async with client:
                version = client.protocol_version
                info = client.server_info
                if version != LOCAL_VERSION:
                    REPORT.fail(r.name("initialize"), f"protocol {version!r}, expected {LOCAL_VERSION!r}")
                elif info is None or not info.name or client.server_capabilities.tools is None:
                    REPORT.fail(r.name("initialize"), f"serverInfo {info!r}, capabilities {client.server_capabilities!r}")
                else:
                    REPORT.ok(r.name("initialize"))
                if args.login:
                    r.check_login()
                phase = "checks"
                await r.checks(client)
                phase = "disconnect"
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            REPORT.fail(r.name(phase), describe(exc))
            phase = "failed"
        await check(r.name("auto-mode"), lambda: auto_mode(r, errlog), timeout=90)
    if phase == "disconnect":
        stderr = r.stderr_text()
        if r.cb.transport_errors:
            REPORT.fail(r.name("disconnect"), f"transport errors: {r.cb.transport_errors}")
        elif "panicked" in stderr:
            REPORT.fail(r.name("disconnect"), "the bridge panicked")
        else:
            REPORT.ok(r.name("disconnect"))
    if REPORT.failed:
        for line in r.stderr_text().splitlines()[-40:]:
            REPORT.note(f"{args.label} bridge stderr: {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description="MCP Python SDK client through mcp bridge")
    parser.add_argument("mcp", help="the mcp binary")
    parser.add_argument("url", help="the remote MCP endpoint")
    parser.add_argument("--era", required=True, choices=["2025-11-25", "2026-07-28"])
    parser.add_argument("--label", required=True, help="the prefix of every check's name")
    parser.add_argument("--token-file", required=True, help="the bridge's token file (its directory keeps logs)")
    parser.add_argument("--login", choices=["first", "reuse"], help="the server asks for OAuth")
    parser.add_argument("--browser", default="", help="BROWSER for the bridge's login")
    parser.add_argument("--timeout", type=float, default=120.0, help="overall timeout in seconds")
    args = parser.parse_args()
    REPORT.ok_word = "PASS"
    return run_bounded(run, args)


if __name__ == "__main__":
    sys.exit(main())
