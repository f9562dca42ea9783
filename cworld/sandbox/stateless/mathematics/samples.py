"""Paired samples for the statistics tools: length checks, ranks (for Spearman) and Pearson's r."""

from __future__ import annotations

import math
import statistics

from cworld.sandbox.stateless.shared import invalid


def require_paired(x: list[float], y: list[float]) -> None:
    if len(x) != len(y):
        raise invalid(f"x has {len(x)} values and y has {len(y)}; pass two lists of the same length")
    if len(x) < 2:
        raise invalid("pass at least two (x, y) pairs")


def rank_values(values: list[float]) -> list[float]:
    """Ranks 1..n, ties sharing the average of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson_r(x: list[float], y: list[float]) -> float:
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in x)
    syy = math.fsum((b - my) ** 2 for b in y)
    denominator = math.sqrt(sxx) * math.sqrt(syy)  # two roots: sxx * syy can underflow to 0 for tiny values
    if denominator == 0:
        raise invalid("one of the lists is constant, so correlation is undefined; pass values that vary")
    return max(-1.0, min(1.0, sxy / denominator))
