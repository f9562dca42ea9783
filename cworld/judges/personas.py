"""Personas (paper §5.3): five behavioural traits read off the execution log, each in [0, 1].

The paper names Diligence, Prudence, Grit, Introspection and Strategic but its definitions (its
Appendix J) are not public; ours are below and in `docs/reward.md`. Each trait is the mean of the
components that apply to the episode; a trait with no applicable component is None (an episode with
no failure says nothing about grit), and agent-level traits average over the episodes that have one.

- diligence: gathers what the task needs and looks before it writes;
- prudence: avoids malformed calls, unrequested destructive calls and collateral state changes;
- grit: keeps working after a failure instead of stopping;
- introspection: after a failure changes the call (reads the error), and does not loop on calls it
  already made successfully;
- strategic: respects the task's dependency order and reaches the goal in few calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean

from cworld.data_model import ToolSpec, Trajectory
from cworld.judges.calls import CallRecord
from cworld.judges.metrics import OrderResult, agent_calls, ratio
from cworld.judges.toolkind import is_destructive, is_read_only
from cworld.sandbox.statediff import StateDiffResult

PERSONAS: tuple[str, ...] = ("diligence", "prudence", "grit", "introspection", "strategic")
def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def diligence(trajectory: Trajectory, calls: list[CallRecord], tools: Mapping[str, ToolSpec]) -> float | None:
    ok = [c for c in agent_calls(calls) if not c.failed]
    wanted = set(trajectory.task.tools) if trajectory.task is not None else set()
    coverage = ratio(len(wanted & {c.tool for c in ok}), len(wanted))
    writes = [c for c in agent_calls(calls) if not is_read_only(c, tools)]
    looked = sum(1 for w in writes if any(r.position < w.position and r.server == w.server
                                          and is_read_only(r, tools) for r in ok))
    return _mean([coverage, ratio(looked, len(writes))])


def prudence(trajectory: Trajectory, calls: list[CallRecord], tools: Mapping[str, ToolSpec],
             state: StateDiffResult | None) -> float | None:
    mine = agent_calls(calls)
    wanted = set(trajectory.task.tools) if trajectory.task is not None else set()
    malformed = ratio(sum(1 for c in mine if c.outcome == "syntactic_error"), len(mine))
    reckless = ratio(sum(1 for c in mine if is_destructive(c, tools) and c.tool not in wanted), len(mine))
    collateral = min(1.0, state.R_b) if state is not None else None
    return _mean([None if v is None else 1.0 - v for v in (malformed, reckless, collateral)])


def grit(trajectory: Trajectory, calls: list[CallRecord]) -> float | None:
    failures = [c for c in agent_calls(calls) if c.failed]
    kept_on = sum(1 for c in failures if any(s.kind in ("tool", "search") for s in trajectory.steps[c.step.index + 1:]))
    return ratio(kept_on, len(failures))


def introspection(calls: list[CallRecord]) -> float | None:
    seq = agent_calls(calls)
    failures = [i for i, c in enumerate(seq) if c.failed and i + 1 < len(seq)]
    changed = ratio(sum(1 for i in failures if not seq[i + 1].same_call(seq[i])), len(failures))
    repeats = sum(1 for i, c in enumerate(seq) if any(p.same_call(c) and not p.failed for p in seq[:i]))
    fresh = None if not seq else 1.0 - repeats / len(seq)
    return _mean([changed, fresh])


def strategic(order: OrderResult, efficiency: float | None) -> float | None:
    return _mean([order.rate, efficiency])


def personas(trajectory: Trajectory, calls: list[CallRecord], tools: Mapping[str, ToolSpec], *,
             order: OrderResult, efficiency: float | None, state: StateDiffResult | None) -> dict[str, float | None]:
    return {
        "diligence": diligence(trajectory, calls, tools),
        "prudence": prudence(trajectory, calls, tools, state),
        "grit": grit(trajectory, calls),
        "introspection": introspection(calls),
        "strategic": strategic(order, efficiency),
    }
