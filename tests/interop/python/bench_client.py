#!/usr/bin/env python3
"""Client-side throughput of the official MCP Python SDK client (mcp 2.3.0):
the figures of ``benches/client.rs``, for the same calls to the same server.

Usage:
    bench_client.py --server BINARY [--transports stdio,http] [--eras 2026-07-28,2025-11-25]
                    [--threads 1,8,32] [--seconds 3] [--warmup 0.5] [--runs 3]
                    [--wait-idle S] [--raw]

``scripts/measure/bench-client.sh`` runs it next to the Rust bench and prints both.

The server is BINARY (the ``everything`` example): over stdio the SDK starts it
(``StdioServerParameters``), over HTTP this program starts it with
``--http 127.0.0.1:0`` and reads the address it prints, as the Rust bench does.
For each transport, era (``2026-07-28``: the client's default ``mode="auto"``,
which probes ``server/discover``; ``2025-11-25``: ``mode="legacy"``) and N in
``--threads``, a fresh server and a fresh ``mcp.client.Client``: it lists the
tools once, then N asyncio tasks share it, each calling ``echo`` with a text of
its own (``t<task>-<i>``) as fast as it answers and checking the echo. After
``--warmup`` seconds the calls that end within the next ``--seconds`` count.

Columns as in the Rust bench: calls/s; p50/p99 latency (from before
``call_tool`` to its return); client CPU per call (``/proc/self/stat`` utime +
stime of this whole process); server CPU per call (``/proc/<pid>/stat`` of the
server); ``busy``, the share of all CPUs busy over the 300 ms before the run.
Runs alternate (the order reversed every other run); the summary gives the
median of each figure. ``--raw`` adds one ``raw key=value ...`` line per run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

# Era -> the SDK's `mode` (its 2025-11-25 mode is called "legacy" in its API).
ERAS = {"2026-07-28": "auto", "v2026": "auto", "2025-11-25": "legacy", "v2025": "legacy"}
START_TIMEOUT = 10.0  # seconds for the HTTP server to say where it serves
CALL_TIMEOUT = 30.0  # seconds, per call
TICK = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Cell:
    transport: str
    era: str  # "2026-07-28" or "2025-11-25"
    threads: int


@dataclass
class RunResult:
    cell: Cell
    window: float
    latencies: list[float]  # seconds, sorted
    client_cpu: float | None
    server_cpu: float | None
    busy: float | None = None

    @property
    def calls(self) -> int:
        return len(self.latencies)

    def rate(self) -> float:
        return self.calls / self.window

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return 0.0
        rank = round(p / 100.0 * (len(self.latencies) - 1))
        return self.latencies[min(rank, len(self.latencies) - 1)]

    def per_call(self, cpu: float | None) -> float | None:
        """CPU per call in µs."""
        if cpu is None or self.calls == 0:
            return None
        return cpu * 1e6 / self.calls


# ---------------------------------------------------------------------------
# Machine figures (the same sources as benches/client.rs)


def process_cpu(pid: int) -> float | None:
    """utime + stime of every thread of `pid`, ended ones included, in seconds."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 1 :].split()
    try:
        return (int(fields[11]) + int(fields[12])) * TICK
    except (IndexError, ValueError):
        return None


def cpu_busy(window: float) -> float | None:
    def sample() -> tuple[int, int] | None:
        try:
            with open("/proc/stat", encoding="ascii") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        if len(fields) < 5:
            return None
        return sum(fields[:8]), fields[3] + fields[4]

    before = sample()
    time.sleep(window)
    after = sample()
    if before is None or after is None or after[0] <= before[0]:
        return None
    return 1.0 - (after[1] - before[1]) / (after[0] - before[0])


def wait_idle(limit: float) -> float | None:
    deadline = time.monotonic() + limit
    while True:
        busy = cpu_busy(0.3)
        if busy is None or busy < 0.10 or time.monotonic() >= deadline:
            return busy
        time.sleep(0.7)


def child_pid(binary: str) -> int | None:
    """The child of this process that runs `binary` (the SDK's stdio server)."""
    want = os.path.realpath(binary)
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children", encoding="ascii") as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            try:
                if os.path.realpath(f"/proc/{pid}/exe") == want:
                    return pid
            except OSError:
                continue
    return None


# ---------------------------------------------------------------------------
# The server


class HttpServer:
    """`BINARY --http 127.0.0.1:0`, until closed."""

    def __init__(self, binary: str) -> None:
        self.proc = subprocess.Popen(
            [binary, "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        found = threading.Event()
        self.url = ""

        def drain() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                at = line.find("serving MCP on ")
                if not found.is_set() and at >= 0:
                    url = line[at + len("serving MCP on ") :].strip()
                    if url.startswith("http://"):
                        self.url = url
                        found.set()

        threading.Thread(target=drain, daemon=True).start()
        if not found.wait(START_TIMEOUT):
            self.close()
            raise RuntimeError(f"{binary} did not say where it serves")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# ---------------------------------------------------------------------------
# One run


@dataclass
class Shared:
    stop: bool = False
    samples: list[list[tuple[float, float]]] = field(default_factory=list)


async def worker(client: Client, index: int, shared: Shared) -> None:
    samples = shared.samples[index]
    i = 0
    while not shared.stop:
        text = f"t{index}-{i}"
        arguments = {"text": text}
        started = time.perf_counter()
        result = await client.call_tool("echo", arguments)
        ended = time.perf_counter()
        block = result.content[0] if result.content else None
        if result.is_error or not isinstance(block, types.TextContent) or block.text != text:
            raise RuntimeError(f"echo of {text!r} answered {result.model_dump(mode='json')}")
        samples.append((ended, ended - started))
        i += 1


async def drive(client: Client, cell: Cell, server_pid: int | None, args: argparse.Namespace) -> RunResult:
    shared = Shared(samples=[[] for _ in range(cell.threads)])
    window: dict[str, Any] = {}

    async def clock() -> None:
        await anyio.sleep(args.warmup)
        window["t0"], window["cli0"] = time.perf_counter(), process_cpu(os.getpid())
        window["srv0"] = process_cpu(server_pid) if server_pid else None
        await anyio.sleep(args.seconds)
        window["t1"], window["cli1"] = time.perf_counter(), process_cpu(os.getpid())
        window["srv1"] = process_cpu(server_pid) if server_pid else None
        shared.stop = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(clock)
        for index in range(cell.threads):
            tg.start_soon(worker, client, index, shared)
    t0, t1 = window["t0"], window["t1"]
    latencies = sorted(took for samples in shared.samples for end, took in samples if t0 <= end <= t1)

    def since(key: str) -> float | None:
        before, after = window[key + "0"], window[key + "1"]
        return None if before is None or after is None else max(0.0, after - before)

    return RunResult(cell, t1 - t0, latencies, since("cli"), since("srv"))


async def run_cell(cell: Cell, args: argparse.Namespace) -> RunResult:
    busy = wait_idle(args.wait_idle)
    http = HttpServer(args.server) if cell.transport == "http" else None
    try:
        target: Any = http.url if http else StdioServerParameters(command=args.server, args=[])
        client = Client(
            target,
            mode=ERAS[cell.era],
            read_timeout_seconds=CALL_TIMEOUT,
            client_info=types.Implementation(name="python-client-bench", version="2.3.0"),
        )
        async with client:
            if client.protocol_version != cell.era:
                raise RuntimeError(f"{cell.transport} client negotiated {client.protocol_version}, not {cell.era}")
            tools = await client.list_tools()
            if not any(t.name == "echo" for t in tools.tools):
                raise RuntimeError("the server has no echo tool")
            server_pid = http.proc.pid if http else child_pid(args.server)
            result = await drive(client, cell, server_pid, args)
    finally:
        if http:
            http.close()
    result.busy = busy
    return result


# ---------------------------------------------------------------------------
# Output


def fmt(value: float | None, unit: str = "") -> str:
    return "n/a" if value is None else f"{value:.1f}{unit}"


def header(first: str) -> None:
    print(
        f"{'via':<5} {'era':<10} {'N':>3} {first:>4} {'calls/s':>9} {'p50 µs':>9} {'p99 µs':>9} "
        f"{'cli CPU/call':>12} {'srv CPU/call':>12} {'busy':>5}"
    )


def line(cell: Cell, first: int, rate: float | None, p50: float | None, p99: float | None,
         cli: float | None, srv: float | None, busy: float | None, digits: int) -> None:
    rate_text = "n/a" if rate is None else f"{rate:.{digits}f}"
    print(
        f"{cell.transport:<5} {cell.era:<10} {cell.threads:>3} {first:>4} {rate_text:>9} {fmt(p50):>9} "
        f"{fmt(p99):>9} {fmt(cli, ' µs'):>12} {fmt(srv, ' µs'):>12} {fmt(busy, '%'):>5}",
        flush=True,
    )


def raw(r: RunResult, run: int) -> None:
    def num(v: float | None, digits: int) -> str:
        return "nan" if v is None else f"{v:.{digits}f}"

    print(
        f"raw impl=python transport={r.cell.transport} era={r.cell.era} threads={r.cell.threads} run={run} "
        f"calls={r.calls} seconds={r.window:.4f} rate={r.rate():.1f} p50_us={r.percentile(50) * 1e6:.1f} "
        f"p99_us={r.percentile(99) * 1e6:.1f} cli_cpu_us={num(r.per_call(r.client_cpu), 2)} "
        f"srv_cpu_us={num(r.per_call(r.server_cpu), 2)} busy={num(r.busy, 3)}",
        flush=True,
    )


def median(values: list[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    ordered = sorted(v for v in values if v is not None)
    return ordered[len(ordered) // 2]  # the upper one of an even count, as in the Rust bench


def summary(cells: list[Cell], results: list[RunResult]) -> None:
    print()
    print("medians over the runs:")
    header("runs")
    for cell in cells:
        runs = [r for r in results if r.cell == cell]
        line(
            cell,
            len(runs),
            median([r.rate() for r in runs]),
            median([r.percentile(50) * 1e6 for r in runs]),
            median([r.percentile(99) * 1e6 for r in runs]),
            median([r.per_call(r.client_cpu) for r in runs]),
            median([r.per_call(r.server_cpu) for r in runs]),
            median([None if r.busy is None else r.busy * 100 for r in runs]),
            1,
        )


# ---------------------------------------------------------------------------
# Main


async def bench(args: argparse.Namespace) -> None:
    cells = [Cell(t, e, n) for t in args.transports for e in args.eras for n in args.threads]
    cores = os.cpu_count() or 0
    print(
        f"client bench: mcp {version()} Client, tools/call echo against {args.server}; {args.seconds} s measured "
        f"after {args.warmup} s warm-up, {args.runs} run(s) per cell; machine: {cores} cores"
    )
    print()
    header("run")
    results: list[RunResult] = []
    for run in range(1, args.runs + 1):
        for cell in cells if run % 2 == 1 else list(reversed(cells)):
            r = await run_cell(cell, args)
            line(cell, run, r.rate(), r.percentile(50) * 1e6, r.percentile(99) * 1e6, r.per_call(r.client_cpu),
                 r.per_call(r.server_cpu), None if r.busy is None else r.busy * 100, 0)
            if args.raw:
                raw(r, run)
            results.append(r)
    summary(cells, results)


def version() -> str:
    import importlib.metadata

    return importlib.metadata.version("mcp")


def listed(kind: Any, allowed: Any = None):  # noqa: ANN201 - an argparse type
    def parse(text: str) -> list[Any]:
        values = []
        for part in text.split(","):
            part = part.strip()
            try:
                value = kind(part)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(f"bad value {part!r}") from exc
            if allowed is not None and value not in allowed:
                raise argparse.ArgumentTypeError(f"{part!r} is not one of {sorted(allowed)}")
            if isinstance(value, int) and value < 1:
                raise argparse.ArgumentTypeError("counts must be at least 1")
            values.append(value)
        return values

    return parse


def main() -> int:
    parser = argparse.ArgumentParser(description="MCP Python SDK client throughput (see benches/client.rs)")
    parser.add_argument("--server", required=True, help="the server binary (the everything example)")
    parser.add_argument("--transports", type=listed(str, {"stdio", "http"}), default=["stdio", "http"])
    parser.add_argument("--eras", type=listed(str, set(ERAS)), default=["2026-07-28", "2025-11-25"])
    parser.add_argument("--threads", type=listed(int), default=[1, 8, 32], help="concurrent tasks, comma-separated")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured seconds before each run")
    parser.add_argument("--runs", type=int, default=3, help="runs per (transport, era, threads)")
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait up to S seconds for an idle machine")
    parser.add_argument("--raw", action="store_true", help="one `raw key=value ...` line per run")
    args = parser.parse_args()
    args.eras = ["2026-07-28" if ERAS[e] == "auto" else "2025-11-25" for e in args.eras]
    if args.seconds <= 0 or args.warmup < 0 or args.runs < 1:
        parser.error("--seconds must be over 0, --warmup at least 0, --runs at least 1")
    try:
        anyio.run(bench, args)
    except Exception as exc:  # noqa: BLE001 - reported, exit status 1
        print(f"client bench (python): error: {exc!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
