"""Checkers for the machine-checkable `verification` forms of constraints.

A constraint's `verification` is `{"kind": NAME, ...params}`; `CHECKERS[NAME]` decides it from the
trajectory: True (kept), False (broken) or None (cannot tell from the logs; an LLM judge decides).
A constraint added mid-episode (`added_at_turn`) binds the agent's behaviour only from that turn on,
unless its wording is about the whole task ("in total"): checkers that read calls use `ctx.calls_in_scope`.

    @checker("max_calls")
    def _max_calls(v: dict, ctx: CheckContext) -> bool | None: ...

Importing this package registers every checker: `answer` (the final answer), `args` (one tool's
arguments and results), `calls` (which tools were called, how often, in what order). The kinds the
task synthesizer writes are listed in `task_synth/constraints.yaml`; a test asserts that every kind
there (and every kind the controller injects) has a checker here.

These checkers are the only implementation: task synthesis runs them too, on a gold plan's calls
(`cworld.synth.constraint_eval` builds the trajectory view), with `CheckContext.proving` set.
"""

from cworld.judges.checkers import answer, args, calls  # noqa: F401  (importing a module registers its kinds)
from cworld.judges.checkers.context import CheckContext, Verdict
from cworld.judges.checkers.registry import (
    CHECKERS,
    checker,
    has_checker,
    run_checker,
    unchecked_kinds,
    verify,
)

__all__ = [
    "CHECKERS",
    "CheckContext",
    "Verdict",
    "checker",
    "has_checker",
    "run_checker",
    "unchecked_kinds",
    "verify",
]
