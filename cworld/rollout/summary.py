"""The table printed at the end of `cworld run`: one row per (agent, mode, policy).

Besides how episodes ended, the row shows how often the end state matched the task's ground truth
(the state diff of `cworld.sandbox.statediff`, for episodes of tasks that carry one; a synthesized
episode's change set is overlaid on the initial state first): a quick check, not the judge. Judging proper is `cworld judge`.
It also counts the engine's fallbacks (answers made without the engine's model, `meta.fallback`): the
environment the run asked for changed under those calls, so the count is always shown.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cworld.data_model import Trajectory
from cworld.sandbox.statediff.models import StateDiffResult


@dataclass
class SummaryRow:
    agent: str
    mode: str
    policy: str
    episodes: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    tool_calls: int = 0
    faults: int = 0
    state_checked: int = 0
    state_matched: int = 0
    fallbacks: int = 0

    def add(self, trajectory: Trajectory, matched: bool | None) -> None:
        self.episodes += 1
        self.statuses[trajectory.status] += 1
        self.tool_calls += sum(1 for s in trajectory.steps if s.kind == "tool")
        self.faults += sum(1 for i in trajectory.interventions if i.params.get("phase") == "fire")
        self.fallbacks += engine_fallbacks(trajectory)
        if matched is not None:
            self.state_checked += 1
            self.state_matched += int(matched)

    @property
    def state_rate(self) -> float | None:
        return self.state_matched / self.state_checked if self.state_checked else None


def engine_fallbacks(trajectory: Trajectory) -> int:
    """Tool answers the World Engine gave without its model (a model error or an unusable answer)."""
    return sum(1 for s in trajectory.steps if s.raw_result is not None and s.raw_result.meta.get("fallback"))


def summarize(trajectories: Iterable[Trajectory], *, check_state: bool = True) -> list[SummaryRow]:
    rows: dict[tuple[str, str, str], SummaryRow] = defaultdict(lambda: SummaryRow("", "", ""))
    for t in trajectories:
        key = (t.agent, t.mode, t.policy)
        if key not in rows:
            rows[key] = SummaryRow(*key)
        rows[key].add(t, state_matches(t) if check_state else None)
    return [rows[k] for k in sorted(rows)]


def state_matches(trajectory: Trajectory) -> bool | None:
    """Did the episode reach the task's ground-truth end state? None when that cannot be told."""
    result = state_result(trajectory)
    return None if result is None else result.success


def state_result(trajectory: Trajectory) -> StateDiffResult | None:
    """The state diff of the episode against the task's ground truth (the same one `cworld judge` scores
    with: `sandbox_state_diff`); None for tasks without one or episodes without an end state."""
    task = trajectory.task
    if task is None or task.ground_truth is None or trajectory.end_state is None:
        return None
    from cworld.sandbox.statediff import sandbox_state_diff

    return sandbox_state_diff(task.initial_state_seed, task.ground_truth, trajectory.end_state)


COLUMNS = ("agent / mode / policy", "eps", "done", "quit", "other", "infra", "calls/faults", "fallbacks", "state")
CAPTION = ("done: completed; quit: gave up; other: turn limit, timeout, inaction or agent error; calls/faults: "
           "per episode; fallbacks: engine answers made without its model; state: end states that match the "
           "task's ground truth")


def render(rows: list[SummaryRow], console: Console | None = None, title: str = "run summary") -> None:
    table = Table(title=title, caption=CAPTION)
    for name in COLUMNS:
        if name == COLUMNS[0]:
            table.add_column(name, overflow="fold", min_width=16)
        else:
            table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*_cells(row))
    (console or Console()).print(table)


def _cells(row: SummaryRow) -> list[str]:
    n = max(1, row.episodes)
    other = row.episodes - row.statuses["completed"] - row.statuses["gave_up"] - row.statuses["infra_error"]
    state = "-" if row.state_rate is None else f"{row.state_matched}/{row.state_checked}"
    return [escape(f"{row.agent} / {row.mode} / {row.policy}"), str(row.episodes), str(row.statuses["completed"]),
            str(row.statuses["gave_up"]), str(other), str(row.statuses["infra_error"]),
            f"{row.tool_calls / n:.1f}/{row.faults / n:.1f}", str(row.fallbacks), state]
