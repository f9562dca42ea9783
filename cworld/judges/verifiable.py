"""All verifiable rewards of one trajectory, in one pass: metrics, constraint verdicts, personas, state diff."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cworld.data_model import Constraint, ToolSpec, Trajectory
from cworld.judges import metrics as m
from cworld.judges.calls import CallRecord, classify_calls
from cworld.judges.checkers import CheckContext, unchecked_kinds, verify
from cworld.judges.personas import personas
from cworld.judges.state import state_diff, state_metrics
from cworld.sandbox.statediff import StateDiffResult


@dataclass
class VerifiableResult:
    metrics: dict[str, float | None]
    constraints: dict[str, bool | None]
    personas: dict[str, float | None]
    state: StateDiffResult | None
    calls: list[CallRecord]
    details: dict[str, Any] = field(default_factory=dict)


def binding_constraints(trajectory: Trajectory) -> list[Constraint]:
    """The constraints as they stood at the end (mid-episode additions in, replaced ones out)."""
    if trajectory.constraints_final:
        return list(trajectory.constraints_final)
    return list(trajectory.task.constraints) if trajectory.task is not None else []


def check_constraints(trajectory: Trajectory, calls: list[CallRecord],
                      tools: Mapping[str, ToolSpec]) -> dict[str, bool | None]:
    return {c.id: verify(c, CheckContext(trajectory, calls, tools, c)) for c in binding_constraints(trajectory)}


def verifiable_scores(trajectory: Trajectory, tools: Mapping[str, ToolSpec],
                      state: StateDiffResult | None = None) -> VerifiableResult:
    """`state`: the trajectory's state diff when the caller has it already (the gym reward's)."""
    calls = classify_calls(trajectory, tools)
    constraints = check_constraints(trajectory, calls, tools)
    order = m.order_constraints(trajectory.task, calls)
    servers, diversity = m.information_diversity(trajectory.task, calls)
    efficiency = m.efficiency(trajectory, calls)
    state = state if state is not None else state_diff(trajectory)
    checked = [v for v in constraints.values() if v is not None]
    metrics: dict[str, float | None] = {
        "schema_compliance": m.schema_compliance(calls),
        "order": order.rate,
        "subgoals": m.subgoal_share(trajectory.task, calls, _missed_paths(state)),
        "diversity": diversity,
        "servers_used": float(servers),
        "constraints": m.ratio(sum(checked), len(checked)),
        "recovery": m.recovery_rate(calls),
        "flexibility": m.flexibility(trajectory, calls),
        **efficiency,
        **m.call_statistics(calls),
        **state_metrics(state),
    }
    traits = personas(trajectory, calls, tools, order=order, efficiency=efficiency["efficiency"], state=state)
    return VerifiableResult(metrics, constraints, traits, state, calls, _details(trajectory, calls, order, state))


def _missed_paths(state: StateDiffResult | None) -> set[str] | None:
    """The required changes the episode did not make; None when there is no end state to look at."""
    return None if state is None else {c.path for c in state.missed}


def _details(trajectory: Trajectory, calls: list[CallRecord], order: m.OrderResult,
             state: StateDiffResult | None) -> dict[str, Any]:
    details: dict[str, Any] = {
        "calls": [{"step": c.step.index, "outcome": c.outcome, "injected": c.injected,
                   "schema_errors": c.schema_errors[:5]} for c in calls],
        "order_violations": order.violations,
    }
    unknown = unchecked_kinds(binding_constraints(trajectory))
    if unknown:
        details["unchecked_verification_kinds"] = unknown
    if state is not None:
        details["state_diff"] = state.summary()
        details["state_missed"] = [c.path for c in state.missed[:20]]
        details["state_unwanted"] = [c.path for c in state.unwanted[:20]]
    return details
