#!/usr/bin/env python3
"""OAuth interop test: the MCP Python SDK client (mcp 2.3.0) authenticates with OAuth 2.1
against our server and calls tools over Streamable HTTP, in both protocol eras.

Usage:
    oauth.py serve-as --port PORT [--issuer URL] [--jwt]
    oauth.py selftest [--timeout SECONDS]
    oauth.py check URL --as AS_URL [--v2025] [--jwt] [--timeout SECONDS]

``serve-as`` runs the test authorization server on 127.0.0.1:PORT until it is
terminated. It is made of the SDK's own authorization-server routes
(``mcp.server.auth.routes.create_auth_routes``: RFC 8414 metadata, RFC 7591
dynamic client registration, /authorize, /token with PKCE, /revoke) over an
in-memory test provider that approves every authorization request at once (no
login page) for the subject "alice". Two routes are added:

- ``POST /introspect`` (RFC 7662, form ``token=...``): ``{"active": true, "sub",
  "client_id", "scope", "aud", "exp", "iat", "token_type": "Bearer"}`` for a live
  token, ``{"active": false}`` otherwise;
- ``POST /test/mint`` (test only), JSON ``{"scope", "aud", "exp", "sub",
  "client_id", "report_active"}`` (all optional) -> ``{"access_token"}``: a token
  issued without any flow, for the negative checks. ``exp`` is in unix seconds.
  ``report_active: true`` makes introspection call the token active even after
  its ``exp`` (to see that the resource server checks ``exp`` itself).

With ``--jwt`` the access tokens are RFC 9068 JWTs signed with RS256 (jwt_issuer.py), the
key set is served at ``/jwks`` and OpenID Provider metadata at
``/.well-known/openid-configuration``: the server is then an OIDC-shaped issuer whose
tokens a resource server checks without calling back. ``POST /test/forge`` (test only),
JSON ``{"how": "other-key" | "none", "aud"}``, returns a forged token.

``selftest`` starts the authorization server in this process on a free port and
exercises it with plain HTTP: registration, authorization with PKCE, token,
refresh, introspection and minting.

``check`` runs the checks against an MCP endpoint URL (the server must be
started with ``--introspect AS_URL/introspect --auth-issuer AS_URL``):

- without a token the endpoint answers 401 with a Bearer challenge naming the
  RFC 9728 metadata and the scope ``mcp:tools``;
- the metadata is served at ``/.well-known/oauth-protected-resource/mcp`` and
  ``/.well-known/oauth-protected-resource``;
- the SDK client with ``OAuthClientProvider`` meets the 401, discovers the
  metadata, registers, runs the authorization-code flow with PKCE and calls
  ``test_simple_text`` and ``session_info``; ``admin_echo`` with its
  ``mcp:tools`` token meets a 403 step-up challenge (the SDK may re-authorize
  with ``mcp:admin`` itself: which of the two happened is printed as a note);
- raw HTTP requests: minted tokens that are valid, for another resource,
  unknown, expired, lacking ``mcp:tools``, lacking ``mcp:admin`` for
  ``admin_echo``, and having it.

``--jwt`` (the server started with ``--jwks-url AS_URL/jwks --auth-issuer AS_URL`` against
``serve-as --jwt``) adds: minted tokens are RS256 JWTs under a ``kid`` of ``/jwks``; a JWT
signed with another key under that ``kid`` and one with ``alg: none`` get 401
``invalid_token``.

``--v2025`` makes the SDK client use its 2025-11-25 mode, ``mode="legacy"``
(initialize), and the raw requests open an ``Mcp-Session-Id`` session with
``initialize``; without it the SDK client uses its default ``mode="auto"``
(server/discover, 2026-07-28) and the raw requests carry the 2026-07-28 headers
and ``_meta`` envelope.

Prints ``ok <check>`` or ``FAIL <check>: <reason>`` per check, ``note ...`` lines
for things worth knowing that are not checks, and, last, ``N passed, M failed``.
Exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import secrets
import socket
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
import httpx2
import mcp_types as types
import uvicorn
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPDeprecationWarning
from checks import REPORT, check, describe, expect, run_bounded, short
from jwt_issuer import JwtIssuer, header_of
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

V2026 = "2026-07-28"
V2025 = "2025-11-25"

SUBJECT = "alice"  # the resource owner of every authorization
TOOLS_SCOPE = "mcp:tools"
ADMIN_SCOPE = "mcp:admin"
KNOWN_SCOPES = [TOOLS_SCOPE, ADMIN_SCOPE]
TOKEN_LIFETIME = 3600  # seconds, access tokens
CODE_LIFETIME = 300  # seconds, authorization codes
OTHER_RESOURCE = "http://127.0.0.1:1/other"  # the audience of a token meant for someone else

# The redirect URI the SDK client registers. Nothing listens there: the test's
# "browser" reads the code from the authorization server's redirect and never follows it.
REDIRECT_URI = "http://127.0.0.1/oauth/callback"
CLIENT_NAME = "tiny-mcp-oauth-interop"

HTTP_TIMEOUT = 10.0  # seconds, one raw HTTP request
CHECK_TIMEOUT = 30.0  # seconds, one check


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def describe_response(response: httpx2.Response) -> str:
    """Status, the auth-relevant headers and the start of the body, for failure messages."""
    parts = [f"HTTP {response.status_code}"]
    for name in ("www-authenticate", "content-type", "mcp-session-id"):
        for value in response.headers.get_list(name):
            parts.append(f"{name}: {value}")
    body = response.text.strip()
    if body:
        parts.append(f"body: {short(body)}")
    return "; ".join(parts)


# ---------------------------------------------------------------------------
# The test authorization server
# ---------------------------------------------------------------------------

# Issuer identifiers compare as exact strings (RFC 8414 §3.3), and pydantic would
# otherwise add a "/" to a path-less URL: keep the issuer exactly as given.
_EXACT_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


@dataclass
class IssuedToken:
    """What the authorization server remembers about an opaque access token."""

    token: str
    client_id: str
    scopes: list[str]
    aud: str | None  # the RFC 8707 resource the client named
    sub: str
    iat: int
    exp: int
    report_active: bool = False  # test only: introspection ignores `exp`

    def live(self) -> bool:
        return self.report_active or time.time() < self.exp


class TestAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """An in-memory provider for the SDK's authorization-server routes.

    The SDK routes validate the requests (client authentication, redirect URI,
    PKCE S256 code challenge and verifier, code expiry); this provider stores
    clients, codes and tokens and approves every authorization request at once.
    """

    def __init__(self, issuer: str, signer: JwtIssuer | None = None) -> None:
        self.issuer = issuer
        # With a signer (serve-as --jwt), access tokens are JWTs a resource server can
        # check against /jwks without calling back; introspection still knows them.
        self.signer = signer
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access_tokens: dict[str, IssuedToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}

    # -- clients ------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # The SDK's /authorize only grants scopes a client registered with, and the SDK
        # client registers with the scope of the first challenge (mcp:tools). So that a
        # later step-up to mcp:admin can be granted, every client is registered for all
        # the scopes this server knows (RFC 7591 §3.2.1 lets the server replace the
        # requested metadata; the registration response shows the replaced value).
        client_info.scope = " ".join(KNOWN_SCOPES)
        self.clients[client_info.client_id] = client_info

    # -- authorization code -------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Approves at once: redirects back to the client with a fresh code and its state."""
        code = secrets.token_urlsafe(32)  # 256 bits
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [TOOLS_SCOPE],
            expires_at=time.time() + CODE_LIFETIME,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=SUBJECT,
        )
        # RFC 9207: name the issuer in the response; the SDK client compares it.
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)  # a code is good for one exchange
        return self._issue(
            client.client_id, authorization_code.scopes, authorization_code.resource, authorization_code.subject
        )

    # -- refresh ------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh_tokens.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh_tokens.pop(refresh_token.token, None)  # rotated
        return self._issue(client.client_id, scopes, refresh_token.resource, refresh_token.subject)

    # -- access tokens ------------------------------------------------------

    async def load_access_token(self, token: str) -> AccessToken | None:
        issued = self.access_tokens.get(token)
        if issued is None or not issued.live():
            return None
        return AccessToken(
            token=issued.token,
            client_id=issued.client_id,
            scopes=issued.scopes,
            expires_at=issued.exp,
            resource=issued.aud,
            subject=issued.sub,
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, subject: str | None) -> OAuthToken:
        access = self.mint(client_id=client_id, scopes=scopes, aud=resource, sub=subject or SUBJECT)
        refresh = secrets.token_urlsafe(32)
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject or SUBJECT
        )
        return OAuthToken(
            access_token=access.token,
            token_type="Bearer",
            expires_in=TOKEN_LIFETIME,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    def mint(
        self,
        *,
        client_id: str,
        scopes: list[str],
        aud: str | None,
        sub: str = SUBJECT,
        exp: int | None = None,
        report_active: bool = False,
    ) -> IssuedToken:
        now = int(time.time())
        exp = now + TOKEN_LIFETIME if exp is None else exp
        if self.signer is None:
            token = secrets.token_urlsafe(32)
        else:
            claims = self.signer.claims(sub=sub, client_id=client_id, scopes=list(scopes), aud=aud, iat=now, exp=exp)
            token = self.signer.sign(claims)
        issued = IssuedToken(
            token=token,
            client_id=client_id,
            scopes=list(scopes),
            aud=aud,
            sub=sub,
            iat=now,
            exp=exp,
            report_active=report_active,
        )
        self.access_tokens[issued.token] = issued
        return issued

    def introspect(self, token: str | None) -> dict[str, Any]:
        """The RFC 7662 response for `token`."""
        issued = self.access_tokens.get(token) if token else None
        if issued is None or not issued.live():
            return {"active": False}
        answer: dict[str, Any] = {
            "active": True,
            "sub": issued.sub,
            "client_id": issued.client_id,
            "scope": " ".join(issued.scopes),
            "exp": issued.exp,
            "iat": issued.iat,
            "token_type": "Bearer",
        }
        if issued.aud is not None:
            answer["aud"] = issued.aud
        return answer


def build_as_app(issuer: str, use_jwt: bool = False) -> tuple[Starlette, TestAuthProvider]:
    """The authorization server: the SDK's routes plus /introspect and /test/mint, and
    with `use_jwt` the JWT issuer's /jwks, /.well-known/openid-configuration and
    /test/forge."""
    signer = JwtIssuer(issuer) if use_jwt else None
    provider = TestAuthProvider(issuer, signer)
    routes = create_auth_routes(
        provider,
        issuer_url=_EXACT_URL.validate_python(issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=KNOWN_SCOPES, default_scopes=[TOOLS_SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )

    async def introspect(request: Request) -> Response:
        # RFC 7662 §2.1: a form-encoded POST with `token`. Callers are not authenticated
        # (this server listens on 127.0.0.1 for one test run only).
        form = await request.form()
        token = form.get("token")
        answer = provider.introspect(token if isinstance(token, str) else None)
        return JSONResponse(answer, headers={"Cache-Control": "no-store"})

    async def mint(request: Request) -> Response:
        try:
            spec = await request.json()
            expect(isinstance(spec, dict), "the body must be a JSON object")
            scope = spec.get("scope", TOOLS_SCOPE)
            exp = spec.get("exp")
            issued = provider.mint(
                client_id=str(spec.get("client_id", "minted-by-test")),
                scopes=scope.split() if isinstance(scope, str) else list(scope),
                aud=spec.get("aud"),
                sub=str(spec.get("sub", SUBJECT)),
                exp=int(exp) if exp is not None else None,
                report_active=bool(spec.get("report_active", False)),
            )
        except (AssertionError, ValueError, TypeError) as exc:
            return JSONResponse({"error": "invalid_request", "error_description": str(exc)}, status_code=400)
        return JSONResponse({"access_token": issued.token, "token_type": "Bearer", "exp": issued.exp})

    routes.append(Route("/introspect", introspect, methods=["POST"]))
    routes.append(Route("/test/mint", mint, methods=["POST"]))
    if signer is not None:
        routes.extend(jwt_routes(signer))
    return Starlette(routes=routes), provider


def jwt_routes(signer: JwtIssuer) -> list[Route]:
    """/jwks, the OpenID Provider metadata, and POST /test/forge (test only): JSON
    {"how": "other-key" | "none", "aud"} -> {"access_token"}, a forgery of a valid
    mcp:tools token for "alice"."""

    async def jwks(_: Request) -> Response:
        return JSONResponse(signer.jwks())

    async def openid_configuration(_: Request) -> Response:
        return JSONResponse(signer.openid_configuration())

    async def forge(request: Request) -> Response:
        spec = await request.json()
        now = int(time.time())
        claims = signer.claims(
            sub=SUBJECT, client_id="forged-by-test", scopes=[TOOLS_SCOPE], aud=spec.get("aud"), iat=now, exp=now + 600
        )
        how = spec.get("how")
        if how == "other-key":
            token = signer.forged_with_other_key(claims)
        elif how == "none":
            token = signer.unsigned(claims)
        else:
            return JSONResponse({"error": "invalid_request", "error_description": f"how={how!r}"}, status_code=400)
        return JSONResponse({"access_token": token})

    return [
        Route("/jwks", jwks, methods=["GET"]),
        Route("/.well-known/openid-configuration", openid_configuration, methods=["GET"]),
        Route("/test/forge", forge, methods=["POST"]),
    ]


def serve_as(args: argparse.Namespace) -> int:
    issuer = args.issuer or f"http://127.0.0.1:{args.port}"
    app, _ = build_as_app(issuer, args.jwt)
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")
    # uvicorn stops cleanly on SIGTERM/SIGINT.
    uvicorn.Server(config).run()
    return 0


# ---------------------------------------------------------------------------
# HTTP helpers: challenges, JSON-RPC over Streamable HTTP
# ---------------------------------------------------------------------------

_AUTH_PARAM = re.compile(r'([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def parse_challenge(response: httpx2.Response) -> dict[str, str] | None:
    """The parameters of the response's Bearer challenge (lower-case names), or None if there is none."""
    for value in response.headers.get_list("www-authenticate"):
        scheme, _, rest = value.strip().partition(" ")
        if scheme.lower() != "bearer":
            continue
        params: dict[str, str] = {}
        for match in _AUTH_PARAM.finditer(rest):
            quoted, bare = match.group(2), match.group(3)
            params[match.group(1).lower()] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        return params
    return None


def rpc_messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response body (application/json or a text/event-stream)."""
    ctype = response.headers.get("content-type", "")
    if "text/event-stream" in ctype:
        messages: list[dict[str, Any]] = []
        data: list[str] = []
        for line in response.text.splitlines() + [""]:
            if line.startswith("data:"):
                data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
            elif line == "":
                payload = "\n".join(data).strip()
                if payload:  # (an event with empty data, such as a priming event, holds no message)
                    messages.append(json.loads(payload))
                data = []
        return messages
    if "json" in ctype and response.content:
        body = response.json()
        return body if isinstance(body, list) else [body]
    return []


def rpc_result(response: httpx2.Response, request_id: Any) -> dict[str, Any]:
    """The `result` of the response to `request_id`; raises AssertionError otherwise."""
    expect(response.status_code == 200, describe_response(response))
    for message in rpc_messages(response):
        if message.get("id") == request_id:
            expect("result" in message, f"error response: {short(message)}")
            return message["result"]
    raise AssertionError(f"no response to id {request_id}: {describe_response(response)}")


def text_content(result: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


class RawClient:
    """Plain JSON-RPC over Streamable HTTP with httpx2, with a bearer token of the caller's choosing."""

    def __init__(self, http: httpx2.AsyncClient, url: str, v2025: bool) -> None:
        self.http = http
        self.url = url
        self.v2025 = v2025
        self.next_id = 1

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    async def post(self, body: dict[str, Any], headers: dict[str, str], token: str | None) -> httpx2.Response:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return await self.http.post(self.url, content=json.dumps(body), headers=headers)

    # -- 2026-07-28: every request stands alone (headers + _meta envelope) ---------

    async def v2026(
        self, token: str | None, method: str, params: dict[str, Any] | None = None, name: str | None = None
    ) -> tuple[httpx2.Response, int]:
        request_id = self._id()
        params = dict(params or {})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": f"{CLIENT_NAME}-raw", "version": "1"},
        }
        headers = {"MCP-Protocol-Version": V2026, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return await self.post(body, headers, token), request_id

    # -- 2025-11-25: initialize, then requests on the Mcp-Session-Id ---------------

    async def initialize(self, token: str | None) -> tuple[httpx2.Response, int]:
        request_id = self._id()
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": V2025,
                "capabilities": {},
                "clientInfo": {"name": f"{CLIENT_NAME}-raw", "version": "1"},
            },
        }
        return await self.post(body, {}, token), request_id

    async def open_session(self, token: str) -> str:
        """initialize + notifications/initialized with `token`; returns the Mcp-Session-Id."""
        response, request_id = await self.initialize(token)
        rpc_result(response, request_id)
        session = response.headers.get("mcp-session-id")
        expect(bool(session), f"initialize answered without Mcp-Session-Id: {describe_response(response)}")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        ack = await self.post(note, {"Mcp-Session-Id": session, "MCP-Protocol-Version": V2025}, token)
        expect(ack.status_code in (200, 202), f"notifications/initialized: {describe_response(ack)}")
        return session

    async def in_session(
        self, token: str | None, session: str, method: str, params: dict[str, Any] | None = None
    ) -> tuple[httpx2.Response, int]:
        request_id = self._id()
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": V2025}
        return await self.post(body, headers, token), request_id

    # -- either era -----------------------------------------------------------

    async def call_tool(
        self, token: str | None, name: str, arguments: dict[str, Any], session: str | None = None
    ) -> tuple[httpx2.Response, int]:
        params = {"name": name, "arguments": arguments}
        if self.v2025:
            expect(session is not None, "a 2025-11-25 tools/call needs a session")
            return await self.in_session(token, session, "tools/call", params)  # type: ignore[arg-type]
        return await self.v2026(token, "tools/call", params, name=name)

    async def first_request(self, token: str | None) -> tuple[httpx2.Response, int]:
        """The request a client of this era sends first: initialize, or server/discover."""
        if self.v2025:
            return await self.initialize(token)
        return await self.v2026(token, "server/discover")


# ---------------------------------------------------------------------------
# The SDK client's OAuth helpers
# ---------------------------------------------------------------------------


class MemoryTokenStorage:
    """The SDK's TokenStorage protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Browser:
    """Plays the user agent of the authorization-code flow.

    `redirect_handler` gets the authorization URL from the SDK, requests it (the test
    authorization server approves at once) without following the redirect to the
    callback, and keeps the code, state and iss from the Location header;
    `callback_handler` hands them to the SDK.
    """

    def __init__(self) -> None:
        self.visits: list[dict[str, str]] = []  # the query of every authorization URL
        self._pending: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        self.visits.append(dict(parse_qsl(urlsplit(authorization_url).query)))
        async with httpx2.AsyncClient(follow_redirects=False, trust_env=False, timeout=HTTP_TIMEOUT) as http:
            response = await http.get(authorization_url)
        if response.status_code not in (302, 303, 307):
            raise RuntimeError(f"authorization endpoint: {describe_response(response)}")
        location = response.headers.get("location", "")
        if not location.startswith(REDIRECT_URI):
            raise RuntimeError(f"authorization endpoint redirected elsewhere: {location}")
        query = dict(parse_qsl(urlsplit(location).query))
        if "error" in query:
            raise RuntimeError(f"authorization refused: {query}")
        self._pending = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback_handler(self) -> AuthorizationCodeResult:
        result, self._pending = self._pending, None
        if result is None:
            raise RuntimeError("callback_handler called before a redirect")
        return result


@dataclass
class Exchange:
    method: str
    url: str
    status: int

    def __str__(self) -> str:
        return f"{self.method} {self.url} -> {self.status}"


@dataclass
class HttpLog:
    """Every HTTP exchange of the SDK client, including the ones its OAuth flow makes."""

    exchanges: list[Exchange] = field(default_factory=list)

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        url = str(request.url.copy_with(query=None))
        self.exchanges.append(Exchange(request.method, url, response.status_code))

    def since(self, start: int) -> list[Exchange]:
        return self.exchanges[start:]


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------


class Run:
    def __init__(self, url: str, as_url: str, v2025: bool, http: httpx2.AsyncClient) -> None:
        self.url = url
        self.as_url = as_url.rstrip("/")
        self.v2025 = v2025
        self.version = V2025 if v2025 else V2026
        self.label = "oauth/v2025" if v2025 else "oauth/v2026"
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.metadata_url = f"{self.origin}/.well-known/oauth-protected-resource{parts.path}"
        self.http = http
        self.raw = RawClient(http, url, v2025)

    async def mint(self, scope: str, aud: str | None, **extra: Any) -> str:
        response = await self.http.post(f"{self.as_url}/test/mint", json={"scope": scope, "aud": aud, **extra})
        expect(response.status_code == 200, f"/test/mint: {describe_response(response)}")
        return response.json()["access_token"]

    async def forge(self, how: str) -> str:
        response = await self.http.post(f"{self.as_url}/test/forge", json={"how": how, "aud": self.url})
        expect(response.status_code == 200, f"/test/forge: {describe_response(response)}")
        return response.json()["access_token"]

    # -- JWT access tokens (check --jwt: the server verifies them against /jwks) --

    async def jwt_shape(self) -> None:
        header = header_of(await self.mint(TOOLS_SCOPE, self.url))
        response = await self.http.get(f"{self.as_url}/jwks")
        expect(response.status_code == 200, f"/jwks: {describe_response(response)}")
        kids = [key.get("kid") for key in response.json().get("keys", [])]
        expect(header.get("alg") == "RS256" and header.get("kid") in kids, f"header {header}, kids {kids}")

    async def jwt_other_key(self) -> None:
        await self.expect_invalid_token(await self.forge("other-key"))

    async def jwt_alg_none(self) -> None:
        await self.expect_invalid_token(await self.forge("none"))

    async def introspect(self, token: str) -> dict[str, Any]:
        response = await self.http.post(f"{self.as_url}/introspect", data={"token": token})
        expect(response.status_code == 200, f"/introspect: {describe_response(response)}")
        return response.json()

    # -- without a token; metadata --------------------------------------------

    async def no_token(self) -> None:
        response, _ = await self.raw.first_request(None)
        expect(response.status_code == 401, f"expected 401, got {describe_response(response)}")
        challenge = parse_challenge(response)
        expect(challenge is not None, f"no Bearer challenge: {describe_response(response)}")
        got = challenge.get("resource_metadata")
        expect(got == self.metadata_url, f"resource_metadata {got!r}, expected {self.metadata_url!r}")
        scopes = challenge.get("scope", "").split()
        expect(TOOLS_SCOPE in scopes, f"challenge scope {challenge.get('scope')!r} lacks {TOOLS_SCOPE}")

    async def metadata(self, path: str) -> None:
        response = await self.http.get(f"{self.origin}{path}")
        expect(response.status_code == 200, describe_response(response))
        expect("json" in response.headers.get("content-type", ""), describe_response(response))
        doc = response.json()
        want = {
            "resource": self.url,
            "authorization_servers": [self.as_url],
            "scopes_supported": KNOWN_SCOPES,
            "bearer_methods_supported": ["header"],
        }
        wrong = {key: doc.get(key) for key, value in want.items() if doc.get(key) != value}
        expect(not wrong, f"fields differ from {want}: got {wrong} (document {short(doc)})")

    # -- raw requests with minted tokens ----------------------------------------

    async def session_or_none(self, token: str) -> str | None:
        return await self.raw.open_session(token) if self.v2025 else None

    async def raw_valid(self) -> None:
        token = await self.mint(TOOLS_SCOPE, self.url)
        session = await self.session_or_none(token)
        response, request_id = await self.raw.call_tool(token, "test_simple_text", {}, session)
        result = rpc_result(response, request_id)
        expect(not result.get("isError") and text_content(result), f"result {short(result)}")

    async def expect_invalid_token(self, token: str) -> None:
        # The first request of the era: the token must be refused before anything else.
        response, _ = await self.raw.first_request(token)
        expect(response.status_code == 401, f"expected 401, got {describe_response(response)}")
        challenge = parse_challenge(response) or {}
        expect(
            challenge.get("error") == "invalid_token",
            f'challenge lacks error="invalid_token": {describe_response(response)}',
        )

    async def raw_other_audience(self) -> None:
        await self.expect_invalid_token(await self.mint(TOOLS_SCOPE, OTHER_RESOURCE))

    async def raw_unknown_token(self) -> None:
        await self.expect_invalid_token(secrets.token_urlsafe(32))

    async def raw_expired_token(self) -> None:
        # Introspection still says active (report_active), but exp lies in the past.
        past = int(time.time()) - 60
        await self.expect_invalid_token(await self.mint(TOOLS_SCOPE, self.url, exp=past, report_active=True))

    async def raw_no_tools_scope(self) -> None:
        token = await self.mint(ADMIN_SCOPE, self.url)
        response, _ = await self.raw.first_request(token)
        # The contract only says every request needs mcp:tools; RFC 6750 §3.1 suggests
        # 403 insufficient_scope naming it, and a 401 invalid_token is a refusal too.
        expect(response.status_code in (401, 403), f"expected 401 or 403, got {describe_response(response)}")
        challenge = parse_challenge(response)
        expect(challenge is not None, f"no Bearer challenge: {describe_response(response)}")
        if response.status_code == 403:
            expect(
                challenge.get("error") == "insufficient_scope",
                f"403 without insufficient_scope: {describe_response(response)}",
            )
            scopes = challenge.get("scope", "").split()
            expect(TOOLS_SCOPE in scopes, f"challenge scope {challenge.get('scope')!r} does not name {TOOLS_SCOPE}")

    async def raw_admin_without_scope(self) -> None:
        token = await self.mint(TOOLS_SCOPE, self.url)
        session = await self.session_or_none(token)
        response, _ = await self.raw.call_tool(token, "admin_echo", {"text": "raw"}, session)
        expect(response.status_code == 403, f"expected 403, got {describe_response(response)}")
        challenge = parse_challenge(response) or {}
        expect(
            challenge.get("error") == "insufficient_scope",
            f'challenge lacks error="insufficient_scope": {describe_response(response)}',
        )
        scopes = challenge.get("scope", "").split()
        expect(ADMIN_SCOPE in scopes, f"challenge scope {challenge.get('scope')!r} does not name {ADMIN_SCOPE}")
        expect(
            challenge.get("resource_metadata") == self.metadata_url,
            f"challenge resource_metadata {challenge.get('resource_metadata')!r}, expected {self.metadata_url!r}",
        )
        if set(scopes) != set(KNOWN_SCOPES):
            REPORT.note(f"{self.label}: the admin_echo challenge names scope {challenge.get('scope')!r}")

    async def raw_admin_with_scope(self) -> None:
        token = await self.mint(f"{TOOLS_SCOPE} {ADMIN_SCOPE}", self.url)
        session = await self.session_or_none(token)
        response, request_id = await self.raw.call_tool(token, "admin_echo", {"text": "raw-admin"}, session)
        result = rpc_result(response, request_id)
        text = text_content(result)
        expect(not result.get("isError") and "raw-admin" in text, f"result {short(result)}")

    # -- the SDK client --------------------------------------------------------

    async def sdk(self) -> None:
        """Connects the SDK client through its OAuth flow and runs the SDK checks on it."""
        storage = MemoryTokenStorage()
        browser = Browser()
        log = HttpLog()
        provider = OAuthClientProvider(
            server_url=self.url,
            client_metadata=OAuthClientMetadata(
                client_name=CLIENT_NAME,
                redirect_uris=[REDIRECT_URI],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            ),
            storage=storage,
            redirect_handler=browser.redirect_handler,
            callback_handler=browser.callback_handler,
        )
        http = httpx2.AsyncClient(
            auth=provider,
            trust_env=False,
            timeout=httpx2.Timeout(CHECK_TIMEOUT),
            event_hooks={"response": [log.on_response]},
        )
        mode = "legacy" if self.v2025 else "auto"  # the SDK's name for its 2025-11-25 mode
        client = Client(
            streamable_http_client(self.url, http_client=http),
            mode=mode,
            read_timeout_seconds=CHECK_TIMEOUT,
            client_info=types.Implementation(name=CLIENT_NAME, version="2.3.0"),
        )
        name = f"{self.label}: SDK client connects through the OAuth flow ({self.version if self.v2025 else mode} mode)"
        # The client's task groups must be entered and left in this task, so the connect
        # is bounded by the client's read timeout and the overall timeout, not by a scope
        # of its own here; `phase` tells which step an exception came from.
        phase = "connect"
        try:
            async with http, client:
                phase = "checks"
                await check(name, lambda: self.sdk_flow(client, storage, browser, log))
                await check(f"{self.label}: SDK token is audience-bound to the server", lambda: self.sdk_token(storage))
                await check(f"{self.label}: SDK tools/call test_simple_text", lambda: self.sdk_simple(client))
                await check(
                    f"{self.label}: SDK tools/call session_info names alice", lambda: self.sdk_session_info(client)
                )
                await check(
                    f"{self.label}: SDK tools/call admin_echo with mcp:tools meets the 403 step-up",
                    lambda: self.sdk_step_up(client, browser, log),
                )
                phase = "disconnect"
        except Exception as exc:  # noqa: BLE001 - reported
            if os.environ.get("INTEROP_DEBUG"):
                traceback.print_exc()
            exchanges = "; ".join(map(str, log.exchanges))
            failed = {
                "connect": name,
                "checks": f"{self.label}: SDK checks",
                "disconnect": f"{self.label}: SDK disconnect",
            }
            REPORT.fail(failed[phase], f"{describe(exc)} (exchanges: {exchanges})")

    async def sdk_flow(self, client: Client, storage: MemoryTokenStorage, browser: Browser, log: HttpLog) -> None:
        """What the SDK did to get in: the exchanges, in order, and the authorization request."""
        trail = "; ".join(map(str, log.exchanges))
        steps = [
            ("POST", self.url, 401),
            ("GET", self.metadata_url, 200),
            ("GET", f"{self.as_url}/.well-known/oauth-authorization-server", 200),
            ("POST", f"{self.as_url}/register", 201),
            ("POST", f"{self.as_url}/token", 200),
            ("POST", self.url, 200),
        ]
        position = 0
        for method, url, status in steps:
            while position < len(log.exchanges) and (
                log.exchanges[position].method,
                log.exchanges[position].url,
                log.exchanges[position].status,
            ) != (method, url, status):
                position += 1
            expect(position < len(log.exchanges), f"no {method} {url} -> {status} in order; exchanges: {trail}")
            position += 1
        first = log.exchanges[0]
        expect((first.method, first.url, first.status) == ("POST", self.url, 401), f"first exchange {first}")

        expect(len(browser.visits) == 1, f"{len(browser.visits)} authorization requests")
        visit = browser.visits[0]
        expect(visit.get("response_type") == "code", f"authorization request {visit}")
        expect(visit.get("code_challenge_method") == "S256" and visit.get("code_challenge"), f"no PKCE: {visit}")
        expect(visit.get("resource") == self.url, f"resource {visit.get('resource')!r}, expected {self.url!r}")
        expect(TOOLS_SCOPE in visit.get("scope", "").split(), f"scope {visit.get('scope')!r}")
        expect(storage.tokens is not None, "no token stored")
        expect(storage.client_info is not None, "no client registration stored")
        got = client.protocol_version
        expect(got == self.version, f"negotiated {got!r}, expected {self.version!r}")

    async def sdk_token(self, storage: MemoryTokenStorage) -> None:
        assert storage.tokens is not None and storage.client_info is not None
        info = await self.introspect(storage.tokens.access_token)
        expect(info.get("active") is True, f"introspection {info}")
        expect(info.get("aud") == self.url, f"aud {info.get('aud')!r}, expected {self.url!r}")
        expect(info.get("sub") == SUBJECT, f"sub {info.get('sub')!r}")
        expect(info.get("client_id") == storage.client_info.client_id, f"client_id {info.get('client_id')!r}")
        expect(TOOLS_SCOPE in info.get("scope", "").split(), f"scope {info.get('scope')!r}")

    async def sdk_simple(self, client: Client) -> None:
        result = await client.call_tool("test_simple_text", {})
        expect(not result.is_error, f"result {short(result.model_dump(mode='json', exclude_none=True))}")
        expect(any(isinstance(b, types.TextContent) and b.text for b in result.content), "no text content")

    async def sdk_session_info(self, client: Client) -> None:
        result = await client.call_tool("session_info", {})
        text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        expect(not result.is_error, f"result {short(text)}")
        expect(SUBJECT in text, f"session_info does not mention {SUBJECT!r}: {short(text)}")
        expect(TOOLS_SCOPE in text, f"session_info does not mention {TOOLS_SCOPE!r}: {short(text)}")

    async def sdk_step_up(self, client: Client, browser: Browser, log: HttpLog) -> None:
        """admin_echo needs mcp:admin. Passes if the server answered the SDK's request with a
        403 insufficient_scope and the SDK then either failed the call or re-authorized with
        mcp:admin and succeeded; notes which of the two happened."""
        start, visits = len(log.exchanges), len(browser.visits)
        error: BaseException | None = None
        result = None
        try:
            result = await client.call_tool("admin_echo", {"text": "step-up"})
        except Exception as exc:  # noqa: BLE001 - judged below
            error = exc
        exchanges = log.since(start)
        trail = "; ".join(map(str, exchanges))
        refused = [e for e in exchanges if e.url == self.url and e.status == 403]
        expect(
            refused,
            f"the server did not answer 403 (exchanges: {trail}; outcome: {describe(error) if error else 'success'})",
        )
        new_visits = browser.visits[visits:]
        if error is None:
            assert result is not None
            text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
            expect(not result.is_error and "step-up" in text, f"admin_echo result {short(text)}")
            expect(new_visits, f"admin_echo succeeded after a 403 without a new authorization ({trail})")
            scopes = new_visits[-1].get("scope", "").split()
            expect(ADMIN_SCOPE in scopes, f"the re-authorization asked for {scopes}")
            REPORT.note(
                f"{self.label}: the SDK performed the step-up itself: 403 insufficient_scope -> new "
                f"authorization with scope {' '.join(scopes)!r} -> admin_echo retried and succeeded"
            )
            info = await client.call_tool("session_info", {})
            info_text = "\n".join(b.text for b in info.content if isinstance(b, types.TextContent))
            expect(ADMIN_SCOPE in info_text, f"session_info after the step-up lacks {ADMIN_SCOPE}: {short(info_text)}")
        else:
            REPORT.note(
                f"{self.label}: the SDK did not step up: admin_echo failed with {describe(error)} "
                f"({len(new_visits)} new authorization requests)"
            )


async def run_checks(args: argparse.Namespace) -> None:
    async with httpx2.AsyncClient(trust_env=False, timeout=HTTP_TIMEOUT, follow_redirects=False) as http:
        run = Run(args.url, args.auth_server, args.v2025, http)
        label = run.label
        await check(f"{label}: no token -> 401 challenge with resource_metadata and scope", run.no_token)
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            await check(f"{label}: metadata at {path}", lambda path=path: run.metadata(path))
        await run.sdk()
        await check(f"{label}: raw valid token -> test_simple_text succeeds", run.raw_valid)
        await check(f"{label}: raw token for another resource -> 401 invalid_token", run.raw_other_audience)
        await check(f"{label}: raw unknown token -> 401 invalid_token", run.raw_unknown_token)
        await check(
            f"{label}: raw expired token (introspection says active) -> 401 invalid_token", run.raw_expired_token
        )
        await check(f"{label}: raw token without mcp:tools is refused", run.raw_no_tools_scope)
        await check(
            f"{label}: raw admin_echo with mcp:tools only -> 403 insufficient_scope", run.raw_admin_without_scope
        )
        await check(f"{label}: raw admin_echo with mcp:admin succeeds", run.raw_admin_with_scope)
        if args.jwt:
            await check(f"{label}: minted tokens are RS256 JWTs under a kid of /jwks", run.jwt_shape)
            await check(f"{label}: JWT signed with another key under the kid -> 401 invalid_token", run.jwt_other_key)
            await check(f"{label}: JWT with alg none -> 401 invalid_token", run.jwt_alg_none)


# ---------------------------------------------------------------------------
# Self-test of the authorization server (in this process)
# ---------------------------------------------------------------------------


def pkce_pair() -> tuple[str, str]:
    """A PKCE (RFC 7636) code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def selftest_checks(base: str) -> None:
    resource = "http://127.0.0.1:9/mcp"
    state: dict[str, Any] = {}

    async with httpx2.AsyncClient(base_url=base, trust_env=False, timeout=HTTP_TIMEOUT) as http:

        async def authorize(scope: str | None) -> tuple[str, str]:
            """One approved authorization request; returns (code, verifier)."""
            verifier, challenge = pkce_pair()
            query = {
                "response_type": "code",
                "client_id": state["client"]["client_id"],
                "redirect_uri": REDIRECT_URI,
                "state": "st-1",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": resource,
            }
            if scope is not None:
                query["scope"] = scope
            response = await http.get(f"/authorize?{urlencode(query)}")
            expect(response.status_code == 302, describe_response(response))
            location = response.headers["location"]
            expect(location.startswith(REDIRECT_URI), f"location {location}")
            got = dict(parse_qsl(urlsplit(location).query))
            expect(got.get("state") == "st-1" and got.get("code"), f"redirect query {got}")
            expect(got.get("iss") == base, f"iss {got.get('iss')!r}")
            return got["code"], verifier

        async def token(data: dict[str, str]) -> httpx2.Response:
            """A token request, authenticated with client_secret_post."""
            client = state["client"]
            form = {"client_id": client["client_id"], "client_secret": client["client_secret"], **data}
            return await http.post("/token", data=form)

        async def redeem(code: str, verifier: str, **extra: str) -> httpx2.Response:
            """The authorization_code grant for `code`."""
            grant = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI}
            return await token({**grant, "code_verifier": verifier, **extra})

        async def introspect(access_token: str) -> dict[str, Any]:
            return (await http.post("/introspect", data={"token": access_token})).json()

        async def mint(**spec: Any) -> str:
            return (await http.post("/test/mint", json=spec)).json()["access_token"]

        async def metadata() -> None:
            response = await http.get("/.well-known/oauth-authorization-server")
            expect(response.status_code == 200, describe_response(response))
            doc = response.json()
            expect(doc["issuer"] == base, f"issuer {doc['issuer']!r}, expected {base!r}")
            expect(
                doc.get("registration_endpoint") == f"{base}/register",
                f"registration_endpoint {doc.get('registration_endpoint')}",
            )
            expect(doc.get("code_challenge_methods_supported") == ["S256"], short(doc))

        async def register() -> None:
            response = await http.post(
                "/register",
                json={"redirect_uris": [REDIRECT_URI], "client_name": "selftest", "scope": TOOLS_SCOPE},
            )
            expect(response.status_code == 201, describe_response(response))
            state["client"] = response.json()
            expect(state["client"].get("client_id") and state["client"].get("client_secret"), short(state["client"]))

        async def code_flow() -> None:
            code, verifier = await authorize(TOOLS_SCOPE)
            wrong = await redeem(code, pkce_pair()[0])
            expect(
                wrong.status_code == 400 and wrong.json().get("error") == "invalid_grant",
                f"wrong verifier: {describe_response(wrong)}",
            )
            good = await redeem(code, verifier, resource=resource)
            expect(good.status_code == 200, describe_response(good))
            body = good.json()
            expect(body.get("scope") == TOOLS_SCOPE and body.get("expires_in") == TOKEN_LIFETIME, short(body))
            state["tokens"] = body
            again = await redeem(code, verifier)
            expect(again.status_code == 400, f"code reused: {describe_response(again)}")

        async def introspection() -> None:
            info = await introspect(state["tokens"]["access_token"])
            want = {
                "active": True,
                "sub": SUBJECT,
                "client_id": state["client"]["client_id"],
                "scope": TOOLS_SCOPE,
                "aud": resource,
                "token_type": "Bearer",
            }
            expect(all(info.get(k) == v for k, v in want.items()), f"introspection {info}")
            expect(info["exp"] - info["iat"] == TOKEN_LIFETIME, f"introspection {info}")
            unknown = await introspect("nope")
            expect(unknown == {"active": False}, f"unknown token: {unknown}")

        async def refresh() -> None:
            old = state["tokens"]["refresh_token"]
            response = await token({"grant_type": "refresh_token", "refresh_token": old})
            expect(response.status_code == 200, describe_response(response))
            info = await introspect(response.json()["access_token"])
            expect(info.get("active") and info.get("aud") == resource, f"refreshed token {info}")
            reused = await token({"grant_type": "refresh_token", "refresh_token": old})
            expect(reused.status_code == 400, f"rotated refresh token reused: {describe_response(reused)}")

        async def default_and_step_up_scope() -> None:
            both = f"{TOOLS_SCOPE} {ADMIN_SCOPE}"
            for asked, granted in ((None, TOOLS_SCOPE), (both, both)):
                code, verifier = await authorize(asked)
                response = await redeem(code, verifier)
                expect(
                    response.status_code == 200 and response.json().get("scope") == granted,
                    f"asked {asked!r}: {describe_response(response)}",
                )

        async def minting() -> None:
            info = await introspect(await mint(scope="a b", aud=OTHER_RESOURCE))
            expect(info.get("aud") == OTHER_RESOURCE and info.get("scope") == "a b", f"minted {info}")
            past = int(time.time()) - 60
            info = await introspect(await mint(exp=past))
            expect(info == {"active": False}, f"expired token: {info}")
            info = await introspect(await mint(exp=past, report_active=True))
            expect(info.get("active") is True and info.get("exp") == past, f"report_active token: {info}")

        for name, body in (
            ("metadata", metadata),
            ("dynamic client registration", register),
            ("authorization code with PKCE", code_flow),
            ("introspection", introspection),
            ("refresh token rotation", refresh),
            ("default scope and step-up scope", default_and_step_up_scope),
            ("/test/mint", minting),
        ):
            passed = await check(f"as-selftest: {name}", body)
            if not passed and name in ("dynamic client registration", "authorization code with PKCE"):
                return  # the later steps need these
    await check("as-selftest: JWT issuer tokens verify with PyJWT against its key set", jwt_issuer_selftest)


async def jwt_issuer_selftest() -> None:
    """The issuer of --jwt on its own: a token checks out against /jwks with PyJWT, and
    the forgeries do not (so the server's refusals are its own, not the fixture's)."""
    import jwt as pyjwt

    issuer = JwtIssuer("http://127.0.0.1:9")
    now = int(time.time())
    claims = issuer.claims(sub=SUBJECT, client_id="c", scopes=[TOOLS_SCOPE], aud="http://r/mcp", iat=now, exp=now + 60)
    key = pyjwt.PyJWK(issuer.jwks()["keys"][0]).key
    decoded = pyjwt.decode(issuer.sign(claims), key, algorithms=["RS256"], audience="http://r/mcp", issuer=issuer.issuer)
    expect(decoded["sub"] == SUBJECT and decoded["scope"] == TOOLS_SCOPE, f"decoded {decoded}")
    for forged in (issuer.forged_with_other_key(claims), issuer.unsigned(claims)):
        try:
            pyjwt.decode(forged, key, algorithms=["RS256"], audience="http://r/mcp")
        except pyjwt.InvalidTokenError:
            continue
        raise AssertionError(f"PyJWT accepted a forgery with header {header_of(forged)}")
    expect(issuer.openid_configuration()["jwks_uri"] == "http://127.0.0.1:9/jwks", "jwks_uri")


async def run_selftest(args: argparse.Namespace) -> None:
    # Bind first (port 0: no race), then hand the socket to uvicorn.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app, _ = build_as_app(base)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        try:
            with anyio.fail_after(10):
                while not server.started:  # bounded readiness poll
                    await anyio.sleep(0.02)
            await selftest_checks(base)
        finally:
            server.should_exit = True


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description="OAuth interop test with the MCP Python SDK (mcp 2.3.0)")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve-as", help="run the test authorization server")
    serve.add_argument("--port", type=int, required=True)
    serve.add_argument("--issuer", help="issuer identifier (default http://127.0.0.1:PORT)")
    serve.add_argument("--jwt", action="store_true", help="issue RS256 JWT access tokens, serve /jwks")

    selftest = sub.add_parser("selftest", help="exercise the authorization server in this process")
    selftest.add_argument("--timeout", type=float, default=60.0)

    chk = sub.add_parser("check", help="run the checks against an MCP endpoint")
    chk.add_argument("url", help="the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    chk.add_argument("--as", dest="auth_server", required=True, help="the authorization server's issuer URL")
    chk.add_argument("--v2025", action="store_true", help="2025-11-25 (initialize) instead of 2026-07-28")
    chk.add_argument("--jwt", action="store_true", help="the server checks JWTs against AS/jwks (serve-as --jwt)")
    chk.add_argument("--timeout", type=float, default=180.0, help="overall timeout in seconds (default 180)")

    args = parser.parse_args()
    if args.command == "serve-as":
        return serve_as(args)
    if args.command == "selftest":
        return run_bounded(run_selftest, args)
    return run_bounded(run_checks, args)


if __name__ == "__main__":
    sys.exit(main())
