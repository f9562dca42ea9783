"""Argument types and result models of the crypto server (pydantic: they are the tools' schemas)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


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
