"""Constraint checkers that read the arguments and results of one tool's calls: the option a trade-off
selects, an excluded option, a deadline, a budget. Forms and fields: `task_synth/constraints.yaml`.

`argument` and `field` may be dotted paths (`payment.card_id`, `booking.total`); list items are
searched too, so `to` matches a recipient inside a `to: [...]` list.
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any

from cworld.judges.calls import CallRecord
from cworld.judges.constraints import CheckContext, Verdict, checker, tool_matches

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


def _holds(value: Any, wanted: Any) -> bool:
    """`value` equals `wanted`, or (a list argument) contains it."""
    if isinstance(value, list) and not isinstance(wanted, list):
        return any(_same(v, wanted) for v in value)
    return _same(value, wanted)


def _calls_of(ctx: CheckContext, tool: str, *, succeeded: bool) -> list[CallRecord]:
    pool = ctx.succeeded if succeeded else ctx.calls_in_scope
    return [c for c in pool if tool_matches(c.tool, tool)]


@checker("argument_equals")
def _argument_equals(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """A successful call of `tool` has `argument` equal to `value` (case and spacing of text ignored)."""
    calls = _calls_of(ctx, str(v["tool"]), succeeded=True)
    return any(_holds(lookup(c.arguments, str(v["argument"])), v["value"]) for c in calls)


@checker("argument_excludes")
def _argument_excludes(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """No call of `tool` (attempts count) has `argument` equal to, or containing, any item of `value`."""
    banned = v["value"] if isinstance(v["value"], list) else [v["value"]]
    for call in _calls_of(ctx, str(v["tool"]), succeeded=False):
        got = lookup(call.arguments, str(v["argument"]))
        if got is not _MISSING and any(_holds(got, b) for b in banned):
            return False
    return True


def parse_moment(value: Any) -> datetime | None:
    """An ISO date or date-time; a bare date means the end of that day (a deadline 'by 2026-08-27'
    includes the 27th). Time zones are dropped: tasks and sandbox speak one local time."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time.max)
        return datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        return None


@checker("deadline")
def _deadline(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """A successful call of `tool` has `argument` at or before `value`; None when `value` is no date."""
    limit = parse_moment(v["value"])
    if limit is None:
        return None
    calls = _calls_of(ctx, str(v["tool"]), succeeded=True)
    moments = [parse_moment(lookup(c.arguments, str(v["argument"]))) for c in calls]
    return any(m is not None and _start_of(m) <= limit for m in moments)


def _start_of(moment: datetime) -> datetime:
    """A date-only argument (parsed as the end of its day) counts from the start of that day."""
    return moment.replace(hour=0, minute=0, second=0, microsecond=0) if moment.time() == time.max else moment


@checker("budget")
def _budget(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """The numeric `field` of every successful result of `tool` (or its argument of that name) is at most
    `value`. None when no such number was found; True when `tool` never succeeded (nothing was spent)."""
    calls = _calls_of(ctx, str(v["tool"]), succeeded=True)
    if not calls:
        return True
    amounts = [a for c in calls if (a := _amount(c, str(v["field"]))) is not None]
    if not amounts:
        return None
    return all(a <= float(v["value"]) for a in amounts)


def _amount(call: CallRecord, field: str) -> float | None:
    obs = call.step.observation
    result = obs.structured_content if obs is not None else None
    for source in (result, call.arguments):
        found = lookup(source, field) if source is not None else _MISSING
        if isinstance(found, int | float) and not isinstance(found, bool):
            return float(found)
        if isinstance(found, str):
            try:
                return float(found.replace(",", "").strip().lstrip("$€£"))
            except ValueError:
                continue
    return None

