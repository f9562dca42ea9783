"""Parsing for the datetime server: ISO dates and times, loose human formats, time zones, ISO 8601 durations.

Every failure is an `invalid` AppError that shows an example of what to pass instead.
"""

from __future__ import annotations

import difflib
import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cworld.sandbox.stateless.shared import invalid, rejecting

_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$")
_DURATION = re.compile(
    r"^(-)?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)
#: Seconds per ISO duration field; years and months use their average length (365.25 and 30.4375 days).
_DURATION_SECONDS = (31_557_600, 2_629_800, 604_800, 86_400, 3_600, 60, 1)

#: Formats the loose parser tries, in order, after ISO 8601. `{m}/{d}` is month first unless day_first is set.
_LOOSE_FORMATS = (
    "%Y-%m-%d %H:%M",
    "%Y/%m/%d",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%Y.%m.%d",
    "{m}/{d}/%Y",
    "{m}/{d}/%Y %H:%M",
    "{m}/{d}/%Y %I:%M %p",
    "{m}/{d}/%Y %H:%M:%S",
    "{m}/{d}/%y",
    "%d.%m.%Y",
    "%d.%m.%Y %H:%M",
    "{m}-{d}-%Y",
    "%B %d, %Y",
    "%B %d %Y",
    "%b %d, %Y",
    "%b %d %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%B %d, %Y %I:%M %p",
    "%B %d, %Y %H:%M",
    "%d %B %Y %H:%M",
    "%d %b %Y %H:%M",
    "%A, %B %d, %Y",
    "%a, %d %b %Y %H:%M:%S",
    "%a, %d %b %Y %H:%M:%S %z",
    "%d %B %Y %I:%M %p",
    "%b %d, %Y %I:%M %p",
    "%Y%m%d",
    "%Y%m%dT%H%M%S",
)


def parse_datetime(text: str, what: str = "datetime") -> datetime:
    """Strict ISO 8601: '2026-03-05', '2026-03-05T14:30', '2026-03-05T14:30:00+01:00', '...Z'."""
    with rejecting(
        ValueError,
        f"{what} {text!r} is not an ISO 8601 date/time; pass e.g. '2026-03-05' or "
        "'2026-03-05T14:30:00+01:00' (use parse_datetime for other formats)",
    ):
        return datetime.fromisoformat(text.strip())


def parse_date(text: str, what: str = "date") -> date:
    """An ISO date 'YYYY-MM-DD' (a full datetime is accepted and its date part used)."""
    stripped = text.strip()
    try:
        return date.fromisoformat(stripped)
    except ValueError:
        pass
    with rejecting(ValueError, f"{what} {text!r} is not an ISO date; pass e.g. '2026-03-05'"):
        return datetime.fromisoformat(stripped).date()


def parse_loose(text: str, day_first: bool) -> datetime:
    """ISO 8601 first, then common written formats ('March 5, 2026 2:30 PM', '05/03/2026')."""
    cleaned = " ".join(text.split())
    try:
        return datetime.fromisoformat(cleaned)
    except ValueError:
        pass
    day, month = ("%m", "%d") if day_first else ("%d", "%m")
    for fmt in _LOOSE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt.format(d=day, m=month))
        except ValueError:
            continue
    raise invalid(
        f"cannot read {text!r} as a date/time; pass ISO 8601 ('2026-03-05T14:30') or a form like "
        "'March 5, 2026 2:30 PM' or '03/05/2026'"
    )


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


def zone(name: str) -> tzinfo:
    """An IANA zone ('Europe/Paris'), 'UTC', or a fixed offset ('+05:30', 'UTC-3')."""
    key = name.strip()
    if key.upper() in ("UTC", "Z", "GMT"):
        return UTC
    m = _OFFSET.match(key)
    if m:
        sign, hours, minutes = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise invalid(f"offset {name!r} is out of range; offsets go from -18:00 to +18:00")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if sign == "-" else delta)
    if key in _zone_names():
        try:
            return ZoneInfo(key)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    close = difflib.get_close_matches(key, sorted(_zone_names()), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else "; use an IANA name like 'America/New_York'"
    raise invalid(f"unknown time zone {name!r}{hint}")


def zone_names() -> list[str]:
    return sorted(_zone_names())


def parse_duration(text: str) -> float:
    """Total seconds of an ISO 8601 duration like 'P1DT2H30M' or 'PT45S' (years/months use average length)."""
    m = _DURATION.match(text.strip().upper())
    if not m or not any(m.groups()[1:]) or text.strip().upper().endswith("T"):
        raise invalid(f"{text!r} is not an ISO 8601 duration; pass e.g. 'P3D', 'PT1H30M' or 'P1Y2M10DT2H'")
    total = sum(float(v) * s for v, s in zip(m.groups()[1:], _DURATION_SECONDS, strict=True) if v)
    return -total if m.group(1) else total
