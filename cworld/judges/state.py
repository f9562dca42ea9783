"""State-diff scoring (ComplexMCP §3.3) for episodes whose task carries a ground-truth end state.

It applies to every episode on the sandbox: the initial state is rebuilt from the task's seed, the
expected state is the task's ground truth (the gold plan's end state), the actual state is the
trajectory's end state. A synthesized episode's end state is the World Engine's change set: the actual
state is the initial state with it applied (`cworld/sandbox/statediff/overlay.py`), so synthesized and
live episodes are scored alike. (The grader reads the initial state; the engine never does.) The diff is
`sandbox_state_diff`, the one the run summary and the gym reward use (`cworld.rollout.summary`); a door
that has it already (a served submit) passes it to the scorer rather than diffing twice.
"""

from __future__ import annotations

from cworld.data_model import Trajectory
from cworld.sandbox.statediff import StateDiffResult, sandbox_state_diff


def state_diff(trajectory: Trajectory) -> StateDiffResult | None:
    task = trajectory.task
    if task is None or task.ground_truth is None or trajectory.end_state is None:
        return None
    return sandbox_state_diff(task.initial_state_seed, task.ground_truth, trajectory.end_state)


def state_metrics(result: StateDiffResult | None) -> dict[str, float | None]:
    if result is None:
        return {}
    return {"R_c": result.R_c, "R_b": result.R_b, "state_success": float(result.success)}
