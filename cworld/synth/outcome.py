"""Ground truth in the world, and verification that can fail (docs/task-synthesis.md, "Ground truth").

A task over any server (sandbox, harvested, catalog) is verifiable when its gold plan reaches an end state
in the world of the task's seed, and that end state is its ground truth: the sandbox apps the plan changed
and, under `_world`, the records it changed on other servers. Three checks make the ground truth mean
something:

- the gold plan reaches it when run again in a fresh session (the world is deterministic per seed);
- doing nothing does not reach it (the plan changes something: a task whose target holds at the start
  passes an agent that does nothing);
- leaving out any one write step of the plan misses it (each write is part of the outcome, so the reward
  cannot be earned by a shorter path the task did not mean).

The plan runs through the engine with the task's public part only, as `cworld run --mode synthesized`
serves it. A variant without a step skips the steps whose references it leaves unresolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cworld.agents.observe import payload
from cworld.agents.references import UnresolvedReference, resolve
from cworld.data_model import PlanStep, ToolResult, ToolSpec
from cworld.sandbox.statediff import sandbox_initial_state, sandbox_state_diff
from cworld.sandbox.statediff.world import WORLD_KEY
from cworld.synth.plan_exec import CallRecord, ExecutionTrace

NO_OUTCOME = "no_outcome"
NOT_REPRODUCED = "not_reproduced"
STEP_NOT_NEEDED = "write_not_needed"
_REF = re.compile(r"\{\{\s*([A-Za-z0-9_\-]+)\.")


@dataclass
class OutcomeCheck:
    """The ground truth and why it was refused (`code` is empty when accepted)."""

    ground_truth: dict[str, Any] | None
    code: str = ""
    reason: str = ""
    writes: list[str] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    #: write step -> the ground truth's changed paths that go missing without it: what the step does to the
    #: world, so a grader can tell a sub-goal reached by its effect, whatever calls made it
    effects: dict[str, list[str]] = field(default_factory=dict)


def run_plan(plan: list[PlanStep], tools: dict[str, ToolSpec], engine: Any, session: Any, *,
             skip: frozenset[str] = frozenset(), stop_on_error: bool = True) -> tuple[ExecutionTrace, list[str]]:
    """Run `plan` through `engine` in `session`: the trace and the ids of the steps that changed the world.
    Steps in `skip`, and (when not stopping on errors) steps whose references cannot resolve, are left out."""
    trace, writes = ExecutionTrace(), []
    before = _outcome_of(engine, session)
    for step in plan:
        if step.id in skip:
            continue
        spec = tools.get(step.tool)
        try:
            arguments = resolve(step.arguments, trace.results)
        except UnresolvedReference as exc:
            if not stop_on_error:
                continue
            trace.calls.append(CallRecord(step.id, step.tool, step.arguments, False, error=f"unresolved {exc}"))
            trace.failure = f"step {step.id} ({step.tool}) failed: unresolved {exc}"
            break
        if spec is None:
            trace.failure = f"step {step.id}: unknown tool {step.tool}"
            break
        answer = engine.respond_sync(spec, arguments, session)
        session.record(step.tool, arguments, answer)
        value = answer_value(answer)
        trace.calls.append(CallRecord(step.id, step.tool, arguments, not answer.is_error, value,
                                      answer.text if answer.is_error else None))
        if answer.is_error:
            if stop_on_error:
                trace.failure = f"step {step.id} ({step.tool}) failed: {answer.text[:200]}"
                break
            continue
        trace.results[step.id] = value
        after = _outcome_of(engine, session)
        if after != before:
            writes.append(step.id)
        before = after
    trace.end_state = engine.end_state(session) if hasattr(engine, "end_state") else None
    return trace, writes


def _outcome_of(engine: Any, session: Any) -> Any:
    end = engine.end_state(session) if hasattr(engine, "end_state") else None
    return None if end is None else _fingerprint(end)


def _fingerprint(end: dict[str, Any]) -> Any:
    import json

    return json.dumps(end, sort_keys=True, default=str)


def outcome_state(end_state: dict[str, Any], seed: int) -> dict[str, Any]:
    """What a plan changed: the sandbox apps whose state differs from the seed's, and the `_world` delta."""
    initial = sandbox_initial_state(seed)
    out = {k: v for k, v in end_state.items() if not k.startswith("_") and k in initial and v != initial[k]}
    if end_state.get(WORLD_KEY):
        out[WORLD_KEY] = end_state[WORLD_KEY]
    return out


def check_outcome(plan: list[PlanStep], tools: dict[str, ToolSpec], engine: Any, new_session: Any,
                  trace: ExecutionTrace, writes: list[str], seed: int) -> OutcomeCheck:
    """The ground truth of a plan that ran (`trace`, `writes`), or why it cannot be one. `new_session()`
    gives a fresh session of the task's seed and public part."""
    if trace.end_state is None:
        return OutcomeCheck(None, NO_OUTCOME, "the engine reports no end state, so no outcome can be graded")
    target = outcome_state(trace.end_state, seed)
    if not target:
        return OutcomeCheck(None, NO_OUTCOME,
                            "the gold plan changes nothing in the world: an agent that does nothing would pass")
    again, _ = run_plan(plan, tools, engine, new_session())
    if again.end_state is None:
        return OutcomeCheck(None, NOT_REPRODUCED, "the gold plan run again gives no end state")
    replay = sandbox_state_diff(seed, target, again.end_state)
    if not replay.success:
        differ = [c.path for c in [*replay.missed, *replay.unwanted][:3]]
        return OutcomeCheck(None, NOT_REPRODUCED,
                            f"the gold plan run again does not reach the same end state (differs at {differ})")
    effects: dict[str, list[str]] = {}
    for step_id in writes:
        variant, _ = run_plan(plan, tools, engine, new_session(), skip=frozenset({step_id}), stop_on_error=False)
        without = None if variant.end_state is None else sandbox_state_diff(seed, target, variant.end_state)
        if without is not None and without.success:
            return OutcomeCheck(None, STEP_NOT_NEEDED,
                                f"the end state is reached without write step {step_id}: it is not part of the outcome")
        effects[step_id] = [c.path for c in without.missed] if without is not None else []
    return OutcomeCheck(target, writes=writes, needed=needed_steps(plan, writes), effects=effects)


def needed_steps(plan: list[PlanStep], writes: list[str]) -> list[str]:
    """The shortest path the world allows for this outcome, as far as the plan shows it: the write steps
    and every step whose answer they use, transitively (in plan order). The graders' efficiency and order
    compare with it, never with the gold plan's whole call list."""
    by_id = {p.id: p for p in plan}
    todo, keep = list(writes), set(writes)
    while todo:
        step = by_id.get(todo.pop())
        for ref in referenced_steps(step.arguments) if step is not None else set():
            if ref in by_id and ref not in keep:
                keep.add(ref)
                todo.append(ref)
    return [p.id for p in plan if p.id in keep]


def referenced_steps(value: Any) -> set[str]:
    """The step ids a plan step's arguments reference (`{{step_id.path}}`)."""
    if isinstance(value, str):
        return set(_REF.findall(value))
    if isinstance(value, dict):
        return set().union(*(referenced_steps(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(referenced_steps(v) for v in value)) if value else set()
    return set()


def answer_value(answer: ToolResult) -> Any:
    """What a plan's references read in an answer, as the agents that run the plan read it
    (`agents.observe.payload`): the structured content (its one field opened when it holds a JSON text:
    `{"result": "<JSON text>"}`), else a JSON text as its JSON (a list a finder answers in text is a list of
    records to pick from); a plain text stays text."""
    value = payload(answer)
    return answer.text if answer.structured_content is None and value == {"text": answer.text} else value
