"""Statistics tools of the math server (a mixin: the app class in `mathematics.py` inherits them)."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction
from typing import Annotated

from pydantic import BaseModel, Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless._common import NumberResult, Real, clean, invalid

MAX_VALUES = 10_000

Values = Annotated[
    list[Real],
    Field(description="The data: numbers between -1e15 and 1e15.", min_length=1, max_length=MAX_VALUES),
]


class Summary(BaseModel):
    count: int = Field(description="How many values.")
    sum: float
    mean: float
    median: float
    modes: list[float] = Field(description="The most frequent value(s), ascending.")
    minimum: float
    maximum: float
    range: float = Field(description="maximum - minimum.")
    population_variance: float
    population_stdev: float
    sample_variance: float | None = Field(description="n-1 denominator; null for a single value.")
    sample_stdev: float | None = Field(description="n-1 denominator; null for a single value.")


class Correlation(BaseModel):
    pearson: float = Field(description="Pearson's r, -1..1 (linear association).")
    spearman: float = Field(
        description="Spearman's rho, -1..1 (association of ranks; ties get average ranks)."
    )


class Regression(BaseModel):
    slope: float
    intercept: float
    r_squared: float = Field(description="Share of the variance of y explained by the line, 0..1.")
    equation: str = Field(description="The fitted line, 'y = slope*x + intercept'.")


class Series(BaseModel):
    values: list[float] = Field(description="The resulting series.")


def _paired(x: list[float], y: list[float]) -> None:
    if len(x) != len(y):
        raise invalid(f"x has {len(x)} values and y has {len(y)}; pass two lists of the same length")
    if len(x) < 2:
        raise invalid("pass at least two (x, y) pairs")


def _ranks(values: list[float]) -> list[float]:
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


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in x)
    syy = math.fsum((b - my) ** 2 for b in y)
    denominator = math.sqrt(sxx) * math.sqrt(syy)  # two roots: sxx * syy can underflow to 0 for tiny values
    if denominator == 0:
        raise invalid("one of the lists is constant, so correlation is undefined; pass values that vary")
    return max(-1.0, min(1.0, sxy / denominator))


class StatisticsTools:
    @tool(read_only=True)
    def describe_statistics(self, values: Values) -> Summary:
        """Summary statistics of a list of numbers: count, sum, mean, median, modes, min, max, range, and
        variance and standard deviation both for the population (n) and for a sample (n-1). At most
        10,000 values."""
        v = [float(x) for x in values]
        pvar = statistics.pvariance(v)
        svar = statistics.variance(v) if len(v) > 1 else None
        return Summary(
            count=len(v),
            sum=clean(math.fsum(v)),
            mean=clean(statistics.fmean(v)),
            median=clean(statistics.median(v)),
            modes=sorted(clean(m) for m in statistics.multimode(v)),
            minimum=min(v),
            maximum=max(v),
            range=clean(max(v) - min(v)),
            population_variance=clean(pvar),
            population_stdev=clean(math.sqrt(pvar)),
            sample_variance=None if svar is None else clean(svar),
            sample_stdev=None if svar is None else clean(math.sqrt(svar)),
        )

    @tool(read_only=True)
    def percentile(
        self,
        values: Values,
        percent: Annotated[
            float, Field(description="Which percentile, 0..100 (50 is the median).", ge=0, le=100)
        ],
    ) -> NumberResult:
        """The given percentile of a list of numbers, interpolating linearly between the two nearest ranks
        (the same method as numpy's default and Excel's PERCENTILE.INC)."""
        v = sorted(float(x) for x in values)
        pos = (len(v) - 1) * percent / 100
        low = math.floor(pos)
        high = min(low + 1, len(v) - 1)
        return NumberResult(value=clean(v[low] + (v[high] - v[low]) * (pos - low)))

    @tool(read_only=True)
    def correlation(
        self,
        x: Annotated[list[Real], Field(description="First variable.", min_length=2, max_length=MAX_VALUES)],
        y: Annotated[
            list[Real],
            Field(description="Second variable, paired with x.", min_length=2, max_length=MAX_VALUES),
        ],
    ) -> Correlation:
        """Pearson and Spearman correlation of two paired lists of numbers of the same length (at least 2).
        Fails when either list is constant, since correlation is then undefined."""
        _paired(x, y)
        pearson = _pearson(x, y)
        spearman = _pearson(_ranks(x), _ranks(y))
        return Correlation(pearson=clean(pearson), spearman=clean(spearman))

    @tool(read_only=True)
    def linear_regression(
        self,
        x: Annotated[
            list[Real], Field(description="Explanatory values.", min_length=2, max_length=MAX_VALUES)
        ],
        y: Annotated[
            list[Real], Field(description="Responses, paired with x.", min_length=2, max_length=MAX_VALUES)
        ],
    ) -> Regression:
        """Ordinary least-squares line y = slope*x + intercept through paired points, with R². Fails when
        all x are equal (the slope would be vertical)."""
        _paired(x, y)
        mx, my = statistics.fmean(x), statistics.fmean(y)
        sxx = math.fsum((a - mx) ** 2 for a in x)
        if sxx == 0:
            raise invalid("all x values are equal, so no line can be fitted; pass x values that vary")
        slope = math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx
        intercept = my - slope * mx
        sse = math.fsum((b - (slope * a + intercept)) ** 2 for a, b in zip(x, y, strict=True))
        sst = math.fsum((b - my) ** 2 for b in y)
        r2 = 1.0 if sst == 0 else max(0.0, 1 - sse / sst)
        slope, intercept = clean(slope, "slope"), clean(intercept, "intercept")
        return Regression(
            slope=slope, intercept=intercept, r_squared=clean(r2), equation=f"y = {slope:g}*x + {intercept:g}"
        )

    @tool(read_only=True)
    def weighted_mean(
        self,
        values: Values,
        weights: Annotated[
            list[Annotated[float, Field(ge=0, le=1e15)]],
            Field(description="One non-negative weight per value.", min_length=1, max_length=MAX_VALUES),
        ],
    ) -> NumberResult:
        """The weighted average sum(w*v)/sum(w), e.g. a grade from marks and credit weights."""
        if len(values) != len(weights):
            raise invalid(f"{len(values)} values but {len(weights)} weights; pass one weight per value")
        total = math.fsum(weights)
        if total == 0:
            raise invalid("the weights sum to zero; pass at least one positive weight")
        return NumberResult(
            value=clean(math.fsum(v * w for v, w in zip(values, weights, strict=True)) / total)
        )

    @tool(read_only=True)
    def moving_average(
        self,
        values: Values,
        window: Annotated[
            int, Field(description="How many consecutive values each average covers.", ge=1, le=1000)
        ],
    ) -> Series:
        """Simple moving averages over a sliding window: len(values) - window + 1 results, the first
        averaging values[0:window]."""
        if window > len(values):
            raise invalid(f"window {window} is longer than the {len(values)} values; pass a smaller window")
        prefix = [Fraction(0)]
        for v in values:  # exact running sums: no drift, and O(n) however wide the window
            prefix.append(prefix[-1] + Fraction(v))
        return Series(
            values=[
                clean(float((prefix[i + window] - prefix[i]) / window))
                for i in range(len(values) - window + 1)
            ]
        )
