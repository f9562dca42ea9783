"""Constraint-level faults: the user changes the requirements mid-episode.

The change (a new preference, a moved deadline, a tighter limit, an extra deliverable) is fixed at plan
time from the public task alone, so every agent receives the same words and the same `Constraint`; only
the turn it arrives at varies. A limit or a deadline the user states in the task's constraints
(`cworld.controller.stated`) is changed; otherwise a tighter budget caps the tool calls by the number of
candidate tools, and preferences and deliverables come from a small bank of generic ones whose
`verification` a verifiable judge can check. The planner never sees the task's machine forms nor its
metadata: `graded_change` links a delivered change to the task's constraint it restates, for the grader.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from cworld.controller.faults.base import Fault, FaultParams, PlanInput, Targeting, register
from cworld.controller.stated import candidate_tools, stated_deadlines, stated_limits
from cworld.data_model import Constraint, PublicTask

VARIANTS = ("preference", "deadline", "budget", "deliverable")

_PREFERENCES: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("Please keep your final answer short: at most 80 words.",
     {"kind": "final_answer_max_words", "value": 80}, "format"),
    ("I'd like the final answer as a bulleted list, one line per item.",
     {"kind": "final_answer_format", "value": "bullets"}, "format"),
    ("From now on, please avoid deleting or cancelling anything unless I asked for it explicitly.",
     {"kind": "no_destructive_calls"}, "safety"),
)

_DELIVERABLES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("One more thing: end your final answer with a line that starts with 'SUMMARY:' and sums up what you did.",
     {"kind": "final_answer_contains", "value": "SUMMARY:"}),
    ("Also, please list every change you made at the end of your answer under a heading 'CHANGES:'.",
     {"kind": "final_answer_contains", "value": "CHANGES:"}),
)


class NewConstraintParams(FaultParams):
    variant: Literal["any", "preference", "deadline", "budget", "deliverable"] = "any"
    tighten: float = Field(0.75, gt=0, lt=1, description="budget: the new limit as a share of the old one")
    shift_days: int = Field(-1, description="deadline: days the deadline moves (negative = earlier)")


@register("new_constraint", NewConstraintParams)
class NewConstraintFault(Fault):
    """Delivered between turns as a user message; it never touches a tool call."""

    level = "constraint"

    def eligible(self, ctx: Any) -> bool:
        return False

    @classmethod
    def plan_target(cls, plan: PlanInput, params: dict[str, Any], rng: random.Random) -> Targeting | None:
        p = NewConstraintParams.model_validate(params)
        variants = list(VARIANTS) if p.variant == "any" else [p.variant]
        rng.shuffle(variants)
        for variant in variants:
            change = _planned(plan.task, variant, p, rng, plan.key)
            if change is not None:
                return Targeting(content=change)
        return None


def _planned(task: PublicTask, variant: str, p: NewConstraintParams, rng: random.Random,
             key: str) -> dict[str, Any] | None:
    cid = f"injected-{key.rsplit(':', 1)[-1]}-{variant}"
    if variant == "budget":
        return _tighter_limit(task, p.tighten, cid)
    if variant == "deadline":
        return _moved_deadline(task, p.shift_days, cid)
    if variant == "preference":
        text, verification, ctype = rng.choice(_PREFERENCES)
        return _change(variant, text, Constraint(id=cid, type=ctype, description=text, verification=verification))
    text, verification = rng.choice(_DELIVERABLES)
    return _change(variant, text, Constraint(id=cid, type="deliverable", description=text, verification=verification))


def _change(variant: str, message: str, constraint: Constraint, **restated: Any) -> dict[str, Any]:
    """Plan-time content; `restated` (`restates`: the stated words changed; `scale` and `limit` [stated,
    new] or `shift_days`: how) lets `graded_change` apply the same change to the task's own constraint."""
    return {"variant": variant, "message": message, "constraint": constraint.model_dump(mode="json"), **restated}


def call_cap(task: PublicTask) -> int:
    """A tool-call budget for a task whose user states no limit: two calls per candidate tool (a retry or a
    check each) plus two, at least 3; 12 for a task that lists no tools. Never the gold plan's length."""
    tools = candidate_tools(task)
    return max(3, 2 * tools + 2) if tools else 12


def _tighter_limit(task: PublicTask, tighten: float, cid: str) -> dict[str, Any]:
    """Tighten the first limit the user states; otherwise cap the tool calls by the task's tools."""
    for limit in stated_limits(task):
        new = _tightened(limit.value, tighten)
        text = f"Change of plans: the limit in '{limit.text}' is now {limit.write(new)} instead of {limit.written}."
        verification = {"kind": "max_calls", "value": new} if limit.counts_calls else None
        constraint = Constraint(id=cid, type="efficiency" if limit.counts_calls else "budget", description=text,
                                verification=verification)
        return _change("budget", text, constraint, restates=limit.text, scale=tighten, limit=[limit.value, new])
    calls = call_cap(task)
    text = f"Please be economical: use at most {calls} tool calls in total for this task."
    return _change("budget", text, Constraint(id=cid, type="efficiency", description=text,
                                              verification={"kind": "max_calls", "value": calls}))


def _moved_deadline(task: PublicTask, shift_days: int, cid: str) -> dict[str, Any] | None:
    """Move the first deadline the user states; a task without one gets no deadline change."""
    deadlines = stated_deadlines(task)
    if not deadlines or shift_days == 0:
        return None
    deadline = deadlines[0]
    moved = _shift(deadline.iso, shift_days)
    if moved is not None:
        text = f"The deadline has moved: '{deadline.text}' now means by {moved} instead of {deadline.iso}."
    else:
        days = f"{abs(shift_days)} day{'s' if abs(shift_days) != 1 else ''}"
        text = (f"The deadline has moved: '{deadline.text}' is now {days} "
                f"{'earlier' if shift_days < 0 else 'later'} than that.")
    constraint = Constraint(id=cid, type="deadline", description=text)
    return _change("deadline", text, constraint, restates=deadline.text, shift_days=shift_days)


def graded_change(content: Mapping[str, Any], stated: Sequence[Constraint]) -> Constraint:
    """The constraint a delivered change adds to what the episode is judged against.

    A change to a requirement the user stated replaces the task's constraint with those words and keeps
    its type and machine form, with the same change applied to the form's `value` (the planner never saw
    the form: it belongs to the grader). Runs at delivery, on the controller's record for the grader."""
    new = Constraint.model_validate(content["constraint"])
    restates = content.get("restates")
    old = next((c for c in stated if restates and c.description == restates and c.added_at_turn is None), None)
    if old is None:
        return new
    form = _changed_form(old.verification, content)
    return new.model_copy(update={"type": old.type, "replaces": old.id, "verification": form or new.verification})


def _changed_form(form: dict[str, Any] | None, content: Mapping[str, Any]) -> dict[str, Any] | None:
    value = (form or {}).get("value")
    changed: Any = None
    if "scale" in content and isinstance(value, int | float) and not isinstance(value, bool):
        changed = _tightened(value, float(content["scale"]))
        stated, told = content.get("limit") or (None, None)
        if stated == value and isinstance(told, int | float):
            changed = type(value)(told)  # the form holds the stated number: the one told (350 -> 262, not 262.5)
    elif "shift_days" in content:
        changed = _shift(value, int(content["shift_days"]))
    return None if form is None or changed is None else {**form, "value": changed}


def _tightened(value: int | float, factor: float) -> int | float:
    """A whole limit stays whole and at least 1; an amount keeps cents."""
    scaled = value * factor
    return max(1, int(scaled)) if isinstance(value, int) else round(scaled, 2)


def _shift(value: Any, days: int) -> str | None:
    if not isinstance(value, str):
        return None
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            return (parse(value.replace("Z", "+00:00")) + timedelta(days=days)).isoformat()
        except ValueError:
            continue
    return None
