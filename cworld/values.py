"""How services write and read common values: ISO-8601 UTC times, money in cents, names matched the way a
search box matches them. One implementation for the sandbox apps (the services we run) and for the rule
language (the services we simulate), so a rule and the app it stands beside cannot drift on these.

The lowest room of the house: it imports nothing of cworld.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1024)
def iso(moment: datetime) -> str:
    """Times are ISO 8601 UTC strings with a Z, as services write them: JSON-friendly and sortable as text.
    Cached: a session formats the same few moments (its clock, a record's times) over and over."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    """An ISO time or date (a bare date is its midnight, a time without a zone is UTC); None if it is not one."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def later(moment: datetime | str, days: float = 0, hours: float = 0, minutes: float = 0, seconds: float = 0) -> str:
    """`moment` moved by the given amounts, as an ISO string."""
    start = parse_time(moment)
    if start is None:
        raise ValueError(f"not a time: {moment!r}")
    return iso(start + timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds))


def money(value: Any) -> float:
    """Rounded to cents as services round: Python's `round` (and never -0.0)."""
    return round(float(value) + 0.0, 2)


def norm(text: Any) -> str:
    """Lower case, single spaces, accents dropped: 'Sao  Paulo' finds 'São Paulo'."""
    return " ".join(_folded(str(text or "")).split())


def _folded(text: str) -> str:
    """`norm` with the whitespace left as it is: lower case, accents dropped (ASCII text is its own NFKD form:
    it skips the normalizing, most of the cost). A word without whitespace is in it exactly when it is in
    `norm(text)`: both hold the same runs of non-space characters, and such a word lies inside one run."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return text.lower()


def matches(query: Any, *values: Any) -> bool:
    """Every word of `query` occurs in one of `values` (accent- and case-blind; nested values flattened):
    how a service's plain search box behaves. An empty query matches everything."""
    wanted = norm(query).split()
    if not wanted:
        return True
    hay = text_of(values)  # cached: a search re-reads the same records' texts call after call
    return all(w in hay for w in wanted)


def match_text(*values: Any) -> str:
    """The text `matches` searches: the values' texts (nested values flattened, None and booleans left out)
    joined by spaces and folded. A query word (`norm(query).split()`: no whitespace) is in it exactly when it
    is in the normalized text (`_folded`), so the spaces are not collapsed: that cost as much as the rest."""
    parts: list[str] = []
    _flat_text(values, parts)
    return _folded(" ".join(parts))


def text_of(values: tuple[Any, ...]) -> str:
    """`match_text(*values)`, cached for plain texts (and None): records share texts (a sender, a status),
    and a search index built over 10,000 records or a search asked call after call reads the same ones
    again. Numbers are not cached: 1, 1.0 and True are one key to a cache, three texts to `match_text`."""
    for value in values:  # a loop, not all(...): a text index calls this once per record
        if value is not None and type(value) is not str:
            return match_text(*values)
    return _plain_text(values)


@lru_cache(maxsize=1 << 16)
def _plain_text(texts: tuple[str | None, ...]) -> str:
    return match_text(*texts)


def _flat_text(values: Any, out: list[str]) -> None:
    """Append the texts inside `values` (a dict's values or a list's items) to `out`, in order: one list
    for a whole record, joined once (a join per nested value cost more than the reading)."""
    for value in values.values() if isinstance(values, dict) else values:
        if type(value) is str:  # the common case first
            out.append(value)
        elif isinstance(value, dict | list):  # a tuple is written as str writes it, as it always was
            _flat_text(value, out)
        elif value is not None and not isinstance(value, bool):
            out.append(str(value))


def text_replaced(value: Any, old: str, new: str, *, keys: bool = False) -> Any:
    """`value` with `old` written as `new` in every string inside it (in its dicts' keys too when `keys`): a
    substituted id in a plan's arguments, a scratch folder shown under the name the world gives it."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {(text_replaced(k, old, new) if keys else k): text_replaced(v, old, new, keys=keys)
                for k, v in value.items()}
    if isinstance(value, list):
        return [text_replaced(v, old, new, keys=keys) for v in value]
    return value
