"""What the Python interop programs share: the ok/FAIL report, its summary
line, and small helpers for checks (client.py, oauth.py, multi.py)."""

from __future__ import annotations

import builtins
import json
import os
import threading
import traceback
from typing import Any, Awaitable, Callable

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

CHECK_TIMEOUT = 30.0  # seconds, per check


class Report:
    """Prints `ok NAME`, `FAIL NAME: why` and `note TEXT` lines, then one
    `N passed, M failed` summary line (the scripts read it). `ok_word` is
    what a passed check's line starts with (bridge.py prints `PASS`)."""

    def __init__(self) -> None:
        self.ok_word = "ok"
        self.passed = 0
        self.failed = 0
        self.lock = threading.Lock()
        self.finished = False

    def ok(self, name: str) -> None:
        with self.lock:
            self.passed += 1
            print(f"{self.ok_word} {name}", flush=True)

    def fail(self, name: str, reason: str) -> None:
        reason = " ".join(str(reason).split()) or "(no message)"
        with self.lock:
            self.failed += 1
            print(f"FAIL {name}: {reason}", flush=True)

    def note(self, text: str) -> None:
        with self.lock:
            print(f"note {text}", flush=True)

    def summary(self) -> None:
        with self.lock:
            if self.finished:
                return
            self.finished = True
            print(f"{self.passed} passed, {self.failed} failed", flush=True)


REPORT = Report()
_GROUP: Any = getattr(builtins, "BaseExceptionGroup", None)  # Python >= 3.11
if _GROUP is None:  # Python 3.10: anyio's backport
    try:
        from exceptiongroup import BaseExceptionGroup as _GROUP  # type: ignore[no-redef]
    except ImportError:
        pass


def describe(exc: BaseException) -> str:
    """A one-line description of an exception, unwrapping single-member exception groups."""
    while _GROUP is not None and isinstance(exc, _GROUP) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        data = f" data={json.dumps(exc.error.data)}" if exc.error.data is not None else ""
        return f"MCPError {exc.error.code}: {exc.error.message}{data}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def check(name: str, body: Callable[[], Awaitable[Any]], timeout: float = CHECK_TIMEOUT) -> bool:
    """Runs one check under its own timeout and reports it; never raises (except cancellation)."""
    try:
        with anyio.fail_after(timeout):
            await body()
    except AssertionError as exc:
        REPORT.fail(name, str(exc) or "assertion failed")
        return False
    except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
        if os.environ.get("INTEROP_DEBUG"):
            traceback.print_exc()
        REPORT.fail(name, describe(exc))
        return False
    REPORT.ok(name)
    return True


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def prompt_text(params: Any) -> str:
    """The text blocks of a sampling request's messages, joined by spaces."""
    texts = []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts.extend(block.text for block in blocks if getattr(block, "type", None) == "text")
    return " ".join(texts)


def sampling_result(text: str, model: str) -> types.CreateMessageResult:
    """A sampling callback's answer: `text` from the assistant, as `model`."""
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=text), model=model, stop_reason="endTurn"
    )


def short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def run_bounded(body: Callable[[Any], Awaitable[None]], args: Any) -> int:
    """Runs `body(args)` under `args.timeout` (and a hard watchdog 15 s later, for
    something that blocks outside the event loop), then prints the summary; the exit status."""

    def watchdog() -> None:
        REPORT.fail("overall", f"hard timeout after {args.timeout + 15:.0f} s")
        REPORT.summary()
        os._exit(1)

    timer = threading.Timer(args.timeout + 15, watchdog)
    timer.daemon = True
    timer.start()

    async def bounded() -> None:
        with anyio.move_on_after(args.timeout) as scope:
            await body(args)
        if scope.cancelled_caught:
            REPORT.fail("overall", f"timed out after {args.timeout:.0f} s")

    try:
        anyio.run(bounded)
    except BaseException as exc:  # noqa: BLE001 - report anything that escaped
        REPORT.fail("overall", "interrupted" if isinstance(exc, KeyboardInterrupt) else describe(exc))
    timer.cancel()
    if REPORT.passed == 0 and REPORT.failed == 0:
        REPORT.fail("overall", "no check ran")
    REPORT.summary()
    return 1 if REPORT.failed else 0
