"""Scrapes the `everything` server's metrics path after a known workload and
checks, with the official Prometheus text parser (prometheus_client, pinned
in requirements.txt), that the counts equal the workload exactly.

Usage: metrics_scrape.py URL METRICS_URL

URL is the MCP endpoint (http://127.0.0.1:PORT/mcp), METRICS_URL the path
the server was started with (--metrics-path). The workload is sent as raw
HTTP (urllib), so that every request and its answer are known: a
2025-11-25 session, tool calls of two tools, an erroring tool, an unknown
tool, an unknown method, a ping, a notification, and requests refused at
the HTTP edge. The counts are compared as differences between a scrape
before and one after. Prints one ok/FAIL line per check and, last,
`N passed, M failed`.
"""

import http.client
import json
import sys
import urllib.parse

from prometheus_client.parser import text_string_to_metric_families

OPERATION = "mcp_server_operation_duration_seconds"
ERRORS = "tiny_mcp_http_error_responses_total"
passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok", what)
    else:
        failed += 1
        print("FAIL", what)


class Endpoint:
    """One connection to the server; records every answer's status."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path
        self.statuses = []

    def send(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        all_headers = {"Accept": "application/json, text/event-stream"}
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers=all_headers)
        response = conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        session = response.getheader("Mcp-Session-Id")
        conn.close()
        self.statuses.append(response.status)
        return response.status, text, session

    def rpc(self, session, id, method, params=None):
        body = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            body["params"] = params
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        return self.send("POST", self.path, body, headers)


def scrape(url):
    """The samples of the metrics path: {(name, labels as a sorted tuple): value}."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request("GET", parts.path)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    assert response.status == 200, response.status
    assert response.getheader("Content-Type").startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def total(samples, name, **want):
    """The sum of `name`'s samples whose labels include `want` (None: absent)."""
    result = 0
    for (sample, labels), value in samples.items():
        if sample != name:
            continue
        labels = dict(labels)
        if all(labels.get(k) == v for k, v in want.items()):
            result += value
    return result


def calls(samples, **want):
    return total(samples, OPERATION + "_count", mcp_method_name="tools/call", **want)


def main():
    url, metrics_url = sys.argv[1], sys.argv[2]
    before = scrape(metrics_url)
    mcp = Endpoint(url)
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "metrics-scrape", "version": "1"},
    }
    status, _, session = mcp.send(
        "POST", mcp.path, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    )
    check(status == 200 and session, "initialize opens a session")
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    status, _, _ = mcp.send("POST", mcp.path, notification, headers)
    check(status == 202, "a notification is accepted (202)")
    for i in range(5):
        mcp.rpc(session, 10 + i, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    for i in range(3):
        mcp.rpc(session, 20 + i, "tools/call", {"name": "test_simple_text", "arguments": {}})
    for i in range(2):
        mcp.rpc(session, 30 + i, "tools/call", {"name": "test_error_handling", "arguments": {}})
    mcp.rpc(session, 40, "tools/call", {"name": "no_such_tool", "arguments": {}})
    mcp.rpc(session, 41, "made/up", {})
    mcp.rpc(session, 42, "ping")
    # Refused at the HTTP edge: no session, an unknown session, a foreign
    # Host (DNS-rebinding protection), a path that is not the endpoint.
    ping = {"jsonrpc": "2.0", "id": 50, "method": "ping"}
    edge = []
    edge.append(mcp.send("POST", mcp.path, ping)[0])
    edge.append(mcp.send("POST", mcp.path, ping, {"Mcp-Session-Id": "no-such-session"})[0])
    edge.append(mcp.send("POST", mcp.path, ping, {"Host": "evil.example"})[0])
    edge.append(mcp.send("GET", "/elsewhere")[0])
    check(edge == [400, 404, 403, 404], "the edge refusals are 400, 404, 403, 404: %s" % edge)
    after = scrape(metrics_url)

    def delta(fn, **want):
        return fn(after, **want) - fn(before, **want)

    check(delta(calls, gen_ai_tool_name="echo", error_type=None) == 5, "5 calls of echo")
    check(
        delta(calls, gen_ai_tool_name="test_simple_text", error_type=None) == 3,
        "3 calls of test_simple_text",
    )
    check(
        delta(calls, gen_ai_tool_name="test_error_handling", error_type="tool_error") == 2,
        "2 tool_error results of test_error_handling",
    )
    check(
        delta(calls, gen_ai_tool_name=None, error_type="-32602") == 1,
        "the unknown tool: -32602, no tool label",
    )
    check(calls(after, gen_ai_tool_name="no_such_tool") == 0, "no label for the unknown tool")
    check(delta(calls) == 11, "11 tools/call in all")
    other = total(after, OPERATION + "_count", mcp_method_name="_OTHER", error_type="-32601")
    other -= total(before, OPERATION + "_count", mcp_method_name="_OTHER", error_type="-32601")
    check(other == 1, "the unknown method counts as _OTHER with -32601")
    for method in ("initialize", "ping"):
        n = total(after, OPERATION + "_count", mcp_method_name=method)
        n -= total(before, OPERATION + "_count", mcp_method_name=method)
        check(n == 1, "one %s" % method)
    check(
        total(after, OPERATION + "_count", mcp_method_name="notifications/initialized") == 0,
        "notifications are not operations",
    )
    everything = total(after, OPERATION + "_count") - total(before, OPERATION + "_count")
    check(everything == 14, "14 requests in all: %s" % everything)
    inf = total(after, OPERATION + "_bucket", le="+Inf") - total(before, OPERATION + "_bucket", le="+Inf")
    check(inf == everything, "the +Inf buckets equal the counts")
    refused = {}
    for status in mcp.statuses:
        if status >= 400:
            refused[str(status)] = refused.get(str(status), 0) + 1
    for status, n in sorted(refused.items()):
        got = total(after, ERRORS, http_response_status_code=status)
        got -= total(before, ERRORS, http_response_status_code=status)
        check(got == n, "%d HTTP answers with status %s: %s" % (n, status, got))
    check(total(after, "tiny_mcp_sessions_open") == 1, "one session open")
    status, _, _ = mcp.send("DELETE", mcp.path, None, headers)
    check(status in (200, 204), "DELETE ends the session")
    last = scrape(metrics_url)
    check(total(last, "tiny_mcp_sessions_open") == 0, "no session open after DELETE")
    ended = total(last, "mcp_server_session_duration_seconds_count", network_transport="tcp")
    ended -= total(before, "mcp_server_session_duration_seconds_count", network_transport="tcp")
    check(ended == 1, "one session duration observed")
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
