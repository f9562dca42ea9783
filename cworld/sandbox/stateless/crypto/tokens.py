"""JSON Web Token pieces: base64url, the HS256 header, splitting a token and reading its parts and claims."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

from cworld.sandbox.stateless.crypto.decoding import b64decode_any
from cworld.sandbox.stateless.shared import invalid, rejecting, strict_loads


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


HS256_HEADER = b64url(b'{"alg":"HS256","typ":"JWT"}')


def jwt_part(part: str, what: str) -> dict[str, Any]:
    with rejecting(
        (UnicodeDecodeError, ValueError, RecursionError), f"the JWT {what} is not base64url-encoded JSON"
    ):
        value = strict_loads(b64decode_any(part, f"the JWT {what}").decode("utf-8"))
    if not isinstance(value, dict):
        raise invalid(f"the JWT {what} must be a JSON object")
    return value


def claim_time(payload: dict[str, Any], claim: str) -> str | None:
    value = payload.get(claim)
    if isinstance(value, bool) or not isinstance(value, int | float) or not -6e10 < value < 2.5e11:
        return None
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=value)).isoformat()


def split_jwt(token: str) -> list[str]:
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise invalid(f"a JWT has 3 dot-separated parts (header.payload.signature), this has {len(parts)}")
    return parts
