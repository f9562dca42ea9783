"""Decoding helpers of the crypto server: lenient base64 and the bytes-as-text-and-hex result."""

from __future__ import annotations

import base64
import binascii

from cworld.sandbox.stateless.crypto.models import DecodedBytes
from cworld.sandbox.stateless.shared import rejecting


def decoded(data: bytes) -> DecodedBytes:
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return DecodedBytes(text=text, hex=data.hex(), byte_length=len(data))


def strip_whitespace(data: str) -> str:
    return "".join(data.split())


def b64decode_any(data: str, what: str = "data") -> bytes:
    """Standard or URL-safe base64, padding optional."""
    compact = strip_whitespace(data).replace("-", "+").replace("_", "/")
    compact += "=" * (-len(compact) % 4)
    with rejecting(
        (binascii.Error, ValueError),
        f"{what} is not valid base64: use only A-Z a-z 0-9 + / (or - _) and '=' padding",
    ):
        return base64.b64decode(compact, validate=True)
