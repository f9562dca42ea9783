"""Words the offline synthesizer writes with: how a person names each service, days and amounts."""

from __future__ import annotations

import random
from datetime import date, datetime

#: How a user refers to each sandbox service in a request or a constraint (never by its id).
SERVICE_PHRASES: dict[str, str] = {
    "travel": "my travel account",
    "calendar": "my calendar",
    "mail": "my email",
    "chat": "the team chat",
    "docs": "the shared documents",
    "shop": "the online store",
    "finance": "my bank",
    "taskboard": "our project boards",
    "clock": "my reminders",
    "units": "a unit converter",
    "math": "a calculator",
    "datetime": "a date calculator",
    "text": "a text utility",
    "crypto": "an encoding utility",
    "graph": "a graph utility",
    "helio-crm": "our CRM",
}

OPENERS = (
    "Could you help me with something that touches a few of my accounts?",
    "I have a small errand list for you today.",
    "Please take care of this for me end to end.",
    "I need a hand getting this sorted before the end of the day.",
    "Here's what I need done, in order.",
    "Can you handle the following for me?",
    "I'm short on time, so please do all of this for me.",
    "",
)
#: Words our clauses start with that read fine in lower case after a connective (names never do).
LOWERABLE = frozenset(
    """book pay send set look add put order get track take block write keep post let share ping remind find
work also the if it my for email give how tell note log""".split()  # noqa: SIM905
)
THEN = ("Then", "After that,", "Once that's done,", "Next,", "Also,", "When that's settled,")
CLOSERS = (
    "Tell me what you did when you're finished.",
    "Let me know the details once it's all done.",
    "Report back with what you booked and sent.",
    "Give me a short recap at the end.",
    "",
)


def service(server: str) -> str:
    return SERVICE_PHRASES.get(server, "the service for it")


def services(servers: list[str]) -> str:
    names = [service(s) for s in sorted(servers)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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


def join(rng: random.Random, clauses: list[str]) -> str:
    """Opener, the clauses with varied connectives, closer: one paragraph."""
    parts = [rng.choice(OPENERS)]
    for i, clause in enumerate(clauses):
        clause = clause.strip()
        first = clause.split(" ", 1)[0]
        if i and rng.random() < 0.6 and first.lower() in LOWERABLE:
            clause = f"{rng.choice(THEN)} {first.lower()}{clause[len(first) :]}"
        parts.append(clause)
    parts.append(rng.choice(CLOSERS))
    return " ".join(p for p in parts if p)
