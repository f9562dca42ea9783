"""Statistics tools of the math server (a mixin: `MathServer` inherits them)."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.mathematics.models import (
    MAX_VALUES,
    Correlation,
    Percent,
    Regression,
    Series,
    Summary,
    Values,
    Window,
)
from cworld.sandbox.stateless.mathematics.samples import pearson_r, rank_values, require_paired
from cworld.sandbox.stateless.shared import NumberResult, Real, clean, invalid


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
    def percentile(self, values: Values, percent: Percent) -> NumberResult:
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
        require_paired(x, y)
        pearson = pearson_r(x, y)
        spearman = pearson_r(rank_values(x), rank_values(y))
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
        require_paired(x, y)
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
    def moving_average(self, values: Values, window: Window) -> Series:
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
