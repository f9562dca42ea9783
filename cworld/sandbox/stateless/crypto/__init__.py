"""The crypto server: hashes, HMAC, name-based UUIDs, checksums, JWT inspection and signing, deterministic
passwords, plus encodings (base64/32, hex, URL, HTML) and classical ciphers.

Everything is deterministic: a "random" password comes from a caller-given seed through its own derived RNG,
so the same call returns the same password in every session (and is therefore for tests and demos, not for
real accounts).

It holds no state (no `state.py`): every answer is a function of the call's arguments alone.
"""

from __future__ import annotations

from cworld.sandbox.stateless.crypto.tools import DigestTools
from cworld.sandbox.stateless.crypto.tools_ciphers import CipherTools
from cworld.sandbox.stateless.crypto.tools_encoding import EncodingTools
from cworld.sandbox.stateless.shared import StatelessApp


class CryptoServer(DigestTools, EncodingTools, CipherTools, StatelessApp):
    name = "crypto"
    title = "Crypto and encoding"
    description = (
        "Hashes (SHA-2/3, MD5, BLAKE2), HMAC, UUID v3/v5, CRC32, JWT decode/sign/verify, "
        "deterministic passwords, base64/32, hex, URL and HTML encoding, classical ciphers."
    )
    category = "crypto"
