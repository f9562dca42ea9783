"""Where an engine's answer came from (`ORIGIN_MEANING`), so a reader of a synthesized run sees how much of
it a rule decided: tagged per answer, counted per run (`cworld run`, `cworld fidelity`, the report)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from cworld.data_model import ToolResult, Trajectory

ORIGIN_MEANING = {
    "override": "a per-tool rule file written for this server (category_cards/_operations/SERVER.yaml) decided it",
    "family": "a rule of the tool's category card, shared by the category's servers, decided it",
    "inferred": "a rule inferred from the tool's name, schema and the server's world decided it",
    "simulated": "no rule: the schema engine (or a model without a world decision) made it up",
    "computed": "a stateless tool's own implementation computed it",
    "input": "the arguments failed the tool's input schema before any rule ran",
}
RULE_ORIGINS = ("override", "family", "inferred")
ORIGINS = tuple(ORIGIN_MEANING)


def answer_origin(result: ToolResult | None) -> str | None:
    """The origin of an engine's answer; None for an answer no engine gave (live, a fault, the agent's own)."""
    if result is None or result.meta.get("source") != "engine":
        return None
    meta = result.meta
    if meta.get("computed"):
        return "computed"
    if meta.get("simulated"):
        return "simulated"
    for key in ("rule", "world"):  # `world`: the world's decision an LLM engine wrote the answer from
        if meta.get(key) in RULE_ORIGINS:
            return str(meta[key])
    if result.error_class == "invalid_args":
        return "input"
    return "simulated"


def origin_counts(trajectories: Iterable[Trajectory]) -> Counter[str]:
    """Engine answers by origin over the episodes' tool calls (what the backend answered, before faults)."""
    counts: Counter[str] = Counter()
    for trajectory in trajectories:
        for step in trajectory.steps:
            origin = answer_origin(step.raw_result)
            if origin is not None:
                counts[origin] += 1
    return counts


def origin_shares(counts: Counter[str]) -> str:
    """`inferred 62% · simulated 31% · computed 7% (812 answers)`, origins in their fixed order; '' for none."""
    total = sum(counts.values())
    if not total:
        return ""
    parts = [f"{o} {100 * counts[o] / total:.0f}%" for o in ORIGINS if counts[o]]
    return " · ".join(parts) + f" ({total:,} answer{'s' if total != 1 else ''})"
