"""The overall score of one episode (0-10) from `judges/weights.yaml` (documented in docs/reward.md).

Each part is put on 0-1 (verifiable rates are fractions; judge scores are divided by 10), parts with
no value for the episode drop out, and the rest are averaged by weight. With every judge dimension
unscored the overall is the verifiable part alone, and the basis says so.

The reward measures outcomes: for a task with a ground truth, the state outcome (state success, R_c,
no collateral changes) is `outcome_share` of the score and the process parts (how the agent worked:
constraints, order and efficiency against the shortest path, judges) share the rest, scaled by R_c: process
is credited for the share of the outcome it reached, so an agent that does nothing earns no process credit
for having made no mistakes. An agent that reaches the end state by another route than the gold plan
scores as the oracle does.
"""

from __future__ import annotations

from dataclasses import dataclass

from cworld.data_model import DimensionScore
from cworld.judges.content import Weights

BASIS_ALL = "verifiable+judges"
BASIS_VERIFIABLE = "verifiable only"

#: The state-diff parts. Synthesized episodes have them too (the engine's change set overlaid on the initial
#: state), so fidelity ranks on the full `overall`; `comparable_overall` leaves them out, as a secondary view
#: of how much of the agreement rests on the state diff.
STATE_PARTS: frozenset[str] = frozenset({"R_c", "R_b_complement", "state_success"})


@dataclass(frozen=True)
class Overall:
    score: float | None
    basis: str
    parts: dict[str, float]
    """part -> its 0-1 value, for the parts that counted."""


def verifiable_parts(metrics: dict[str, float | None]) -> dict[str, float | None]:
    """The 0-1 verifiable parts the weights may name; `R_b_complement` is derived from R_b."""
    parts = dict(metrics)
    r_b = metrics.get("R_b")
    parts["R_b_complement"] = None if r_b is None else 1.0 - min(1.0, r_b)
    return parts


def comparable_overall(metrics: dict[str, float | None], dimensions: dict[str, DimensionScore],
                       weights: Weights) -> Overall:
    """The overall score without the state-diff parts: fidelity's secondary column (docs/reward.md)."""
    return overall(metrics, dimensions, weights, skip=STATE_PARTS)


def overall(metrics: dict[str, float | None], dimensions: dict[str, DimensionScore], weights: Weights,
            *, skip: frozenset[str] = frozenset()) -> Overall:
    available = {k: v for k, v in verifiable_parts(metrics).items() if k not in skip}
    parts = {k: float(v) for k, w in weights.verifiable.items() if w > 0 and (v := available.get(k)) is not None}
    judged = {k: d.score / 10.0 for k, d in dimensions.items()
              if d.score is not None and weights.judges.get(k, 0) > 0}
    outcome = {k: float(v) for k, w in weights.outcome.items() if w > 0 and (v := available.get(k)) is not None}
    basis = BASIS_ALL if judged else BASIS_VERIFIABLE
    process = _weighted([(v, weights.verifiable[k]) for k, v in parts.items()]
                        + [(v, weights.judges[k]) for k, v in judged.items()])
    led = _weighted([(v, weights.outcome[k]) for k, v in outcome.items()])
    if led is not None and process is not None:
        progress = available.get("R_c")
        process *= 1.0 if progress is None else float(progress)  # how well it worked, for what it reached
        score = weights.outcome_share * led + (1.0 - weights.outcome_share) * process
    else:
        score = led if led is not None else process  # type: ignore[assignment]
    if score is None:
        return Overall(None, "", {})
    shown = {**parts, **{f"outcome:{k}": v for k, v in outcome.items()}, **{f"judge:{k}": v for k, v in judged.items()}}
    return Overall(round(10.0 * score, 4), basis, shown)


def _weighted(pairs: list[tuple[float, float]]) -> float | None:
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None
