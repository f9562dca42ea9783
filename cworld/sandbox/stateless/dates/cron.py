"""A small, exact cron evaluator: five fields (minute hour day-of-month month day-of-week), with `*`, lists,
ranges, steps, month and weekday names and the @hourly/@daily/@weekly/@monthly/@yearly macros.

Day-of-month and day-of-week follow Vixie cron: when both are restricted, a day matching either one runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from cworld.sandbox.stateless.shared import invalid

#: Stop looking after this many days: '0 0 30 2 *' never runs and must not loop forever.
SEARCH_DAYS = 366 * 5

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
    )
}
_WEEKDAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _WEEKDAYS),
)


@dataclass(frozen=True)
class CronSchedule:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    day_restricted: bool
    weekday_restricted: bool

    def day_matches(self, d: date) -> bool:
        if d.month not in self.months:
            return False
        dom, dow = d.day in self.days, (d.isoweekday() % 7) in self.weekdays
        if self.day_restricted and self.weekday_restricted:
            return dom or dow
        return dom and dow

    def runs_after(self, after: datetime) -> Iterator[datetime]:
        """Run times strictly after `after`, in order, in its time zone (wall-clock)."""
        start = after.replace(second=0, microsecond=0)
        for offset in range(SEARCH_DAYS):
            try:
                day = start.date() + timedelta(days=offset)
            except OverflowError:
                return
            if not self.day_matches(day):
                continue
            for h in self.hours:
                for m in self.minutes:
                    moment = datetime.combine(day, time(h, m), tzinfo=after.tzinfo)
                    if moment > after:
                        yield moment


def _value(text: str, lo: int, hi: int, names: dict[str, int], field: str) -> int:
    token = text.lower()
    if token in names:
        return names[token]
    if not token.isdigit() or not token.isascii():
        raise invalid(f"cron {field} value {text!r} is not a number{' or name' if names else ''}")
    value = int(token)
    if not lo <= value <= hi:
        raise invalid(f"cron {field} value {value} is outside {lo}-{hi}")
    return value


def _field(text: str, lo: int, hi: int, names: dict[str, int], field: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = _value(step_text, 1, hi - lo + 1, {}, field) if step_text else 1
        if base == "*":
            first, last = lo, hi
        elif "-" in base:
            a, b = base.split("-", 1)
            first, last = _value(a, lo, hi, names, field), _value(b, lo, hi, names, field)
            if first > last:
                raise invalid(f"cron {field} range {base!r} runs backwards; write the smaller value first")
        else:
            first = _value(base, lo, hi, names, field)
            last = hi if step_text else first
        out.update(range(first, last + 1, step))
    return out


def parse_cron(expression: str) -> CronSchedule:
    text = _MACROS.get(expression.strip().lower(), expression.strip())
    parts = text.split()
    if len(parts) != 5:
        raise invalid(
            f"a cron expression has 5 fields (minute hour day month weekday), got {len(parts)}: "
            "e.g. '30 9 * * mon-fri' or '@daily'"
        )
    sets = [_field(p, lo, hi, names, f) for p, (f, lo, hi, names) in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return CronSchedule(
        minutes=tuple(sorted(sets[0])),
        hours=tuple(sorted(sets[1])),
        days=frozenset(sets[2]),
        months=frozenset(sets[3]),
        weekdays=weekdays,
        day_restricted=not parts[2].startswith("*"),
        weekday_restricted=not parts[4].startswith("*"),
    )
