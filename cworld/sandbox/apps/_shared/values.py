"""How times, money and names are written and read: ISO-8601 UTC strings, argument parsing with plain
errors, rounding to cents, accent-blind matching and did-you-mean hints."""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from cworld.sandbox.framework import AppError


def iso(moment: datetime) -> str:
    """Times in state and answers are ISO-8601 UTC strings: JSON-friendly and sortable."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
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


def later(moment: datetime, **delta: float) -> str:
    return iso(moment + timedelta(**delta))


def norm(text: str) -> str:
    """Lower case, single spaces, accents dropped: 'Sao  Paulo' finds 'São Paulo'."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().split())


def matches(query: str, *fields: str) -> bool:
    """Every word of the query appears in one of the fields (case-insensitive): how search boxes behave."""
    haystack = norm(" ".join(fields))
    return all(word in haystack for word in norm(query).split())


def suggest(name: str, candidates: Sequence[str]) -> str:
    """' Did you mean X?' for a not-found message, or '' when nothing is close."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def money(value: float) -> float:
    return round(value + 0.0, 2)
