"""Values and words for a task composed from schemas alone (`schema_chain.py`).

Literal arguments are realistic (Faker's people, companies and real places via `cworld.schemas.fake`;
dates from the task's own `today`), read from the parameter's name; what a name says nothing about gets
the schema's probe example (`cworld.schemas.probe`), which respects enums, formats and bounds. Request
clauses are written from the tools' descriptions, in the user's voice.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from cworld.schemas import fake
from cworld.schemas.probe import example_value

THEME_TOPICS: dict[str, tuple[str, ...]] = {
    "trip": ("a long weekend away", "a conference trip", "a family visit", "an offsite for the team"),
    "research": ("a literature review", "a briefing for the board", "a market scan", "a reading list"),
    "commerce": ("a supplier review", "restocking the shop", "a customer follow-up", "a price check"),
    "engineering": ("a release", "an incident follow-up", "a code review", "a dependency upgrade"),
    "data": ("a quarterly report", "a data clean-up", "a metrics review", "an audit of our records"),
    "health": ("a patient follow-up", "a clinic schedule", "a care plan review", "a health check"),
    "markets": ("a portfolio review", "an investment memo", "a watchlist update", "an earnings brief"),
    "content": ("a newsletter", "a media kit", "a content calendar", "a product launch post"),
    "operations": ("an infrastructure check", "an on-call handover", "a capacity review", "a security sweep"),
    "team": ("next week's planning", "a project kickoff", "a status update", "a team retrospective"),
}
SEARCH_WORDS: dict[str, tuple[str, ...]] = {
    "trip": ("museums", "coffee shops", "train stations", "hotels near the centre"),
    "research": ("renewable energy storage", "remote work productivity", "urban heat islands"),
    "commerce": ("wireless headphones", "standing desks", "organic coffee beans"),
    "engineering": ("memory leak", "login timeout", "flaky test"),
    "data": ("active customers", "overdue invoices", "monthly signups"),
    "health": ("blood pressure", "vaccination schedule", "allergy"),
    "markets": ("semiconductors", "renewable energy", "dividend stocks"),
    "content": ("product launch", "behind the scenes", "customer story"),
    "operations": ("disk usage", "failed jobs", "expiring certificates"),
    "team": ("onboarding", "quarterly goals", "release checklist"),
}
_TEXT = re.compile(r"(^|_)(message|text|body|content|description|notes?|summary|comment|prompt|markdown)$")
_QUERY = re.compile(r"(^|_)(query|q|search|keywords?|term|topic|prompt|question)$")
_PERSON = re.compile(r"(^|_)(name|full_name|author|assignee|recipient|attendee|contact|person|user_name)$")


def snake(name: str) -> str:
    """`baseId` -> base_id; `Max-Results` -> max_results."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


def words_of(name: str) -> str:
    return snake(name).replace("_", " ")


def is_text_param(name: str) -> bool:
    return bool(_TEXT.search(snake(name)))


def literal(
    name: str, prop: dict[str, Any], root: dict[str, Any], rng: random.Random, theme: str, today: date
) -> Any:
    """A realistic value for one parameter, by its name; the schema's probe example otherwise."""
    key, kind = snake(name), prop.get("type")
    if prop.get("enum"):
        return rng.choice(prop["enum"])
    if kind in ("integer", "number") and re.search(r"limit|max|count|top|size|per_page|num", key):
        return _bounded(prop, rng.choice([3, 5, 10]))
    if kind == "string" and not prop.get("format") and not prop.get("pattern"):
        found = _string(key, rng, theme, today)
        if found is not None:
            return found
    return example_value(prop, name, root)


def _bounded(prop: dict[str, Any], value: int) -> int:
    low, high = prop.get("minimum", value), prop.get("maximum", value)
    return int(max(low, min(high, value)))


def _string(key: str, rng: random.Random, theme: str, today: date) -> str | None:
    place = fake.place(rng)
    if re.search(r"city|location|place|destination|origin|address|region|near", key):
        return place.city
    if "country" in key:
        return place.country
    if "email" in key:
        return fake.person(rng).email
    if re.search(r"company|organi[sz]ation|vendor|supplier", key):
        return fake.company(rng)
    if _PERSON.search(key) or key in ("first_name", "last_name"):
        person = fake.person(rng)
        return {"first_name": person.first_name, "last_name": person.last_name}.get(key, person.name)
    if _QUERY.search(key):
        return rng.choice(SEARCH_WORDS.get(theme, ("weekly summary",)))
    if re.search(r"title|subject|headline", key):
        return fake.short_sentence(rng)
    if re.search(r"(^|_)(date|day|start|from|since)(_|$)", key):
        return (today + timedelta(days=rng.randint(2, 20))).isoformat()
    if re.search(r"(^|_)(end|to|until)(_date)?$", key):
        return (today + timedelta(days=rng.randint(21, 30))).isoformat()
    if "phone" in key:
        return fake.phone(rng)
    if _TEXT.search(key):
        return fake.sentence(rng, 10)
    return None


def clause(description: str, fallback: str) -> str:
    """The first sentence of a tool's description as something the user asks for ("look up the weather
    forecast for a city"), without parentheses, code or a trailing period; `fallback` when it has none."""
    text = re.split(r"(?<=[.!?])\s|\n", description.strip(), maxsplit=1)[0]
    text = re.sub(r"\([^)]*\)|`[^`]*`|\[[^\]]*\]", "", text)
    text = re.sub(r"^(this tool|tool to|use this (tool )?to|allows? (you )?to|used to|helps? (you )?)\s*", "", text, flags=re.I)
    text = re.sub(r"\s+", " ", text).strip(" .:;-")
    words = text.split()
    if len(words) < 3 or not text.isascii() or re.search(r"\b(server|mcp|tools? available|api key)\b", text, re.I):
        return fallback
    text = " ".join(words[:16])
    return text[0].lower() + text[1:]


def printable(value: Any) -> bool:
    """A short scalar an answer can quote."""
    if isinstance(value, bool) or value is None:
        return False
    return isinstance(value, str | int | float) and 0 < len(str(value)) <= 60
