"""Verification by execution: a task over live sandbox tools must be solved by its own gold plan.

The plan runs in a fresh session of the task's world seed with no faults. It must finish without an
error; the final answer a scripted oracle would give (the resolved answer hints, shaped by the answer
constraints) together with the calls must satisfy every verifiable constraint; then the end state is
the task's ground truth. A task that uses any tool not runnable in the sandbox (schema-only catalogs,
real servers) is verified in synthesized mode instead (`verify_synthesized`): its ground truth is the
end state the plan reaches in the world of its seed (`outcome.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cworld.agents.answer import compose_final
from cworld.agents.references import resolve
from cworld.synth.constraint_eval import evaluate
from cworld.synth.draft import Draft
from cworld.synth.outcome import check_outcome, run_plan
from cworld.synth.plan_exec import ExecutionTrace, execute_plan
from cworld.synth.toolset import ToolUniverse


@dataclass
class Verification:
    verifiable: bool
    ok: bool
    reason: str = ""
    trace: ExecutionTrace | None = None
    answer: str = ""
    constraints: list[dict[str, Any]] = field(default_factory=list)
    #: why it failed, for the synthesis summary's counts: plan_failed, constraints, or an outcome code
    code: str = ""
    #: the outcome a synthesized plan reaches in the world (`outcome.py`), when it is a ground truth
    world_truth: dict[str, Any] | None = None
    #: the plan's write steps, the shortest path to the outcome (`outcome.needed_steps`) and each write's
    #: effect (the ground truth's paths it alone makes), for the graders
    outcome_steps: dict[str, Any] | None = None

    @property
    def ground_truth(self) -> dict[str, Any] | None:
        if not self.ok:
            return None
        if self.world_truth is not None:
            return self.world_truth
        return self.trace.end_state if self.trace is not None else None

    def as_dict(self) -> dict[str, Any]:
        """What provenance keeps: the outcome and per-constraint verdicts, not the whole end state."""
        calls = len(self.trace.calls) if self.trace else 0
        return {
            "verifiable": self.verifiable,
            "ok": self.ok,
            "reason": self.reason,
            "calls": calls,
            "constraints": self.constraints,
        }


def verify_draft(draft: Draft, universe: ToolUniverse, world_seed: int) -> Verification:
    outside = [t for t in draft.tools if not universe.executable(t)]
    if outside:
        return Verification(False, True, f"not executed: {outside} cannot run in the sandbox")
    if not draft.gold_plan:
        return Verification(True, False, "every tool is live but there is no gold plan to execute")
    trace = execute_plan(draft.gold_plan, world_seed)
    if not trace.ok:
        return Verification(True, False, f"gold plan failed: {trace.failure}", trace, code="plan_failed")
    return judged(draft, trace, universe, live=True, done="gold plan executed and met every verifiable constraint")


def judged(draft: Draft, trace: ExecutionTrace, universe: ToolUniverse, *, live: bool, done: str) -> Verification:
    """The verification of a plan that ran: its answer, and every constraint judged against the trace."""
    answer = gold_answer(draft, trace)
    verdicts = [_verdict(c, trace, answer, universe) for c in draft.constraints]
    broken = [v for v in verdicts if v["passed"] is False]
    if broken:
        why = "; ".join(f"{v['id']} ({v['detail']})" for v in broken)
        return Verification(live, False, f"gold plan breaks its own constraints: {why}", trace, answer, verdicts,
                            code="constraints")
    return Verification(live, True, done, trace, answer, verdicts)


def gold_answer(draft: Draft, trace: ExecutionTrace) -> str:
    """The final answer an oracle following the plan gives (see `cworld.agents.scripted`)."""
    lines = [str(resolve(h, trace.results, strict=False)) for h in draft.final_answer_hints]
    summary = "completed " + ", ".join(draft.plan_tools())
    return compose_final(lines, draft.constraints, summary)


def _verdict(constraint: Any, trace: ExecutionTrace, answer: str, universe: ToolUniverse) -> dict[str, Any]:
    passed, detail = evaluate(constraint, trace.calls, answer, universe.tools)
    return {"id": constraint.id, "type": constraint.type, "passed": passed, "detail": detail}


def verify_synthesized(
    draft: Draft, universe: ToolUniverse, world_seed: int, engine: Any, task_id: str
) -> Verification:
    """Execute the gold plan in synthesized mode, the way `cworld run --mode synthesized` serves it: the
    World Engine gets the task's public part only (never the plan) and a session of the world seed. Every
    step must answer without an error and every reference must resolve; the oracle's answer and the calls
    must meet every verifiable constraint. Then the outcome (`outcome.py`): the end state the plan reaches
    in the world is the ground truth, if the plan reproduces it, doing nothing does not reach it and no
    write step can be left out. An engine without a world (the schema engine) gives no ground truth: the
    task stays `verifiable: false`."""
    from cworld.engine import SessionLog
    from cworld.synth.draft import to_task

    public = to_task(draft, task_id=task_id, world_seed=world_seed, source="offline", provenance=[], metadata={})

    def new_session() -> Any:
        return SessionLog(seed=world_seed, context=public.public())

    trace, writes = run_plan(draft.gold_plan, universe.tools, engine, new_session())
    if trace.failure is not None:
        return Verification(False, False, f"gold plan failed in synthesized mode: {trace.failure}", trace,
                            code="plan_failed")
    result = judged(draft, trace, universe, live=False,
                    done="gold plan executed in synthesized mode and met every verifiable constraint")
    if not result.ok or not hasattr(engine, "end_state"):
        return result
    outcome = check_outcome(draft.gold_plan, universe.tools, engine, new_session, trace, writes, world_seed)
    if outcome.ground_truth is None:
        return Verification(False, False, f"outcome: {outcome.reason}", trace, result.answer, result.constraints,
                            code=outcome.code)
    result.verifiable = True
    result.world_truth = outcome.ground_truth
    result.outcome_steps = {"writes": outcome.writes, "needed": outcome.needed, "effects": outcome.effects}
    result.reason += f"; its end state ({len(writes)} write step(s), each needed) is the ground truth"
    return result
