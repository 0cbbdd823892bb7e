#!/usr/bin/env python3
"""A headless "browser" for `mcp login URL` in scripts/interop/interop-oauth.sh.

Usage: headless-browser.py AUTHORIZATION_URL   (as BROWSER=.../headless-browser.py)

Does what a person's browser does on the test authorization servers: GETs
the URL, follows redirects, submits the first HTML form of a page with the
values the page filled in (the Python SDK simple-auth login page pre-fills
its demo user), and so finally GETs the redirect URI, the CLI's loopback
listener (http://127.0.0.1:PORT/callback?code=...&state=...). No cookies:
neither server uses them. Standard library only.

Exits 0 once the loopback callback answered 2xx, 1 otherwise, with a line
on stderr saying where it stopped. With HEADLESS_BROWSER_LOG set, appends
each URL it visits to that file (the script checks the callback was reached).
"""

import html.parser
import http.client
import os
import sys
import urllib.parse

MAX_HOPS = 10
TIMEOUT = 20
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")


class FirstForm(html.parser.HTMLParser):
    """The first <form>: its action, method and named <input> values."""

    def __init__(self):
        super().__init__()
        self.form = None
        self.done = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.form is None:
            self.form = {"action": attrs.get("action") or "", "method": (attrs.get("method") or "get").lower(), "fields": []}
        elif tag == "input" and self.form is not None and not self.done and attrs.get("name"):
            self.form["fields"].append((attrs["name"], attrs.get("value") or ""))

    def handle_endtag(self, tag):
        if tag == "form" and self.form is not None:
            self.done = True


def request(method, url, body=None):
    """One request, no redirects followed: (status, headers, text)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http":
        raise SystemExit(f"headless-browser: only http:// URLs, not {url}")
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=TIMEOUT)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {"Accept": "text/html, */*"}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Location"), resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def log(url):
    path = os.environ.get("HEADLESS_BROWSER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(url + "\n")


def walk(url):
    method, body = "GET", None
    for _ in range(MAX_HOPS):
        log(url)
        status, location, text = request(method, url, body)
        method, body = "GET", None
        if status in (301, 302, 303, 307, 308) and location:
            url = urllib.parse.urljoin(url, location)
            continue
        parts = urllib.parse.urlsplit(url)
        if parts.hostname in LOOPBACK and parts.path == "/callback":
            if 200 <= status < 300:
                return 0
            print(f"headless-browser: the callback {url} answered {status}", file=sys.stderr)
            return 1
        parser = FirstForm()
        parser.feed(text)
        form = parser.form
        if status != 200 or form is None:
            print(f"headless-browser: {url} answered {status} with neither a redirect nor a form: {text[:200]}", file=sys.stderr)
            return 1
        action = urllib.parse.urljoin(url, form["action"] or url)
        encoded = urllib.parse.urlencode(form["fields"])
        if form["method"] == "post":
            url, method, body = action, "POST", encoded
        else:
            url = action.split("?")[0] + "?" + encoded
    print(f"headless-browser: no callback within {MAX_HOPS} pages", file=sys.stderr)
    return 1


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        return walk(sys.argv[1])
    except OSError as e:
        print(f"headless-browser: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
