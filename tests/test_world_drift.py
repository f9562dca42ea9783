"""CI measures drift (issue 32): the engine synthesized mode runs for the sandbox apps is what any server of their
categories gets (card family rules, inferred rules, the schema engine), and the apps are the live reference it is
measured against. A seeded explorer's calls (2 seeds x every stateful app x 40 calls, off any gold path) are
replayed through that engine; the figures are printed and must not fall below the floors recorded in
docs/world-engine.md ("Drift floors"). Raise a floor when the engine improves; a fall fails here.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import world_fidelity as wf  # noqa: E402

from cworld.sandbox.catalog import stateful_apps  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "world-engine.md"
SEEDS, CALLS = [0, 1], 40
FIGURES = ("verdict", "agreement", "r_c", "unwanted")
"""Higher is better for all but `unwanted` (changes live never made, as a share of live's changes)."""


def floors() -> dict[str, dict[str, float]]:
    """The table between the drift-floor markers of docs/world-engine.md: app -> figure -> share."""
    text = DOCS.read_text()
    block = text.split("<!-- drift-floors -->", 1)[1].split("<!-- /drift-floors -->", 1)[0]
    out: dict[str, dict[str, float]] = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 1 + len(FIGURES) and re.fullmatch(r"[\d.]+%", cells[1]):
            out[cells[0]] = {f: float(v.rstrip("%")) / 100 for f, v in zip(FIGURES, cells[1:], strict=True)}
    return out


@cache
def episodes() -> list[wf.Episode]:
    return wf.record(SEEDS, list(stateful_apps()), CALLS, repeats=0)


def measured(setup: wf.Env) -> dict[str, dict[str, Any]]:
    subject = wf.WorldSubject(setup, overrides=True, name="world")  # as synthesized mode builds it
    result = asyncio.run(wf.measure(subject, episodes(), repeats=0, scale=None))
    return {app: tally.figures() for app, tally in result.apps.items()}


def drift(figures: dict[str, dict[str, Any]], recorded: dict[str, dict[str, float]]) -> list[str]:
    """Every figure that fell past its floor (rounded as the table rounds: 0.1 percentage point)."""
    problems = []
    for app, floor in recorded.items():
        for name, value in floor.items():
            got = figures[app][name]
            got = 0.0 if got is None else round(got, 3)
            worse = got > value + 1e-9 if name == "unwanted" else got < value - 1e-9
            if worse:
                problems.append(f"{app} {name}: {100 * got:.1f}% (floor {100 * value:.1f}%)")
    return problems


def show(figures: dict[str, dict[str, Any]]) -> None:
    print(f"\nworld drift check ({len(SEEDS)} seeds x {CALLS} explorer calls per app):")
    for app, f in figures.items():
        cells = "  ".join(f"{name} {'-' if f[name] is None else f'{100 * round(f[name], 3):.1f}%'}" for name in FIGURES)
        print(f"  {app:10} {cells}")


def test_the_engine_holds_its_recorded_figures() -> None:
    recorded = floors()
    assert "ALL" in recorded and len(recorded) == len(stateful_apps()) + 1, recorded
    figures = measured(wf.Env.resolve())
    show(figures)
    assert not drift(figures, recorded), drift(figures, recorded)


def test_a_broken_family_rule_is_caught() -> None:
    """The time card's wait rule, broken on purpose (it refuses every call), in a copy of the cards handed to
    the engine: the drift check fails on the clock app."""
    setup = wf.Env.resolve()
    time_card = setup.cards["time"]
    assert "wait" in (time_card.rules or {})
    broken_rule = {**time_card.rules["wait"], "check": [{"fail": "True", "error": "business", "message": "broken"}]}
    broken = time_card.model_copy(update={"rules": {**time_card.rules, "wait": broken_rule}})
    problems = drift(measured(replace(setup, cards={**setup.cards, "time": broken})), floors())
    assert any(p.startswith("clock verdict") for p in problems), problems
