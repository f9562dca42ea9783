"""Evaluate a constraint's `verification` form against a gold run: its calls in order and its final answer.

Synthesis uses it to prove that the gold plan satisfies every verifiable constraint of its own task
(a constraint the reference solution breaks is a broken task). The checkers are the judges' own
(`cworld.judges.checkers`), so a task is accepted by the same rules its episodes are later judged
by: this module only shows them the gold run as a trajectory, with `proving` set (a constraint the run
never exercises is not shown), and reads a malformed form as not shown either. A form no checker knows
evaluates to None ("cannot tell").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cworld.data_model import Constraint, Step, ToolCall, ToolResult, ToolSpec, Trajectory
from cworld.judges.calls import classify_calls
from cworld.judges.checkers import CheckContext, has_checker, run_checker
from cworld.synth.plan_exec import CallRecord

Verdict = tuple[bool | None, str]


def evaluate(
    constraint: Constraint, calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    form = constraint.verification or {}
    if not has_checker(form):
        return None, "no machine check for this constraint"
    trajectory = gold_trajectory(calls, answer)
    ctx = CheckContext(trajectory, classify_calls(trajectory, tools), tools, constraint, proving=True)
    try:
        verdict = run_checker(form, ctx)
    except (TypeError, ValueError, KeyError) as exc:
        return False, f"malformed verification ({type(exc).__name__}: {exc})"
    return verdict, _detail(form, verdict, calls)


def gold_trajectory(calls: Sequence[CallRecord], answer: str) -> Trajectory:
    """The gold run as the judges see an episode: one tool step per call, then the final answer."""
    steps = [_step(i, call) for i, call in enumerate(calls)]
    return Trajectory(
        episode_id="gold-plan",
        task_id="gold-plan",
        agent="gold-plan",
        mode="live",
        steps=steps,
        final_answer=answer,
    )


def _step(index: int, call: CallRecord) -> Step:
    result = _result(call)
    tool_call = ToolCall(id=f"gold_{index}", tool=call.tool, arguments=call.arguments)
    return Step(
        index=index, turn=index + 1, kind="tool", tool_call=tool_call, raw_result=result, observation=result
    )


def _result(call: CallRecord) -> ToolResult:
    """A failed step is a backend refusal (`business`): the plan runner has no finer class for it."""
    if not call.ok:
        return ToolResult.error("business", call.error or "the call failed")
    if isinstance(call.result, dict) or call.result is None:
        return ToolResult.ok(call.result)
    text = call.result if isinstance(call.result, str) else json.dumps(call.result, default=str)
    return ToolResult.ok(None, text=text)


def _detail(form: dict[str, Any], verdict: bool | None, calls: Sequence[CallRecord]) -> str:
    """What provenance keeps about a verdict: the form and the gold run's calls of the tools it names."""
    params = {k: v for k, v in form.items() if k != "kind"}
    outcome = {True: "kept", False: "not kept", None: "cannot tell from the gold run"}[verdict]
    named = {str(form[k]) for k in ("tool", "before", "after") if k in form}
    seen = [f"{c.tool}({json.dumps(c.arguments, default=str)[:80]})" for c in calls if c.tool in named]
    return f"{form.get('kind')} {params}: {outcome}" + (f"; calls: {seen}" if seen else "")
