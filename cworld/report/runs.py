"""The runs a report covers: each run's trajectories joined with their scores.

A run that was never judged (or an episode added after judging) is scored on the spot with the
verifiable metrics only, in memory: the report says so and never writes into the run folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import Score, ToolSpec, Trajectory
from cworld.errors import UsageError
from cworld.judges.content import JudgeContent
from cworld.judges.runner import TRAJECTORIES_FILE, load_scores, load_trajectories, tools_seen
from cworld.judges.scoring import JudgeSetup, score_offline


@dataclass
class Episode:
    run: str
    trajectory: Trajectory
    score: Score

    @property
    def key(self) -> tuple[str, str, str]:
        """Who is ranked: an agent in a mode under a fault policy."""
        return (self.trajectory.agent, self.trajectory.mode, self.trajectory.policy)

    @property
    def counted(self) -> bool:
        """Infrastructure failures are reported but never counted against the agent."""
        return self.trajectory.status != "infra_error"


@dataclass
class RunData:
    path: Path
    name: str
    episodes: list[Episode] = field(default_factory=list)
    scored_on_the_fly: int = 0
    judges: list[str] = field(default_factory=list)


def run_name(path: Path, taken: set[str]) -> str:
    name = path.name or str(path)
    while name in taken:
        name = f"{path.parent.name}/{name}"
        path = path.parent
    return name


def load_run(path: Path, content: JudgeContent, tools: Mapping[str, ToolSpec], taken: set[str]) -> RunData:
    folder = path.parent if path.is_file() else path
    if not (folder / TRAJECTORIES_FILE).is_file():
        raise UsageError(f"{folder} holds no {TRAJECTORIES_FILE}; give run folders written by `cworld run`")
    trajectories = load_trajectories(folder)
    scores = load_scores(folder)
    data = RunData(folder, run_name(folder, taken))
    setup = JudgeSetup(content, tools={**tools_seen(trajectories), **tools},
                       offline_reason="this run was not judged (run `cworld judge`)")
    for t in trajectories:
        score = scores.get(t.episode_id)
        if score is None:
            score = score_offline(t, setup)
            data.scored_on_the_fly += 1
        data.episodes.append(Episode(data.name, t, score))
    data.judges = sorted({j for e in data.episodes for j in e.score.judges})
    return data


def load_runs(paths: list[Path], content: JudgeContent, tools: Mapping[str, ToolSpec]) -> list[RunData]:
    if not paths:
        raise UsageError("no run to report on; give one or more run folders")
    taken: set[str] = set()
    runs = []
    for path in paths:
        run = load_run(path, content, tools, taken)
        taken.add(run.name)
        runs.append(run)
    return runs
