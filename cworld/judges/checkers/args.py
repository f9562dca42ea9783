"""Constraint checkers that read the arguments and results of one tool's calls: the option a trade-off
selects, an excluded option, a deadline, a budget. Forms and fields: `task_synth/constraints.yaml`.

`argument` and `field` may be dotted paths (`payment.card_id`, `booking.total`). An argument is read at
exactly that path; a result field is searched at any depth too (results nest their records). An exclusion
looks everywhere and matches loosely (a list item, a number written as text): it is the stricter way.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from cworld.judges.calls import CallRecord
from cworld.judges.checkers.context import CheckContext, Verdict, tool_matches
from cworld.judges.checkers.registry import checker

_MISSING = object()


def lookup(data: Any, path: str) -> Any:
    """The value at a dotted path, or the first one found at any depth when the path's head is not at
    the top (results nest their records); `_MISSING` when there is none."""
    found = _at(data, path.split("."))
    if found is not _MISSING:
        return found
    children = data.values() if isinstance(data, dict) else data if isinstance(data, list) else []
    for child in children:
        found = lookup(child, path)
        if found is not _MISSING:
            return found
    return _MISSING


def _at(data: Any, parts: list[str]) -> Any:
    for part in parts:
        if isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return _MISSING
    return data


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    return bool(a == b)


def _hits(value: Any, banned: Any) -> bool:
    """`value` (or, a list argument, one of its items) is `banned`, read as text too (`2` hits `"2"`)."""
    items = value if isinstance(value, list) else [value]
    return any(_same(i, banned) or str(i).strip().casefold() == str(banned).strip().casefold() for i in items)


def argument(call: CallRecord, path: str) -> Any:
    return _at(call.arguments, path.split("."))


def _calls_of(ctx: CheckContext, tool: str, *, succeeded: bool) -> list[CallRecord]:
    pool = ctx.succeeded if succeeded else ctx.calls_in_scope
    return [c for c in pool if tool_matches(c.tool, tool)]


@checker("argument_equals")
def _argument_equals(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """A successful call of `tool` has `argument` equal to `value` (case and spacing of text ignored)."""
    calls = _calls_of(ctx, str(v["tool"]), succeeded=True)
    return any(_same(argument(c, str(v["argument"])), v["value"]) for c in calls)


@checker("argument_excludes")
def _argument_excludes(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """No call of `tool` (attempts count) has `argument` equal to, or containing, any item of `value`."""
    banned = v["value"] if isinstance(v["value"], list) else [v["value"]]
    for call in _calls_of(ctx, str(v["tool"]), succeeded=False):
        got = lookup(call.arguments, str(v["argument"]))
        if got is not _MISSING and any(_hits(got, b) for b in banned):
            return False
    return True


def parse_moment(value: Any, *, end_of_day: bool = True) -> datetime | None:
    """An ISO date or date-time; a bare date means the end of that day (a deadline 'by 2026-08-27'
    includes the 27th), or its start with `end_of_day=False`. The zone is kept (see `_on_time`)."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time.max if end_of_day else time.min)
        return datetime.fromisoformat(text)
    except ValueError:
        return None


@checker("deadline")
def _deadline(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """Every successful call of `tool` that sets `argument` sets it at or before `value`, and there is one.
    A `value` that is no date is a malformed form; an argument that is no date misses the deadline.
    Proving reads a bare-date `value` strictly, as the start of that day."""
    limit = parse_moment(v["value"], end_of_day=not ctx.proving)
    if limit is None:
        raise ValueError(f"deadline {v['value']!r} is not an ISO date or date-time")
    calls = _calls_of(ctx, str(v["tool"]), succeeded=True)
    given = [a for c in calls if (a := argument(c, str(v["argument"]))) is not _MISSING and a is not None]
    moments = [parse_moment(a) for a in given]
    return bool(moments) and all(m is not None and _on_time(_start_of(m), limit) for m in moments)


def _on_time(moment: datetime, limit: datetime) -> bool:
    """At or before the limit on the wall clock (tasks and sandbox speak one local time) and, zones
    considered, in absolute time too (a time without a zone read as UTC)."""
    wall = moment.replace(tzinfo=None) <= limit.replace(tzinfo=None)
    return wall and _aware(moment) <= _aware(limit)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _start_of(moment: datetime) -> datetime:
    """A date-only argument (parsed as the end of its day) counts from the start of that day."""
    if moment.timetz().replace(tzinfo=None) == time.max:
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment


@checker("budget")
def _budget(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """The numeric `field` of every successful result of `tool` (or its argument of that name) is at most
    `value`. When `tool` never succeeded nothing was spent: True for a judge, not shown when proving; when
    no such number was found: None for a judge (it cannot tell), not shown when proving."""
    calls = _calls_of(ctx, str(v["tool"]), succeeded=True)
    if not calls:
        return not ctx.proving
    amounts = [a for c in calls if (a := _amount(c, str(v["field"]))) is not None]
    if not amounts:
        return False if ctx.proving else None
    return all(a <= float(v["value"]) for a in amounts)


def _amount(call: CallRecord, field: str) -> float | None:
    obs = call.step.observation
    result = obs.structured_content if obs is not None else None
    for found in (lookup(result, field) if result is not None else _MISSING, argument(call, field)):
        if isinstance(found, int | float) and not isinstance(found, bool):
            return float(found)
        if isinstance(found, str):
            try:
                return float(found.replace(",", "").strip().lstrip("$€£"))
            except ValueError:
                continue
    return None
