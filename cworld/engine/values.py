"""Plausible values, deterministic for an RNG: from a card field type or from a JSON Schema.

The schema engine fills simulated entities and responses with these. Same RNG state, same value.
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
EPOCH = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _moment(rng: random.Random) -> datetime:
    return EPOCH + timedelta(minutes=rng.randrange(-60 * 24 * 60, 60 * 24 * 30))


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
    "id": lambda r, f: f"{(f.removesuffix('_id') or 'item')}_{r.randint(1, 9999):04d}",
}

#: Field-name hints used when only a JSON Schema `string` is known.
_NAME_HINTS: tuple[tuple[str, str], ...] = (
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


def value_for_schema(schema: dict[str, Any], rng: random.Random, *, field: str = "", depth: int = 0) -> Any:
    """A value valid against a (simple) JSON Schema; uses the field name to stay plausible."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return value_for_schema(options[0], rng, field=field, depth=depth)
    if schema.get("allOf"):
        return value_for_schema(schema["allOf"][0], rng, field=field, depth=depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return _BY_JSON_TYPE.get(kind or ("object" if "properties" in schema else "string"), _string)(schema, rng, field, depth)


def _string(schema: dict[str, Any], rng: random.Random, field: str, depth: int) -> str:
    fmt = schema.get("format")
    kind = {"date-time": "datetime", "date": "date", "email": "email", "uri": "url", "time": "time"}.get(fmt or "")
    text = str(value_for_type(kind or hinted_type(field) or "string", rng, field=field))
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if high is not None:
        text = text[:high]
    return text.ljust(low, "x")


def _number(schema: dict[str, Any], rng: random.Random, field: str, depth: int) -> float | int:
    low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
    high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 0) + 1000))
    if schema.get("type") == "integer":
        lo, hi = int(low) + (1 if "exclusiveMinimum" in schema else 0), int(high) - (1 if "exclusiveMaximum" in schema else 0)
        return rng.randint(lo, max(lo, hi))
    return round(rng.uniform(float(low), float(high)), 2)


def _array(schema: dict[str, Any], rng: random.Random, field: str, depth: int) -> list[Any]:
    if depth > 6:
        return []
    count = max(schema.get("minItems", 0), rng.randint(1, 3))
    count = min(count, schema.get("maxItems", count))
    item = schema.get("items") or {"type": "string"}
    return [value_for_schema(item, rng, field=field.rstrip("s"), depth=depth + 1) for _ in range(count)]


def _object(schema: dict[str, Any], rng: random.Random, field: str, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, sub in props.items():
        if name in required or depth < 4:
            out[name] = value_for_schema(sub, rng, field=name, depth=depth + 1)
    return out


_BY_JSON_TYPE: dict[str, Any] = {
    "string": _string,
    "integer": _number,
    "number": _number,
    "boolean": lambda s, r, f, d: r.random() < 0.5,
    "array": _array,
    "object": _object,
    "null": lambda s, r, f, d: None,
}
