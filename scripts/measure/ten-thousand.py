#!/usr/bin/env python3
"""What N open connections and streams cost the `everything` example (issue 14 item 12).

    python3 scripts/measure/ten-thousand.py [--n 10000] [--idle-s 10]
        [--bin target/release/examples/everything]

Starts the server with `--max-connections` and `--max-sessions` above N and the
descriptor limit raised to the hard limit (for the server and for this script), then
measures, one phase after the other, with N sockets held by this one thread:

1. idle keep-alive connections: each answered one 2026-07-28 `server/discover`;
2. 2025-11-25 GET streams: a session per stream, `initialize`d on a connection that
   is then closed, and its GET stream on a connection of its own;
3. 2026-07-28 listen streams: each connection POSTs `subscriptions/listen` asking
   for `toolsListChanged`.

For each phase it prints the server's resident memory (VmRSS) and thread count before
and with the N connections, per connection in KB, and the CPU time the server spends
while they are idle (summed over its threads' `schedstat`, over `--idle-s` seconds; an
idle stream should cost nothing, DESIGN.md §20). For phases 2 and 3 it then calls the
`notify_changed` tool once, on a connection of its own, and reports how long the
`notifications/tools/list_changed` took to reach each of the N streams (p50, p99,
max, from the moment the call was written). Prints one JSON object per phase.

A measurement, not a test: it fails only when the server answers wrongly or not at all.
"""

import argparse
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import time

V2026 = "2026-07-28"
V2025 = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "ten-thousand", "version": "1"},
}
CHANGED = b"notifications/tools/list_changed"


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["Threads"])


def cpu_seconds(pid):
    """CPU time of process `pid`, summed over its threads' scheduler statistics
    (nanoseconds; `/proc/PID/stat` counts in ticks of 10 ms), in seconds."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def idle_cpu(pid, n, seconds):
    """The server's CPU time while the N connections are idle, per second."""
    c0, t0 = cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    c1, t1 = cpu_seconds(pid), time.perf_counter()
    per_s = (c1 - c0) / (t1 - t0)
    return {"idle_cpu_ms_per_s": round(per_s * 1000, 2),
            "idle_cpu_us_per_s_each": round(per_s * 1e6 / n, 2)}


def post(path, body, headers):
    data = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Content-Length: {len(data)}"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def read_head(sock, buf):
    """Reads up to the end of a response head; returns (status, headers, rest of buf)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("the server closed the connection")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, rest


def read_until(sock, buf, marker):
    while marker not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError(f"closed before {marker!r}")
        buf += chunk
    return buf


def exchange(sock, request):
    """Sends a request and reads its whole answer (JSON or a finished SSE stream)."""
    sock.sendall(request)
    status, headers, rest = read_head(sock, b"")
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(rest) < n:
            rest += sock.recv(65536)
        return status, headers, rest[:n]
    if headers.get("transfer-encoding") == "chunked":
        return status, headers, read_until(sock, rest, b"\r\n0\r\n\r\n")
    return status, headers, rest


def connect(addr):
    sock = socket.create_connection(addr)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def rpc(id_, method, params):
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def post_2026(id_, method, params, name=None):
    headers = {"MCP-Protocol-Version": V2026, "Mcp-Method": method}
    if name:
        headers["Mcp-Name"] = name
    return post("/mcp", rpc(id_, method, dict(params, _meta=META)), headers)


def idle_connection(addr, i):
    sock = connect(addr)
    status, _, body = exchange(sock, post_2026(i, "server/discover", {}))
    if status != 200 or b'"result"' not in body:
        raise RuntimeError(f"server/discover: {status} {body[:200]!r}")
    return sock


def session_2025(addr, i):
    """A connection with its own 2025-11-25 session; returns (socket, session id)."""
    sock = connect(addr)
    init = rpc(i, "initialize", {"protocolVersion": V2025, "capabilities": {},
                                 "clientInfo": {"name": "ten-thousand", "version": "1"}})
    status, headers, body = exchange(sock, post("/mcp", init, {}))
    sid = headers.get("mcp-session-id")
    if status != 200 or not sid:
        raise RuntimeError(f"initialize: {status} {body[:200]!r}")
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    session = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": V2025}
    status, _, _ = exchange(sock, post("/mcp", note, session))
    if status != 202:
        raise RuntimeError(f"notifications/initialized: {status}")
    return sock, session


def get_stream(addr, i):
    """A session's GET stream, on a connection of its own (the session is opened on
    another, closed at once)."""
    setup, session = session_2025(addr, i)
    setup.close()
    sock = connect(addr)
    head = ["GET /mcp HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"]
    head += [f"{k}: {v}" for k, v in session.items()]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    status, _, rest = read_head(sock, b"")
    if status != 200:
        raise RuntimeError(f"GET stream: {status}")
    return sock, rest


def listen_stream(addr, i):
    sock = connect(addr)
    filter_ = {"notifications": {"toolsListChanged": True}}
    sock.sendall(post_2026(i, "subscriptions/listen", filter_))
    status, _, rest = read_head(sock, b"")
    if status != 200:
        raise RuntimeError(f"subscriptions/listen: {status}")
    return sock, read_until(sock, rest, b"notifications/subscriptions/acknowledged")


def trigger(addr, v2025):
    """Calls notify_changed on a connection of its own; returns when it was written."""
    if v2025:
        sock, session = session_2025(addr, 1)
        call = post("/mcp", rpc(2, "tools/call", {"name": "notify_changed", "arguments": {}}),
                    session)
    else:
        sock = connect(addr)
        call = post_2026(2, "tools/call", {"name": "notify_changed", "arguments": {}},
                         "notify_changed")
    t0 = time.perf_counter()
    sock.sendall(call)
    return sock, t0


def latencies(addr, streams, v2025):
    """Time for the list_changed to reach each stream after one notify_changed."""
    sel = selectors.DefaultSelector()
    for sock, buf in streams:
        if CHANGED in buf:
            raise RuntimeError("a stream had the notification before the trigger")
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, [buf])
    caller, t0 = trigger(addr, v2025)
    waiting, got = len(streams), []
    deadline = time.perf_counter() + 120
    while waiting and time.perf_counter() < deadline:
        for key, _ in sel.select(timeout=1):
            data = key.fileobj.recv(65536)
            key.data[0] += data
            if CHANGED in key.data[0]:
                got.append(time.perf_counter() - t0)
                sel.unregister(key.fileobj)
                waiting -= 1
            elif not data:
                sel.unregister(key.fileobj)
    caller.close()
    if waiting:
        raise RuntimeError(f"{waiting} of {len(streams)} streams got no list_changed in 120 s")
    got.sort()
    ms = lambda q: round(got[min(len(got) - 1, int(q * len(got)))] * 1000, 1)
    return {"notify_p50_ms": ms(0.50), "notify_p99_ms": ms(0.99), "notify_max_ms": ms(1.0)}


def settle(pid, threads, limit=30):
    """Waits (bounded) until the server is back to `threads` threads."""
    end = time.time() + limit
    while time.time() < end and proc_status(pid)[1] > threads:
        time.sleep(0.1)


def phase(name, pid, n, open_one, addr, idle_s, notify=None):
    rss0, threads0 = proc_status(pid)
    t = time.perf_counter()
    held = [open_one(addr, i + 1) for i in range(n)]
    opened_s = time.perf_counter() - t
    rss1, threads1 = proc_status(pid)
    out = {"phase": name, "n": n, "open_s": round(opened_s, 1),
           "rss_kb_before": rss0, "rss_kb_with": rss1,
           "kb_per_connection": round((rss1 - rss0) / n, 1),
           "threads_before": threads0, "threads_with": threads1}
    out.update(idle_cpu(pid, n, idle_s))
    if notify is not None:
        out.update(latencies(addr, held, notify))
    for h in held:
        (h[0] if isinstance(h, tuple) else h).close()
    settle(pid, threads0)
    print(json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--bin", default="target/release/examples/everything")
    ap.add_argument("--idle-s", type=float, default=10.0)
    a = ap.parse_args()
    raise_nofile()
    phases = [("idle keep-alive connections", idle_connection, None),
              ("GET streams (2025-11-25)", get_stream, True),
              ("listen streams (2026-07-28)", listen_stream, False)]
    for name, open_one, notify in phases:
        # A server of its own for each phase: memory a phase frees stays
        # with the process and would hide the next phase's cost.
        with Server(a.bin, a.n + 100) as (pid, addr):
            phase(name, pid, a.n, open_one, addr, a.idle_s, notify)


class Server:
    def __init__(self, binary, cap):
        self.binary, self.cap = binary, str(cap)

    def __enter__(self):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        self.child = subprocess.Popen(
            [self.binary, "--http", f"127.0.0.1:{port}",
             "--max-connections", self.cap, "--max-sessions", self.cap,
             "--max-listen-streams", self.cap,
             # Every connection comes from loopback: one peer.
             "--no-per-peer-shares"],
            preexec_fn=raise_nofile, stderr=subprocess.DEVNULL)
        addr = ("127.0.0.1", port)
        for _ in range(300):
            try:
                idle_connection(addr, 0).close()
                return self.child.pid, addr
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def __exit__(self, *exc):
        self.child.terminate()
        self.child.wait(timeout=30)


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        print(f"ten-thousand: {e}", file=sys.stderr)
        sys.exit(1)
