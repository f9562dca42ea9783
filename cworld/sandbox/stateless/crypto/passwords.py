"""Password character classes and the strength heuristic (zxcvbn-lite) of the crypto server."""

from __future__ import annotations

import math
import string

from cworld.sandbox.stateless.crypto.models import Strength

AMBIGUOUS = set("Il1O0o")


SYMBOLS = "!@#$%^&*()-_=+[]{};:,.?/"


_COMMON = {
    "password",
    "123456",
    "12345678",
    "qwerty",
    "letmein",
    "welcome",
    "admin",
    "iloveyou",
    "monkey",
    "dragon",
    "abc123",
    "111111",
    "password1",
    "sunshine",
    "football",
    "baseball",
    "123456789",
}


def rate_password(password: str) -> Strength:
    pools = [(string.ascii_lowercase, 26), (string.ascii_uppercase, 26), (string.digits, 10)]
    pool = sum(size for chars, size in pools if any(c in chars for c in password))
    pool += 33 if any(not c.isalnum() and c.isascii() for c in password) else 0
    pool += 100 if any(not c.isascii() for c in password) else 0
    distinct_ratio = len(set(password)) / len(password)
    bits = len(password) * math.log2(max(pool, 2)) * min(1.0, 0.4 + distinct_ratio)
    feedback: list[str] = []
    if password.lower() in _COMMON:
        bits, feedback = min(bits, 5.0), ["this is one of the most common passwords; never use it"]
    if len(password) < 12:
        feedback.append("use at least 12 characters")
    if pool < 62:
        feedback.append("mix lowercase, uppercase, digits and symbols")
    if distinct_ratio < 0.5:
        feedback.append("avoid repeating the same characters")
    score = sum(bits >= t for t in (28, 36, 60, 90))
    labels = ["very weak", "weak", "fair", "strong", "very strong"]
    return Strength(score=score, label=labels[score], entropy_bits=round(bits, 1), feedback=feedback)
