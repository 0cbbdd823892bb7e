#!/usr/bin/env python3
"""Interop test: a task end to end with the official MCP Python SDK client
(mcp 2.3.0) against our `everything` example, 2026-07-28 era.

Usage:
    tasks.py stdio BINARY
    tasks.py http URL

mcp 2.3.0 ships no tasks API. What it has is its generic extension
surface: a `ClientExtension` advertises `io.modelcontextprotocol/tasks` in
each request's client capabilities, a `ResultClaim` accepts
`resultType: "task"` on `tools/call`, and its resolver polls `tasks/get`
(a `Request` subclass whose `name_param` puts the task id in `Mcp-Name`,
SEP-2663) until the task is terminal. This file writes that extension,
about forty lines, then calls `slow_compute` (a task), `confirm_delete`
(a task that asks for input, answered through `tasks/update`) and
`greet` (never a task) through `Client.call_tool`.

Prints ``ok <check>`` or ``FAIL <check>: <reason>`` per check and, last,
``N passed, M failed``. Exits 1 if any check failed.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.stdio import StdioServerParameters
from pydantic import ConfigDict

from checks import REPORT, check, expect

TASKS = "io.modelcontextprotocol/tasks"


class TaskParams(types.RequestParams):
    task_id: str


class UpdateParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    name_param = "taskId"


class Task(types.Result):
    """A CreateTaskResult (SEP-2663), the shape the claim accepts."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """What tasks/get answers: the task and what its status carries."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


SEEN: dict[str, list[str]] = {}


async def resolve(created: Task, ctx: ClaimContext) -> types.CallToolResult:
    """Polls tasks/get until terminal; answers input requests with `accept`."""
    statuses = SEEN.setdefault(ctx.tool_name, [created.status])
    with anyio.fail_after(30):
        while True:
            task = await ctx.session.send_request(GetTask(params=TaskParams(task_id=created.task_id)), DetailedTask)
            if statuses[-1] != task.status:
                statuses.append(task.status)
            if task.status == "completed":
                return types.CallToolResult.model_validate(task.result)
            if task.status in ("failed", "cancelled"):
                raise RuntimeError(f"task {task.status}: {task.error}")
            if task.status == "input_required" and task.input_requests:
                answers = {key: {"action": "accept", "content": {"confirm": True}} for key in task.input_requests}
                params = UpdateParams(task_id=created.task_id, input_responses=answers)
                await ctx.session.send_request(UpdateTask(params=params), types.Result)
            await anyio.sleep((task.poll_interval_ms or 100) / 1000)


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=Task, resolve=resolve)]


async def declined(context: Any, params: Any) -> types.ElicitResult:
    """Declares elicitation; a task's own requests go through tasks/update."""
    return types.ElicitResult(action="decline")


async def main() -> None:
    transport, target = sys.argv[1], sys.argv[2]
    server: Any = StdioServerParameters(command=target, args=[]) if transport == "stdio" else target
    async with Client(server, mode="auto", read_timeout_seconds=30, extensions=[Tasks()], elicitation_callback=declined) as client:

        async def slow() -> None:
            result = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "py"})
            expect("py: computed" in result.content[0].text, f"result {result}")
            expect(SEEN["slow_compute"][0] == "working", f"statuses {SEEN.get('slow_compute')}")

        async def confirm() -> None:
            result = await client.call_tool("confirm_delete", {"filename": "a.txt"})
            expect(result.content[0].text == "Deleted a.txt", f"result {result}")
            expect("input_required" in SEEN["confirm_delete"], f"statuses {SEEN.get('confirm_delete')}")

        async def greet() -> None:
            result = await client.call_tool("greet", {"name": "Py"})
            expect(result.content[0].text == "Hello, Py!", f"result {result}")
            expect("greet" not in SEEN, "greet became a task")

        await check(f"{transport}: slow_compute runs as a task", slow)
        await check(f"{transport}: confirm_delete asks through tasks/update", confirm)
        await check(f"{transport}: greet answers at once", greet)
    REPORT.summary()


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(1 if REPORT.failed else 0)
