"""The signing side of an OIDC-shaped issuer, for the OAuth interop test (oauth.py ``--jwt``).

A real identity provider (Okta, Entra ID, Auth0, Keycloak) hands out access tokens that
are JWTs signed with a key it publishes in a JSON Web Key Set; a resource server checks
them without calling back. ``JwtIssuer`` plays that part for the test authorization
server of oauth.py:

- an RSA key of 2048 bits, generated when the issuer starts, with a random ``kid``;
- access tokens in the RFC 9068 shape (header ``typ: at+jwt``, ``alg: RS256``, ``kid``;
  claims ``iss``, ``sub``, ``aud``, ``client_id``, ``scope``, ``iat``, ``exp``, ``jti``),
  signed with PyJWT (a dependency of the mcp package; pinned in requirements.txt);
- the key set (RFC 7517 §5) served at ``/jwks`` and the OpenID Provider metadata
  (OpenID Connect Discovery 1.0 §3) at ``/.well-known/openid-configuration``, whose
  ``jwks_uri`` names it;
- two forgeries for the negative checks: a token signed with another key under the
  issuer's own ``kid``, and an unsigned token (``alg: none``, RFC 7519 §6).
"""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ALGORITHM = "RS256"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class JwtIssuer:
    """Signs access tokens for ``issuer`` and describes its key set."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.key = _new_key()
        self.kid = secrets.token_hex(8)

    def claims(
        self, *, sub: str, client_id: str, scopes: list[str], aud: str | None, iat: int, exp: int
    ) -> dict[str, Any]:
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": sub,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": iat,
            "exp": exp,
            "jti": secrets.token_hex(12),
        }
        if aud is not None:
            claims["aud"] = aud
        return claims

    def sign(self, claims: dict[str, Any], key: rsa.RSAPrivateKey | None = None) -> str:
        """The JWT for `claims`, signed with the issuer's key (or `key`, a forgery)."""
        headers = {"kid": self.kid, "typ": "at+jwt"}
        return jwt.encode(claims, key or self.key, algorithm=ALGORITHM, headers=headers)

    def forged_with_other_key(self, claims: dict[str, Any]) -> str:
        """Valid claims, the issuer's `kid`, but another key's signature."""
        return self.sign(claims, _new_key())

    def unsigned(self, claims: dict[str, Any]) -> str:
        """Valid claims with `alg: none` and an empty signature (RFC 7519 §6.1)."""
        header = {"alg": "none", "typ": "at+jwt", "kid": self.kid}
        parts = (json.dumps(header).encode(), json.dumps(claims).encode())
        return ".".join(_b64url(part) for part in parts) + "."

    def jwks(self) -> dict[str, Any]:
        """The public key set: one RSA key with its kid, use and alg."""
        key = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        key.update({"kid": self.kid, "use": "sig", "alg": ALGORITHM})
        return {"keys": [key]}

    def openid_configuration(self) -> dict[str, Any]:
        """OpenID Provider metadata naming the endpoints of oauth.py's server."""
        base = self.issuer.rstrip("/")
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [ALGORITHM],
            "code_challenge_methods_supported": ["S256"],
        }


def header_of(token: str) -> dict[str, Any]:
    """The decoded JOSE header of a compact JWT (no verification)."""
    return jwt.get_unverified_header(token)
