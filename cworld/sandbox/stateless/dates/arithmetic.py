"""Date arithmetic behind the datetime tools: offsets, month steps, calendar breakdowns, durations, and the
result builders for moments and zones."""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta

from cworld.sandbox.stateless.dates.models import DurationInfo, ParsedDateTime, ZonedDateTime
from cworld.sandbox.stateless.dates.parsing import zone
from cworld.sandbox.stateless.shared import invalid, rejecting


def offset_text(delta: timedelta | None) -> str | None:
    if delta is None:
        return None
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def describe(moment: datetime) -> ParsedDateTime:
    return ParsedDateTime(
        iso=moment.isoformat(),
        date=moment.date().isoformat(),
        time=moment.time().isoformat(),
        weekday=calendar.day_name[moment.weekday()],
        has_timezone=moment.tzinfo is not None,
        utc_offset=offset_text(moment.utcoffset()),
    )


def zoned(moment: datetime) -> ZonedDateTime:
    dst = moment.dst()
    return ZonedDateTime(
        iso=moment.isoformat(),
        utc_offset=offset_text(moment.utcoffset()) or "+00:00",
        abbreviation=moment.tzname(),
        is_dst=bool(dst),
    )


def in_zone(moment: datetime, zone_name: str, out_of_range: str) -> ZonedDateTime:
    """`moment` seen in the named zone; `out_of_range` is the error when that falls outside years 1-9999."""
    with rejecting(OverflowError, out_of_range):
        return zoned(moment.astimezone(zone(zone_name)))


def duration_info(seconds: float) -> DurationInfo:
    sign = "-" if seconds < 0 else ""
    rest = abs(seconds)
    days, rest = divmod(rest, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    whole = [(int(days), "d", "D"), (int(hours), "h", "H"), (int(minutes), "m", "M")]
    secs_text = f"{round(secs, 3):g}" if secs else ""
    text = " ".join([f"{v}{short}" for v, short, _ in whole if v] + ([f"{secs_text}s"] if secs_text else []))
    time_part = "".join(f"{v}{iso}" for v, _, iso in whole[1:] if v) + (f"{secs_text}S" if secs_text else "")
    date_part = f"{int(days)}D" if days else ""
    iso = f"{sign}P{date_part}{'T' + time_part if time_part else ''}" if date_part or time_part else "PT0S"
    text = sign + text if text else "0s"
    return DurationInfo(total_seconds=seconds, text=text, iso=iso)


def breakdown(a: datetime, b: datetime) -> tuple[int, int, int, timedelta]:
    """Whole years, months and days from a to b (a <= b), and the leftover time."""
    months = (b.year - a.year) * 12 + b.month - a.month
    anchor = plus_months(a, months)
    if anchor > b:
        months -= 1
        anchor = plus_months(a, months)
    rest = b - anchor
    return (
        months // 12,
        months % 12,
        rest.days,
        timedelta(seconds=rest.seconds, microseconds=rest.microseconds),
    )


def plus_months(moment: datetime, months: int) -> datetime:
    total = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise invalid("the result falls outside years 1-9999; use a smaller duration")
    return moment.replace(
        year=year, month=month + 1, day=min(moment.day, calendar.monthrange(year, month + 1)[1])
    )


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
