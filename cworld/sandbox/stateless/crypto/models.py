"""Argument types and result models of the crypto server (pydantic: they are the tools' schemas)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

MAX_INPUT = 100_000


HashAlgorithm = Literal[
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512", "blake2b", "blake2s"
]

HmacAlgorithm = Literal["sha1", "sha256", "sha384", "sha512"]

Message = Annotated[
    str, Field(description="The message (hashed as UTF-8), at most 100,000 characters.", max_length=100_000)
]

Secret = Annotated[str, Field(description="The secret key (UTF-8).", min_length=1, max_length=1000)]

Token = Annotated[
    str,
    Field(
        description="A JSON Web Token: header.payload.signature, base64url parts.",
        min_length=5,
        max_length=20_000,
    ),
]

CipherText = Annotated[str, Field(description="The text, at most 100,000 characters.", max_length=100_000)]

Decode = Annotated[bool, Field(description="True to decode instead of encode.")]

PlainText = Annotated[
    str, Field(description="Text to encode (UTF-8), at most 100,000 characters.", max_length=MAX_INPUT)
]

Encoded = Annotated[
    str,
    Field(
        description="The encoded data, at most 100,000 characters; whitespace is ignored.",
        max_length=MAX_INPUT,
    ),
]

HmacHash = Annotated[HmacAlgorithm, Field(description="Hash inside the HMAC.")]


HashChoice = Annotated[HashAlgorithm, Field(description="Hash function; sha256 unless you need another.")]
UuidName = Annotated[
    str, Field(description="The name to derive the UUID from, e.g. 'example.com'.", max_length=10_000)
]
UuidNamespace = Annotated[
    str,
    Field(description="'dns', 'url', 'oid', 'x500', or any UUID string.", min_length=3, max_length=40),
]
UrlSafe = Annotated[
    bool, Field(description="Use the URL-safe alphabet (- and _ instead of + and /) without padding.")
]
PlusForSpace = Annotated[
    bool, Field(description="Write spaces as '+' (HTML form encoding) instead of '%20'.")
]
SafeChars = Annotated[
    str, Field(description="Characters to leave unencoded, e.g. '/' for paths.", max_length=50)
]
EscapeQuotes = Annotated[bool, Field(description="Also escape \" and ' (for attribute values).")]
MorseText = Annotated[
    str,
    Field(
        description="Text to encode, or Morse to decode (letters separated by spaces, words by ' / ').",
        max_length=10_000,
    ),
]
CardNumber = Annotated[
    str,
    Field(
        description="The digits, e.g. a card number '4539 1488 0343 6467'; spaces and dashes are ignored.",
        min_length=1,
        max_length=100,
    ),
]


class Digest(BaseModel):
    hex: str = Field(description="The digest in lowercase hex.")
    base64: str = Field(description="The digest in standard base64.")


class UuidResult(BaseModel):
    uuid: str
    version: int


class Checksum(BaseModel):
    value: int = Field(description="The checksum as an unsigned 32-bit integer.")
    hex: str = Field(description="The same, as 8 hex digits.")


class DecodedJwt(BaseModel):
    header: dict[str, Any]
    payload: dict[str, Any]
    algorithm: str | None = Field(description="The 'alg' header: how it claims to be signed (NOT verified).")
    expires_at: str | None = Field(description="The 'exp' claim as ISO 8601 UTC, when present.")
    issued_at: str | None = Field(description="The 'iat' claim as ISO 8601 UTC, when present.")
    signature_present: bool


class Password(BaseModel):
    password: str
    entropy_bits: float = Field(description="log2 of the number of passwords this recipe could produce.")


class Strength(BaseModel):
    score: int = Field(description="0 very weak, 1 weak, 2 fair, 3 strong, 4 very strong.")
    label: str
    entropy_bits: float = Field(description="Estimated bits: length x log2(character pool), less penalties.")
    feedback: list[str] = Field(description="What would make it stronger.")


class DecodedBytes(BaseModel):
    text: str | None = Field(description="The bytes as UTF-8 text; null when they are not valid UTF-8.")
    hex: str = Field(description="The bytes in lowercase hex.")
    byte_length: int


class LuhnCheck(BaseModel):
    valid: bool = Field(description="Whether the number passes the Luhn checksum (card numbers, IMEIs).")
    check_digit: int = Field(description="The digit that, appended to the number, would make it valid.")
