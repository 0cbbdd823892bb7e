#!/usr/bin/env python3
"""Multi-instance test (issue 10): several `everything` instances behind nginx.

Usage:
    multi.py --nginx URL --instance NAME=URL [--instance NAME=URL ...]
             [--kill-pid NAME=PID] [--redis-port PORT --redis-conf FILE] [--timeout SECONDS]

Run by scripts/check/multi-instance.sh, which starts redis-server, three instances (``--instance
NAME --session-prefix NAME. --state-key-file F --redis URL``) and nginx in front of them
(round-robin for everything without a session, ``Mcp-Session-Id`` values starting with
``NAME.`` to instance NAME). The checks:

1. 2026-07-28 ``tools/call session_info`` through nginx, many times: every instance answers
   (``Mcp-Instance`` and the ``instance`` session_info reports agree).
2. A multi-round 2026-07-28 call (``test_input_required_result_elicitation``) whose retry
   lands on another instance (sent straight to another instance when nginx picks the same
   one) completes with "Hello, Ada!" (sealed requestState).
3. A 2025-11-25 session through nginx (initialize, notifications/initialized, tools/call,
   a GET stream, a POST answered as SSE) is served by its owner throughout; a POST answered
   as SSE, dropped after its first event, resumes through nginx with a ``Last-Event-ID`` GET
   and gets every later event once, and the answer.
4. The Redis bus: ``notify_changed`` on one instance reaches a ``subscriptions/listen``
   stream held on a second and a 2025-11-25 GET stream held on a third.
5. Kill the instance named by ``--kill-pid`` (SIGKILL): 2026-07-28 calls through nginx keep
   succeeding, its 2025-11-25 session is 404 through nginx, and the official Python SDK
   client (mcp 2.3.0, 2025-11-25 mode, Streamable HTTP through nginx) whose session it owned
   sees the session end, starts a new session and calls test_simple_text.
6, 7, 9. With ``--redis-port`` and ``--redis-conf``: the fault checks of faults.py (a task
   driven through three instances, a Redis outage under load with notifications counted, a
   dead instance's task failing within its lease).

Prints ``ok <check>`` or ``FAIL <check>: <reason>`` per check and, last,
``N passed, M failed``. Exits 1 if any check failed, also on the overall timeout. Every
network wait is bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Iterator

import anyio
import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from checks import REPORT, describe, expect, short

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

V2026 = "2026-07-28"
V2025 = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "tiny-mcp-multi-instance", "version": "1"}
ACCEPT_BOTH = "application/json, text/event-stream"
HTTP_TIMEOUT = 10.0  # seconds, per HTTP request (connect, each read)
STREAM_WAIT = 10.0  # seconds to wait for a notification on a stream
SDK_TIMEOUT = 30.0  # seconds, the SDK client's read timeout


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def run_check(name: str, body: Callable[[], Any], pending: bool = False) -> bool:
    """Runs one synchronous check; reports ok/FAIL (or a pending note); never raises."""
    try:
        body()
    except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
        if os.environ.get("INTEROP_DEBUG"):
            traceback.print_exc()
        why = str(exc) if isinstance(exc, AssertionError) else describe(exc)
        if pending:
            REPORT.note(f"pending {name}: {' '.join(why.split())}")
        else:
            REPORT.fail(name, why)
        return False
    if pending:
        REPORT.note(f"pending {name}: passed (not counted)")
    else:
        REPORT.ok(name)
    return True


# ---------------------------------------------------------------------------
# Raw JSON-RPC over Streamable HTTP
# ---------------------------------------------------------------------------


def rpc(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def v2026_params(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with the 2026-07-28 envelope (a client that can elicit)."""
    out = dict(params)
    out["_meta"] = {META_VERSION: V2026, META_CAPS: {"elicitation": {"form": {}}}, META_INFO: CLIENT_INFO}
    return out


def v2026_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": V2026, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def sse_records(lines: Iterator[str]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """(event id, JSON-RPC message) from SSE lines; comments such as keepalives and
    events without JSON data (the priming event) are skipped."""
    data: list[str] = []
    event_id: str | None = None
    for line in lines:
        if line == "":
            if data:
                text = "\n".join(data)
                data = []
                try:
                    yield event_id, json.loads(text)
                except ValueError:
                    pass
            event_id = None
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "id":
            event_id = value


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """JSON-RPC messages from SSE lines (comments such as keepalives skipped)."""
    for _, message in sse_records(lines):
        yield message


def messages_of(response: httpx2.Response) -> list[dict[str, Any]]:
    ctype = response.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        return list(sse_events(iter(response.text.splitlines() + [""])))
    if ctype.startswith("application/json") and response.content:
        body = response.json()
        return body if isinstance(body, list) else [body]
    return []


def answer_to(response: httpx2.Response, id_: Any) -> dict[str, Any]:
    for message in messages_of(response):
        if message.get("id") == id_ and ("result" in message or "error" in message):
            return message
    raise AssertionError(
        f"no answer to id {id_!r}: HTTP {response.status_code} {response.headers.get('content-type')} {short(response.text)}"
    )


def tool_text(message: dict[str, Any]) -> str:
    expect("result" in message, f"an error: {short(message)}")
    content = message["result"].get("content") or []
    expect(bool(content) and content[0].get("type") == "text", f"no text content: {short(message)}")
    return content[0]["text"]


class Raw:
    """Raw requests with httpx2 (one connection pool, bounded timeouts)."""

    def __init__(self) -> None:
        self.http = httpx2.Client(trust_env=False, timeout=httpx2.Timeout(HTTP_TIMEOUT))
        self.next_id = 0

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def post(self, url: str, body: Any, headers: dict[str, str], accept: str = ACCEPT_BOTH) -> httpx2.Response:
        all_headers = {"Content-Type": "application/json", "Accept": accept, **headers}
        return self.http.post(url, content=json.dumps(body).encode(), headers=all_headers)

    def v2026_call(
        self, url: str, tool: str, arguments: dict[str, Any] | None = None, extra: dict[str, Any] | None = None
    ) -> tuple[httpx2.Response, dict[str, Any]]:
        id_ = self.new_id()
        params = v2026_params({"name": tool, "arguments": arguments or {}})
        params.update(extra or {})
        response = self.post(url, rpc(id_, "tools/call", params), v2026_headers("tools/call", tool))
        expect(response.status_code == 200, f"{tool}: HTTP {response.status_code} {short(response.text)}")
        return response, answer_to(response, id_)

    def v2025_initialize(self, url: str) -> tuple[httpx2.Response, str]:
        params = {"protocolVersion": V2025, "capabilities": {}, "clientInfo": CLIENT_INFO}
        response = self.post(url, rpc(self.new_id(), "initialize", params), {})
        expect(response.status_code == 200, f"initialize: HTTP {response.status_code} {short(response.text)}")
        sid = response.headers.get("mcp-session-id")
        expect(bool(sid), f"initialize: no Mcp-Session-Id ({dict(response.headers)})")
        note = self.post(
            url,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"Mcp-Session-Id": sid, "MCP-Protocol-Version": V2025},
        )
        expect(note.status_code == 202, f"notifications/initialized: HTTP {note.status_code} {short(note.text)}")
        return response, sid  # type: ignore[return-value]

    def v2025_call(
        self, url: str, sid: str, tool: str, arguments: dict[str, Any] | None = None, accept: str = ACCEPT_BOTH,
        meta: dict[str, Any] | None = None,
    ) -> tuple[httpx2.Response, dict[str, Any] | None]:
        id_ = self.new_id()
        params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        response = self.post(
            url, rpc(id_, "tools/call", params), {"Mcp-Session-Id": sid, "MCP-Protocol-Version": V2025}, accept
        )
        if response.status_code != 200:
            return response, None
        return response, answer_to(response, id_)


class Stream:
    """An open SSE response read line by line; every read bounded by HTTP_TIMEOUT."""

    def __init__(self, raw: Raw, method: str, url: str, headers: dict[str, str], body: Any = None) -> None:
        all_headers = dict(headers)
        content = None
        if body is not None:
            all_headers.setdefault("Content-Type", "application/json")
            all_headers.setdefault("Accept", ACCEPT_BOTH)
            content = json.dumps(body).encode()
        else:
            all_headers.setdefault("Accept", "text/event-stream")
        request = raw.http.build_request(method, url, headers=all_headers, content=content)
        self.response = raw.http.send(request, stream=True)
        self.records = sse_records(self.response.iter_lines())
        self.events = (message for _, message in self.records)

    def headers(self) -> httpx2.Headers:
        return self.response.headers

    def next_message(self) -> dict[str, Any]:
        return next(self.events)

    def wait_for(self, method: str, within: float = STREAM_WAIT) -> dict[str, Any]:
        """The next message with this method; other messages are skipped."""
        deadline = time.monotonic() + within
        seen: list[str] = []
        while time.monotonic() < deadline:
            try:
                message = self.next_message()
            except StopIteration:
                raise AssertionError(f"the stream ended before {method} (saw {seen})") from None
            except httpx2.ReadTimeout:
                raise AssertionError(f"no {method} within {HTTP_TIMEOUT:.0f} s (saw {seen})") from None
            if message.get("method") == method:
                return message
            seen.append(str(message.get("method") or message.get("id")))
        raise AssertionError(f"no {method} within {within:.0f} s (saw {seen})")

    def close(self) -> None:
        try:
            self.response.close()
        except Exception:  # noqa: BLE001
            pass


def session_info_instance(message: dict[str, Any]) -> Any:
    info = json.loads(tool_text(message))
    return info.get("instance")


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.nginx: str = args.nginx
        self.instances: dict[str, str] = dict(args.instance)
        self.kill: tuple[str, int] | None = args.kill_pid
        self.raw = Raw()
        self.names = sorted(self.instances)

    # 1 -------------------------------------------------------------------
    def spread(self) -> None:
        seen: dict[str, int] = {}
        for _ in range(4 * len(self.names)):
            response, message = self.raw.v2026_call(self.nginx, "session_info")
            header = response.headers.get("mcp-instance")
            reported = session_info_instance(message)
            expect(header == reported, f"Mcp-Instance {header!r} but session_info says {reported!r}")
            seen[header] = seen.get(header, 0) + 1  # type: ignore[index]
        expect(set(seen) == set(self.names), f"instances seen through nginx: {seen}, want all of {self.names}")
        REPORT.note(f"round-robin through nginx: {seen}")

    # 2 -------------------------------------------------------------------
    def multi_round(self) -> None:
        tool = "test_input_required_result_elicitation"
        first, message = self.raw.v2026_call(self.nginx, tool)
        first_on = first.headers.get("mcp-instance")
        result = message.get("result") or {}
        expect(result.get("resultType") == "input_required", f"first round: {short(message)}")
        requests = result.get("inputRequests") or {}
        state = result.get("requestState")
        expect(len(requests) == 1 and isinstance(state, str), f"first round: {short(message)}")
        key = next(iter(requests))
        extra = {
            "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": state,
        }
        retry, answer = self.raw.v2026_call(self.nginx, tool, extra=extra)
        retry_on = retry.headers.get("mcp-instance")
        how = "through nginx"
        if retry_on == first_on:
            other = next(n for n in self.names if n != first_on)
            retry, answer = self.raw.v2026_call(self.instances[other], tool, extra=extra)
            retry_on = retry.headers.get("mcp-instance")
            how = f"straight to {other}"
        expect(retry_on != first_on, f"the retry landed on {retry_on} too")
        text = tool_text(answer)
        expect(text == "Hello, Ada!", f"retry on {retry_on}: {text!r}")
        REPORT.note(f"multi-round: first round on {first_on}, retry on {retry_on} ({how})")

    # 3 -------------------------------------------------------------------
    def v2025_session(self) -> None:
        init, sid = self.raw.v2025_initialize(self.nginx)
        owner = init.headers.get("mcp-instance")
        expect(owner in self.names, f"initialize answered by {owner!r}")
        expect(sid.startswith(f"{owner}."), f"session id {sid!r} minted by {owner} lacks its prefix")
        served: list[str | None] = []
        for _ in range(2 * len(self.names)):
            response, message = self.raw.v2025_call(self.nginx, sid, "session_info")
            expect(message is not None, f"tools/call: HTTP {response.status_code} {short(response.text)}")
            served.append(response.headers.get("mcp-instance"))
            expect(session_info_instance(message) == owner, f"session_info on {owner}'s session: {short(message)}")
        stream = Stream(self.raw, "GET", self.nginx, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": V2025})
        try:
            expect(stream.response.status_code == 200, f"GET stream: HTTP {stream.response.status_code}")
            expect(
                stream.headers().get("content-type", "").startswith("text/event-stream"),
                f"GET stream: {stream.headers().get('content-type')}",
            )
            served.append(stream.headers().get("mcp-instance"))
            # A POST answered as SSE: a tool that reports progress streams its answer.
            response, message = self.raw.v2025_call(
                self.nginx, sid, "slow", {"seconds": 0.3}, meta={"progressToken": "multi-progress"}
            )
            expect(message is not None, f"slow: HTTP {response.status_code} {short(response.text)}")
            ctype = response.headers.get("content-type", "")
            expect(ctype.startswith("text/event-stream"), f"slow with a progressToken answered {ctype}")
            expect("result" in message, f"slow: {short(message)}")
            served.append(response.headers.get("mcp-instance"))
            # The GET stream is live on the owner: a change made in the session arrives on it.
            response, message = self.raw.v2025_call(self.nginx, sid, "notify_changed")
            expect(message is not None and "result" in message, f"notify_changed: {short(response.text)}")
            served.append(response.headers.get("mcp-instance"))
            stream.wait_for("notifications/tools/list_changed")
        finally:
            stream.close()
        expect(all(s == owner for s in served), f"session of {owner} served by {served}")
        REPORT.note(f"2025-11-25 session {sid[:10]}… served by {owner} for {len(served)} responses")

    # 3b ------------------------------------------------------------------
    def resume(self) -> None:
        """A POST answered as SSE, dropped after its first progress event and resumed
        through nginx with a GET carrying ``Last-Event-ID`` (2025-11-25 transports,
        "Resumability and Redelivery"): the owner replays every later event, once."""
        init, sid = self.raw.v2025_initialize(self.nginx)
        owner = init.headers.get("mcp-instance")
        headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": V2025}
        id_ = self.raw.new_id()
        params = {"name": "slow", "arguments": {"seconds": 1.0}, "_meta": {"progressToken": "resume"}}
        post = Stream(self.raw, "POST", self.nginx, headers, rpc(id_, "tools/call", params))
        try:
            expect(post.response.status_code == 200, f"slow: HTTP {post.response.status_code}")
            first_id, first = next(post.records)
            expect(first.get("method") == "notifications/progress", f"first event: {short(first)}")
            expect(bool(first_id), "the progress event has no id to resume from")
        finally:
            post.close()  # the client's connection drops; the handler runs on
        resumed = Stream(self.raw, "GET", self.nginx, {**headers, "Last-Event-ID": str(first_id)})
        progress = [first["params"]["progress"]]
        answer = None
        try:
            expect(resumed.response.status_code == 200, f"resuming GET: HTTP {resumed.response.status_code}")
            expect(resumed.headers().get("mcp-instance") == owner, f"resumed on {resumed.headers().get('mcp-instance')}")
            for _, message in resumed.records:
                if message.get("method") == "notifications/progress":
                    progress.append(message["params"]["progress"])
                elif message.get("id") == id_:
                    answer = message
                    break
        finally:
            resumed.close()
        expect(answer is not None and "result" in answer, f"no answer after the resume: {short(answer)}")
        steps = list(range(1, 11))
        expect(progress == steps, f"progress seen {progress}, expected {steps} (lost or repeated events)")
        REPORT.note(f"resumed after event {first_id} on {owner}: {len(progress) - 1} progress events and the answer replayed")

    # 4 -------------------------------------------------------------------
    def bus(self) -> None:
        a, b, c = self.names[:3]
        listen_id = self.raw.new_id()
        listen = Stream(
            self.raw,
            "POST",
            self.instances[b],
            v2026_headers("subscriptions/listen"),
            rpc(listen_id, "subscriptions/listen", v2026_params({"notifications": {"toolsListChanged": True}})),
        )
        get = None
        try:
            expect(listen.response.status_code == 200, f"listen on {b}: HTTP {listen.response.status_code}")
            ack = listen.next_message()
            expect(ack.get("method") == "notifications/subscriptions/acknowledged", f"listen on {b}: {short(ack)}")
            _, sid = self.raw.v2025_initialize(self.instances[c])
            get = Stream(self.raw, "GET", self.instances[c], {"Mcp-Session-Id": sid, "MCP-Protocol-Version": V2025})
            expect(get.response.status_code == 200, f"GET on {c}: HTTP {get.response.status_code}")
            response, message = self.raw.v2026_call(self.instances[a], "notify_changed")
            expect(response.headers.get("mcp-instance") == a and "result" in message, f"notify_changed on {a}: {short(message)}")
            try:
                listen.wait_for("notifications/tools/list_changed")
            except AssertionError as exc:
                raise AssertionError(f"listen stream on {b}: {exc}") from None
            try:
                get.wait_for("notifications/tools/list_changed")
            except AssertionError as exc:
                raise AssertionError(f"GET stream on {c}: {exc}") from None
        finally:
            listen.close()
            if get is not None:
                get.close()

    # 5 -------------------------------------------------------------------
    def kill_instance(self) -> None:
        assert self.kill is not None
        name, pid = self.kill
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            # Still there (a zombie until the script reaps it): is its port closed?
            try:
                self.raw.http.get(self.instances[name], timeout=0.5)
            except httpx2.TransportError:
                break
            time.sleep(0.05)
        REPORT.note(f"killed instance {name} (pid {pid})")

    def v2026_survives(self, dead: str) -> None:
        seen: dict[str, int] = {}
        for i in range(4 * len(self.names)):
            response, message = self.raw.v2026_call(self.nginx, "test_simple_text")
            expect("result" in message, f"call {i} after the kill: {short(message)}")
            on = response.headers.get("mcp-instance")
            seen[on] = seen.get(on, 0) + 1  # type: ignore[index]
        expect(dead not in seen, f"the dead instance {dead} answered: {seen}")
        REPORT.note(f"after the kill: {seen}")

    def dead_session_404(self, sid: str) -> None:
        response, _ = self.raw.v2025_call(self.nginx, sid, "test_simple_text")
        expect(
            response.status_code == 404,
            f"{sid[:10]}… after its owner died: HTTP {response.status_code} from {response.headers.get('mcp-instance')} {short(response.text)}",
        )

    def v2025_session_on(self, name: str) -> str:
        """A raw 2025-11-25 session minted by `name` (through nginx when round-robin lands there)."""
        for _ in range(2 * len(self.names)):
            init, sid = self.raw.v2025_initialize(self.nginx)
            if init.headers.get("mcp-instance") == name:
                return sid
        _, sid = self.raw.v2025_initialize(self.instances[name])
        return sid


# ---------------------------------------------------------------------------
# The official SDK client (mcp 2.3.0) through nginx
# ---------------------------------------------------------------------------


def sdk_client(url: str) -> Client:
    http = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(SDK_TIMEOUT))
    return Client(
        streamable_http_client(url, http_client=http),
        mode="legacy",  # the SDK's name for its 2025-11-25 mode
        read_timeout_seconds=SDK_TIMEOUT,
        client_info=types.Implementation(name="tiny-mcp-multi-instance-sdk", version="2.3.0"),
    )


async def sdk_instance(client: Client) -> Any:
    result = await client.call_tool("session_info", {})
    text = result.content[0].text  # type: ignore[union-attr]
    return json.loads(text).get("instance")


async def sdk_simple_text(client: Client) -> str:
    result = await client.call_tool("test_simple_text", {})
    expect(not result.is_error if hasattr(result, "is_error") else not result.isError, f"isError: {result}")  # type: ignore[attr-defined]
    return result.content[0].text  # type: ignore[union-attr]


async def sdk_failover(run: Run, before_kill: Callable[[], None], after_kill: Callable[[], None]) -> None:
    """An SDK session owned by the instance to kill; the kill; the SDK client carries on.

    The client's task groups are entered and left in this task with `async with`, so the
    bounds are scopes around whole `async with` blocks (and the client's read timeout)."""
    assert run.kill is not None
    dead = run.kill[0]
    name = "5. SDK client (2025-11-25, through nginx)"
    # Round-robin: one of the first few sessions lands on the instance to kill.
    attempt = 0
    done = False
    while not done and attempt < 2 * len(run.names):
        attempt += 1
        ended: BaseException | None = None
        with anyio.fail_after(3 * SDK_TIMEOUT):
            async with sdk_client(run.nginx) as client:
                if await sdk_instance(client) != dead:
                    continue
                REPORT.note(f"{name}: session on {dead} after {attempt} connection(s)")
                expect(bool(await sdk_simple_text(client)), "empty test_simple_text before the kill")
                before_kill()
                after_kill()
                try:
                    await sdk_simple_text(client)
                except MCPError as exc:
                    ended = exc
                done = True
                # Leaving the block sends DELETE through nginx: another instance answers 404.
        expect(ended is not None, f"the SDK client's call on {dead}'s session still succeeded after the kill")
        REPORT.ok(f"{name}: the old session ends ({describe(ended)})")  # type: ignore[arg-type]
    expect(done, f"no SDK session landed on {dead} in {attempt} tries")
    with anyio.fail_after(2 * SDK_TIMEOUT):
        async with sdk_client(run.nginx) as fresh:
            on = await sdk_instance(fresh)
            expect(on in run.names and on != dead, f"the new session is on {on!r}")
            text = await sdk_simple_text(fresh)
            expect(bool(text), "empty test_simple_text")
    REPORT.ok(f"{name}: a new session on {on} carries on (test_simple_text: {short(text, 60)!r})")


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def kill_pair(text: str) -> tuple[str, int]:
    name, value = pair(text)
    return name, int(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nginx", required=True, help="the load balancer's MCP endpoint")
    parser.add_argument("--instance", type=pair, action="append", required=True, help="NAME=URL of an instance")
    parser.add_argument("--kill-pid", type=kill_pair, help="NAME=PID: the instance check 5 kills")
    parser.add_argument("--redis-port", type=int, help="the Redis port the fault checks stop and start")
    parser.add_argument("--redis-conf", help="the configuration Redis is started again from")
    parser.add_argument("--timeout", type=float, default=180.0, help="overall timeout in seconds")
    args = parser.parse_args()

    def on_alarm(_signum: int, _frame: Any) -> None:
        REPORT.fail("overall", f"timed out after {args.timeout:.0f} s")
        REPORT.summary()
        os._exit(1)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(max(1, int(args.timeout)))

    run = Run(args)
    expect(len(run.names) >= 3, "needs three instances")
    run_check("1. 2026-07-28 tools/call through nginx reaches every instance", run.spread)
    run_check("2. multi-round 2026-07-28 call completes on another instance (sealed requestState)", run.multi_round)
    run_check("3. 2025-11-25 session through nginx is served by its owner throughout", run.v2025_session)
    run_check("3b. a dropped 2025-11-25 POST stream resumes through nginx with Last-Event-ID, no event lost", run.resume)
    run_check(
        "4. Redis bus: notify_changed on one instance reaches a listen stream and a GET stream on two others",
        run.bus,
    )
    faults = None
    if args.redis_port and args.redis_conf:
        from faults import Faults  # imports this module: only once it is loaded

        faults = Faults(run, args.redis_port, args.redis_conf)
        run_check("6. a 2026-07-28 task is polled, given input and cancelled through other instances", faults.tasks_anywhere)
        run_check("7. Redis down 5 s under load: no call without Redis fails, no notification lost or repeated", faults.outage)

    if run.kill is None:
        REPORT.note("no --kill-pid: check 5 skipped")
    else:
        dead = run.kill[0]
        raw_sid: dict[str, str] = {}

        def before_kill() -> None:
            raw_sid["sid"] = run.v2025_session_on(dead)
            expect(raw_sid["sid"].startswith(f"{dead}."), f"raw session {raw_sid['sid']!r}")
            if faults is not None:
                raw_sid["task"] = faults.dead_task_start(dead)

        def after_kill() -> None:
            run.kill_instance()
            run_check(f"5. after {dead} dies: 2026-07-28 calls through nginx keep succeeding", lambda: run.v2026_survives(dead))
            run_check(f"5. after {dead} dies: its 2025-11-25 session is 404 through nginx", lambda: run.dead_session_404(raw_sid["sid"]))
            if faults is not None:
                run_check(f"9. after {dead} dies: its task is failed within the lease", lambda: faults.dead_task_failed(raw_sid["task"]))

        try:
            anyio.run(sdk_failover, run, before_kill, after_kill)
        except BaseException as exc:  # noqa: BLE001
            if os.environ.get("INTEROP_DEBUG"):
                traceback.print_exc()
            if isinstance(exc, KeyboardInterrupt):
                raise
            REPORT.fail("5. SDK client failover through nginx", describe(exc))

    REPORT.summary()
    sys.exit(1 if REPORT.failed else 0)


if __name__ == "__main__":
    main()
