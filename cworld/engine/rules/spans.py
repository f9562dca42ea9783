"""Time spans for rules: working hours, free slots between busy spans, a due time passed.

Calendars answer a free/busy search with the gaps between the events people hold, and task services show a
task as overdue once its due time passed: behaviours every service of a category shares, so the rule
language computes them here, once, and a card's family rules call them (`category_cards/calendar.yaml`,
`task_board.yaml`). Times are ISO 8601 text in, ISO UTC text out, as the world keeps them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cworld.values import iso, parse_time

#: A grid finer than this many minutes is no meeting grid (and would make a day of slots very long).
_MIN_STEP = 5


def work_hours(day: Any, timezone: Any, start_hour: int = 9, end_hour: int = 17) -> list[str] | None:
    """[start, end] (ISO UTC) of the working hours on the local date `day` in `timezone` (UTC where the
    zone is unknown or not given); None on a Saturday or Sunday, or for a `day` that is no date. Scheduling
    assistants propose meeting times within each attendee's working hours, in the attendee's own zone."""
    moment = parse_time(day)
    if moment is None:
        return None
    local_day = moment.date()
    if local_day.weekday() >= 5:
        return None
    zone = _zone(timezone)
    opens = datetime(local_day.year, local_day.month, local_day.day, start_hour, tzinfo=zone)
    closes = datetime(local_day.year, local_day.month, local_day.day, end_hour, tzinfo=zone)
    return [iso(opens), iso(closes)]


def free_slots(busy: Any, windows: Any, minutes: Any, step: Any = 30, after: Any = None) -> list[list[str]]:
    """[start, end] spans of `minutes`, starting on the clock's `step`-minute marks, that lie inside every
    one of `windows` ([start, end] each; a None window, a day off, leaves no slot), start after `after`,
    and overlap none of the `busy` spans: the gaps a free/busy search answers, soonest first."""
    length, grid = _minutes(minutes, 30), max(_MIN_STEP, _minutes(step, 30))
    bounds = [_span(w) for w in windows or []]
    if not bounds or any(b is None for b in bounds):
        return []
    lo = max(b[0] for b in bounds if b is not None)
    hi = min(b[1] for b in bounds if b is not None)
    taken = [s for s in (_span(b) for b in busy or []) if s is not None and s[1] > lo and s[0] < hi]
    start, floor = _on_grid(lo, grid), parse_time(after)
    slots = []
    while start + timedelta(minutes=length) <= hi:
        end = start + timedelta(minutes=length)
        if (floor is None or start > floor) and not any(s[0] < end and start < s[1] for s in taken):
            slots.append([iso(start), iso(end)])
        start += timedelta(minutes=grid)
    return slots


def past_due(due: Any, done: Any, now: Any) -> bool:
    """A due time that has passed on something not marked done: a task, a card or an invoice is overdue."""
    moment, clock = parse_time(due), parse_time(now)
    return moment is not None and clock is not None and moment < clock and not done


def in_utc(local: Any, timezone: Any) -> str | None:
    """The UTC moment (ISO) of a wall-clock time read in `timezone`: a reminder set for "09:00 my time" fires at
    the instant that is 09:00 in the user's zone, and services keep that instant in UTC. A time that states its
    own offset keeps it; None for a value that is no time."""
    if not isinstance(local, str) or parse_time(local) is None:
        return None
    moment = datetime.fromisoformat(local.replace("Z", "+00:00"))
    return iso(moment if moment.tzinfo else moment.replace(tzinfo=_zone(timezone)))


def nights(check_in: Any, check_out: Any) -> list[str]:
    """The dates (YYYY-MM-DD) a stay sleeps: from the check-in day up to, not including, the check-out day, as
    hotels count and charge nights; none for a range that is not one."""
    start, end = parse_time(check_in), parse_time(check_out)
    if start is None or end is None:
        return []
    first, last = start.date(), end.date()
    return [(first + timedelta(days=n)).isoformat() for n in range((last - first).days)]


def _zone(timezone: Any) -> Any:
    try:
        return ZoneInfo(str(timezone)) if timezone else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def _minutes(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _span(pair: Any) -> tuple[datetime, datetime] | None:
    """A [start, end] pair (a list, or a record with start and end) as times; None where it is not one."""
    if isinstance(pair, dict):
        pair = (pair.get("start"), pair.get("end"))
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        return None
    start, end = parse_time(pair[0]), parse_time(pair[1])
    return (start, end) if start is not None and end is not None and start < end else None


def _on_grid(moment: datetime, grid: int) -> datetime:
    """The first of the clock's `grid`-minute marks (counted from midnight UTC) at or after `moment`."""
    midnight = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    marks = -(-(moment - midnight) // timedelta(minutes=grid))
    return midnight + marks * timedelta(minutes=grid)
