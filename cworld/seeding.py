"""Seeded randomness: one `random.Random` per (seed, purpose), so streams never share state.

Sandbox state, fault schedules, task sampling and agent noise each ask for their own purpose string;
changing how many draws one of them makes never shifts another.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(seed: int | str, purpose: str) -> int:
    digest = hashlib.sha256(f"{seed}\x1f{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def derive_rng(seed: int | str, purpose: str) -> random.Random:
    """A private RNG for one purpose; same (seed, purpose) gives the same stream."""
    return random.Random(derive_seed(seed, purpose))
