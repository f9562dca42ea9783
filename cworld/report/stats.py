"""The statistics a reader needs to trust a leaderboard: bootstrap confidence intervals, pass@k and
pass^k over repeated runs, verdict flips, and rank correlation.

Every random draw comes from `derive_rng(seed, purpose)`: the same inputs give the same intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cworld.seeding import derive_seed

BOOTSTRAP_SAMPLES = 2000
LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    mean: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def has_ci(self) -> bool:
        return self.low is not None and self.high is not None


EMPTY = Estimate(None, None, None, 0)


def bootstrap_mean(values: Sequence[float], clusters: Sequence[str] | None = None, *, purpose: str = "ci",
                   samples: int = BOOTSTRAP_SAMPLES, level: float = LEVEL, seed: int = 0) -> Estimate:
    """The mean with a percentile bootstrap interval. With `clusters` (e.g. task ids) whole clusters are
    resampled, since repeated runs of one task are not independent; with one cluster, single values are.
    The input order never matters: episodes land in a run file in the order they finish, which varies."""
    if not values:
        return EMPTY
    data = np.sort(np.asarray(values, dtype=float))
    mean = float(data.mean())
    if len(data) < 2:
        return Estimate(mean, None, None, len(data))
    rng = np.random.default_rng(derive_seed(seed, f"bootstrap:{purpose}"))
    means = _resample(_groups(values, clusters), rng, samples)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Estimate(mean, float(low), float(high), len(data))


def _resample(groups: list[np.ndarray], rng: np.random.Generator, samples: int) -> np.ndarray:
    if len(groups) < 2:
        data = np.concatenate(groups)
        picks = rng.integers(0, len(data), size=(samples, len(data)))
        return data[picks].mean(axis=1)
    sums = np.array([g.sum() for g in groups])
    sizes = np.array([len(g) for g in groups])
    picks = rng.integers(0, len(groups), size=(samples, len(groups)))
    return sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)


def _groups(values: Sequence[float], clusters: Sequence[str] | None) -> list[np.ndarray]:
    """Clusters in key order, each one's values sorted: the draws do not depend on the input order."""
    if clusters is None:
        return [np.sort(np.asarray(values, dtype=float))]
    by: dict[str, list[float]] = {}
    for value, key in zip(values, clusters, strict=True):
        by.setdefault(key, []).append(float(value))
    return [np.sort(np.asarray(by[key])) for key in sorted(by)]


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k attempts succeeds), unbiased from n attempts with c successes (Chen et al.)."""
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} attempts")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all of k attempts succeed) (tau-bench's pass^k): reliability rather than luck."""
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} attempts")
    return math.comb(c, k) / math.comb(n, k)


def mean_over_tasks(outcomes: Mapping[str, Sequence[bool]], k: int, fn: str) -> float | None:
    """pass@k or pass^k averaged over the tasks that have at least k verdicts."""
    metric = pass_at_k if fn == "pass@k" else pass_hat_k
    values = [metric(len(v), sum(v), k) for v in outcomes.values() if len(v) >= k]
    return float(np.mean(values)) if values else None


def flip_share(outcomes: Mapping[str, Sequence[bool]]) -> float | None:
    """Share of tasks run more than once whose verdicts are not all the same."""
    repeated = [v for v in outcomes.values() if len(v) >= 2]
    if not repeated:
        return None
    return sum(1 for v in repeated if len(set(v)) > 1) / len(repeated)


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson on average ranks, ties shared); None with fewer than 3 pairs or a constant
    side, where rank correlation is undefined. Computed here: importing scipy.stats costs seconds."""
    if len(a) != len(b):
        raise ValueError(f"spearman needs paired samples, got {len(a)} and {len(b)}")
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    ra, rb = average_ranks(a), average_ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks; tied values share the mean of the ranks they span."""
    data = np.asarray(values, dtype=float)
    order = np.argsort(data, kind="mergesort")
    ranks = np.empty(len(data))
    sorted_vals = data[order]
    start = 0
    for end in range(1, len(data) + 1):
        if end == len(data) or sorted_vals[end] != sorted_vals[start]:
            ranks[order[start:end]] = (start + end + 1) / 2.0
            start = end
    return ranks
