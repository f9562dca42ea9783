"""Plausible values, deterministic for an RNG, from a card field type (`email`, `enum[a,b]`, ...).

The schema engine fills simulated records with these; `realistic` (the value generator's realistic mode)
builds on them for JSON Schemas. Same RNG state, same value. Names decide ranges where the type alone
cannot: a `rating` is 0-5, a `cancel_fee_percent` 0-100, a `date_of_birth` decades ago; other dates fall
near the session's clock (`session_clock`: the task's 'today' when the engine knows the task, else EPOCH).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

from cworld.schemas.fake import domain_of, fake, last_name, sentence, slug, words
from cworld.schemas.records import (
    FACT_FIELDS,
    RecordContext,
    company_name,
    email,
    facts,
    handle,
    person_name,
    phone_number,
    place_of,
    street,
    text,
    title,
)

TAGS = ["urgent", "q2", "vip", "follow-up", "renewal", "decision-maker", "internal", "blocked"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CAD"]
EPOCH = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ"
_CLOCK: ContextVar[datetime] = ContextVar("cworld_engine_clock", default=EPOCH)
_FOCUS: ContextVar[date | None] = ContextVar("cworld_engine_focus_day", default=None)
#: Fields that say when the thing happens (not when it was made): they fall on the day a call asks about.
_EVENT_TIME = re.compile(r"start|end|depart|arriv|slot|check_?in|check_?out|(^|_)(date|day|at|time|when)$")
_MADE_TIME = re.compile(r"creat|updat|modif|book|placed|sent|receiv|expir|birth|dob|joined|last_")

#: Field-name patterns -> (low, high, decimals) for numbers: plausible where a schema gives no bounds.
NUMERIC_HINTS: tuple[tuple[str, tuple[float, float, int]], ...] = (
    (r"percent|pct|percentage|humidity|probability", (0, 100, 1)),
    (r"rating|score|(^|_)stars?$", (1, 5, 1)),
    (r"(^|_)(lat|latitude)$", (-60, 70, 4)), (r"(^|_)(lon|lng|longitude)$", (-170, 170, 4)),
    (r"temp|temperature", (-5, 32, 1)),
    (r"exchange_rate|fx_rate|conversion_rate|(^|_)rate_to", (0.5, 1.6, 4)),
    (r"quantity|qty|bags|guests|nights|travellers|adults|rooms$", (1, 4, 0)),
    (r"stock|seats_left|rooms_left|free_seats|open_cards|remaining|available", (0, 40, 0)),
    (r"capacity|member_count|(^|_)members$|(^|_)seats$", (2, 30, 0)),
    (r"reviews|votes|followers|views|downloads", (0, 2500, 0)),
    (r"duration_minutes|minutes", (15, 600, 0)), (r"hours", (1, 72, 0)), (r"days", (1, 30, 0)),
    (r"floor|position|version|page|rank|priority|level", (1, 12, 0)),
    (r"(^|_)age$", (18, 85, 0)), (r"(^|_)year$", (2018, 2027, 0)), (r"count|number_of", (0, 50, 0)),
    (r"price|amount|cost|total|balance|fare|fee|refund|(^|_)rate$|subtotal|spend", (5, 1500, 2)),
    (r"(^|_)(close|open|high|low|last)$", (5, 900, 2)),
)


@contextmanager
def session_clock(now: datetime | None) -> Iterator[None]:
    """Generated dates fall near `now` (the task's 'today') while the block runs."""
    token = _CLOCK.set(now or EPOCH)
    try:
        yield
    finally:
        _CLOCK.reset(token)


def clock() -> datetime:
    return _CLOCK.get()


@contextmanager
def focus_day(day: date | None) -> Iterator[None]:
    """While a call about one day is answered (`find_free_slots(date=...)`), generated times of events
    fall on that day, in working hours (08:00-17:00 UTC)."""
    token = _FOCUS.set(day)
    try:
        yield
    finally:
        _FOCUS.reset(token)


@lru_cache(maxsize=4096)
def numeric_range(field: str) -> tuple[float, float, int] | None:
    """(low, high, decimals) that a number named `field` plausibly takes; None when the name says nothing."""
    low = field.lower()
    return next((spec for pattern, spec in NUMERIC_HINTS if re.search(pattern, low)), None)


def plausible_number(rng: random.Random, field: str, default: tuple[float, float, int]) -> float | int:
    """A number in the range its name suggests; a bare plural (`documents`) counts things: 0-40."""
    counted = (0, 40, 0) if default[2] == 0 and re.search(r"[a-z]s$", field.lower()) else None
    low, high, decimals = numeric_range(field) or counted or default
    if decimals == 0:
        return rng.randint(int(low), int(high))
    return round(rng.uniform(low, high), decimals)


def _moment(rng: random.Random, field: str = "") -> datetime:
    """Near the session clock; far in the past for births, years ahead for expiries and renewals."""
    low = field.lower()
    if re.search(r"birth|dob", low):
        return clock() - timedelta(days=rng.randrange(20 * 365, 70 * 365))
    if re.search(r"expir|expires|valid_until|renew", low):
        return clock() + timedelta(days=rng.randrange(120, 8 * 365))
    focus = _FOCUS.get()
    if focus is not None and _EVENT_TIME.search(low) and not _MADE_TIME.search(low):
        return datetime(focus.year, focus.month, focus.day, tzinfo=UTC) + timedelta(minutes=rng.randrange(8 * 60, 17 * 60, 15))
    return clock() + timedelta(minutes=rng.randrange(-60 * 24 * 60, 60 * 24 * 30))


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
    return _product_code(rng, low) or "".join(rng.choice(UPPER) for _ in range(3))


def _product_code(rng: random.Random, field: str) -> str | None:
    """A product's identifier in its own scheme: an Amazon ASIN, a barcode's digits, an ISBN-13, a merchant's
    SKU; None for any other field."""
    digits = "0123456789"
    if field.endswith("asin"):
        return "B0" + "".join(rng.choice(UPPER + digits) for _ in range(8))
    barcode = {"ean": 13, "gtin": 14, "upc": 12}.get(field.rsplit("_", 1)[-1])
    if barcode:
        return "".join(rng.choice(digits) for _ in range(barcode))
    if field.endswith("isbn"):
        return "978" + "".join(rng.choice(digits) for _ in range(10))
    if field.endswith("sku"):
        return f"{''.join(rng.choice(UPPER) for _ in range(2))}-{rng.randint(1000, 9999)}-{rng.choice(['BLK', 'WHT', 'S', 'M', 'L', 'STD'])}"
    return None


def _money_range(field: str) -> tuple[float, float]:
    hinted = numeric_range(field)
    return (hinted[0], hinted[1]) if hinted and hinted[2] == 2 else (5, 1500)


def value_for_type(kind: str, rng: random.Random, *, field: str = "", record: RecordContext | None = None) -> Any:
    """A value for a card field type (`string`, `email`, `enum[a,b]`, `list[email]`, ...); `record` holds
    what the rest of its record drew (its person, its place), so the value fits them."""
    if kind.startswith("enum["):
        return rng.choice([v.strip() for v in kind[5:-1].split(",")])
    if kind.startswith("list["):
        inner = kind[5:-1]
        if inner == "text" and record is not None and FACT_FIELDS.search(field.lower()):
            known = facts(record)  # an entity's observations: distinct facts of its type, the defining one first
            return known[:1] + rng.sample(known[1:], rng.randint(0, len(known) - 1))
        return [value_for_type(inner, rng, field=field, record=record) for _ in range(rng.randint(1, 3))]
    return _SCALARS.get(kind, _SCALARS["string"])(rng, field, record)


def record_values(entity: str, fields: dict[str, str], rng: random.Random) -> dict[str, Any]:
    """A whole record of a card entity: fields drawn together (one person, one place), enums first so
    that a name can follow the record's type (a knowledge-graph `person` is named like one)."""
    ctx = RecordContext.for_fields(rng, entity, list(fields))
    order = sorted(fields, key=lambda name: not fields[name].startswith("enum["))
    for name in order:
        ctx.values[name] = value_for_type(fields[name], rng, field=name, record=ctx)
    return {name: ctx.values[name] for name in fields}


def surname(rng: random.Random) -> str:
    return last_name(rng)


def _word(rng: random.Random) -> str:
    return words(rng, 1)[0]


def _string(rng: random.Random, field: str, ctx: RecordContext | None) -> str:
    """A bare string by its name: a street, an address, opening hours, a memo; else a word."""
    low = field.lower()
    if re.search(r"area|district|neighbo|quarter", low):
        return str(fake(rng).street_name())  # a part of town, not a full address
    if re.search(r"street|address", low):
        return street(rng, field, ctx)
    if re.search(r"handle|username|login", low):
        return handle(rng, ctx)
    if re.search(r"hours|opening", low):
        return f"{rng.randint(7, 10):02d}:00-{rng.randint(17, 22):02d}:00"
    if re.search(r"memo|note|status|topic|reason", low):
        return sentence(rng, 5)
    if record_is("relation", ctx) and low in ("from", "to", "source", "target"):
        return person_name(rng, field, None)
    if low in ("full_name", "repo", "repository"):
        return f"{slug(surname(rng))}/{_word(rng)}"
    hinted = hinted_type(field)
    if hinted in _TEXT_HINTS:  # `start_date: "guess"` reads as made up at once: a date, a url, a sha by its name
        return str(_SCALARS[hinted](rng, field, ctx))
    return _word(rng)


def record_is(entity: str, ctx: RecordContext | None) -> bool:
    return ctx is not None and ctx.entity == entity


def _url(rng: random.Random, field: str, ctx: RecordContext | None) -> str:
    f = fake(rng)
    host = domain_of(ctx.person.company) if ctx is not None and ctx.is_person else f.domain_name()
    return f"https://{host}/{f.uri_path(deep=rng.randint(1, 2))}"


def _place_part(part: str) -> Callable[[random.Random, str, RecordContext | None], Any]:
    return lambda r, f, c: getattr(place_of(r, c), part)


def _float(rng: random.Random, field: str, ctx: RecordContext | None) -> float:
    if ctx is not None and re.search(r"(^|_)(lat|latitude)$", field.lower()):
        return round(ctx.place.latitude, 4)
    if ctx is not None and re.search(r"(^|_)(lon|lng|longitude)$", field.lower()):
        return round(ctx.place.longitude, 4)
    return float(plausible_number(rng, field, (1, 1000, 2)))


def _path(rng: random.Random) -> str:
    f = fake(rng)
    return f"/workspace/{f.word()}/{f.file_name(category=rng.choice(['text', 'office']))}"


_SCALARS: dict[str, Callable[[random.Random, str, RecordContext | None], Any]] = {
    "string": _string,
    "text": text,
    "title": title,
    "int": lambda r, f, c: int(plausible_number(r, f, (1, 500, 0))),
    "float": _float,
    "money": lambda r, f, c: round(r.uniform(*_money_range(f)), 2),
    "bool": lambda r, f, c: r.random() < 0.5,
    "name": person_name,
    "email": lambda r, f, c: email(r, c),
    "phone": lambda r, f, c: phone_number(r, c),
    "url": _url,
    "company": company_name,
    "city": _place_part("city"),
    "country": _place_part("country"),
    "timezone": _place_part("timezone"),
    "date": lambda r, f, c: _moment(r, f).date().isoformat(),
    "datetime": lambda r, f, c: _moment(r, f).isoformat(),
    "time": lambda r, f, c: f"{r.randint(7, 19):02d}:{r.choice([0, 15, 30, 45]):02d}",
    "path": lambda r, f, c: _path(r),
    "sha": lambda r, f, c: "".join(r.choice("0123456789abcdef") for _ in range(40)),
    "ref": lambda r, f, c: r.choice(["main", "develop", "feature/" + slug(_word(r))]),
    "word": lambda r, f, c: _word(r),
    "weekday": lambda r, f, c: r.choice(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
    "offset": lambda r, f, c: f"{r.choice(['+', '-'])}{r.randint(0, 11)}.{r.choice(['0', '5'])}h",
    "tag": lambda r, f, c: r.choice(TAGS),
    "currency": lambda r, f, c: r.choice(CURRENCIES),
    "code": lambda r, f, c: _code(r, f),
    "id": lambda r, f, c: f"{(f.removesuffix('_id') or 'item')}_{r.randint(1, 9999):04d}",
}

#: The hinted types a bare `string` field takes by its name (not a person's name, a title or an id: a project's
#: `name` is no person's, and those are drawn where the record is).
_TEXT_HINTS = frozenset({"timezone", "weekday", "offset", "currency", "code", "email", "phone", "url", "company", "city",
                         "country", "datetime", "date", "path", "sha", "ref"})
#: Field-name hints used when only a JSON Schema `string` is known.
_NAME_HINTS: tuple[tuple[str, str], ...] = (
    (r"time_?zone|^tz$", "timezone"), (r"day_of_week|weekday", "weekday"), (r"difference|utc_offset", "offset"),
    (r"currency", "currency"), (r"symbol|ticker|postcode|zip|last4", "code"),
    (r"e-?mail", "email"), (r"phone", "phone"), (r"url|link|href", "url"), (r"(^|_)name$|author|owner|sender", "name"),
    (r"company|org", "company"), (r"city", "city"), (r"country", "country"), (r"(_at|time|timestamp)$", "datetime"),
    (r"(^|_)(created|modified|updated|edited|published|deleted|expires|last_seen|last_login)$", "datetime"),
    (r"slot|(^|_)(start|end|starts|ends)$", "datetime"),
    (r"date|day|deadline|due", "date"), (r"title|subject", "title"), (r"body|description|content|text|summary|note", "text"),
    (r"(^|_)id$", "id"), (r"path|file", "path"), (r"sha|hash|commit", "sha"), (r"branch|ref", "ref"),
    (r"price|amount|cost|total|balance", "money"),
)


@lru_cache(maxsize=4096)
def hinted_type(field: str) -> str | None:
    lowered = field.lower()
    for pattern, kind in _NAME_HINTS:
        if re.search(pattern, lowered):
            return kind
    return None
