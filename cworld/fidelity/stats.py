"""Ranking fidelity (paper §5.4): do two score sources rank the same agents the same way?

    comparison = compare_rankings(live_table, synth_table)      # ScoreTables of one metric
    comparison.spearman.value, comparison.spearman.low, comparison.spearman.high

Each agent's score is its mean over the tasks every common agent has in both sources (mean over seeds
first, so a task counts once). Spearman's rho and Kendall's tau (tau-b: ties allowed) compare the two
orders. The intervals come from a percentile bootstrap over tasks: tasks are drawn with replacement,
the same draw for both sources when they share tasks, and both correlations are recomputed. A draw
in which one side ranks every agent equal has no correlation and is left out (the count is noted).

Per-task agreement: on each task, the share of agent pairs that the two sources order the same way
(ties count as the same only when both sides tie).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from cworld.errors import UsageError
from cworld.fidelity.tables import ScoreTable
from cworld.seeding import derive_seed

BOOTSTRAP = 2000
LEVEL = 0.95
MIN_AGENTS = 3


@dataclass(frozen=True)
class Interval:
    value: float | None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "p_value": self.p_value}


@dataclass(frozen=True)
class AgentRow:
    agent: str
    score_a: float
    score_b: float
    rank_a: float
    rank_b: float


@dataclass(frozen=True)
class TaskAgreement:
    task_id: str
    agreement: float
    """share of agent pairs ordered alike"""
    mean_a: float
    mean_b: float


@dataclass
class RankComparison:
    name_a: str
    name_b: str
    agents: list[AgentRow]
    spearman: Interval
    kendall: Interval
    tasks: list[str]
    per_task: list[TaskAgreement]
    bootstrap: int
    level: float
    notes: list[str] = field(default_factory=list)

    @property
    def mean_task_agreement(self) -> float | None:
        return float(np.mean([t.agreement for t in self.per_task])) if self.per_task else None


def common_agents(a: ScoreTable, b: ScoreTable) -> list[str]:
    agents = sorted(set(a.agents) & set(b.agents))
    if not agents:
        raise UsageError(
            f"no agent appears in both {a.name} ({', '.join(a.agents) or 'none'}) and {b.name} "
            f"({', '.join(b.agents) or 'none'}); run the same agents in both"
        )
    if len(agents) < MIN_AGENTS:
        raise UsageError(
            f"only {len(agents)} agent(s) in common ({', '.join(agents)}); ranking fidelity needs "
            f"at least {MIN_AGENTS} agents scored in both {a.name} and {b.name}"
        )
    return agents


def compare_rankings(
    a: ScoreTable, b: ScoreTable, *, bootstrap: int = BOOTSTRAP, level: float = LEVEL, seed: int = 0
) -> RankComparison:
    agents = common_agents(a, b)
    grid_a, grid_b, tasks, joint = _grids(a, b, agents)
    means_a, means_b = grid_a.mean(axis=1), grid_b.mean(axis=1)
    rng = np.random.default_rng(derive_seed(seed, f"fidelity:{a.name}:{b.name}"))
    boot_a, boot_b = _resample(grid_a, grid_b, joint, bootstrap, rng)
    notes: list[str] = []
    rho = _interval(_spearman(means_a, means_b), _spearman_many(boot_a, boot_b), level, notes, "rho")
    tau = _interval(_kendall(means_a, means_b), _kendall_many(boot_a, boot_b), level, notes, "tau")
    rows = _rows(agents, means_a, means_b)
    per_task = _per_task(grid_a, grid_b, tasks) if joint else []
    if not joint:
        notes.append(
            f"{a.name} and {b.name} share no per-task scores: tasks are resampled on each side apart"
        )
    return RankComparison(a.name, b.name, rows, rho, tau, tasks, per_task, bootstrap, level, notes)


def _grids(a: ScoreTable, b: ScoreTable, agents: list[str]) -> tuple[np.ndarray, np.ndarray, list[str], bool]:
    """Agent x task matrices of task means; joint when both sources share complete tasks."""
    tasks_a, tasks_b = a.complete_tasks(agents), b.complete_tasks(agents)
    shared = sorted(set(tasks_a) & set(tasks_b))
    if shared:
        tasks_a = tasks_b = shared
    for table, tasks in ((a, tasks_a), (b, tasks_b)):
        if not tasks:
            raise UsageError(
                f"no task was scored for every common agent in {table.name}; run each agent on the same tasks"
            )
    grid_a = np.array([[a.task_mean(ag, t) for t in tasks_a] for ag in agents], dtype=float)
    grid_b = np.array([[b.task_mean(ag, t) for t in tasks_b] for ag in agents], dtype=float)
    return grid_a, grid_b, shared or tasks_a, bool(shared)


def _resample(
    grid_a: np.ndarray, grid_b: np.ndarray, joint: bool, samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap agent means: arrays of shape (samples, agents)."""
    picks_a = rng.integers(0, grid_a.shape[1], size=(samples, grid_a.shape[1]))
    picks_b = picks_a if joint else rng.integers(0, grid_b.shape[1], size=(samples, grid_b.shape[1]))
    return grid_a[:, picks_a].mean(axis=2).T, grid_b[:, picks_b].mean(axis=2).T


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    from scipy.stats import spearmanr

    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, None
    result = spearmanr(x, y)
    return _clean(result.statistic), _clean(result.pvalue)


def _kendall(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    from scipy.stats import kendalltau

    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, None
    result = kendalltau(x, y)
    return _clean(result.statistic), _clean(result.pvalue)


def _spearman_many(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair at once: Pearson's r of the (tie-averaged) ranks."""
    from scipy.stats import rankdata

    rx, ry = rankdata(xs, axis=1), rankdata(ys, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denom = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (rx * ry).sum(axis=1) / denom, np.nan)


def _kendall_many(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    taus = (_kendall(x, y)[0] for x, y in zip(xs, ys, strict=True))
    return np.array([np.nan if tau is None else tau for tau in taus], dtype=float)


def _interval(
    point: tuple[float | None, float | None], samples: np.ndarray, level: float, notes: list[str], label: str
) -> Interval:
    value, p_value = point
    finite = samples[np.isfinite(samples)]
    if len(finite) < len(samples):
        notes.append(
            f"{len(samples) - len(finite)} of {len(samples)} bootstrap draws had a constant side "
            f"and no {label}"
        )
    if value is None or len(finite) < 2:
        return Interval(value, None, None, p_value)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return Interval(value, float(low), float(high), p_value)


def _rows(agents: list[str], means_a: np.ndarray, means_b: np.ndarray) -> list[AgentRow]:
    from scipy.stats import rankdata

    ranks_a, ranks_b = rankdata(-means_a), rankdata(-means_b)
    rows = [
        AgentRow(ag, float(sa), float(sb), float(ra), float(rb))
        for ag, sa, sb, ra, rb in zip(agents, means_a, means_b, ranks_a, ranks_b, strict=True)
    ]
    return sorted(rows, key=lambda r: (r.rank_a, r.agent))


def _per_task(grid_a: np.ndarray, grid_b: np.ndarray, tasks: list[str]) -> list[TaskAgreement]:
    out = []
    for t, task in enumerate(tasks):
        col_a, col_b = grid_a[:, t], grid_b[:, t]
        pairs = list(combinations(range(len(col_a)), 2))
        alike = sum(1 for i, j in pairs if np.sign(col_a[i] - col_a[j]) == np.sign(col_b[i] - col_b[j]))
        out.append(TaskAgreement(task, alike / len(pairs), float(col_a.mean()), float(col_b.mean())))
    return sorted(out, key=lambda t: (t.agreement, t.task_id))


def _clean(value: object) -> float | None:
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number
