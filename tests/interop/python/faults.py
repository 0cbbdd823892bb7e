"""The fault checks of issue 30, run by multi.py after its own checks 1-4.

6. A 2026-07-28 task started on one instance (``relay_probe``) is polled on a second, given
   its input through a third and cancelled through the second; its handler (asked with
   ``relay_seen`` on its own instance) saw the input and the cancel.
7. Redis is stopped for five seconds and started again while a load runs through nginx:
   no call that does not need Redis fails, and every ``notify_changed`` made before, during
   and after the outage (on each instance in turn) reaches the ``subscriptions/listen``
   stream held on every instance, once. The counts of lost and duplicated notifications
   are printed per phase.
9. (with the kill of check 5) A task running on the killed instance becomes ``failed``
   within its lease when polled through nginx.

The Redis server is the one multi-instance.sh started (``--redis-port``, ``--redis-conf``):
stopped with ``SHUTDOWN NOSAVE``, started again from the same configuration.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

import httpx2
from checks import REPORT, expect, short
from multi import (
    ACCEPT_BOTH,
    HTTP_TIMEOUT,
    Raw,
    Stream,
    answer_to,
    rpc,
    tool_text,
    v2026_headers,
    v2026_params,
)

TASKS = "io.modelcontextprotocol/tasks"
OUTAGE = 5.0  # seconds Redis stays down
CHANGES_UP = 9  # notify_changed calls before the outage, and again after it
CHANGES_DOWN = 6  # notify_changed calls during the outage
DELIVERY_WAIT = 20.0  # seconds for notifications to arrive after their phase
QUIET = 1.0  # seconds a stream is read past its expected count, for duplicates
LEASE_WAIT = 25.0  # seconds: the store's lease (10 s) and a poll interval, with room


def task_params(params: dict[str, Any]) -> dict[str, Any]:
    """2026-07-28 params whose client declares the tasks extension."""
    out = v2026_params(params)
    out["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"] = {TASKS: {}}
    return out


class Faults:
    def __init__(self, run: Any, redis_port: int, redis_conf: str) -> None:
        self.run = run
        self.raw: Raw = run.raw
        self.redis_port = redis_port
        self.redis_conf = redis_conf

    # --- 2026-07-28 requests ---------------------------------------------
    def task_request(self, url: str, method: str, params: dict[str, Any], name: str | None) -> dict[str, Any]:
        id_ = self.raw.new_id()
        response = self.raw.post(url, rpc(id_, method, task_params(params)), v2026_headers(method, name))
        expect(response.status_code == 200, f"{method}: HTTP {response.status_code} {short(response.text)}")
        message = answer_to(response, id_)
        expect("result" in message, f"{method} on {response.headers.get('mcp-instance')}: {short(message)}")
        return message["result"]

    def start_probe(self, on: str, tag: str) -> str:
        url = self.run.instances[on]
        result = self.task_request(url, "tools/call", {"name": "relay_probe", "arguments": {"tag": tag}}, "relay_probe")
        expect(result.get("resultType") == "task", f"relay_probe on {on}: {short(result)}")
        return result["taskId"]

    def poll(self, url: str, task_id: str, status: str, within: float) -> dict[str, Any]:
        deadline = time.monotonic() + within
        task: dict[str, Any] = {}
        while time.monotonic() < deadline:
            task = self.task_request(url, "tasks/get", {"taskId": task_id}, task_id)
            if task.get("status") == status:
                return task
            time.sleep(0.1)
        raise AssertionError(f"task {task_id} stayed {short(task)}, not {status}, for {within:.0f} s")

    def seen(self, on: str, tag: str, want: str) -> list[str]:
        deadline = time.monotonic() + 10
        notes: list[str] = []
        while time.monotonic() < deadline:
            _, message = self.raw.v2026_call(self.run.instances[on], "relay_seen", {"tag": tag})
            notes = json.loads(tool_text(message))
            if want in notes:
                return notes
            time.sleep(0.05)
        raise AssertionError(f"the handler on {on} never saw {want!r}: {notes}")

    # 6 -------------------------------------------------------------------
    def tasks_anywhere(self) -> None:
        a, b, c = self.run.names[:3]
        tag = f"relay-{time.monotonic_ns()}"
        task_id = self.start_probe(a, tag)
        asked = self.poll(self.run.instances[b], task_id, "input_required", 10)
        key = next(iter(asked.get("inputRequests") or {}), None)
        expect(key is not None, f"no input request on {b}: {short(asked)}")
        answer = {key: {"action": "accept", "content": {"word": "carried"}}}
        ack = self.task_request(self.run.instances[c], "tasks/update", {"taskId": task_id, "inputResponses": answer}, task_id)
        expect(ack.get("resultType") == "complete", f"tasks/update on {c}: {short(ack)}")
        self.seen(a, tag, "input carried")
        self.poll(self.run.instances[b], task_id, "working", 10)
        self.task_request(self.run.instances[b], "tasks/cancel", {"taskId": task_id}, task_id)
        notes = self.seen(a, tag, "cancelled")
        final = self.poll(self.run.instances[c], task_id, "cancelled", 5)
        REPORT.note(f"task on {a}: polled on {b}, input through {c}, cancelled through {b}; handler saw {notes}; {final.get('status')}")

    # 7 -------------------------------------------------------------------
    def outage(self) -> None:
        streams = [Counter(name, url) for name, url in self.run.instances.items()]
        load = Load(self.run.nginx)
        try:
            for counter in streams:
                counter.start()
            made = self.changes(CHANGES_UP)
            counts = [self.settle(streams, made, "before the outage")]
            load.start()
            self.redis_cli("shutdown", "nosave")
            down_at = time.monotonic()
            made += self.changes(CHANGES_DOWN, spread_over=OUTAGE)
            time.sleep(max(0.0, OUTAGE - (time.monotonic() - down_at)))  # the fault's length, not a wait for an event
            self.start_redis()
            counts.append(self.settle(streams, made, "made during the outage"))
            made += self.changes(CHANGES_UP)
            counts.append(self.settle(streams, made, "after the outage"))
            load.stop()
        finally:
            load.stop()
            for counter in streams:
                counter.close()
        REPORT.note(f"load through nginx during the outage: {load.ok} calls ok, {load.failed} failed {load.errors[:3]}")
        REPORT.note("notifications per phase (made, lost, duplicated per stream): " + "; ".join(counts))
        expect(load.failed == 0, f"{load.failed} calls that need no Redis failed: {load.errors[:3]}")
        expect(all("lost 0," in c and "duplicated 0" in c for c in counts), "notifications lost or duplicated")

    def changes(self, count: int, spread_over: float = 0.0) -> int:
        names = self.run.names
        for i in range(count):
            on = names[i % len(names)]
            _, message = self.raw.v2026_call(self.run.instances[on], "notify_changed")
            expect("result" in message, f"notify_changed on {on}: {short(message)}")
            if spread_over:
                time.sleep(spread_over / (count + 1))  # changes spread across the outage
        return count

    def settle(self, streams: list[Counter], want: int, phase: str) -> str:
        deadline = time.monotonic() + DELIVERY_WAIT
        for counter in streams:
            counter.wait_for(want, deadline)
        time.sleep(QUIET)  # a duplicate would arrive within this
        per = {c.name: c.count for c in streams}
        lost = sum(max(0, want - n) for n in per.values())
        dup = sum(max(0, n - want) for n in per.values())
        for counter in streams:
            counter.count = min(counter.count, want)  # the next phase counts from here
        return f"{phase}: total {want}, lost {lost}, duplicated {dup} {per}"

    def redis_cli(self, *args: str) -> None:
        subprocess.run(["redis-cli", "-p", str(self.redis_port), *args], capture_output=True, timeout=10, check=False)

    def start_redis(self) -> None:
        # Its output goes nowhere: a child holding the script's pipe would keep its `tee` open.
        subprocess.Popen(  # noqa: S603
            ["redis-server", self.redis_conf],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ping = subprocess.run(["redis-cli", "-p", str(self.redis_port), "ping"], capture_output=True, timeout=5, check=False)
            if ping.stdout.strip() == b"PONG":
                return
            time.sleep(0.05)
        raise AssertionError("redis-server did not come back within 10 s")

    # 9 -------------------------------------------------------------------
    def dead_task_start(self, dead: str) -> str:
        task_id = self.start_probe(dead, f"dead-{time.monotonic_ns()}")
        self.poll(self.run.nginx, task_id, "input_required", 10)
        return task_id

    def dead_task_failed(self, task_id: str) -> None:
        started = time.monotonic()
        task = self.poll(self.run.nginx, task_id, "failed", LEASE_WAIT)
        REPORT.note(f"the dead instance's task failed {time.monotonic() - started:.1f} s after the kill: {short(task.get('statusMessage'))}")


class Counter:
    """A subscriptions/listen stream on one instance, counting tools/list_changed on a thread."""

    def __init__(self, name: str, url: str) -> None:
        self.name = name
        self.count = 0
        self.cond = threading.Condition()
        raw = Raw()
        raw.http = httpx2.Client(trust_env=False, timeout=httpx2.Timeout(HTTP_TIMEOUT, read=300.0))
        params = v2026_params({"notifications": {"toolsListChanged": True}})
        self.stream = Stream(raw, "POST", url, v2026_headers("subscriptions/listen"), rpc(1, "subscriptions/listen", params))
        expect(self.stream.response.status_code == 200, f"listen on {name}: HTTP {self.stream.response.status_code}")
        ack = self.stream.next_message()
        expect(ack.get("method") == "notifications/subscriptions/acknowledged", f"listen on {name}: {short(ack)}")
        self.thread = threading.Thread(target=self.read, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def read(self) -> None:
        try:
            for message in self.stream.events:
                if message.get("method") == "notifications/tools/list_changed":
                    with self.cond:
                        self.count += 1
                        self.cond.notify_all()
        except Exception:  # noqa: BLE001 - closed by the check, or the server went away
            pass

    def wait_for(self, want: int, deadline: float) -> None:
        with self.cond:
            while self.count < want and time.monotonic() < deadline:
                self.cond.wait(timeout=max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self.stream.close()


class Load:
    """2026-07-28 tools/call echo through nginx on a thread, until stopped."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ok = 0
        self.failed = 0
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def loop(self) -> None:
        raw = Raw()
        while not self.stopping.is_set():
            try:
                _, message = raw.v2026_call(self.url, "echo", {"text": "load"})
                expect("result" in message, short(message))
                self.ok += 1
            except Exception as exc:  # noqa: BLE001 - counted and shown
                self.failed += 1
                self.errors.append(short(str(exc), 120))

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=HTTP_TIMEOUT + 5)


__all__ = ["Faults", "ACCEPT_BOTH"]
