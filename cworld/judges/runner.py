"""Judge a whole run: `<run>/trajectories.jsonl` -> `<run>/scores.jsonl`, resumable.

Each score is appended (and fsynced) the moment its episode is judged, so a killed `cworld judge`
loses nothing; at the end the file is rewritten with one line per episode, in trajectory order.
Resuming skips episodes already scored with the same judge set, except those with a dimension the
judges left unscored (a flaky judge gets another chance; answers it gave are in the LLM cache).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import Score, ToolSpec, Trajectory, Usage, append_jsonl, iter_jsonl, write_jsonl_atomic
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.judges.scoring import JudgeSetup, score_trajectory

SCORES_FILE = "scores.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"


@dataclass
class JudgeRunReport:
    run: Path
    scores_path: Path
    episodes: int
    judged: int
    skipped: int
    judges: list[str]
    unscored_dimensions: Counter[str] = field(default_factory=Counter)
    usage: dict[str, Usage] = field(default_factory=dict)


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
    return list(iter_jsonl(run / TRAJECTORIES_FILE, Trajectory))


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


def needs_judging(previous: Score | None, setup: JudgeSetup) -> bool:
    if previous is None or previous.judges != setup.judge_names:
        return True
    return setup.online and any(d.unscored for d in previous.dimensions.values())


async def judge_run(run: Path, setup: JudgeSetup, *, resume: bool = True, concurrency: int = 4,
                    on_done: Callable[[Score], None] | None = None) -> JudgeRunReport:
    trajectories = load_trajectories(run)
    previous = load_scores(run) if resume else {}
    setup.tools = {**tools_seen(trajectories), **setup.tools}
    todo = [t for t in trajectories if needs_judging(previous.get(t.episode_id), setup)]
    path = run / SCORES_FILE
    if not resume and path.exists():
        path.unlink()
    fresh = await _judge_all(todo, setup, path, concurrency, on_done)
    merged = {**previous, **{s.episode_id: s for s in fresh}}
    ordered = [merged[t.episode_id] for t in trajectories if t.episode_id in merged]
    write_jsonl_atomic(path, ordered)
    return _report(run, path, trajectories, fresh, setup)


async def _judge_all(todo: list[Trajectory], setup: JudgeSetup, path: Path, concurrency: int,
                     on_done: Callable[[Score], None] | None) -> list[Score]:
    gate = asyncio.Semaphore(max(1, concurrency))
    lock = asyncio.Lock()

    async def one(trajectory: Trajectory) -> Score:
        async with gate:
            score = await score_trajectory(trajectory, setup)
        async with lock:
            await asyncio.to_thread(append_jsonl, path, [score])
        if on_done is not None:
            on_done(score)
        return score

    return list(await asyncio.gather(*(one(t) for t in todo)))


def _report(run: Path, path: Path, trajectories: list[Trajectory], fresh: list[Score],
            setup: JudgeSetup) -> JudgeRunReport:
    unscored: Counter[str] = Counter(d for s in fresh for d, v in s.dimensions.items() if v.unscored)
    usage: dict[str, Usage] = {}
    for score in fresh:
        for model, spent in score.judge_usage.items():
            usage.setdefault(model, Usage()).add(spent)
    return JudgeRunReport(run, path, len(trajectories), len(fresh), len(trajectories) - len(fresh),
                          setup.judge_names, unscored, usage)

