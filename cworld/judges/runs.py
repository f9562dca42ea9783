"""Run folders as the judges, the report, the fidelity report and the export read them: a run's
trajectories, its scores, and the two joined (`load_runs`).

A run that was never judged (or an episode added after judging) is scored on the spot with the
verifiable metrics only, in memory: the reader says so and never writes into the run folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import Score, ToolSpec, Trajectory, iter_jsonl
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.judges.content import JudgeContent
from cworld.judges.scoring import JudgeSetup, score_offline
from cworld.rollout.store import TRAJECTORIES_FILE, read_trajectories

SCORES_FILE = "scores.jsonl"


def resolve_run(run: Path | str | None, workspace: Workspace) -> Path:
    """A run folder (or its trajectories.jsonl); the workspace's latest run when not given."""
    path = Path(run).expanduser() if run else workspace.latest("run")
    if path.is_file() and path.name.endswith(".jsonl"):
        path = path.parent
    if not (path / TRAJECTORIES_FILE).is_file():
        raise UsageError(f"{path} holds no {TRAJECTORIES_FILE}; give a run folder written by `cworld run`")
    return path


def all_runs(workspace: Workspace) -> list[Path]:
    """Every run folder of the workspace that holds trajectories, by name."""
    root = workspace.root / "runs"
    runs = sorted(p for p in root.glob("*") if (p / TRAJECTORIES_FILE).is_file()) if root.is_dir() else []
    if not runs:
        raise UsageError(f"no runs in {root}; create one with `cworld run` first")
    return runs


def load_trajectories(run: Path) -> list[Trajectory]:
    """The run's episodes with their tasks and end states resolved (compact and old-format lines alike)."""
    return list(read_trajectories(run))


def load_scores(run: Path) -> dict[str, Score]:
    """Episode id -> its latest score (later lines win); empty when the run was never judged."""
    path = run / SCORES_FILE
    if not path.is_file():
        return {}
    return {s.episode_id: s for s in iter_jsonl(path, Score)}


def tools_seen(trajectories: list[Trajectory]) -> dict[str, ToolSpec]:
    """Tool specs the agent's searches returned (id, description, input schema): a fallback source of
    schemas when the judge's workspace lacks the registry the run used."""
    found: dict[str, ToolSpec] = {}
    for t in trajectories:
        for step in t.steps:
            body = step.observation.structured_content if step.kind == "search" and step.observation else None
            for item in (body or {}).get("tools", []) or []:
                tool_id = str(item.get("id", ""))
                if "/" in tool_id and tool_id not in found:
                    server, name = tool_id.split("/", 1)
                    found[tool_id] = ToolSpec(server=server, name=name, description=str(item.get("description", "")),
                                              input_schema=item.get("input_schema") or {"type": "object"})
    return found


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
