"""The fidelity report: live vs synthesized rankings, per-task agreement, per-tool divergence, and any
run against reference scores. Built from run folders; runs never judged are scored on the spot with the
verifiable metrics (in memory, as `cworld report` does).

The headline is the ranking of the non-privileged agents (`measured`): their order nobody designed. The
privileged agents (they read the answer key; their order was designed) are ranked apart (`designed`), and all
agents together (`ranking`). `episodes` holds the episode-by-episode agreement (`episodes.py`) and `goals` says
whether the figures reach the goals the experiment is held to (`GOALS`).

Agents are ranked by `metric` (default `overall`: synthesized episodes have a state diff too, so both
sides are scored alike); `overall_comparable` (without the state-diff parts) is a secondary column and
correlation, to show how much of the agreement rests on the state diff. Each agent carries its
`privileged` flag (an agent that read the answer key is labelled so).

    report = build_fidelity(live=Path(a), synth=Path(b), tools=tools, content=content)
    save_fidelity(report, out_dir)          # fidelity.json + fidelity.html, each written whole
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model import Score, ToolSpec, Trajectory, write_text_atomic
from cworld.engine.origin import origin_counts
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.fidelity.calls import CallDivergence, CategoryOf, call_divergence
from cworld.fidelity.episodes import episode_agreement, pair_episodes, task_categories
from cworld.fidelity.stats import BOOTSTRAP, LEVEL, RankComparison, compare_rankings
from cworld.fidelity.tables import ScoreTable, metric_value, table_from_csv, table_from_scores
from cworld.judges.content import JudgeContent
from cworld.judges.runs import RunData, load_run

DEFAULT_METRIC = "overall"
SECONDARY_METRIC = "overall_comparable"
GOALS = {"rho_measured": 0.9, "kappa_state_success": 0.8, "verdict_flips": 0.05}
"""What a faithful engine is held to: rho over the non-privileged agents at least 0.9, state-success kappa at
least 0.8, at most 5% of verdicts flipped (issue 25). Point values; the intervals say how sure each is."""
JSON_FILE = "fidelity.json"
HTML_FILE = "fidelity.html"


@dataclass
class Side:
    name: str
    path: Path
    mode: str
    trajectories: list[Trajectory]
    table: ScoreTable
    scored_on_the_fly: int
    secondary: ScoreTable | None = None
    episodes: list[tuple[Trajectory, Score]] = field(default_factory=list)


@dataclass
class FidelityReport:
    metric: str
    sides: list[Side]
    comparison: RankComparison | None = None
    references: list[RankComparison] = field(default_factory=list)
    calls: CallDivergence | None = None
    secondary: RankComparison | None = None
    secondary_metric: str | None = None
    measured: RankComparison | None = None
    """The non-privileged agents' ranking: the headline."""
    designed: RankComparison | None = None
    """The privileged agents' ranking: their order was designed, so it is a check, not a result."""
    episodes: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))

    @property
    def privileged(self) -> dict[str, bool]:
        """agent -> whether any of its episodes was privileged (it read the answer key)."""
        flags: dict[str, bool] = {}
        for side in self.sides:
            for t in side.trajectories:
                flags[t.agent] = flags.get(t.agent, False) or t.privileged
        return dict(sorted(flags.items()))

    def to_dict(self) -> dict[str, Any]:
        privileged = self.privileged
        return {
            "metric": self.metric,
            "secondary_metric": self.secondary_metric,
            "privileged": privileged,
            "created": self.created,
            "runs": [
                {
                    "name": s.name,
                    "path": str(s.path),
                    "mode": s.mode,
                    "episodes": len(s.trajectories),
                    "agents": s.table.agents,
                    "scored_on_the_fly": s.scored_on_the_fly,
                }
                for s in self.sides
            ],
            "measured": comparison_dict(self.measured, privileged) if self.measured else None,
            "designed": comparison_dict(self.designed, privileged) if self.designed else None,
            "episodes": self.episodes,
            "goals": goals(self.measured, self.episodes),
            "notes": self.notes,
            "ranking": comparison_dict(self.comparison, privileged, self.secondary) if self.comparison else None,
            "secondary": comparison_dict(self.secondary, privileged) if self.secondary else None,
            "references": [comparison_dict(r) for r in self.references],
            "tools": asdict(self.calls) if self.calls else None,
            "origins": {s.name: dict(origin_counts(s.trajectories)) for s in self.sides if s.mode != "live"},
        }


def comparison_dict(c: RankComparison, privileged: Mapping[str, bool] | None = None,
                    secondary: RankComparison | None = None) -> dict[str, Any]:
    """The comparison's JSON form; agent rows carry the privileged flag and, given a secondary
    comparison, the agent's secondary scores (`secondary_a`, `secondary_b`; None when it has none)."""
    other = {r.agent: r for r in secondary.agents} if secondary else {}
    agents = []
    for r in c.agents:
        row: dict[str, Any] = {**asdict(r), "privileged": bool((privileged or {}).get(r.agent, False))}
        if secondary is not None:
            found = other.get(r.agent)
            row["secondary_a"] = found.score_a if found else None
            row["secondary_b"] = found.score_b if found else None
        agents.append(row)
    return {
        "a": c.name_a,
        "b": c.name_b,
        "agents": agents,
        "spearman": c.spearman.as_dict(),
        "kendall": c.kendall.as_dict(),
        "tasks": len(c.tasks),
        "bootstrap": c.bootstrap,
        "level": c.level,
        "mean_task_agreement": c.mean_task_agreement,
        "per_task": [asdict(t) for t in c.per_task],
        "notes": c.notes,
    }


def build_fidelity(
    *,
    live: Path | None,
    synth: Path | None,
    tools: Mapping[str, ToolSpec],
    content: JudgeContent,
    metric: str = DEFAULT_METRIC,
    reference: Path | None = None,
    bootstrap: int = BOOTSTRAP,
    level: float = LEVEL,
    seed: int = 0,
    category_of: CategoryOf | None = None,
) -> FidelityReport:
    """`category_of` names a tool's category for the call agreement (the CLI: its category card)."""
    if reference is None and (live is None or synth is None):
        raise UsageError("give --live RUN and --synth RUN (or one run with --reference FILE.csv)")
    taken: set[str] = set()
    sides = [
        _side(name, path, metric, tools, content, taken)
        for name, path in (("live", live), ("synthesized", synth))
        if path is not None
    ]
    report = FidelityReport(metric, sides)
    if len(sides) == 2:
        report.comparison = compare_rankings(
            sides[0].table, sides[1].table, bootstrap=bootstrap, level=level, seed=seed
        )
        report.secondary_metric, report.secondary = _secondary(sides, metric, bootstrap, level, seed)
        report.calls = call_divergence(sides[0].trajectories, sides[1].trajectories, tools, category_of)
        _by_privilege(report, bootstrap, level, seed)
        pairs = pair_episodes(sides[0].episodes, sides[1].episodes, task_categories(tools, category_of))
        report.episodes = episode_agreement(pairs, bootstrap=bootstrap, level=level, seed=seed)
    if reference is not None:
        ref = table_from_csv(reference)
        report.references = [
            compare_rankings(s.table, ref, bootstrap=bootstrap, level=level, seed=seed) for s in sides
        ]
    return report


def _by_privilege(report: FidelityReport, bootstrap: int, level: float, seed: int) -> None:
    """The measured (non-privileged) and designed (privileged) rankings, each when it has 3 agents or more."""
    flags = report.privileged
    a, b = (side.table for side in report.sides)
    for privileged in (False, True):
        agents = {agent for agent, flag in flags.items() if flag == privileged}
        label = "privileged" if privileged else "non-privileged"
        try:
            found = compare_rankings(subset(a, agents), subset(b, agents), bootstrap=bootstrap, level=level,
                                     seed=seed)
        except UsageError as error:
            report.notes.append(f"no {label} ranking: {error}")
            continue
        if privileged:
            report.designed = found
        else:
            report.measured = found


def subset(table: ScoreTable, agents: set[str]) -> ScoreTable:
    """The table's rows of `agents` only."""
    return ScoreTable(table.name, {a: v for a, v in table.values.items() if a in agents}, table.source)


def goals(measured: RankComparison | None, episodes: dict[str, Any] | None) -> dict[str, Any]:
    """Each goal's figure (a point value; None when it could not be measured) and whether it is met."""
    everyone = (episodes or {}).get("groups", {}).get("all", {})
    figures = {
        "rho_measured": measured.spearman.value if measured else None,
        "kappa_state_success": everyone.get("state_success", {}).get("kappa", {}).get("value"),
        "verdict_flips": everyone.get("verdict_flips", {}).get("share", {}).get("value"),
    }
    out: dict[str, Any] = {}
    for name, figure in figures.items():
        target = GOALS[name]
        met = None if figure is None else (figure <= target if name == "verdict_flips" else figure >= target)
        out[name] = {"value": figure, "goal": target, "met": met}
    out["all_met"] = all(g["met"] is True for g in out.values())
    return out


def _secondary(
    sides: list[Side], metric: str, bootstrap: int, level: float, seed: int
) -> tuple[str | None, RankComparison | None]:
    """The ranking by the secondary metric, when the report ranks by another and both sides have it."""
    a, b = (s.secondary for s in sides)
    if metric == SECONDARY_METRIC or a is None or b is None:
        return None, None
    try:
        return SECONDARY_METRIC, compare_rankings(a, b, bootstrap=bootstrap, level=level, seed=seed)
    except UsageError:  # too few agents or tasks with a value: the column stays empty
        return SECONDARY_METRIC, None


def _side(
    name: str, path: Path, metric: str, tools: Mapping[str, ToolSpec], content: JudgeContent, taken: set[str]
) -> Side:
    data = load_run(path, content, tools, taken)
    taken.add(data.name)
    if not data.episodes:
        raise UsageError(f"{data.path} holds no episodes; run `cworld run` into it first")
    mode, episodes = _mode(data, "live" if name == "live" else "synthesized")
    table = table_from_scores(name, ((e.trajectory, e.score) for e in episodes), metric, str(data.path))
    if not table.values:
        raise UsageError(
            f"no episode of {data.path} has a value for metric {metric!r}; this run has: "
            f"{', '.join(_metric_names(data)) or 'no scored metric'}"
        )
    secondary = table_from_scores(name, ((e.trajectory, e.score) for e in episodes), SECONDARY_METRIC, str(data.path))
    return Side(name, data.path, mode, [e.trajectory for e in episodes], table, data.scored_on_the_fly,
                secondary if secondary.values else None, [(e.trajectory, e.score) for e in episodes])


def _mode(data: RunData, preferred: str) -> tuple[str, list[Any]]:
    """A run holding one mode is taken whole; one holding several gives the side its own mode."""
    modes = sorted({e.trajectory.mode for e in data.episodes})
    if len(modes) == 1:
        return modes[0], data.episodes
    if preferred not in modes:
        raise UsageError(
            f"{data.path} holds modes {', '.join(modes)} but no {preferred} episodes; "
            f"give a run with {preferred} episodes"
        )
    return preferred, [e for e in data.episodes if e.trajectory.mode == preferred]


def _metric_names(data: RunData) -> list[str]:
    """The metrics with a value in at least one episode: what --metric can rank by in this run."""
    names = {k for e in data.episodes for k, v in e.score.metrics.items() if v is not None}
    names |= {
        k for k in ("overall", "success") if any(metric_value(e.score, k) is not None for e in data.episodes)
    }
    return sorted(names)


def save_fidelity(report: FidelityReport, out: Path, workspace: Workspace | None = None) -> tuple[Path, Path]:
    """fidelity.json and fidelity.html in `out` (each written whole); marks the json as the latest."""
    from cworld.fidelity.html import fidelity_page

    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / JSON_FILE, out / HTML_FILE
    data = report.to_dict()
    write_text_atomic(json_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    write_text_atomic(html_path, fidelity_page(data))
    if workspace is not None:
        workspace.mark_latest("fidelity", json_path)
    return json_path, html_path
