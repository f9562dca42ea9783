"""Constraint-level faults: the user changes the requirements mid-episode.

The change (a new preference, a moved deadline, a tighter budget, an extra deliverable) is fixed at
plan time, so every agent receives the same words and the same `Constraint`; only the turn it arrives
at varies. A task may carry its own changes in `task.metadata["constraint_updates"]` (a list of
`{variant, message, constraint}`), written by task synthesis; those are used first. Otherwise the
change is derived from the task's own constraints (deadline, budget), or taken from a small bank of
generic ones whose `verification` a verifiable judge can check.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from cworld.controller.faults.base import Fault, FaultParams, PlanInput, Targeting, register
from cworld.data_model import Constraint, Task

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
        task = plan.task
        variants = list(VARIANTS) if p.variant == "any" else [p.variant]
        rng.shuffle(variants)
        for variant in variants:
            change = _from_task(task, variant, rng) or _derived(task, variant, p, rng, plan.key)
            if change is not None:
                return Targeting(content=change)
        return None


def _from_task(task: Task, variant: str, rng: random.Random) -> dict[str, Any] | None:
    """A change written for this task by synthesis, if it has one of this variant."""
    updates = [u for u in task.metadata.get("constraint_updates", []) or []
               if isinstance(u, dict) and u.get("variant") == variant and u.get("message") and u.get("constraint")]
    if not updates:
        return None
    chosen = rng.choice(updates)
    constraint = Constraint.model_validate(chosen["constraint"])
    return {"variant": variant, "message": chosen["message"], "constraint": constraint.model_dump(mode="json")}


def _derived(task: Task, variant: str, p: NewConstraintParams, rng: random.Random, key: str) -> dict[str, Any] | None:
    cid = f"injected-{key.rsplit(':', 1)[-1]}-{variant}"
    if variant == "budget":
        return _tighter_budget(task, p.tighten, cid)
    if variant == "deadline":
        return _moved_deadline(task, p.shift_days, cid)
    if variant == "preference":
        text, verification, ctype = rng.choice(_PREFERENCES)
        return _change(variant, text, Constraint(id=cid, type=ctype, description=text, verification=verification))
    text, verification = rng.choice(_DELIVERABLES)
    return _change(variant, text, Constraint(id=cid, type="deliverable", description=text, verification=verification))


def _change(variant: str, message: str, constraint: Constraint) -> dict[str, Any]:
    return {"variant": variant, "message": message, "constraint": constraint.model_dump(mode="json")}


def _numeric_limit(c: Constraint) -> float | None:
    v = (c.verification or {}).get("value")
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _tighter_budget(task: Task, tighten: float, cid: str) -> dict[str, Any]:
    """Tighten a numeric limit the task already has; otherwise cap the tool calls near the gold plan's length."""
    for c in task.constraints:
        limit = _numeric_limit(c)
        if limit is not None and c.type in ("budget", "cost", "efficiency", "max_calls", "limit"):
            new = type((c.verification or {})["value"])(limit * tighten) if limit * tighten >= 1 else 1
            text = f"Change of plans: the limit for '{c.description}' is now {new} instead of {limit:g}."
            verification = {**(c.verification or {}), "value": new}
            return _change("budget", text, Constraint(id=cid, type=c.type, description=text,
                                                      verification=verification, replaces=c.id))
    calls = max(3, 2 * len(task.gold_plan) + 2) if task.gold_plan else 12
    text = f"Please be economical: use at most {calls} tool calls in total for this task."
    return _change("budget", text, Constraint(id=cid, type="efficiency", description=text,
                                              verification={"kind": "max_calls", "value": calls}))


def _moved_deadline(task: Task, shift_days: int, cid: str) -> dict[str, Any] | None:
    """Move a dated deadline of the task; a task without one gets no deadline change."""
    for c in task.constraints:
        verification = c.verification or {}
        moved = _shift(verification.get("value"), shift_days)
        if c.type in ("deadline", "time", "temporal", "schedule") and moved is not None:
            text = f"The deadline has moved: '{c.description}' now means by {moved} instead of {verification['value']}."
            return _change("deadline", text, Constraint(id=cid, type=c.type, description=text,
                                                        verification={**verification, "value": moved}, replaces=c.id))
    return None


def _shift(value: Any, days: int) -> str | None:
    if not isinstance(value, str):
        return None
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            return (parse(value.replace("Z", "+00:00")) + timedelta(days=days)).isoformat()
        except ValueError:
            continue
    return None
