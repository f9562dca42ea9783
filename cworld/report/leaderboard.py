"""The leaderboard: one row per (agent, mode, policy), every mean with a bootstrap 95% interval
(resampling tasks, since repeated runs of a task are not independent), pass@k / pass^k over repeated
runs and the share of task verdicts that flip between them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from statistics import fmean
from typing import Literal

from cworld.judges.personas import PERSONAS
from cworld.judges.runs import Episode, RunData
from cworld.report.stats import Estimate, bootstrap_mean, flip_share, mean_over_tasks

Kind = Literal["score", "rate", "count"]


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: Kind
    higher_is_better: bool = True


COLUMNS: tuple[Column, ...] = (
    Column("overall", "Overall", "score"),
    Column("success", "Success", "rate"),
    Column("subgoals", "Sub-goals", "rate"),
    Column("R_c", "R_c", "rate"),
    Column("R_b", "R_b", "rate", higher_is_better=False),
    Column("schema_compliance", "Schema", "rate"),
    Column("order", "Order", "rate"),
    Column("diversity", "Diversity", "rate"),
    Column("constraints", "Constraints", "rate"),
    Column("recovery", "Recovery", "rate"),
    Column("flexibility", "Flexibility", "rate"),
    Column("efficiency", "Efficiency", "rate"),
    Column("tool_calls", "# Calls", "count", higher_is_better=False),
    Column("turns", "# Turns", "count", higher_is_better=False),
    Column("calls_valid", "Valid", "count"),
    Column("calls_execution_failure", "Exec. fail", "count", higher_is_better=False),
    Column("calls_syntactic_error", "Syntax err", "count", higher_is_better=False),
)
JUDGE_PREFIX = "judge:"


@dataclass
class Row:
    agent: str
    mode: str
    policy: str
    episodes: int = 0
    infra: int = 0
    tasks: int = 0
    estimates: dict[str, Estimate] = field(default_factory=dict)
    k: int = 0
    pass_at_1: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    flips: float | None = None
    personas: dict[str, float | None] = field(default_factory=dict)
    bases: set[str] = field(default_factory=set)
    privileged: bool = False
    """The agent read the answer key (gold plan, hints): shown beside its name wherever it is ranked."""

    @property
    def key_label(self) -> str:
        """The row's identity (seeds its bootstrap): the same whatever the display adds."""
        return f"{self.agent} · {self.mode} · {self.policy}"

    @property
    def display_agent(self) -> str:
        return f"{self.agent} (privileged)" if self.privileged else self.agent

    @property
    def label(self) -> str:
        return f"{self.display_agent} · {self.mode} · {self.policy}"

    @property
    def basis(self) -> str:
        real = self.bases - {""}
        return real.pop() if len(real) == 1 else ("mixed" if real else "")


def value_of(episode: Episode, key: str) -> float | None:
    score = episode.score
    if key == "overall":
        return score.overall
    if key == "success":
        return None if score.success is None else float(score.success)
    if key.startswith(JUDGE_PREFIX):
        dim = score.dimensions.get(key[len(JUDGE_PREFIX):])
        return None if dim is None else dim.score
    return score.metrics.get(key)


def judge_columns(episodes: list[Episode]) -> list[Column]:
    dims = sorted({d for e in episodes for d in e.score.dimensions})
    return [Column(f"{JUDGE_PREFIX}{d}", d.replace("_", " ").title(), "score") for d in dims]


def build_rows(runs: list[RunData]) -> tuple[list[Row], list[Column]]:
    episodes = [e for run in runs for e in run.episodes]
    columns = [*COLUMNS, *judge_columns(episodes)]
    groups: dict[tuple[str, str, str], list[Episode]] = defaultdict(list)
    for episode in episodes:
        groups[episode.key].append(episode)
    rows = [_row(key, group, columns) for key, group in groups.items()]
    rows.sort(key=lambda r: (-(r.estimates["overall"].mean or -1.0), r.label))
    return rows, columns


def _row(key: tuple[str, str, str], group: list[Episode], columns: list[Column]) -> Row:
    row = Row(*key, episodes=len(group), infra=sum(1 for e in group if not e.counted),
              privileged=any(e.trajectory.privileged for e in group))
    counted = [e for e in group if e.counted]
    row.tasks = len({e.trajectory.task_id for e in counted})
    for col in columns:
        pairs = [(v, e.trajectory.task_id) for e in counted if (v := value_of(e, col.key)) is not None]
        row.estimates[col.key] = bootstrap_mean([p[0] for p in pairs], [p[1] for p in pairs],
                                                purpose=f"{row.key_label}:{col.key}")
    _reliability(row, counted)
    row.personas = {p: _mean([e.score.personas.get(p) for e in counted]) for p in PERSONAS}
    row.bases = {e.score.overall_basis for e in counted}
    return row


def _reliability(row: Row, counted: list[Episode]) -> None:
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for e in counted:
        if e.score.success is not None:
            outcomes[e.trajectory.task_id].append(e.score.success)
    if not outcomes:
        return
    row.k = min(len(v) for v in outcomes.values())
    row.pass_at_1 = mean_over_tasks(outcomes, 1, "pass@k")
    row.pass_at_k = mean_over_tasks(outcomes, row.k, "pass@k")
    row.pass_hat_k = mean_over_tasks(outcomes, row.k, "pass^k")
    row.flips = flip_share(outcomes)


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None
