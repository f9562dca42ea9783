"""The checker registry: `@checker("kind")` adds a function to `CHECKERS` (a kind is registered once),
and `verify` asks it for a constraint's verdict."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cworld.data_model import Constraint
from cworld.judges.checkers.context import CheckContext, Verdict

Checker = Callable[[dict[str, Any], CheckContext], Verdict]
CHECKERS: dict[str, Checker] = {}


def checker(*kinds: str) -> Callable[[Checker], Checker]:
    """Register a checker under one or more kinds (aliases); a kind can be registered once."""

    def register(fn: Checker) -> Checker:
        for kind in kinds:
            if kind in CHECKERS:
                raise TypeError(f"constraint checker {kind!r} is registered twice")
            CHECKERS[kind] = fn
        return fn

    return register


def verify(constraint: Constraint, ctx: CheckContext) -> Verdict:
    """True/False from the constraint's checker; None when it has no verification or no checker for it."""
    form = constraint.verification or {}
    if not has_checker(form):
        return None
    try:
        return run_checker(form, ctx)
    except (TypeError, ValueError, KeyError):
        return None  # a malformed verification form: unknown, not failed (reported as unchecked)


def has_checker(form: Mapping[str, Any]) -> bool:
    kind = form.get("kind")
    return bool(kind) and str(kind) in CHECKERS


def run_checker(form: dict[str, Any], ctx: CheckContext) -> Verdict:
    """The checker's verdict; a malformed form raises TypeError/ValueError/KeyError, so that each caller
    decides what it means (a judge: unknown; synthesis: the constraint is not shown)."""
    return CHECKERS[str(form["kind"])](form, ctx)


def unchecked_kinds(constraints: list[Constraint]) -> list[str]:
    """Verification kinds that no checker knows (the report lists them so they get one)."""
    kinds = {str((c.verification or {}).get("kind")) for c in constraints if c.verification}
    return sorted(k for k in kinds if k not in CHECKERS)
