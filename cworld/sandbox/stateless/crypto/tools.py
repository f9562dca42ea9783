"""Digest tools of the crypto server (a mixin): hashes, HMAC, name-based UUIDs, checksums, JWTs and
deterministic passwords.

A "random" password comes from a caller-given seed through its own derived RNG, so the same call returns the
same password in every session (for tests and demos, not for real accounts).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import string
import uuid
import zlib
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.framework import AppError, tool
from cworld.sandbox.stateless.crypto.decoding import b64decode_any
from cworld.sandbox.stateless.crypto.models import (
    Checksum,
    DecodedJwt,
    Digest,
    HashChoice,
    HmacHash,
    Message,
    Password,
    Secret,
    Strength,
    Token,
    UuidName,
    UuidNamespace,
    UuidResult,
)
from cworld.sandbox.stateless.crypto.passwords import AMBIGUOUS, SYMBOLS, rate_password
from cworld.sandbox.stateless.crypto.tokens import HS256_HEADER, b64url, claim_time, jwt_part, split_jwt
from cworld.sandbox.stateless.shared import CheckResult, TextResult, invalid, rejecting
from cworld.seeding import derive_rng

_NAMESPACES = {
    "dns": uuid.NAMESPACE_DNS,
    "url": uuid.NAMESPACE_URL,
    "oid": uuid.NAMESPACE_OID,
    "x500": uuid.NAMESPACE_X500,
}


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _digest(raw: bytes) -> Digest:
    return Digest(hex=raw.hex(), base64=base64.b64encode(raw).decode())


class DigestTools:
    @tool(read_only=True)
    def hash_text(self, text: Message, algorithm: HashChoice = "sha256") -> Digest:
        """Hash text (UTF-8 bytes) with a standard digest. MD5 and SHA-1 are broken for security; use them
        only to match existing checksums."""
        return _digest(hashlib.new(algorithm, _bytes(text)).digest())

    @tool(read_only=True)
    def hmac_sign(
        self,
        message: Message,
        key: Secret,
        algorithm: HmacHash = "sha256",
    ) -> Digest:
        """HMAC of a message with a secret key (e.g. to sign a webhook payload)."""
        return _digest(hmac.new(_bytes(key), _bytes(message), algorithm).digest())

    @tool(read_only=True)
    def hmac_verify(
        self,
        message: Message,
        key: Secret,
        signature: Annotated[
            str, Field(description="The claimed HMAC, in hex or base64.", min_length=1, max_length=200)
        ],
        algorithm: HmacHash = "sha256",
    ) -> CheckResult:
        """Check a claimed HMAC signature in constant time. An invalid signature is a normal answer
        (valid=false), not an error."""
        expected = hmac.new(_bytes(key), _bytes(message), algorithm).digest()
        claimed = signature.strip()
        candidates = [claimed.lower() == expected.hex()]
        try:
            candidates.append(hmac.compare_digest(b64decode_any(claimed), expected))
        except AppError:  # not base64 just means the signature was not given in that encoding
            candidates.append(False)
        ok = any(candidates)
        return CheckResult(valid=ok, reason="ok" if ok else "signature does not match this message and key")

    @tool(read_only=True)
    def uuid_from_name(
        self,
        name: UuidName,
        namespace: UuidNamespace = "dns",
        version: Annotated[Literal[3, 5], Field(description="5 (SHA-1, preferred) or 3 (MD5).")] = 5,
    ) -> UuidResult:
        """A name-based UUID (RFC 4122 v5 or v3): the same namespace and name always give the same UUID."""
        ns = _NAMESPACES.get(namespace.lower())
        if ns is None:
            with rejecting(
                ValueError,
                "namespace must be dns, url, oid, x500 or a UUID like '6ba7b810-9dad-11d1-80b4-00c04fd430c8'",
            ):
                ns = uuid.UUID(namespace)
        maker = uuid.uuid5 if version == 5 else uuid.uuid3
        with rejecting(
            UnicodeEncodeError, "the name contains characters with no UTF-8 form (unpaired surrogates)"
        ):
            return UuidResult(uuid=str(maker(ns, name)), version=version)

    @tool(read_only=True)
    def checksum(
        self,
        text: Message,
        algorithm: Annotated[
            Literal["crc32", "adler32"], Field(description="Checksum to compute.")
        ] = "crc32",
    ) -> Checksum:
        """A fast non-cryptographic checksum of text (UTF-8): CRC-32 (zip, PNG, Ethernet) or Adler-32
        (zlib)."""
        value = (zlib.crc32 if algorithm == "crc32" else zlib.adler32)(_bytes(text)) & 0xFFFFFFFF
        return Checksum(value=value, hex=f"{value:08x}")

    @tool(read_only=True)
    def jwt_decode(self, token: Token) -> DecodedJwt:
        """Read a JWT's header and claims WITHOUT verifying its signature (use jwt_verify_hs256 for that);
        shows exp and iat as dates."""
        header_part, payload_part, signature = split_jwt(token)
        header, payload = jwt_part(header_part, "header"), jwt_part(payload_part, "payload")
        alg = header.get("alg")
        return DecodedJwt(
            header=header,
            payload=payload,
            algorithm=alg if isinstance(alg, str) else None,
            expires_at=claim_time(payload, "exp"),
            issued_at=claim_time(payload, "iat"),
            signature_present=bool(signature),
        )

    @tool(read_only=True)
    def jwt_sign_hs256(
        self,
        payload: Annotated[
            dict[str, Any],
            Field(description='The claims, a JSON object, e.g. {"sub": "42", "exp": 1767225600}.'),
        ],
        secret: Secret,
    ) -> TextResult:
        """Create a JWT signed with HMAC-SHA256 (compact JSON, keys in the given order): deterministic."""
        with rejecting(
            (ValueError, TypeError, RecursionError), "the payload must be plain JSON (no NaN or Infinity)"
        ):
            body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        if len(body) > 10_000:
            raise invalid("the payload is over 10,000 characters as JSON; keep tokens small")
        signing_input = f"{HS256_HEADER}.{b64url(_bytes(body))}"
        signature = hmac.new(_bytes(secret), signing_input.encode(), "sha256").digest()
        return TextResult(text=f"{signing_input}.{b64url(signature)}")

    @tool(read_only=True)
    def jwt_verify_hs256(self, token: Token, secret: Secret) -> CheckResult:
        """Check a JWT's HMAC-SHA256 signature with a secret. Expiry is not judged here (the server has no
        clock); read exp with jwt_decode and compare it yourself."""
        header_part, payload_part, signature = split_jwt(token)
        header = jwt_part(header_part, "header")
        if header.get("alg") != "HS256":
            return CheckResult(valid=False, reason=f"token algorithm is {header.get('alg')!r}, not HS256")
        expected = hmac.new(_bytes(secret), f"{header_part}.{payload_part}".encode(), "sha256").digest()
        ok = hmac.compare_digest(b64url(expected), signature)
        return CheckResult(valid=ok, reason="ok" if ok else "signature does not match this secret")

    @tool(read_only=True)
    def generate_password(
        self,
        seed: Annotated[
            int,
            Field(
                description="Any integer; the same seed (and options) gives the same password.",
                ge=0,
                le=2**63 - 1,
            ),
        ],
        length: Annotated[int, Field(description="Number of characters, 8..128.", ge=8, le=128)] = 16,
        symbols: Annotated[bool, Field(description="Include punctuation symbols.")] = True,
        digits: Annotated[bool, Field(description="Include digits.")] = True,
        uppercase: Annotated[bool, Field(description="Include uppercase letters.")] = True,
        avoid_ambiguous: Annotated[bool, Field(description="Leave out look-alikes I l 1 O 0 o.")] = False,
    ) -> Password:
        """A password drawn from a seeded generator, with at least one character of each chosen class.
        Deterministic by design (for tests and demos): do not use it for real accounts."""
        classes = [string.ascii_lowercase] + [
            c
            for c, on in ((string.ascii_uppercase, uppercase), (string.digits, digits), (SYMBOLS, symbols))
            if on
        ]
        if avoid_ambiguous:
            classes = ["".join(ch for ch in c if ch not in AMBIGUOUS) for c in classes]
        rng = derive_rng(seed, "sandbox:crypto:generate_password")
        pool = "".join(classes)
        chars = [rng.choice(c) for c in classes] + [rng.choice(pool) for _ in range(length - len(classes))]
        rng.shuffle(chars)
        return Password(password="".join(chars), entropy_bits=round(length * math.log2(len(pool)), 1))

    @tool(read_only=True)
    def password_strength(
        self,
        password: Annotated[str, Field(description="The password to rate.", min_length=1, max_length=200)],
    ) -> Strength:
        """Rate a password 0-4 from its length, character variety, repeats and common-password list, with
        advice. A heuristic, like zxcvbn-lite: it never stores or sends the password."""
        return rate_password(password)
