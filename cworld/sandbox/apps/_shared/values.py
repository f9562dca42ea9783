"""How the apps read their arguments: dates and times parsed with plain errors, did-you-mean hints. How
times, money and names are written and matched is `cworld.values`, shared with the rule language; the apps'
`matches` is that one with its normalized texts cached, as a search over 10,000 records asks it 10,000
times per call with the same query and mostly the same texts."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any

from cworld.sandbox.framework import AppError
from cworld.values import iso, later, money, norm, text_of

__all__ = ["iso", "later", "matches", "money", "norm", "parse_day", "parse_iso", "parse_moment", "suggest"]


@lru_cache(maxsize=1024)
def _query_words(query: str) -> tuple[str, ...]:
    return tuple(norm(query).split())


def matches(query: Any, *values: Any) -> bool:
    """`cworld.values.matches` (every word of `query` in one of `values`, accent- and case-blind), with the
    query's words and plain texts' normalized form cached."""
    wanted = _query_words(query) if type(query) is str else tuple(norm(query).split())
    if not wanted:
        return True
    hay = text_of(values)
    return all(w in hay for w in wanted)


@lru_cache(maxsize=8192)
def parse_iso(text: str) -> datetime:
    """A time as `iso` writes it. Cached (a datetime cannot change): a day's busy times parse the same
    events' times call after call, 20 us each through `strptime`."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def parse_day(text: str, field: str) -> date:
    """A `YYYY-MM-DD` argument; an impossible date (2026-02-30) is the caller's error, said plainly."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise AppError("invalid", f"{field} '{text}' is not a real date; give it as YYYY-MM-DD") from None


def parse_moment(text: str, field: str) -> datetime:
    """A `YYYY-MM-DDTHH:MM` (UTC) argument, seconds and a trailing Z optional."""
    cleaned = text.strip().removesuffix("Z")
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise AppError("invalid", f"{field} '{text}' is not a time; give it as YYYY-MM-DDTHH:MM in UTC")


def suggest(name: str, candidates: Sequence[str]) -> str:
    """' Did you mean X?' for a not-found message, or '' when nothing is close."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""
