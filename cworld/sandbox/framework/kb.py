"""The synthetic knowledge base that sandbox state is sampled from (ships with the package).

Each `kb/data/NAME.json` is a JSON list of records (people, companies, products, airports...). Apps
sample from it with their session's seeded RNG, so the same seed gives the same entities.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "kb" / "data"


@cache
def load(name: str) -> tuple[dict[str, Any], ...]:
    path = DATA_DIR / f"{name}.json"
    if not path.is_file():
        raise KeyError(f"knowledge base has no '{name}' (looked for {path})")
    records = json.loads(path.read_text(encoding="utf-8"))
    return tuple(records)


def available() -> list[str]:
    return sorted(p.stem for p in DATA_DIR.glob("*.json"))


def sample(name: str, rng: random.Random, k: int) -> list[dict[str, Any]]:
    """k distinct records (deep copies), in an order fixed by `rng`."""
    pool = load(name)
    k = min(k, len(pool))
    return [json.loads(json.dumps(r)) for r in rng.sample(pool, k)]


def choice(name: str, rng: random.Random) -> dict[str, Any]:
    return sample(name, rng, 1)[0]
