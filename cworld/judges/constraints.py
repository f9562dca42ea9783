"""Checkers for the machine-checkable `verification` forms of constraints.

A constraint's `verification` is `{"kind": NAME, ...params}`; `CHECKERS[NAME]` decides it from the
trajectory: True (kept), False (broken) or None (cannot tell from the logs; an LLM judge decides).
A constraint added mid-episode (`added_at_turn`) binds the agent's behaviour only from that turn on,
unless its wording is about the whole task ("in total"): checkers that read calls use `ctx.calls_in_scope`.

    @checker("max_calls")
    def _max_calls(v: dict, ctx: CheckContext) -> bool | None: ...

The kinds the task synthesizer writes are listed in `task_synth/constraints.yaml`; a test asserts
that every kind there (and every kind the controller injects) has a checker here.

These checkers are the only implementation: task synthesis runs them too, on a gold plan's calls
(`cworld.synth.constraint_eval` builds the trajectory view), with `CheckContext.proving` set.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cworld.data_model import Constraint, ToolSpec, Trajectory
from cworld.judges.calls import CallRecord

Verdict = bool | None
Checker = Callable[[dict[str, Any], "CheckContext"], Verdict]
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


@dataclass(frozen=True)
class CheckContext:
    trajectory: Trajectory
    calls: list[CallRecord]
    tools: Mapping[str, ToolSpec]
    constraint: Constraint
    proving: bool = False
    """Synthesis proving that a gold run *shows* the constraint, not a judge asking whether it was broken:
    a constraint the run never exercised (no budgeted purchase, `after` never called) is not shown."""

    @property
    def agent_calls(self) -> list[CallRecord]:
        """Calls the agent is accountable for: infrastructure failures left out."""
        return [c for c in self.calls if not c.infra]

    @property
    def calls_in_scope(self) -> list[CallRecord]:
        """Calls made once the constraint applied (all of them for a constraint given at the start)."""
        since = self.constraint.added_at_turn
        return [c for c in self.agent_calls if since is None or c.turn >= since]

    @property
    def succeeded(self) -> list[CallRecord]:
        return [c for c in self.calls_in_scope if not c.failed]

    @property
    def answer(self) -> str:
        return self.trajectory.final_answer or ""

    @property
    def task_tools(self) -> set[str]:
        task = self.trajectory.task
        return set(task.tools) if task is not None else set()


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


# --- helpers -------------------------------------------------------------------------------------
def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def tool_matches(tool: str, pattern: str) -> bool:
    """A tool id matches `server/name`, a bare `name`, or a glob of either."""
    name = tool.split("/", 1)[-1]
    return fnmatch.fnmatchcase(tool, pattern) or fnmatch.fnmatchcase(name, pattern)


# Registration: the checker modules add themselves to CHECKERS when imported.
from cworld.judges import checkers_answer, checkers_args, checkers_calls  # noqa: E402, F401
