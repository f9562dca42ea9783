"""Judge a whole run: `<run>/trajectories.jsonl` -> `<run>/scores.jsonl`, resumable.

Each score is appended (and fsynced) the moment its episode is judged, so a killed `cworld judge`
loses nothing; at the end the file is rewritten with one line per episode, in trajectory order.
Resuming skips episodes already scored with the same judge set, except those with a dimension the
judges left unscored (a flaky judge gets another chance; answers it gave are in the LLM cache) and those
whose episode was recorded again since (an `infra_error` that `cworld run --resume` ran again).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import Score, Trajectory, Usage, append_jsonl, write_jsonl_atomic
from cworld.judges.runs import SCORES_FILE, load_scores, load_trajectories, tools_seen
from cworld.judges.scoring import JudgeSetup, score_trajectory
from cworld.judges.unscored import vote_counts


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
    votes: int = 0
    """Judge votes over the whole run's scores (`unscored_votes` of them unscored)."""
    unscored_votes: int = 0


def needs_judging(previous: Score | None, setup: JudgeSetup, trajectory: Trajectory | None = None) -> bool:
    if previous is None or previous.judges != setup.judge_names:
        return True
    if trajectory is not None and previous.status and previous.status != trajectory.status:
        return True  # the episode was recorded again (an infra_error run again): its old score is stale
    return setup.online and any(d.unscored for d in previous.dimensions.values())


async def judge_run(run: Path, setup: JudgeSetup, *, resume: bool = True, concurrency: int = 4,
                    on_done: Callable[[Score], None] | None = None) -> JudgeRunReport:
    trajectories = load_trajectories(run)
    previous = load_scores(run) if resume else {}
    setup.tools = {**tools_seen(trajectories), **setup.tools}
    todo = [t for t in trajectories if needs_judging(previous.get(t.episode_id), setup, t)]
    path = run / SCORES_FILE
    if not resume and path.exists():
        path.unlink()
    fresh = await _judge_all(todo, setup, path, concurrency, on_done)
    merged = {**previous, **{s.episode_id: s for s in fresh}}
    ordered = [merged[t.episode_id] for t in trajectories if t.episode_id in merged]
    write_jsonl_atomic(path, ordered)
    report = _report(run, path, trajectories, fresh, setup)
    report.unscored_votes, report.votes = vote_counts(ordered)
    return report


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

