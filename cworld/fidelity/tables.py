"""Score tables: agent -> task -> the values of its episodes, from a run or from a reference CSV.

A fidelity comparison ranks agents by one metric in two sources. The metric is `overall` (the 0-10
episode score), `success` (1/0), or any verifiable metric name in `scores.jsonl` (e.g. `R_c`,
`schema_compliance`). Episodes that ended in an infrastructure failure and episodes without a value
for the metric are left out (a missing rate is not a zero).

A reference CSV has a header with `agent` and `score` columns and, optionally, `task_id` (or `task`):
with task ids the comparison can bootstrap over tasks; without them it compares agent means only.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import Score, Trajectory
from cworld.errors import UsageError

AGENT_LEVEL = "*"
"""The task id of values that belong to no task (a reference given per agent only)."""


@dataclass
class ScoreTable:
    name: str
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    source: str = ""

    def add(self, agent: str, task: str, value: float) -> None:
        self.values.setdefault(agent, {}).setdefault(task, []).append(float(value))

    @property
    def agents(self) -> list[str]:
        return sorted(self.values)

    @property
    def agent_level(self) -> bool:
        return all(set(tasks) == {AGENT_LEVEL} for tasks in self.values.values())

    def task_mean(self, agent: str, task: str) -> float | None:
        vals = self.values.get(agent, {}).get(task)
        return sum(vals) / len(vals) if vals else None

    def complete_tasks(self, agents: Iterable[str]) -> list[str]:
        """Tasks on which every one of `agents` has at least one value."""
        chosen = list(agents)
        sets = [set(self.values.get(a, {})) for a in chosen]
        return sorted(set.intersection(*sets)) if sets else []

    def episodes(self) -> int:
        return sum(len(v) for tasks in self.values.values() for v in tasks.values())


def metric_value(score: Score, metric: str) -> float | None:
    if metric == "overall" or (metric == "overall_comparable" and metric not in score.metrics):
        return score.overall  # scores written before `overall_comparable` existed: their overall is the closest
    if metric == "success":
        return None if score.success is None else float(score.success)
    value = score.metrics.get(metric)
    return None if value is None else float(value)


def table_from_scores(
    name: str, pairs: Iterable[tuple[Trajectory, Score]], metric: str, source: str = ""
) -> ScoreTable:
    table = ScoreTable(name, source=source)
    for trajectory, score in pairs:
        if trajectory.status == "infra_error":
            continue
        value = metric_value(score, metric)
        if value is not None:
            table.add(trajectory.agent, trajectory.task_id, value)
    return table


def table_from_csv(path: Path) -> ScoreTable:
    """Reference scores (e.g. human ratings) from a CSV with `agent`, `score` and optional `task_id`."""
    if not path.is_file():
        raise UsageError(f"{path}: no such reference file; give a CSV with agent and score columns")
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        columns = {c.strip().lower(): c for c in reader.fieldnames or []}
        missing = [c for c in ("agent", "score") if c not in columns]
        if missing:
            raise UsageError(
                f"{path}: missing column(s) {', '.join(missing)}; the header needs agent,score "
                "and may have task_id"
            )
        task_col = columns.get("task_id") or columns.get("task")
        table = ScoreTable("reference", source=str(path))
        for lineno, row in enumerate(reader, 2):
            _add_row(table, row, columns, task_col, path, lineno)
    if not table.values:
        raise UsageError(f"{path}: no scores in the file; add rows agent,score")
    return table


def _add_row(
    table: ScoreTable,
    row: dict[str, str],
    columns: dict[str, str],
    task_col: str | None,
    path: Path,
    lineno: int,
) -> None:
    agent = (row.get(columns["agent"]) or "").strip()
    raw = (row.get(columns["score"]) or "").strip()
    if not agent and not raw:
        return
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{path}:{lineno}: score {raw!r} is not a number") from None
    task = (row.get(task_col) or "").strip() if task_col else ""
    table.add(agent, task or AGENT_LEVEL, value)
