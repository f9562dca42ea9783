"""Verifiable metrics (paper §2.4 and the metric definitions after its Limitations): computed from the
trajectory alone, cheap, reproducible, free of judge noise. Every rate is a fraction in [0, 1], or
None when it has no denominator (no failures means no recovery rate, not a perfect one).

Infrastructure failures are left out of every count: they are never the agent's fault.
Definitions, with the choices the paper leaves open, are in `docs/reward.md`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from cworld.data_model import PlanStep, Step, Task, Trajectory
from cworld.judges.calls import CALL_CLASSES, CallRecord

_REF = re.compile(r"\{\{\s*([A-Za-z0-9_\-]+)\.")


def agent_calls(calls: list[CallRecord]) -> list[CallRecord]:
    return [c for c in calls if not c.infra]


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def call_statistics(calls: list[CallRecord]) -> dict[str, float | None]:
    """ComplexMCP table 2: valid / execution failures / syntactic errors, plus injected and infra."""
    counts = Counter(c.outcome for c in calls)
    return {f"calls_{name}": float(counts.get(name, 0)) for name in CALL_CLASSES}


def schema_compliance(calls: list[CallRecord]) -> float | None:
    """Share of the agent's calls that fit their tool's input schema (calls to unknown schemas left out;
    a call to a tool that does not exist is non-compliant)."""
    judged = [c for c in agent_calls(calls) if c.schema_ok is not None]
    return ratio(sum(1 for c in judged if c.schema_ok), len(judged))


def recovery_rate(calls: list[CallRecord]) -> float | None:
    """P(the call at t+1 succeeds | the call at t failed), over the agent's tool calls in order.
    A failure with no next call (the agent stopped) counts as not recovered."""
    seq = agent_calls(calls)
    failures = [i for i, c in enumerate(seq) if c.failed]
    recovered = sum(1 for i in failures if i + 1 < len(seq) and not seq[i + 1].failed)
    return ratio(recovered, len(failures))


def flexibility(trajectory: Trajectory, calls: list[CallRecord]) -> float | None:
    """P(an alternative plan | an injected error): after a controller fault made a call fail, the agent's
    next action is a search or a different call (another tool or other arguments), not the same call
    again and not the end of the episode."""
    injected = [c for c in agent_calls(calls) if c.injected and c.failed]
    adapted = sum(1 for c in injected if _adapts(trajectory.steps, c))
    return ratio(adapted, len(injected))


def _adapts(steps: list[Step], call: CallRecord) -> bool:
    following = (s for s in steps[call.step.index + 1:] if s.kind in ("tool", "search", "final"))
    nxt = next(following, None)
    if nxt is None or nxt.kind == "final":
        return False
    if nxt.kind == "search":
        return True
    assert nxt.tool_call is not None
    return (nxt.tool_call.tool, nxt.tool_call.arguments) != (call.tool, call.arguments)


@dataclass(frozen=True)
class OrderResult:
    satisfied: int
    assessable: int
    violations: list[str]

    @property
    def rate(self) -> float | None:
        return ratio(self.satisfied, self.assessable)


def outcome_path(task: Task) -> list[str] | None:
    """The shortest path to the task's outcome (its write steps and the steps they read from), recorded
    when its ground truth was verified in the world (`synth/outcome.py`); None for other tasks."""
    needed = (task.metadata.get("outcome") or {}).get("needed") if isinstance(task.metadata, dict) else None
    return list(needed) if isinstance(needed, list) and needed else None


def dependency_edges(task: Task) -> list[tuple[frozenset[str], frozenset[str], str]]:
    """(prerequisite tools, dependent tools, label): for a task with a verified outcome, the references
    between the steps of its shortest path (the order the world imposes, not the gold plan's call list);
    else from the sub-goal graph, else from the gold plan's `{{step.field}}` references."""
    path = outcome_path(task)
    if path is not None:
        return _reference_edges([p for p in task.gold_plan if p.id in set(path)])
    if task.subgoals:
        tools = _subgoal_tools(task)
        return [(tools[d], tools[g.id], f"{d}->{g.id}") for g in task.subgoals for d in g.depends_on
                if tools.get(d) and tools.get(g.id)]
    return _reference_edges(task.gold_plan)


def _reference_edges(plan: list[PlanStep]) -> list[tuple[frozenset[str], frozenset[str], str]]:
    by_id = {p.id: p for p in plan}
    edges = []
    for step in plan:
        for ref in sorted(_references(step.arguments) & by_id.keys()):
            edges.append((frozenset({by_id[ref].tool}), frozenset({step.tool}), f"{ref}->{step.id}"))
    return edges


def _subgoal_tools(task: Task) -> dict[str, frozenset[str]]:
    tools = {g.id: set(g.tools) for g in task.subgoals}
    for step in task.gold_plan:
        if step.subgoal in tools:
            tools[step.subgoal].add(step.tool)
    return {k: frozenset(v) for k, v in tools.items()}


def _references(value: object) -> set[str]:
    if isinstance(value, str):
        return set(_REF.findall(value))
    if isinstance(value, dict):
        return set().union(*(_references(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_references(v) for v in value)) if value else set()
    return set()


def order_constraints(task: Task | None, calls: list[CallRecord]) -> OrderResult:
    """Each dependency edge whose dependent step ran is satisfied when a prerequisite tool first
    succeeded before the dependent tool first succeeded; a dependent that ran without its
    prerequisite ever succeeding is a violation. Edges whose dependent never ran are not assessable;
    tools the dependent shares with its prerequisite do not count as the dependent running."""
    if task is None:
        return OrderResult(0, 0, [])
    ok = [c for c in agent_calls(calls) if not c.failed]
    first: dict[str, int] = {}
    for c in ok:
        first.setdefault(c.tool, c.position)
    satisfied, assessable, violations = 0, 0, []
    for before, after, label in dependency_edges(task):
        # A tool both steps use (a search run again to verify) cannot tell which step a call served.
        t_after = min((first[t] for t in after - before if t in first), default=None)
        if t_after is None:
            continue
        assessable += 1
        t_before = min((first[t] for t in before if t in first), default=None)
        if t_before is not None and t_before < t_after:
            satisfied += 1
        else:
            violations.append(label)
    return OrderResult(satisfied, assessable, violations)


def subgoal_share(task: Task | None, calls: list[CallRecord], missed: set[str] | None = None) -> float | None:
    """Share of the task's sub-goals reached. A sub-goal whose gold-plan steps change the world (a task with a
    verified outcome records each write's effect) is reached when that effect is in the episode's end state,
    by whatever calls: none of its paths is among the state diff's `missed`. Any other sub-goal (a read,
    or no end state to look at) counts when one of its tools (its own list, plus the gold-plan steps that
    serve it) answered a call successfully: lenient by design, it says how far an agent got."""
    if task is None or not task.subgoals:
        return None
    succeeded = {c.tool for c in agent_calls(calls) if not c.failed}
    tools = _subgoal_tools(task)
    effects = subgoal_effects(task) if missed is not None else {}

    def reached(goal: str) -> bool:
        if goal in effects:
            return not (effects[goal] & (missed or set()))
        return bool(tools.get(goal, frozenset()) & succeeded)

    return ratio(sum(1 for g in task.subgoals if reached(g.id)), len(task.subgoals))


def subgoal_effects(task: Task) -> dict[str, set[str]]:
    """Sub-goal -> the ground truth's paths its write steps make (`metadata.outcome.effects`), for the
    sub-goals that have any."""
    outcome = task.metadata.get("outcome") if isinstance(task.metadata, dict) else None
    effects = outcome.get("effects") if isinstance(outcome, dict) else None
    if not isinstance(effects, dict):
        return {}
    out: dict[str, set[str]] = {}
    for step in task.gold_plan:
        paths = effects.get(step.id)
        if step.subgoal and isinstance(paths, list) and paths:
            out.setdefault(step.subgoal, set()).update(str(p) for p in paths)
    return out


def information_diversity(task: Task | None, calls: list[CallRecord]) -> tuple[int, float | None]:
    """(distinct servers that answered successfully, share of the task's servers among them)."""
    used = {c.server for c in agent_calls(calls) if not c.failed}
    needed = set(task.servers) if task is not None else set()
    return len(used), ratio(len(used & needed), len(needed))


def efficiency(trajectory: Trajectory, calls: list[CallRecord]) -> dict[str, float | None]:
    """Raw counts (turns, calls, searches) and a 0-1 conciseness: the shortest path's length (for a task with a
    verified outcome; else the gold plan's) / calls made (capped)."""
    n_calls = len(agent_calls(calls))
    task = trajectory.task
    path = outcome_path(task) if task is not None else None
    gold = len(path) if path is not None else len(task.gold_plan) if task is not None else 0
    return {
        "turns": float(max((s.turn for s in trajectory.steps), default=0)),
        "tool_calls": float(n_calls),
        "searches": float(sum(1 for s in trajectory.steps if s.kind == "search")),
        "efficiency": min(1.0, gold / n_calls) if gold and n_calls else None,
    }
