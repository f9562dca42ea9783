"""Encoding tools of the crypto server (a mixin): base64, base32, hex, percent-encoding, HTML entities.

Decoders return the bytes both as UTF-8 text (when they are valid UTF-8) and as hex, so binary data is never
silently mangled.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.crypto.decoding import b64decode_any, decoded, strip_whitespace
from cworld.sandbox.stateless.crypto.models import (
    MAX_INPUT,
    DecodedBytes,
    Encoded,
    EscapeQuotes,
    PlainText,
    PlusForSpace,
    SafeChars,
    UrlSafe,
)
from cworld.sandbox.stateless.shared import TextResult, rejecting


class EncodingTools:
    @tool(read_only=True)
    def base64_encode(self, text: PlainText, url_safe: UrlSafe = False) -> TextResult:
        """Encode text (as UTF-8 bytes) to base64."""
        raw = text.encode("utf-8", "surrogatepass")
        if url_safe:
            return TextResult(text=base64.urlsafe_b64encode(raw).decode().rstrip("="))
        return TextResult(text=base64.b64encode(raw).decode())

    @tool(read_only=True)
    def base64_decode(self, data: Encoded) -> DecodedBytes:
        """Decode base64 (standard or URL-safe, padding optional) to bytes, shown as UTF-8 text and hex."""
        return decoded(b64decode_any(data))

    @tool(read_only=True)
    def base32_encode(self, text: PlainText) -> TextResult:
        """Encode text (as UTF-8 bytes) to base32 (RFC 4648, A-Z and 2-7, '=' padded)."""
        return TextResult(text=base64.b32encode(text.encode("utf-8", "surrogatepass")).decode())

    @tool(read_only=True)
    def base32_decode(self, data: Encoded) -> DecodedBytes:
        """Decode base32 (RFC 4648; case-insensitive, padding optional)."""
        compact = strip_whitespace(data).upper()
        compact += "=" * (-len(compact) % 8)
        with rejecting(
            (binascii.Error, ValueError), "not valid base32: use letters A-Z, digits 2-7 and '=' padding"
        ):
            return decoded(base64.b32decode(compact))

    @tool(read_only=True)
    def hex_encode(self, text: PlainText) -> TextResult:
        """Encode text (as UTF-8 bytes) to lowercase hexadecimal, two digits per byte."""
        return TextResult(text=text.encode("utf-8", "surrogatepass").hex())

    @tool(read_only=True)
    def hex_decode(self, data: Encoded) -> DecodedBytes:
        """Decode hexadecimal: an even number of 0-9 a-f digits (spaces, colons and a 0x prefix are
        ignored)."""
        compact = re.sub(r"[\s:]", "", data)
        compact = compact[2:] if compact[:2].lower() == "0x" else compact
        with rejecting(
            ValueError, "not valid hex: pass an even number of digits 0-9 and a-f, e.g. '48656c6c6f'"
        ):
            return decoded(bytes.fromhex(compact))

    @tool(read_only=True)
    def url_encode(
        self, text: PlainText, plus_for_space: PlusForSpace = False, safe: SafeChars = ""
    ) -> TextResult:
        """Percent-encode text for use in a URL (UTF-8; letters, digits and -._~ stay as they are)."""
        with rejecting(
            UnicodeEncodeError, "the text contains unpaired surrogate characters that have no UTF-8 form"
        ):
            encoder = urllib.parse.quote_plus if plus_for_space else urllib.parse.quote
            return TextResult(text=encoder(text, safe=safe))

    @tool(read_only=True)
    def url_decode(
        self,
        text: Annotated[
            str,
            Field(description="Percent-encoded text, e.g. 'caf%C3%A9%20au%20lait'.", max_length=MAX_INPUT),
        ],
        plus_as_space: Annotated[bool, Field(description="Read '+' as a space (form encoding).")] = True,
    ) -> TextResult:
        """Decode percent-encoding (%XX sequences, UTF-8) back to text; invalid sequences are kept as-is."""
        decoder = urllib.parse.unquote_plus if plus_as_space else urllib.parse.unquote
        return TextResult(text=decoder(text))

    @tool(read_only=True)
    def html_escape(self, text: PlainText, quote: EscapeQuotes = True) -> TextResult:
        """Escape & < > (and quotes) as HTML entities so text displays literally inside HTML."""
        return TextResult(text=html.escape(text, quote=quote))

    @tool(read_only=True)
    def html_unescape(
        self,
        text: Annotated[
            str,
            Field(
                description="Text with HTML entities like &amp; &lt; &#233; &eacute;.", max_length=MAX_INPUT
            ),
        ],
    ) -> TextResult:
        """Turn HTML entities (named, decimal and hex) back into characters."""
        return TextResult(text=html.unescape(text))
