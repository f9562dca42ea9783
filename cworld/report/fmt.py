"""How numbers read in reports: rates as percentages, scores on 0-10, counts with one decimal, and
every mean with its interval when it has one."""

from __future__ import annotations

from cworld.fidelity.fmt import DASH, share
from cworld.report.leaderboard import Kind
from cworld.report.stats import Estimate

__all__ = ["DASH", "estimate", "interval", "number", "share", "value"]


def value(v: float | None, kind: Kind) -> str:
    if v is None:
        return DASH
    if kind == "rate":
        return f"{100 * v:.0f}%"
    if kind == "score":
        return f"{v:.2f}"
    return f"{v:.1f}"


def interval(est: Estimate, kind: Kind) -> str:
    if not est.has_ci:
        return ""
    assert est.low is not None and est.high is not None
    if kind == "rate":
        return f"[{100 * est.low:.0f}, {100 * est.high:.0f}]"
    digits = 2 if kind == "score" else 1
    return f"[{est.low:.{digits}f}, {est.high:.{digits}f}]"


def estimate(est: Estimate, kind: Kind) -> str:
    ci = interval(est, kind)
    return f"{value(est.mean, kind)} {ci}" if ci else value(est.mean, kind)


def number(v: float | None, digits: int = 2) -> str:
    return DASH if v is None else f"{v:.{digits}f}"
