"""How the offline synthesizer writes: services by their everyday names, days, amounts, the request.

The words themselves live in `task_synth/templates/shared.yaml`; this module only formats and joins.
"""

from __future__ import annotations

import random
from datetime import date, datetime

from cworld.synth.offline.templates import Phrasebook

SHARED = "shared"


def service(book: Phrasebook, server: str) -> str:
    names = book.mapping("services")
    return names[server] if server in names else book.text("unknown_service")


def services(book: Phrasebook, servers: list[str]) -> str:
    return listed(book, [service(book, s) for s in sorted(servers)])


def listed(book: Phrasebook, names: list[str], last: str = "and") -> str:
    """`a`, `a and b`, `a, b and c` (or `or` when `last` says so)."""
    word = book.text(last)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {word} " + names[-1]


def day(value: date | str) -> str:
    """`Monday 31 August` (the way people write a date in a request)."""
    moment = date.fromisoformat(value[:10]) if isinstance(value, str) else value
    return f"{moment:%A} {moment.day} {moment:%B}"


def clock_time(value: str) -> str:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%H:%M")


def money(value: float) -> str:
    return f"{value:,.2f}"


def round_up(value: float, step: int) -> int:
    return int(-(-value // step) * step)


def join(book: Phrasebook, rng: random.Random, clauses: list[str]) -> str:
    """Opener, the clauses with varied connectives, closer: one paragraph."""
    lowerable = set(book.text("lowerable").split())
    parts = [rng.choice(book.variants("openers"))]
    for i, clause in enumerate(clauses):
        clause = clause.strip()
        first = clause.split(" ", 1)[0]
        if i and rng.random() < 0.6 and first.lower() in lowerable:
            clause = f"{rng.choice(book.variants('connectives'))} {first.lower()}{clause[len(first) :]}"
        parts.append(clause)
    parts.append(rng.choice(book.variants("closers")))
    return " ".join(p for p in parts if p)
