#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK client (mcp 2.3.0) drives our server.

Usage:
    client.py stdio BINARY [--v2025] [--timeout SECONDS]
    client.py http URL [--v2025] [--timeout SECONDS]

Default mode is the client's own default (``mode="auto"``): it probes
``server/discover`` and must end up on the 2026-07-28 era. ``--v2025``
forces the ``initialize`` handshake (the SDK's ``mode="legacy"``) and must end
up on 2025-11-25.

In both modes the client lists every tool (all pages) and calls each one with
arguments built from its inputSchema, answering sampling, elicitation and roots
through its callbacks (as server->client requests in the 2025-11-25 era, as
``input_required`` rounds in the 2026-07-28 era); lists and reads every resource and
the template ``test://template/42/data``; lists and gets every prompt; and
checks completion. In the default mode it also opens ``subscriptions/listen``
streams and checks that ``tools/list_changed`` (and ``prompts/list_changed``)
arrive on them; in the 2025-11-25 mode it checks that the same notifications
arrive on the session.

Prints ``ok <check>`` or ``FAIL <check>: <reason>`` per check and, last,
``N passed, M failed``. Exits 1 if any check failed, also on the overall timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
import warnings
from typing import Any, Callable

import anyio
import mcp_types as types
from mcp.client import Client, ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from checks import REPORT, check, describe, expect, prompt_text, run_bounded, sampling_result, short

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

V2026 = "2026-07-28"
V2025 = "2025-11-25"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
ROOT_URI = "file:///tmp/tiny-mcp-interop-root"
CLIENT_NAME = "tiny-mcp-python-interop"
SAMPLING_ANSWER = "Hello from the Python interop client"

CHECK_TIMEOUT = 30.0  # seconds, per check
NOTIFY_WAIT = 5.0  # seconds to wait for a list_changed notification


# ---------------------------------------------------------------------------
# Sample values from JSON schemas
# ---------------------------------------------------------------------------


def resolve_ref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    return node if isinstance(node, dict) else {}


def sample_string(name: str, schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    lname = name.lower()
    if fmt == "email" or "email" in lname:
        return "interop@example.com"
    if fmt in ("uri", "url") or lname.endswith("uri") or lname.endswith("url"):
        return "test://static-text"
    if fmt == "date":
        return "2026-07-28"
    if fmt == "date-time":
        return "2026-07-28T12:00:00Z"
    value = f"interop-{name}" if name else "interop"
    min_len = schema.get("minLength")
    if isinstance(min_len, int) and len(value) < min_len:
        value = value + "x" * (min_len - len(value))
    max_len = schema.get("maxLength")
    if isinstance(max_len, int) and len(value) > max_len:
        value = value[:max_len]
    return value


def sample_number(schema: dict[str, Any], integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = 1 if integer else 1.5
    if isinstance(low, (int, float)) and value <= low:
        value = low + 1
    if isinstance(high, (int, float)) and value >= high:
        value = high if "maximum" in schema else high - 1
    return int(value) if integer else value


def sample_value(schema: Any, root: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    """A value that fits `schema` (the common JSON Schema keywords; good enough for test fixtures)."""
    if not isinstance(schema, dict) or depth > 8:
        return f"interop-{name}" if name else "interop"
    schema = resolve_ref(schema, root)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return sample_value(options[0], root, name, depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = resolve_ref(part, root) if isinstance(part, dict) else {}
            for k, v in part.items():
                if k == "properties" and isinstance(v, dict):
                    merged.setdefault("properties", {}).update(v)
                elif k == "required" and isinstance(v, list):
                    merged["required"] = list(merged.get("required", [])) + v
                else:
                    merged.setdefault(k, v)
        return sample_value(merged, root, name, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        return sample_object(schema, root, depth + 1)
    if kind == "array":
        item = sample_value(schema.get("items", {}), root, name, depth + 1)
        count = max(1, schema.get("minItems", 1) if isinstance(schema.get("minItems"), int) else 1)
        return [item] * count
    if kind == "integer":
        return sample_number(schema, integer=True)
    if kind == "number":
        return sample_number(schema, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return sample_string(name, schema)


def sample_object(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Every property of an object schema gets a value (required or not)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {key: sample_value(prop, root, key, depth) for key, prop in properties.items()}


# ---------------------------------------------------------------------------
# Callbacks (server -> client requests in 2025-11-25, input_required rounds in 2026-07-28)
# ---------------------------------------------------------------------------


class Callbacks:
    def __init__(self) -> None:
        self.sampling: list[str] = []
        self.elicitation_form: list[str] = []
        self.elicitation_url: list[str] = []
        self.roots = 0
        self.logs: list[Any] = []
        self.notifications: list[types.ServerNotification] = []
        self.transport_errors: list[str] = []

    async def on_sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        prompt = prompt_text(params)
        self.sampling.append(prompt)
        answer = "Paris" if "capital of France" in prompt else SAMPLING_ANSWER
        return sampling_result(answer, "interop-model")

    async def on_elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            self.elicitation_url.append(params.url)
            return types.ElicitResult(action="accept")
        self.elicitation_form.append(params.message)
        schema = params.requested_schema or {}
        content = sample_object(schema, schema)
        # A form answer holds flat primitives (and string arrays) only.
        for key, value in list(content.items()):
            if isinstance(value, list):
                content[key] = [str(v) for v in value]
            elif not isinstance(value, (str, int, float, bool)) and value is not None:
                content[key] = json.dumps(value)
        return types.ElicitResult(action="accept", content=content)

    async def on_list_roots(self, context: Any) -> types.ListRootsResult:
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name="interop-root")])

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.transport_errors.append(describe(message))
        else:
            self.notifications.append(message)


# Every JSON-RPC request the server sends to the client, by method. The 2026-07-28 era
# must send none (GEN-5: sampling, elicitation and roots travel as input_required
# rounds); the 2025-11-25 era sends them as requests. ClientSession binds its
# `_on_request` when it is entered, so wrapping the class attribute sees them all.
SERVER_REQUESTS: list[str] = []
_original_on_request = ClientSession._on_request


async def _recording_on_request(self: ClientSession, dctx: Any, method: str, params: Any) -> Any:
    SERVER_REQUESTS.append(method)
    return await _original_on_request(self, dctx, method, params)


ClientSession._on_request = _recording_on_request  # type: ignore[method-assign]


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------


def text_of(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.CallToolResult):
        blocks = result.content
    else:
        blocks = [message.content for message in result.messages]
    return "\n".join(b.text for b in blocks if isinstance(b, types.TextContent))


def result_summary(result: types.CallToolResult) -> str:
    return short(result.model_dump(mode="json", by_alias=True, exclude_none=True))


class Run:
    def __init__(self, client: Client, callbacks: Callbacks, v2025: bool, transport: str) -> None:
        self.client = client
        self.cb = callbacks
        self.v2025 = v2025
        self.transport = transport
        self.version = V2025 if v2025 else V2026
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []

    # -- era ------------------------------------------------------------------

    async def check_version(self) -> None:
        session = self.client.session
        got = self.client.protocol_version
        expect(got == self.version, f"negotiated {got!r}, expected {self.version!r}")
        if self.v2025:
            expect(session.initialize_result is not None, "no initialize result")
            expect(session.discover_result is None, "2025-11-25 mode has a discover result")
        else:
            expect(session.discover_result is not None, "no server/discover result (not reached by discover)")
            supported = session.discover_result.supported_versions
            expect(V2026 in supported, f"server/discover supportedVersions {supported} lacks {V2026}")
        info = self.client.server_info
        expect(info is not None and info.name, f"no serverInfo ({info!r})")
        caps = self.client.server_capabilities
        expect(caps.tools is not None, "server capabilities lack tools")
        expect(caps.resources is not None, "server capabilities lack resources")
        expect(caps.prompts is not None, "server capabilities lack prompts")

    # -- tools ----------------------------------------------------------------

    async def all_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await self.client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
        raise AssertionError("tools/list never ended (100 pages)")

    async def list_tools(self) -> None:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await self.client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        else:
            raise AssertionError("tools/list never ended (100 pages)")
        names = [t.name for t in tools]
        expect(len(names) == len(set(names)), f"duplicate tool names: {names}")
        for tool in tools:
            expect(isinstance(tool.input_schema, dict), f"{tool.name}: inputSchema is not an object")
        for required in ("test_simple_text", "echo", "notify_changed", "test_sampling", "test_elicitation"):
            expect(required in names, f"tool {required} missing from {names}")
        if not self.v2025:
            # tools/list must be deterministic (MOD-4): a second listing gives the same order.
            again = await self.client.list_tools(cache_mode="bypass")
            again_names = [t.name for t in again.tools]
            expect(again_names == names[: len(again_names)], "a second tools/list gave another order")
        self.tools = tools

    def arguments_for(self, tool: types.Tool) -> dict[str, Any]:
        schema = tool.input_schema or {}
        args = sample_object(schema, schema)
        overrides: dict[str, dict[str, Any]] = {
            "slow": {"seconds": 0.3},
            "slow_compute": {"seconds": 0},
            "echo": {"text": "hello from mcp 2.3.0"},
            "test_sampling": {"prompt": "Say hello"},
            "test_elicitation": {"message": "Please tell us who you are"},
        }
        properties = schema.get("properties") or {}
        args.update({k: v for k, v in overrides.get(tool.name, {}).items() if k in properties})
        return args

    async def call_tool(self, tool: types.Tool) -> None:
        name = tool.name
        args = self.arguments_for(tool)
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        sampling_before = len(self.cb.sampling)
        form_before = len(self.cb.elicitation_form)
        url_before = len(self.cb.elicitation_url)
        roots_before = self.cb.roots
        logs_before = len(self.cb.logs)

        if name == "test_url_elicitation_required":
            await self.expect_url_elicitation_required(name, args)
            return
        # 2026-07-28 tools carry no `execution`: the task fixtures by name.
        if name in ("failing_job", "test_tool_with_task", "protocol_error_job"):
            await self.expect_call_error(tool, args)
            return

        result = await self.client.call_tool(name, args, progress_callback=on_progress)

        if name == "test_error_handling":
            expect(result.is_error is True, f"expected isError: true, got {result_summary(result)}")
            expect("intentionally returns an error" in text_of(result), f"unexpected text {text_of(result)!r}")
            return
        expect(not result.is_error, f"isError result: {result_summary(result)}")
        text = text_of(result)

        if name == "test_simple_text":
            expect(text == "This is a simple text response for testing.", f"text {text!r}")
        elif name == "test_image_content":
            block = result.content[0] if result.content else None
            expect(isinstance(block, types.ImageContent), f"not an image: {result_summary(result)}")
            expect(block.mime_type == "image/png" and block.data == PNG_BASE64, "wrong image data or type")
        elif name == "test_audio_content":
            block = result.content[0] if result.content else None
            expect(isinstance(block, types.AudioContent), f"not audio: {result_summary(result)}")
            expect(block.mime_type == "audio/wav" and block.data == WAV_BASE64, "wrong audio data or type")
        elif name == "test_embedded_resource":
            block = result.content[0] if result.content else None
            expect(isinstance(block, types.EmbeddedResource), f"not a resource: {result_summary(result)}")
            expect(str(block.resource.uri) == "test://embedded-resource", f"uri {block.resource.uri}")
            expect(getattr(block.resource, "text", None) == "This is an embedded resource content.", "wrong text")
        elif name == "test_multiple_content_types":
            kinds = [type(b).__name__ for b in result.content]
            expect(kinds == ["TextContent", "ImageContent", "EmbeddedResource"], f"content kinds {kinds}")
        elif name == "test_tool_with_logging":
            expect(text == "Tool with logging executed successfully", f"text {text!r}")
            # Opted in: 2025-11-25 via logging/setLevel, 2026-07-28 via the per-request logLevel envelope key.
            await self.wait_for(lambda: len(self.cb.logs) - logs_before >= 3, 2.0)
            got = [str(x) for x in self.cb.logs[logs_before:]]
            expect(
                got[:3] == ["Tool execution started", "Tool processing data", "Tool execution completed"],
                f"log messages {got}",
            )
        elif name == "test_tool_with_progress":
            expect(len(progress) >= 3, f"{len(progress)} progress notifications, expected 3: {progress}")
            expect([p[0] for p in progress[:3]] == [0, 50, 100], f"progress values {progress}")
            expect(text and text != "no progress token", f"text {text!r}")
        elif name == "test_sampling":
            expect(len(self.cb.sampling) > sampling_before, "the sampling callback was not called")
            expect(text == f"LLM response: {SAMPLING_ANSWER}", f"text {text!r}")
        elif name == "test_elicitation":
            expect(len(self.cb.elicitation_form) > form_before, "the elicitation callback was not called")
            expect(text.startswith("User response: action=accept, content="), f"text {text!r}")
            content = json.loads(text.split("content=", 1)[1])
            expect(content.get("email") == "interop@example.com", f"content {content}")
        elif name in ("test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"):
            expect(len(self.cb.elicitation_form) > form_before, "the elicitation callback was not called")
            expect(text.startswith("Elicitation completed: action=accept, content="), f"text {text!r}")
            content = json.loads(text.split("content=", 1)[1])
            if name.endswith("defaults"):
                want = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
                expect(content == want, f"content {content}")
            else:
                expect(content.get("titledSingle") == "value1", f"content {content}")
                expect(content.get("untitledMulti") == ["option1"], f"content {content}")
        elif name == "json_schema_2020_12_tool":
            prefix = "JSON Schema 2020-12 tool called with: "
            expect(text.startswith(prefix), f"text {text!r}")
            expect(json.loads(text[len(prefix):]) == args, f"echoed {text[len(prefix):]}, sent {args}")
        elif name == "echo":
            expect(text == args["text"], f"text {text!r}")
        elif name == "slow":
            expect(text == "done after 0.3 s", f"text {text!r}")
            expect(len(progress) >= 1, "no progress notifications")
        elif name == "session_info":
            info = json.loads(text)
            expect(info.get("protocolVersion") == self.version, f"protocolVersion {info.get('protocolVersion')}")
            caps = info.get("clientCapabilities") or {}
            for cap in ("sampling", "elicitation", "roots"):
                expect(cap in caps, f"clientCapabilities lack {cap}: {caps}")
            client_info = info.get("clientInfo") or {}
            expect(client_info.get("name") == CLIENT_NAME, f"clientInfo {client_info}")
        elif name == "notify_changed":
            expect(text == "notifications sent", f"text {text!r}")
        elif name == "test_url_elicitation":
            expect(len(self.cb.elicitation_url) > url_before, "the URL elicitation callback was not called")
            expect("action=accept" in text, f"text {text!r}")
        elif name == "test_roots" or name == "test_input_required_result_list_roots":
            expect(self.cb.roots > roots_before, "the roots callback was not called")
            expect(ROOT_URI in text, f"text {text!r} lacks {ROOT_URI}")
        elif name == "test_missing_capability":
            # It needs sampling, which this client declares: the call must succeed (not -32021).
            expect(len(self.cb.sampling) > sampling_before, "the sampling callback was not called")
            expect(SAMPLING_ANSWER in text, f"text {text!r}")
        elif name == "test_logging_tool":
            await self.wait_for(lambda: len(self.cb.logs) > logs_before, 2.0)
            expect(len(self.cb.logs) > logs_before, "no log message although this client opted in")
        elif name == "test_custom_header":
            expect(all(str(v) in text for v in args.values() if isinstance(v, str)), f"text {text!r}, args {args}")
        elif name == "test_input_required_result_capabilities":
            expect(len(self.cb.sampling) > sampling_before, "the sampling callback was not called")
        elif name == "test_input_required_result_elicitation":
            expect(len(self.cb.elicitation_form) > form_before, "the elicitation callback was not called")
            expect("Hello, " in text, f"text {text!r}")
        elif name == "test_input_required_result_sampling":
            expect(len(self.cb.sampling) > sampling_before, "the sampling callback was not called")
            expect("Paris" in text, f"text {text!r} lacks the sampled answer")
        elif name == "test_input_required_result_request_state":
            expect("state-ok" in text, f"text {text!r} lacks state-ok")
        elif name == "test_input_required_result_multiple_inputs":
            expect(len(self.cb.sampling) > sampling_before, "the sampling callback was not called")
            expect(len(self.cb.elicitation_form) > form_before, "the elicitation callback was not called")
            expect(self.cb.roots > roots_before, "the roots callback was not called")
        elif name == "test_input_required_result_multi_round":
            expect(len(self.cb.elicitation_form) - form_before >= 2, "expected two elicitation rounds")

    async def expect_call_error(self, tool: types.Tool, args: dict[str, Any]) -> None:
        """The task fixtures that cannot answer a plain call: a task-required tool
        (-32021 in 2026-07-28, -32601 in 2025-11-25: no task was asked for) and
        protocol_error_job (-32603)."""
        try:
            result = await self.client.call_tool(tool.name, args)
        except MCPError as exc:
            if tool.name == "protocol_error_job":
                want = -32603
            else:
                want = -32601 if self.v2025 else -32021
            expect(exc.error.code == want, f"expected {want}, got {describe(exc)}")
            return
        raise AssertionError(f"expected a JSON-RPC error, got {result_summary(result)}")

    async def expect_url_elicitation_required(self, name: str, args: dict[str, Any]) -> None:
        try:
            result = await self.client.call_tool(name, args)
        except MCPError as exc:
            if self.v2025:
                expect(exc.error.code == -32042, f"expected -32042, got {describe(exc)}")
                data = exc.error.data or {}
                elicitations = data.get("elicitations") if isinstance(data, dict) else None
                expect(bool(elicitations), f"-32042 without data.elicitations: {describe(exc)}")
                expect(elicitations[0].get("mode") == "url", f"elicitation {elicitations[0]}")
            else:
                # ERR-2: the 2026 era must not use -32042.
                expect(exc.error.code != -32042, "the 2026-07-28 era answered -32042")
            return
        if self.v2025:
            raise AssertionError(f"expected the -32042 error, got a result: {result_summary(result)}")
        # 2026-07-28: -32042 does not exist; a tool error result (isError) is the expected answer.
        expect(result.is_error is True, f"expected isError (no -32042 in 2026), got {result_summary(result)}")

    async def wait_for(self, condition: Callable[[], bool], seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            while not condition():
                await anyio.sleep(0.02)
            return True
        return condition()

    # -- resources ------------------------------------------------------------

    async def list_and_read_resources(self) -> None:
        resources: list[types.Resource] = []
        cursor: str | None = None
        for _ in range(100):
            page = await self.client.list_resources(cursor=cursor)
            resources.extend(page.resources)
            cursor = page.next_cursor
            if cursor is None:
                break
        uris = [str(r.uri) for r in resources]
        for want in ("test://static-text", "test://static-binary"):
            expect(want in uris, f"{want} missing from resources/list {uris}")
        for resource in resources:
            uri = str(resource.uri)
            read = await self.client.read_resource(uri)
            expect(len(read.contents) >= 1, f"{uri}: empty contents")
            expect(str(read.contents[0].uri) == uri, f"{uri}: contents uri {read.contents[0].uri}")
            if uri == "test://static-text":
                got = getattr(read.contents[0], "text", None)
                expect(got == "This is the content of the static text resource.", f"{uri}: text {got!r}")
            if uri == "test://static-binary":
                got = getattr(read.contents[0], "blob", None)
                expect(got == PNG_BASE64, f"{uri}: blob {short(got)}")
                expect(read.contents[0].mime_type == "image/png", f"{uri}: mimeType {read.contents[0].mime_type}")

    async def templates_and_template_read(self) -> None:
        page = await self.client.list_resource_templates()
        templates = [t.uri_template for t in page.resource_templates]
        expect("test://template/{id}/data" in templates, f"template missing from {templates}")
        read = await self.client.read_resource("test://template/42/data")
        expect(len(read.contents) == 1, f"{len(read.contents)} contents")
        content = read.contents[0]
        expect(str(content.uri) == "test://template/42/data", f"uri {content.uri}")
        expect(content.mime_type == "application/json", f"mimeType {content.mime_type}")
        data = json.loads(getattr(content, "text", "") or "null")
        expect(data == {"id": "42", "templateTest": True, "data": "Data for ID: 42"}, f"text {data}")

    async def unknown_resource(self) -> None:
        try:
            result = await self.client.read_resource("test://no-such-resource")
        except MCPError as exc:
            # 2025-11-25: -32002 (resource not found); 2026-07-28: -32602 (ERR-2).
            want = -32002 if self.v2025 else -32602
            expect(exc.error.code == want, f"expected {want}, got {describe(exc)}")
            return
        raise AssertionError(f"expected an error, got {short(result.model_dump(mode='json'))}")

    # -- prompts --------------------------------------------------------------

    async def list_prompts(self) -> None:
        prompts: list[types.Prompt] = []
        cursor: str | None = None
        for _ in range(100):
            page = await self.client.list_prompts(cursor=cursor)
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if cursor is None:
                break
        names = [p.name for p in prompts]
        for want in ("test_simple_prompt", "test_prompt_with_arguments"):
            expect(want in names, f"{want} missing from {names}")
        self.prompts = prompts

    async def get_prompt(self, prompt: types.Prompt) -> None:
        args: dict[str, str] = {}
        for argument in prompt.arguments or []:
            if not argument.required:
                continue
            if argument.name == "resourceUri":
                args[argument.name] = "test://static-text"
            else:
                args[argument.name] = f"value-of-{argument.name}"
        before = len(self.cb.elicitation_form)
        result = await self.client.get_prompt(prompt.name, args)
        expect(len(result.messages) >= 1, "no messages")
        text = text_of(result)
        if prompt.name == "test_simple_prompt":
            expect(text == "This is a simple prompt for testing.", f"text {text!r}")
        elif prompt.name == "test_prompt_with_arguments":
            want = "Prompt with arguments: arg1='value-of-arg1', arg2='value-of-arg2'"
            expect(text == want, f"text {text!r}")
        elif prompt.name == "test_prompt_with_embedded_resource":
            first = result.messages[0].content
            expect(isinstance(first, types.EmbeddedResource), f"first message {short(first.model_dump(mode='json'))}")
            expect(str(first.resource.uri) == "test://static-text", f"embedded uri {first.resource.uri}")
        elif prompt.name == "test_prompt_with_image":
            first = result.messages[0].content
            expect(isinstance(first, types.ImageContent) and first.data == PNG_BASE64, "first message is not the PNG")
        elif prompt.name == "test_input_required_result_prompt":
            expect(len(self.cb.elicitation_form) > before, "the elicitation callback was not called")

    async def missing_prompt_argument(self) -> None:
        try:
            result = await self.client.get_prompt("test_prompt_with_arguments", {"arg1": "only"})
        except MCPError as exc:
            expect(exc.error.code == -32602, f"expected -32602, got {describe(exc)}")
            return
        raise AssertionError(f"expected -32602, got {short(result.model_dump(mode='json'))}")

    async def completion(self) -> None:
        result = await self.client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "test"},
        )
        values = result.completion.values
        expect("testValue1" in values, f"completion values {values}")
        expect(all(v.startswith("test") for v in values), f"completion values {values}")

    # -- change notifications -------------------------------------------------

    async def listen_tools(self, trigger: str) -> None:
        """2026-07-28: a tools/list_changed arrives on a listen stream after `trigger` runs."""
        async with self.client.listen(tools_list_changed=True) as sub:
            expect(sub.honored.tools_list_changed is True, f"toolsListChanged not honored: {sub.honored}")
            result = await self.client.call_tool(trigger, {})
            expect(not result.is_error, f"{trigger}: {result_summary(result)}")
            event = None
            with anyio.move_on_after(NOTIFY_WAIT):
                event = await sub.__anext__()
            expect(event is not None, f"no tools/list_changed within {NOTIFY_WAIT} s after {trigger}")
            expect(isinstance(event, ToolsListChanged), f"unexpected event {event!r}")
        # After the event the client's cache for tools/list is evicted; a refetch still works.
        page = await self.client.list_tools()
        expect(len(page.tools) > 0, "tools/list after the change is empty")

    async def listen_prompts(self, trigger: str) -> None:
        async with self.client.listen(prompts_list_changed=True) as sub:
            expect(sub.honored.prompts_list_changed is True, f"promptsListChanged not honored: {sub.honored}")
            result = await self.client.call_tool(trigger, {})
            expect(not result.is_error, f"{trigger}: {result_summary(result)}")
            event = None
            with anyio.move_on_after(NOTIFY_WAIT):
                event = await sub.__anext__()
            expect(event is not None, f"no prompts/list_changed within {NOTIFY_WAIT} s after {trigger}")
            expect(isinstance(event, PromptsListChanged), f"unexpected event {event!r}")

    def v2026_notification_hygiene(self) -> None:
        """2026-07-28: change notifications only ever arrive on listen streams, stamped with the subscription id."""
        bare = []
        for note in self.cb.notifications:
            if isinstance(
                note,
                (
                    types.ToolListChangedNotification,
                    types.PromptListChangedNotification,
                    types.ResourceListChangedNotification,
                    types.ResourceUpdatedNotification,
                ),
            ):
                meta = (note.params.meta if note.params is not None else None) or {}
                if SUBSCRIPTION_ID_KEY not in meta:
                    bare.append(note.method)
        expect(not bare, f"change notifications without a subscription id: {bare}")

    async def v2025_list_changed(self) -> None:
        """2025-11-25: notify_changed's tools/list_changed arrives on the session."""
        start = len(self.cb.notifications)
        result = await self.client.call_tool("notify_changed", {})
        expect(not result.is_error, f"notify_changed: {result_summary(result)}")

        def arrived() -> bool:
            return any(
                isinstance(n, types.ToolListChangedNotification) for n in self.cb.notifications[start:]
            )

        expect(await self.wait_for(arrived, NOTIFY_WAIT), f"no tools/list_changed within {NOTIFY_WAIT} s")
        methods = {n.method for n in self.cb.notifications[start:]}
        for want in ("notifications/prompts/list_changed", "notifications/resources/list_changed"):
            if want not in methods:
                await self.wait_for(lambda: want in {n.method for n in self.cb.notifications[start:]}, 1.0)
        methods = {n.method for n in self.cb.notifications[start:]}
        for want in ("notifications/prompts/list_changed", "notifications/resources/list_changed"):
            expect(want in methods, f"{want} missing; got {sorted(methods)}")


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def make_client(args: argparse.Namespace, callbacks: Callbacks, log_level: Any) -> Client:
    server: Any
    if args.transport == "stdio":
        server = StdioServerParameters(command=args.target, args=[])
    else:
        server = args.target
    return Client(
        server,
        mode="legacy" if args.v2025 else "auto",  # the SDK's name for its 2025-11-25 mode
        read_timeout_seconds=CHECK_TIMEOUT,
        sampling_callback=callbacks.on_sampling,
        elicitation_callback=callbacks.on_elicitation,
        list_roots_callback=callbacks.on_list_roots,
        logging_callback=callbacks.on_log,
        message_handler=callbacks.on_message,
        log_level=log_level,
        client_info=types.Implementation(name=CLIENT_NAME, version="2.3.0"),
    )


async def run(args: argparse.Namespace) -> None:
    callbacks = Callbacks()
    mode = "2025-11-25" if args.v2025 else "auto"
    label = f"{args.transport}{'/v2025' if args.v2025 else ''}"
    # 2026-07-28: opt in to the (deprecated) request-scoped log messages with the
    # per-request logLevel key; the 2025-11-25 era uses logging/setLevel instead.
    client = make_client(args, callbacks, log_level=None if args.v2025 else "debug")

    phase = "connect"
    try:
        async with client:
            REPORT.ok(f"{label}: connect ({mode} mode)")
            phase = "checks"
            await run_checks(client, callbacks, args, label)
            phase = "disconnect"
        REPORT.ok(f"{label}: disconnect")
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("INTEROP_DEBUG"):
            traceback.print_exc()
        name = {"connect": f"{label}: connect ({mode} mode)", "checks": f"{label}: checks", "disconnect": f"{label}: disconnect"}[phase]
        REPORT.fail(name, describe(exc))


async def run_checks(client: Client, callbacks: Callbacks, args: argparse.Namespace, label: str) -> None:
    run_ = Run(client, callbacks, args.v2025, args.transport)
    await check(f"{label}: protocol version is {run_.version}", run_.check_version)
    if args.v2025:
        async def set_level() -> None:
            await client.session.set_logging_level("debug")  # 2025-11-25 opt-in for test_tool_with_logging

        await check(f"{label}: logging/setLevel debug", set_level)

    if await check(f"{label}: tools/list", run_.list_tools):
        for tool in run_.tools:
            await check(f"{label}: tools/call {tool.name}", lambda tool=tool: run_.call_tool(tool))
        # Tools added while the loop ran (test_trigger_tool_change adds one) are called too.
        added: list[types.Tool] = []

        async def relist() -> None:
            known = {t.name for t in run_.tools}
            added.extend(t for t in await run_.all_tools() if t.name not in known)

        await check(f"{label}: tools/list again", relist)
        for tool in added:
            await check(f"{label}: tools/call {tool.name} (added at run time)", lambda tool=tool: run_.call_tool(tool))
        run_.tools.extend(added)
    await check(f"{label}: resources/list + read each", run_.list_and_read_resources)
    await check(f"{label}: resources/templates/list + read test://template/42/data", run_.templates_and_template_read)
    await check(f"{label}: resources/read unknown uri is an error", run_.unknown_resource)
    if await check(f"{label}: prompts/list", run_.list_prompts):
        for prompt in run_.prompts:
            await check(f"{label}: prompts/get {prompt.name}", lambda prompt=prompt: run_.get_prompt(prompt))
    await check(f"{label}: prompts/get without a required argument is -32602", run_.missing_prompt_argument)
    await check(f"{label}: completion/complete", run_.completion)

    tool_names = {t.name for t in run_.tools}
    if args.v2025:
        await check(f"{label}: list_changed notifications after notify_changed", run_.v2025_list_changed)
    else:
        await check(
            f"{label}: subscriptions/listen gets tools/list_changed after notify_changed",
            lambda: run_.listen_tools("notify_changed"),
        )
        if "test_trigger_tool_change" in tool_names:
            await check(
                f"{label}: subscriptions/listen gets tools/list_changed after test_trigger_tool_change",
                lambda: run_.listen_tools("test_trigger_tool_change"),
            )
        if "test_trigger_prompt_change" in tool_names:
            await check(
                f"{label}: subscriptions/listen gets prompts/list_changed after test_trigger_prompt_change",
                lambda: run_.listen_prompts("test_trigger_prompt_change"),
            )

        async def no_logs_without_opt_in() -> None:
            # LOG-1: without io.modelcontextprotocol/logLevel no notifications/message may be sent.
            other = Callbacks()
            name = "test_logging_tool" if "test_logging_tool" in tool_names else "test_tool_with_logging"
            async with make_client(args, other, log_level=None) as second:
                result = await second.call_tool(name, {})
                expect(not result.is_error, f"{name}: {result_summary(result)}")
                await anyio.sleep(0.3)
            expect(not other.logs, f"log messages without an opt-in: {other.logs}")

        await check(f"{label}: no log messages without a logLevel opt-in (second client)", no_logs_without_opt_in)

        async def hygiene() -> None:
            run_.v2026_notification_hygiene()

        await check(f"{label}: no change notification outside a listen stream", hygiene)

    async def server_requests() -> None:
        got = sorted(set(SERVER_REQUESTS))
        if args.v2025:
            want = {"sampling/createMessage", "elicitation/create", "roots/list"}
            expect(want <= set(got), f"expected server->client requests {sorted(want)}, got {got}")
        else:
            expect(not got, f"server->client JSON-RPC requests in the 2026-07-28 era: {got}")

    await check(
        f"{label}: "
        + ("sampling, elicitation and roots came as server requests" if args.v2025 else "no server->client requests"),
        server_requests,
    )

    async def no_transport_errors() -> None:
        expect(not callbacks.transport_errors, f"transport errors: {callbacks.transport_errors}")

    await check(f"{label}: no transport errors", no_transport_errors)


def main() -> int:
    parser = argparse.ArgumentParser(description="MCP Python SDK (mcp 2.3.0) interop client")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("target", help="server binary (stdio) or MCP endpoint URL (http)")
    parser.add_argument("--v2025", action="store_true", help="force the initialize handshake (2025-11-25)")
    parser.add_argument("--timeout", type=float, default=180.0, help="overall timeout in seconds (default 180)")
    args = parser.parse_args()

    return run_bounded(run, args)


if __name__ == "__main__":
    sys.exit(main())
