"""Calendar rules of the datetime server: working days, month steps, birthdays and Easter dates."""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from datetime import date, timedelta

from cworld.sandbox.stateless.dates.models import WEEKDAYS, DateResult
from cworld.sandbox.stateless.dates.parsing import parse_date
from cworld.sandbox.stateless.shared import rejecting

MAX_SPAN_DAYS = 36_600


def as_result(d: date) -> DateResult:
    return DateResult(date=d.isoformat(), weekday=calendar.day_name[d.weekday()])


def days_off(holidays: Sequence[str], weekend: Sequence[str]) -> tuple[set[date], set[int]]:
    return {parse_date(h, "holiday") for h in holidays}, {WEEKDAYS.index(w) for w in weekend}


def shift_days(d: date, days: int) -> date:
    with rejecting(OverflowError, "the result falls outside years 1-9999; use a closer date"):
        return d + timedelta(days=days)


def add_months(d: date, months: int) -> date:
    total = d.year * 12 + d.month - 1 + months
    year, month = divmod(total, 12)
    return date(year, month + 1, min(d.day, calendar.monthrange(year, month + 1)[1]))


def birthday_in(born: date, year: int) -> date:
    return date(year, born.month, min(born.day, calendar.monthrange(year, born.month)[1]))


def western_easter(year: int) -> date:
    """Anonymous Gregorian algorithm (Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday_shift = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday_shift) // 451
    month, day = divmod(h + weekday_shift - 7 * m + 114, 31)
    return date(year, month, day + 1)


def orthodox_easter(year: int) -> date:
    """Meeus's Julian algorithm, shifted to the Gregorian calendar."""
    a, b, c = year % 4, year % 7, year % 19
    d = (19 * c + 15) % 30
    e = (2 * a + 4 * b - d + 34) % 7
    month, day = divmod(d + e + 114, 31)
    julian = date(year, month, day + 1)
    return julian + timedelta(days=year // 100 - year // 400 - 2)
