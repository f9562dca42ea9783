"""`cworld demo-summary`: the closing block of `make demo`. At most 15 lines of headline figures, read from
the JSON files the demo's commands already wrote (the runs' scores, `fidelity.json`, the SFT summaries), so
a newcomer sees whether synthesized execution ranks agents as live execution does without opening a log."""

from __future__ import annotations

import json
import os
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cworld.data_model import Score

#: The block's length limit: what a reader takes in at a glance at the end of the demo.
MAX_LINES = 15
#: The width the block keeps to, as the tables do when piped.
WIDTH = 100
#: Lines that are not per agent: tasks, the state header, fidelity (up to five), three of where things are.
FIXED_LINES = 10
MODES = ("live", "synthesized", "hybrid")
GOAL_SIGNS = {"rho_measured": "≥", "kappa_state_success": "≥", "verdict_flips": "≤"}


@dataclass
class DemoOutputs:
    """Where one demo wrote its work products (any of them may be missing: the block says so)."""

    runs: list[Path]
    tasks: Path | None = None
    fidelity: Path | None = None
    report: Path | None = None
    sft: Path | None = None


@dataclass
class StateTally:
    """End states that matched the task's ground truth, of those that could be checked."""

    matched: int = 0
    checked: int = 0

    def __str__(self) -> str:
        return f"{self.matched}/{self.checked}" if self.checked else "–"

    @property
    def rate(self) -> float:
        return self.matched / self.checked if self.checked else -1.0


def closing_block(outputs: DemoOutputs) -> list[str]:
    """The headline figures, at most `MAX_LINES` lines: tasks, state success per agent and mode, the
    fidelity goals, the engine's answers by origin, and where the report, trajectories and SFT data are."""
    from cworld.judges.runs import load_scores

    scores = [score for run in outputs.runs for score in load_scores(run).values()]
    lines = [tasks_line(scores, outputs.tasks), *state_lines(state_tallies(scores), MAX_LINES - FIXED_LINES)]
    lines += fidelity_lines(read_json(outputs.fidelity / "fidelity.json") if outputs.fidelity else None)
    lines += where_lines(outputs)
    return lines


def state_tallies(scores: list[Score]) -> dict[str, dict[str, StateTally]]:
    """Agent -> mode -> its end-state tally, from the judge's `state_success` (tasks without a ground truth
    have none and are not counted, as in `cworld run`'s summary)."""
    tallies: dict[str, dict[str, StateTally]] = defaultdict(lambda: defaultdict(StateTally))
    for score in scores:
        tally = tallies[score.agent][score.mode]
        value = score.metrics.get("state_success")
        if value is not None:
            tally.checked += 1
            tally.matched += int(value >= 1.0)
    return tallies


def tasks_line(scores: list[Score], tasks: Path | None) -> str:
    """How many tasks the runs scored episodes of, and the task file they came from."""
    where = f" ({shown(tasks)})" if tasks else ""
    return f"headline figures: {len({score.task_id for score in scores})} tasks{where}"


def state_lines(tallies: dict[str, dict[str, StateTally]], budget: int) -> list[str]:
    """A header and the agents, best live first; several agents share a line when they outnumber `budget`."""
    from cworld.agents.resolve import is_privileged

    if not tallies:
        return ["end states that match the ground truth: no scored run (run `cworld judge`)"]
    modes = [m for m in MODES if any(m in by_mode for by_mode in tallies.values())]
    agents = sorted(tallies, key=lambda a: (-tallies[a].get(modes[0], StateTally()).rate, a))
    names = {a: a + ("*" if is_privileged(a) else "") for a in agents}
    width = max(len(n) for n in names.values())
    cells = [f"{names[a]:<{width}}  " + " → ".join(f"{str(tallies[a].get(m, StateTally())):>5}" for m in modes)
             for a in agents]
    header = f"end states that match the ground truth, {' → '.join(modes)} (* privileged: follows the gold plan):"
    return [header, *pack(cells, budget)]


def pack(cells: list[str], budget: int) -> list[str]:
    """One cell a line when they fit in `budget` lines, else as many a line as it takes."""
    per_line = max(1, -(-len(cells) // max(1, budget)))
    return ["  " + "   ".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]


def fidelity_lines(data: dict[str, Any] | None) -> list[str]:
    """The experiment's question, ρ of the agents nobody ordered by design, κ and flips, and origins."""
    if data is None:
        return ["fidelity: not measured (no fidelity.json)"]
    measured, everyone = data.get("measured") or {}, data.get("ranking") or {}
    goals = data.get("goals") or {}
    tasks = measured.get("tasks") or everyone.get("tasks") or "?"
    rho = f"ρ {interval(measured.get('spearman'))} over {len(measured.get('agents', []))} non-privileged agents"
    rho += f" ({goal(goals, 'rho_measured')})"
    if everyone:
        rho += f"; all {len(everyone.get('agents', []))}: {interval(everyone.get('spearman'), ci=False)}"
    return [
        f"fidelity experiment, {tasks} tasks: does synthesized execution rank agents as live does?",
        f"  {rho}",
        f"  state-success κ {figure(goals, 'kappa_state_success')} ({goal(goals, 'kappa_state_success')}); "
        f"verdict flips {figure(goals, 'verdict_flips', share=True)} ({goal(goals, 'verdict_flips', share=True)})",
        *origins_lines((data.get("origins") or {}).get("synthesized") or {}),
    ]


def interval(c: dict[str, Any] | None, *, ci: bool = True) -> str:
    if not c or c.get("value") is None:
        return "undefined"
    bounds = f" [{c['low']:.3f}, {c['high']:.3f}]" if ci and c.get("low") is not None else ""
    return f"{c['value']:.3f}{bounds}"


def figure(goals: dict[str, Any], name: str, *, share: bool = False) -> str:
    value = (goals.get(name) or {}).get("value")
    if value is None:
        return "undefined"
    return f"{100 * value:.0f}%" if share else f"{value:.3f}"


def goal(goals: dict[str, Any], name: str, *, share: bool = False) -> str:
    """`goal ≥ 0.9: not met`, from the goal's record in fidelity.json."""
    g = goals.get(name) or {}
    target = g.get("goal")
    shown_target = f"{100 * target:.0f}%" if share and target is not None else f"{target}"
    verdict = {True: "met", False: "not met", None: "not measured"}[g.get("met")]
    return f"goal {GOAL_SIGNS[name]} {shown_target}: {verdict}"


def origins_lines(counts: dict[str, int]) -> list[str]:
    """The synthesized answers' shares by origin (the override, family and inferred ones a rule decided; the
    rest the schema engine made up, a tool computed, or the input check refused), wrapped at `WIDTH`."""
    from cworld.engine.origin import origin_shares

    text = f"synthesized answers by origin: {origin_shares(Counter(counts)) or 'no engine answer'}"
    return textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)


def where_lines(outputs: DemoOutputs) -> list[str]:
    report = shown(outputs.report / "report.html") if outputs.report else "not written"
    return [f"report:       {report}",
            f"trajectories: {trajectories_pattern(outputs.runs)}",
            f"SFT data:     {sft_line(outputs.sft)}"]


def trajectories_pattern(runs: list[Path]) -> str:
    """`runs/demo-X-*/trajectories.jsonl` for run folders that share a parent and a name prefix."""
    if not runs:
        return "no run"
    if len(runs) == 1:
        return shown(runs[0] / "trajectories.jsonl")
    prefix = os.path.commonprefix([r.name for r in runs])
    parents = {r.parent for r in runs}
    if len(parents) > 1:
        return f"{len(runs)} run folders, trajectories.jsonl in each"
    return f"{shown(runs[0].parent)}/{prefix}*/trajectories.jsonl"


def sft_line(folder: Path | None) -> str:
    """The folder and the examples of each export in it (their `*.summary.json`)."""
    if folder is None or not folder.is_dir():
        return "not written"
    counts = []
    for path in sorted(folder.glob("*.summary.json")):
        summary = read_json(path) or {}
        counts.append(f"{summary.get('format', path.name)} {summary.get('examples', '?')}")
    return f"{shown(folder)}/" + (f" (examples: {', '.join(counts)})" if counts else "")


def read_json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def shown(path: Path) -> str:
    """The path relative to the current folder when under it (shorter to read), else as it is."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _folder(value: str | None) -> Path | None:
    return Path(value).expanduser() if value else None


@click.command("demo-summary")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False), help="The task file the runs ran.")
@click.option("--fidelity", type=click.Path(file_okay=False), help="A `cworld fidelity` out folder.")
@click.option("--report", type=click.Path(file_okay=False), help="A `cworld report` out folder.")
@click.option("--sft", type=click.Path(file_okay=False), help="The folder the `cworld export-sft` files went to.")
def command(runs: tuple[str, ...], tasks_file: str | None, fidelity: str | None, report: str | None,
            sft: str | None) -> None:
    """The headline figures of judged RUNS (and of a fidelity experiment) in at most 15 lines."""
    outputs = DemoOutputs(runs=[Path(r) for r in runs], tasks=_folder(tasks_file), fidelity=_folder(fidelity),
                          report=_folder(report), sft=_folder(sft))
    for line in closing_block(outputs):
        click.echo(line)
