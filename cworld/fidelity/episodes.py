"""Episode-by-episode agreement: does each synthesized episode get the reward its live twin got?

A ranking can agree while single episodes disagree, and a trainer that uses synthesized rewards relies on the
episodes. Episodes pair on (agent, task, seed, policy); a pair where either side ended in an infrastructure
failure is left out. Per pair:

- state success (the state diff's `state_success`, 1/0; pairs whose task has no ground truth have none):
  agreement as accuracy and Cohen's kappa (chance-corrected: 0 = no better than the two success rates
  alone would agree by chance, 1 = every pair alike);
- Pearson's r of `R_c` and of `overall` over the pairs;
- the share of pairs whose verdict (`Score.success`: the state diff's success, else the judges') flips.

Intervals are percentile bootstraps over tasks (a task's episodes move together, as the ranking's do), seeded
(`derive_seed(seed, "fidelity:episodes:GROUP")`). Each draw sums per-task sufficient statistics (confusion
counts, moment sums), so thousands of draws cost one matrix product. Point values come from scikit-learn's
`cohen_kappa_score` and scipy's `pearsonr`; the draws use the same formulas on summed counts. Figures are
given for all agents, the non-privileged and the privileged ones apart, and per category (the category cards
of the task's tools: a task in two categories counts in both).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cworld.data_model import Score, ToolSpec, Trajectory
from cworld.fidelity.stats import BOOTSTRAP, LEVEL, Interval
from cworld.fidelity.tables import metric_value
from cworld.seeding import derive_seed

GROUPS = ("all", "non-privileged", "privileged")


@dataclass(frozen=True)
class EpisodePair:
    agent: str
    task_id: str
    seed: int
    privileged: bool
    categories: tuple[str, ...]
    success: tuple[float | None, float | None]
    """state_success, live and synthesized."""
    verdict: tuple[float | None, float | None]
    r_c: tuple[float | None, float | None]
    overall: tuple[float | None, float | None]


@dataclass
class Agreement:
    """The episode figures of one group of pairs."""

    name: str
    episodes: int
    tasks: int
    success_pairs: int = 0
    success_live: float | None = None
    success_synth: float | None = None
    accuracy: Interval = field(default_factory=lambda: Interval(None))
    kappa: Interval = field(default_factory=lambda: Interval(None))
    r_c: Interval = field(default_factory=lambda: Interval(None))
    r_c_pairs: int = 0
    overall: Interval = field(default_factory=lambda: Interval(None))
    overall_pairs: int = 0
    flips: Interval = field(default_factory=lambda: Interval(None))
    verdict_pairs: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "episodes": self.episodes,
            "tasks": self.tasks,
            "state_success": {
                "pairs": self.success_pairs,
                "live_rate": self.success_live,
                "synthesized_rate": self.success_synth,
                "accuracy": self.accuracy.as_dict(),
                "kappa": self.kappa.as_dict(),
            },
            "r_c": {"pairs": self.r_c_pairs, "pearson": self.r_c.as_dict()},
            "overall": {"pairs": self.overall_pairs, "pearson": self.overall.as_dict()},
            "verdict_flips": {"pairs": self.verdict_pairs, "share": self.flips.as_dict()},
        }


CategoriesOf = Callable[[Trajectory], tuple[str, ...]]


def pair_episodes(
    live: Iterable[tuple[Trajectory, Score]],
    synth: Iterable[tuple[Trajectory, Score]],
    categories_of: CategoriesOf | None = None,
) -> list[EpisodePair]:
    """Pairs on (agent, task, seed, policy); infrastructure failures on either side are left out."""
    by_key = {_key(t): (t, s) for t, s in synth if t.status != "infra_error"}
    pairs = []
    for t, s in live:
        other = by_key.get(_key(t))
        if t.status == "infra_error" or other is None:
            continue
        t2, s2 = other
        pairs.append(EpisodePair(
            agent=t.agent,
            task_id=t.task_id,
            seed=t.seed,
            privileged=t.privileged or t2.privileged,
            categories=categories_of(t) if categories_of else (),
            success=(_metric(s, "state_success"), _metric(s2, "state_success")),
            verdict=(metric_value(s, "success"), metric_value(s2, "success")),
            r_c=(_metric(s, "R_c"), _metric(s2, "R_c")),
            overall=(s.overall, s2.overall),
        ))
    return sorted(pairs, key=lambda p: (p.agent, p.task_id, p.seed))


def task_categories(tools: Mapping[str, ToolSpec], category_of: Callable[[ToolSpec], str] | None) -> CategoriesOf:
    """A trajectory's categories: its task's tools' category cards (else their servers)."""

    def categories(t: Trajectory) -> tuple[str, ...]:
        ids = t.task.tools if t.task is not None else [s.tool_call.tool for s in t.steps if s.tool_call]
        found = set()
        for tool_id in ids:
            spec = tools.get(tool_id)
            if spec is not None and category_of is not None:
                found.add(category_of(spec))
            elif "/" in tool_id:
                found.add(tool_id.split("/", 1)[0])
        return tuple(sorted(found))

    return categories


def episode_agreement(
    pairs: Sequence[EpisodePair], *, bootstrap: int = BOOTSTRAP, level: float = LEVEL, seed: int = 0
) -> dict[str, Any]:
    """The JSON section: every group and every category, each with its intervals."""
    groups = {
        "all": list(pairs),
        "non-privileged": [p for p in pairs if not p.privileged],
        "privileged": [p for p in pairs if p.privileged],
    }
    categories = sorted({c for p in pairs for c in p.categories})
    return {
        "pairs": len(pairs),
        "bootstrap": bootstrap,
        "level": level,
        "groups": {name: agreement(name, g, bootstrap, level, seed).as_dict() for name, g in groups.items() if g},
        "categories": [
            agreement(c, [p for p in pairs if c in p.categories], bootstrap, level, seed).as_dict()
            for c in categories
        ],
    }


def agreement(name: str, pairs: Sequence[EpisodePair], bootstrap: int, level: float, seed: int) -> Agreement:
    tasks = sorted({p.task_id for p in pairs})
    out = Agreement(name, len(pairs), len(tasks))
    if not pairs:
        return out
    weights = _draws(len(tasks), bootstrap, derive_seed(seed, f"fidelity:episodes:{name}"))
    column = {t: i for i, t in enumerate(tasks)}
    _success(out, pairs, column, weights, level)
    out.r_c, out.r_c_pairs = _correlation([p.r_c for p in pairs], pairs, column, weights, level)
    out.overall, out.overall_pairs = _correlation([p.overall for p in pairs], pairs, column, weights, level)
    flips = [(p, float(p.verdict[0] != p.verdict[1])) for p in pairs if None not in p.verdict]
    out.verdict_pairs = len(flips)
    if flips:
        stats = _per_task([(p, (v, 1.0)) for p, v in flips], column)
        point = sum(v for _, v in flips) / len(flips)
        out.flips = _interval(point, _ratio(weights @ stats), level)
    return out


def _success(out: Agreement, pairs: Sequence[EpisodePair], column: dict[str, int], weights: np.ndarray,
             level: float) -> None:
    from sklearn.metrics import cohen_kappa_score

    known = [p for p in pairs if None not in p.success]
    out.success_pairs = len(known)
    if not known:
        return
    live = np.array([p.success[0] for p in known], dtype=float) > 0.5
    synth = np.array([p.success[1] for p in known], dtype=float) > 0.5
    out.success_live, out.success_synth = float(live.mean()), float(synth.mean())
    cells = [(p, _cell(a, b)) for p, a, b in zip(known, live, synth, strict=True)]
    counts = weights @ _per_task(cells, column)  # draws x (both, live only, synth only, neither)
    agree = counts[:, 0] + counts[:, 3]
    out.accuracy = _interval(float((live == synth).mean()), _ratio(np.stack([agree, counts.sum(1)], 1)), level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = float(cohen_kappa_score(live, synth)) if len(set(live) | set(synth)) > 1 else math.nan
    out.kappa = _interval(None if math.isnan(point) else point, _kappa(counts), level)


def _cell(live: bool, synth: bool) -> tuple[float, float, float, float]:
    return (float(live and synth), float(live and not synth), float(synth and not live),
            float(not live and not synth))


def _kappa(counts: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each draw's 2x2 table (columns: both, live only, synth only, neither)."""
    n = counts.sum(1)
    both, live_only, synth_only, neither = counts.T
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (both + neither) / n
        p_live, p_synth = (both + live_only) / n, (both + synth_only) / n
        expected = p_live * p_synth + (1 - p_live) * (1 - p_synth)
        return np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)


def _correlation(values: list[tuple[float | None, float | None]], pairs: Sequence[EpisodePair],
                 column: dict[str, int], weights: np.ndarray, level: float) -> tuple[Interval, int]:
    from scipy.stats import pearsonr

    known = [(p, v) for p, v in zip(pairs, values, strict=True) if None not in v]
    if len(known) < 3:
        return Interval(None), len(known)
    x = np.array([v[0] for _, v in known], dtype=float)
    y = np.array([v[1] for _, v in known], dtype=float)
    point: float | None = None
    if np.ptp(x) > 0 and np.ptp(y) > 0:
        result = pearsonr(x, y)
        point = float(result.statistic)
    moments = [(p, (1.0, a, b, a * a, b * b, a * b)) for (p, _), a, b in zip(known, x, y, strict=True)]
    sums = weights @ _per_task(moments, column)
    n, sx, sy, sxx, syy, sxy = sums.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov, vx, vy = sxy - sx * sy / n, sxx - sx * sx / n, syy - sy * sy / n
        draws = np.where((vx > 1e-12) & (vy > 1e-12), cov / np.sqrt(vx * vy), np.nan)
    return _interval(point, draws, level), len(known)


def _per_task(items: Sequence[tuple[EpisodePair, Sequence[float]]], column: dict[str, int]) -> np.ndarray:
    """Tasks x statistics: each pair's statistics summed into its task's row."""
    width = len(items[0][1]) if items else 1
    out = np.zeros((len(column), width))
    for pair, stats in items:
        out[column[pair.task_id]] += np.asarray(stats, dtype=float)
    return out


def _draws(tasks: int, samples: int, seed: int) -> np.ndarray:
    """Draws x tasks: how often each task is taken in each bootstrap draw (tasks with replacement)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, tasks, size=(samples, tasks))
    return np.stack([np.bincount(row, minlength=tasks) for row in picks]).astype(float)


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], np.nan)


def _interval(point: float | None, draws: np.ndarray, level: float) -> Interval:
    finite = draws[np.isfinite(draws)]
    if point is None or len(finite) < 2:
        return Interval(point)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return Interval(point, float(low), float(high))


def _metric(score: Score, name: str) -> float | None:
    value = score.metrics.get(name)
    return None if value is None else float(value)


def _key(t: Trajectory) -> tuple[str, str, int, str]:
    return t.agent, t.task_id, t.seed, t.policy
