"""How the fidelity outputs read, shared with the report so both look alike: a dash for no value, shares
as whole percentages, one colour per agent (series) in every chart."""

from __future__ import annotations

DASH = "–"
PALETTE = ("#3b6fb6", "#d9822b", "#3f9a5b", "#b9404b", "#7b5ea7", "#8c6d46", "#c75fa3", "#6b7b8c")


def share(v: float | None) -> str:
    return DASH if v is None else f"{100 * v:.0f}%"


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]
