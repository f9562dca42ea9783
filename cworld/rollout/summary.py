"""The table printed at the end of `cworld run`: one row per (agent, mode, policy).

Besides how episodes ended, the row shows how often the end state matched the task's ground truth
(the state diff of `cworld.sandbox.statediff`, for episodes of tasks that carry one; a synthesized
episode's change set is overlaid on the initial state first): a quick check, not the judge. Judging proper is `cworld judge`.
It also counts the engine's fallbacks (answers made without the engine's model, `meta.fallback`): the
environment the run asked for changed under those calls, so the count is always shown.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cworld.data_model import ModelCall, Trajectory
from cworld.engine.origin import origin_counts, origin_shares
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
    reasons: dict[str, str] = field(default_factory=dict)
    """Per status other than completed: why the first episode that ended so ended (`status_reason`)."""
    agent_seconds: list[float] = field(default_factory=list)
    """The seconds of every agent model call the row's episodes made (answered from the provider)."""
    agent_cut: int = 0
    """Agent replies cut at their output budget."""
    origins: Counter[str] = field(default_factory=Counter)
    """The engine's answers by origin (`engine.origin`): how much of a synthesized run a rule decided."""

    def add(self, trajectory: Trajectory, matched: bool | None) -> None:
        self.episodes += 1
        self.statuses[trajectory.status] += 1
        if trajectory.status != "completed" and trajectory.status not in self.reasons:
            self.reasons[trajectory.status] = status_reason(trajectory)
        agent_calls = [c for c in trajectory.model_calls if c.role == "agent" and not c.cached]
        self.agent_seconds.extend(c.seconds for c in agent_calls)
        self.agent_cut += sum(1 for c in agent_calls if c.truncated)
        self.origins.update(origin_counts([trajectory]))
        self.tool_calls += sum(1 for s in trajectory.steps if s.kind == "tool")
        self.faults += sum(1 for i in trajectory.interventions if i.params.get("phase") == "fire")
        self.fallbacks += engine_fallbacks(trajectory)
        if matched is not None:
            self.state_checked += 1
            self.state_matched += int(matched)

    @property
    def state_rate(self) -> float | None:
        return self.state_matched / self.state_checked if self.state_checked else None

    @property
    def agent_latency(self) -> tuple[float, float] | None:
        """The agent's model calls' p50 and max seconds; None when it made none (a scripted agent)."""
        if not self.agent_seconds:
            return None
        return statistics.median(self.agent_seconds), max(self.agent_seconds)


def status_reason(trajectory: Trajectory) -> str:
    """One line on why an episode ended as it did, from what it recorded: the model calls for a timeout,
    the error for an agent or infrastructure failure, the limit for the rest."""
    status = trajectory.status
    if status == "timeout":
        return _timeout_reason(trajectory)
    if status == "agent_error":
        return f"the agent's model failed it: {(trajectory.agent_error or 'no reason recorded').splitlines()[0][:160]}"
    if status == "infra_error":
        last = trajectory.infra_errors[-1] if trajectory.infra_errors else None
        return f"infrastructure ({last.kind}): {last.message.splitlines()[0][:160]}" if last else "infrastructure"
    turns = max((s.turn for s in trajectory.steps), default=0)
    if status == "turn_limit":
        return f"the turn limit was reached after {turns} turns"
    if status == "inaction":
        cut = sum(1 for s in trajectory.steps if s.truncated)
        tail = f" ({cut} of them cut at the output budget)" if cut else ""
        return f"the agent replied without a tool call several turns in a row{tail}"
    if status == "gave_up":
        return f"the agent gave up after {turns} turns"
    return f"{status} after {turns} turns"


def _timeout_reason(trajectory: Trajectory) -> str:
    elapsed = max(0.0, trajectory.finished_at - trajectory.started_at)
    steps = sum(1 for s in trajectory.steps if s.kind != "user")
    head = f"{steps} step(s) in {_seconds(elapsed)}"
    calls = trajectory.model_calls
    if not calls:
        return f"{head}; no model call was recorded, so the time went to the tools or the world"
    by_role: dict[str, list[ModelCall]] = defaultdict(list)
    for call in calls:
        by_role[call.role].append(call)
    role, role_calls = max(by_role.items(), key=lambda item: sum(c.seconds for c in item[1]))
    parts = [f"{role} model: {len(role_calls)} call(s) took {_seconds(sum(c.seconds for c in role_calls))}"]
    answered = [c for c in role_calls if c.outcome == "ok"]
    if answered:
        slowest = max(answered, key=lambda c: c.seconds)
        cut = " (cut at its budget)" if slowest.truncated else ""
        parts.append(f"the slowest reply, {slowest.completion_tokens:,} tokens{cut}, took {_seconds(slowest.seconds)}")
    in_flight = [c for c in role_calls if c.outcome == "cancelled"]
    if in_flight:
        parts.append(f"the last was cut off in flight after {_seconds(in_flight[-1].seconds)}")
    return f"{head}; " + "; ".join(parts)


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


def _seconds(value: float) -> str:
    return f"{value:,.0f} s" if value >= 10 else f"{value:.1f} s"


def render(rows: list[SummaryRow], console: Console | None = None, title: str = "run summary") -> None:
    table = Table(title=title, caption=CAPTION)
    for name in COLUMNS:
        if name == COLUMNS[0]:
            table.add_column(name, overflow="fold", min_width=16)
        else:
            table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*_cells(row))
    console = console or Console()
    console.print(table)
    for line in explanations(rows):
        console.print(escape(line), soft_wrap=True)


def explanations(rows: list[SummaryRow]) -> list[str]:
    """Under the table: the agent model's latency per row, and one line per status saying why it ended so."""
    lines: list[str] = []
    for row in rows:
        latency = row.agent_latency
        if latency is None and not row.reasons and not row.origins:
            continue
        lines.append(f"{row.agent} / {row.mode} / {row.policy}:")
        if row.origins:
            lines.append(f"  engine answers by origin: {origin_shares(row.origins)}")
        if latency is not None:
            cut = f", {row.agent_cut} cut at the output budget" if row.agent_cut else ""
            lines.append(f"  agent model: {len(row.agent_seconds)} call(s), latency p50 {latency[0]:,.1f} s, "
                         f"max {latency[1]:,.1f} s{cut}")
        for status, reason in sorted(row.reasons.items()):
            lines.append(f"  {status} ({row.statuses[status]}): {reason}")
    return lines


def _cells(row: SummaryRow) -> list[str]:
    n = max(1, row.episodes)
    other = row.episodes - row.statuses["completed"] - row.statuses["gave_up"] - row.statuses["infra_error"]
    state = "-" if row.state_rate is None else f"{row.state_matched}/{row.state_checked}"
    return [escape(f"{row.agent} / {row.mode} / {row.policy}"), str(row.episodes), str(row.statuses["completed"]),
            str(row.statuses["gave_up"]), str(other), str(row.statuses["infra_error"]),
            f"{row.tool_calls / n:.1f}/{row.faults / n:.1f}", str(row.fallbacks), state]
