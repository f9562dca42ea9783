"""State-diff scoring (ComplexMCP §3.3) for episodes whose task carries a ground-truth end state.

It applies to every episode on the sandbox: the initial state is rebuilt from the task's seed, the
expected state is the task's ground truth (the gold plan's end state), the actual state is the
trajectory's end state. A synthesized episode's end state is the World Engine's change set: the actual
state is the initial state with it applied (`cworld/sandbox/statediff/overlay.py`), so synthesized and
live episodes are scored alike. (The grader reads the initial state; the engine never does.)
"""

from __future__ import annotations

from typing import Any

from cworld.data_model import Trajectory
from cworld.sandbox.statediff import (
    StateDiffResult,
    actual_state,
    diff_states,
    sandbox_diff_config,
    sandbox_initial_state,
)


def state_diff(trajectory: Trajectory) -> StateDiffResult | None:
    task = trajectory.task
    if task is None or task.ground_truth is None or trajectory.end_state is None:
        return None
    initial = sandbox_initial_state(task.initial_state_seed)
    actual = actual_state(initial, trajectory.end_state)
    return diff_states(initial, _public(task.ground_truth), actual, config=sandbox_diff_config())


def state_metrics(result: StateDiffResult | None) -> dict[str, float | None]:
    if result is None:
        return {}
    return {"R_c": result.R_c, "R_b": result.R_b, "state_success": float(result.success)}


def _public(state: dict[str, Any]) -> dict[str, Any]:
    """Keys starting with `_` are bookkeeping of the backend (e.g. `_clock`), not world state."""
    return {k: v for k, v in state.items() if not k.startswith("_")}
