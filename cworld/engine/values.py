"""Plausible values, deterministic for an RNG, from a card field type (`email`, `enum[a,b]`, ...).

The schema engine fills simulated records with these; `schema_values` builds on them for JSON Schemas.
Same RNG state, same value.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

FIRST = ["Ava", "Liam", "Maya", "Noah", "Priya", "Omar", "Elena", "Kenji", "Sofia", "Lucas", "Amara", "Jonas"]
LAST = ["Chen", "Okafor", "Garcia", "Novak", "Haddad", "Silva", "Kim", "Larsen", "Patel", "Moreau", "Brown"]
COMPANIES = ["Northwind", "Contoso", "Globex", "Initech", "Umbrella Labs", "Acme Corp", "Stark Foods", "Wayne Logistics"]
CITIES = ["Lisbon", "Toronto", "Osaka", "Nairobi", "Denver", "Berlin", "Melbourne", "Austin", "Seoul", "Madrid"]
COUNTRIES = ["Portugal", "Canada", "Japan", "Kenya", "United States", "Germany", "Australia", "Korea", "Spain"]
WORDS = [
    "quarterly", "report", "budget", "launch", "review", "plan", "client", "update", "design", "meeting",
    "invoice", "roadmap", "draft", "summary", "proposal", "schedule", "release", "follow-up", "migration", "audit",
]
TITLES = ["Q3 budget review", "Launch checklist", "Client onboarding notes", "Weekly sync", "Invoice #4821",
          "Roadmap draft", "Hiring plan", "Incident follow-up", "Travel itinerary", "Migration plan"]
TAGS = ["urgent", "q2", "vip", "follow-up", "renewal", "decision-maker", "internal", "blocked"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CAD"]
TIMEZONES = ["Europe/Paris", "Asia/Tokyo", "America/New_York", "Europe/Lisbon", "Australia/Sydney", "UTC"]
EPOCH = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _moment(rng: random.Random) -> datetime:
    return EPOCH + timedelta(minutes=rng.randrange(-60 * 24 * 60, 60 * 24 * 30))


def _code(rng: random.Random, field: str) -> str:
    """Codes look different by what they code: postcodes, card digits, document numbers, tickers, IATA."""
    low = field.lower()
    if re.search(r"post|zip", low):
        return f"{rng.randint(10000, 99999)}"
    if "last4" in low:
        return "".join(rng.choice("0123456789") for _ in range(4))
    if low.endswith("code") and "country" not in low:
        return "".join(rng.choice("0123456789") for _ in range(6))
    if re.search(r"number|passport|mrn|account", low):
        return f"{rng.choice(UPPER)}{rng.randint(10_000_000, 99_999_999)}"
    if re.search(r"symbol|ticker", low):
        return "".join(rng.choice(UPPER) for _ in range(4))
    return "".join(rng.choice(UPPER) for _ in range(3))


def value_for_type(kind: str, rng: random.Random, *, field: str = "") -> Any:
    """A value for a card field type (`string`, `email`, `enum[a,b]`, `list[email]`, ...)."""
    if kind.startswith("enum["):
        return rng.choice([v.strip() for v in kind[5:-1].split(",")])
    if kind.startswith("list["):
        inner = kind[5:-1]
        return [value_for_type(inner, rng, field=field) for _ in range(rng.randint(1, 3))]
    return _SCALARS.get(kind, _SCALARS["string"])(rng, field)


_SCALARS: dict[str, Any] = {
    "string": lambda r, f: f"{r.choice(WORDS)}-{r.randint(10, 99)}",
    "text": lambda r, f: _sentence(r, r.randint(8, 16)),
    "title": lambda r, f: r.choice(TITLES),
    "int": lambda r, f: r.randint(1, 500),
    "float": lambda r, f: round(r.uniform(1, 1000), 2),
    "money": lambda r, f: round(r.uniform(5, 2500), 2),
    "bool": lambda r, f: r.random() < 0.5,
    "name": lambda r, f: _name(r),
    "email": lambda r, f: f"{r.choice(FIRST).lower()}.{r.choice(LAST).lower()}@{r.choice(COMPANIES).split()[0].lower()}.example",
    "phone": lambda r, f: f"+1-555-{r.randint(100, 999)}-{r.randint(1000, 9999)}",
    "url": lambda r, f: f"https://{r.choice(COMPANIES).split()[0].lower()}.example/{r.choice(WORDS)}",
    "company": lambda r, f: r.choice(COMPANIES),
    "city": lambda r, f: r.choice(CITIES),
    "country": lambda r, f: r.choice(COUNTRIES),
    "date": lambda r, f: _moment(r).date().isoformat(),
    "datetime": lambda r, f: _moment(r).isoformat(),
    "time": lambda r, f: f"{r.randint(7, 19):02d}:{r.choice([0, 15, 30, 45]):02d}",
    "path": lambda r, f: f"/workspace/{r.choice(WORDS)}/{r.choice(WORDS)}.md",
    "sha": lambda r, f: "".join(r.choice("0123456789abcdef") for _ in range(40)),
    "ref": lambda r, f: r.choice(["main", "develop", "feature/" + r.choice(WORDS)]),
    "word": lambda r, f: r.choice(WORDS),
    "weekday": lambda r, f: r.choice(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
    "offset": lambda r, f: f"{r.choice(['+', '-'])}{r.randint(0, 11)}.{r.choice(['0', '5'])}h",
    "tag": lambda r, f: r.choice(TAGS),
    "currency": lambda r, f: r.choice(CURRENCIES),
    "timezone": lambda r, f: r.choice(TIMEZONES),
    "code": _code,
    "id": lambda r, f: f"{(f.removesuffix('_id') or 'item')}_{r.randint(1, 9999):04d}",
}

#: Field-name hints used when only a JSON Schema `string` is known.
_NAME_HINTS: tuple[tuple[str, str], ...] = (
    (r"time_?zone|^tz$", "timezone"), (r"day_of_week|weekday", "weekday"), (r"difference|utc_offset", "offset"),
    (r"currency", "currency"), (r"symbol|ticker|postcode|zip|last4", "code"),
    (r"e-?mail", "email"), (r"phone", "phone"), (r"url|link|href", "url"), (r"(^|_)name$|author|owner|sender", "name"),
    (r"company|org", "company"), (r"city", "city"), (r"country", "country"), (r"(_at|time|timestamp)$", "datetime"),
    (r"date|day|deadline|due", "date"), (r"title|subject", "title"), (r"body|description|content|text|summary|note", "text"),
    (r"(^|_)id$", "id"), (r"path|file", "path"), (r"sha|hash|commit", "sha"), (r"branch|ref", "ref"),
    (r"price|amount|cost|total|balance", "money"),
)


def hinted_type(field: str) -> str | None:
    lowered = field.lower()
    for pattern, kind in _NAME_HINTS:
        if re.search(pattern, lowered):
            return kind
    return None
