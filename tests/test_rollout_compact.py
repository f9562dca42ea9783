"""Compact trajectory lines (issue 16, item 3): the task by reference, the end state as a diff, readers that
resolve both, old-format runs that still load, and a realistic synthesized run under 25 KB a line."""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path

import pytest
from rollout_helpers import scratch_context

from cworld.data_model import Task, Trajectory, append_jsonl, read_jsonl
from cworld.data_model.compact import apply_state_patch, state_patch
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.export import ExportFilters, export_sft
from cworld.judges import JudgeContent, JudgeSetup
from cworld.judges.runs import load_scores
from cworld.judges.score_run import judge_run
from cworld.report.build import build_report
from cworld.rollout import (
    TRAJECTORIES_FILE,
    RunConfig,
    Runner,
    TrajectoryStore,
    episode_id,
    read_trajectories,
)
from cworld.rollout.store import STATES_FILE, TASKS_FILE

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = read_jsonl(FIXTURE, Task)


def episodes(tmp_path: Path, mode: str, tasks: list[Task], seeds: int = 2) -> list[Trajectory]:
    """Real episodes of the oracle, in memory (the originals the files are compared with)."""
    config = RunConfig(agent="scripted:oracle", mode=mode, policy="default", progress=False)
    runner = Runner(tasks, config, scratch_context(tmp_path / "ws"), tmp_path / "unused")
    return [asyncio.run(runner.run_one(t, s)) for t in tasks for s in range(seeds)]


def write_compact(folder: Path, trajectories: list[Trajectory]) -> Path:
    store = TrajectoryStore(folder)
    store.open(resume=False)

    async def append_all() -> None:
        await asyncio.gather(*(store.append(t) for t in trajectories))

    asyncio.run(append_all())
    return folder


def write_old(folder: Path, trajectories: list[Trajectory]) -> Path:
    """A run folder exactly as the store wrote it before version 2: each line the whole `Trajectory`."""
    append_jsonl(folder / TRAJECTORIES_FILE, trajectories)
    return folder


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> list[Trajectory]:
    return episodes(tmp_path_factory.mktemp("live"), "live", TASKS[:3])


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> list[Trajectory]:
    return episodes(tmp_path_factory.mktemp("synth"), "synthesized", TASKS[:3])


@pytest.mark.parametrize("which", ["live", "synthesized"])
def test_compact_lines_read_back_as_the_very_trajectories(which: str, request, tmp_path: Path) -> None:
    originals: list[Trajectory] = request.getfixturevalue(which)
    folder = write_compact(tmp_path / "run", originals)
    back = list(read_trajectories(folder))
    assert back == originals  # field for field: task, end state, steps, constraints, timings
    lines = [json.loads(line) for line in (folder / TRAJECTORIES_FILE).read_text().splitlines()]
    assert all("task" not in r and r["task_ref"]["id"] == r["task_id"] for r in lines)
    assert len((folder / TASKS_FILE).read_text().splitlines()) == 3  # one copy per task, not per episode
    # full sandbox states (live: the snapshot; synthesized: the world engine's world): diffs from the initial
    # state, kept once per task world
    assert all("end_state" not in r and "end_state_diff" in r for r in lines)
    assert any(r["end_state_diff"]["patch"] for r in lines)  # an episode that changed its world keeps the change
    assert len((folder / STATES_FILE).read_text().splitlines()) == len({t.task.initial_state_seed for t in back})
    old = write_old(tmp_path / "old", originals)
    assert sum(len(x) for x in (folder / TRAJECTORIES_FILE).read_bytes().splitlines()) * 4 < \
        (old / TRAJECTORIES_FILE).stat().st_size


def test_a_change_set_stays_inline(synthesized, tmp_path: Path) -> None:
    """The schema engine's end state (`--engine schema`) is a change set: already a diff, kept as it is."""
    changes = {"_changes": True, "mail": {"messages": {"mail_0003": {"starred": True}}},
               "_written": {"mail": {"messages": {"mail_0003": ["starred"]}}}}
    originals = [t.model_copy(update={"end_state": changes}) for t in synthesized[:2]]
    folder = write_compact(tmp_path / "run", originals)
    assert list(read_trajectories(folder)) == originals
    lines = [json.loads(line) for line in (folder / TRAJECTORIES_FILE).read_text().splitlines()]
    assert all(r["end_state"] == changes and "end_state_diff" not in r for r in lines)
    assert not (folder / STATES_FILE).exists()


def test_an_old_format_run_loads_unchanged_and_a_resume_appends_compact_lines(live, tmp_path: Path) -> None:
    folder = write_old(tmp_path / "run", live[:4])
    assert list(read_trajectories(folder)) == live[:4]
    store = TrajectoryStore(folder)
    assert store.open(resume=True) == {t.episode_id for t in live[:4]}
    write_more = asyncio.run(_append(store, live[4:]))
    assert write_more is None and list(read_trajectories(folder)) == live


async def _append(store: TrajectoryStore, trajectories: list[Trajectory]) -> None:
    for t in trajectories:
        await store.append(t)


def test_judge_report_and_export_see_the_same_run_either_way(live, synthesized, tmp_path: Path) -> None:
    both = live + synthesized
    compact, old = write_compact(tmp_path / "compact", both), write_old(tmp_path / "old", both)
    setup = lambda: JudgeSetup(JudgeContent.from_environment(), tools={})  # noqa: E731
    for folder in (compact, old):
        asyncio.run(judge_run(folder, setup()))
    scores = [{k: s.model_dump() for k, s in load_scores(f).items()}
              for f in (compact, old)]
    assert scores[0] == scores[1] and len(scores[0]) == len(both)
    assert any(s["metrics"].get("state_success") == 1.0 for s in scores[0].values())  # end states resolved

    reports = [build_report([f], tmp_path / f"report-{f.name}") for f in (compact, old)]
    assert reports[0].markdown.replace("compact", "old") == reports[1].markdown

    outputs = []
    for f in (compact, old):
        out = tmp_path / f"sft-{f.name}.jsonl"
        export_sft([f], "openai", out, ExportFilters(), {})
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == len(both)


def test_resume_after_a_torn_last_line_finds_every_task(tmp_path: Path) -> None:
    ctx = scratch_context(tmp_path / "ws")
    config = RunConfig(agent="scripted:oracle", mode="live", policy="none", seeds=2, progress=False)
    out = tmp_path / "run"
    asyncio.run(Runner(TASKS[:2], config, ctx, out).run())
    path = out / TRAJECTORIES_FILE
    kept = path.read_text().splitlines()[:2]
    last = path.read_text().splitlines()[2]
    path.write_text("\n".join(kept) + "\n" + last[: len(last) // 2])  # killed mid-write
    (out / TASKS_FILE).write_text((out / TASKS_FILE).read_text() + '{"sha256": "torn')  # and mid task line
    assert len(list(read_trajectories(out))) == 2  # a reader skips the torn line
    config.resume = True
    report = asyncio.run(Runner(TASKS[:2], config, ctx, out).run())
    back = list(read_trajectories(out))
    expected = {episode_id(t.id, "scripted:oracle", "live", "none", s) for t in TASKS[:2] for s in range(2)}
    assert report.ran == 2 and [t.episode_id for t in back].count(back[0].episode_id) == 1
    assert {t.episode_id for t in back} == expected and len(back) == 4
    assert all(t.task is not None and t.end_state is not None for t in back)
    assert report.rows[0].state_matched == 4  # the resolved end states are the real ones


def test_a_trajectory_without_a_task_round_trips(synthesized, tmp_path: Path) -> None:
    bare = [t.model_copy(update={"task": None}) for t in synthesized[:2]]
    folder = write_compact(tmp_path / "run", bare)
    assert list(read_trajectories(folder)) == bare and not (folder / TASKS_FILE).exists()


def test_a_missing_task_record_is_a_one_line_error(synthesized, tmp_path: Path) -> None:
    folder = write_compact(tmp_path / "run", synthesized)
    (folder / TASKS_FILE).unlink()
    with pytest.raises(UsageError, match="lacks task .* restore the run folder's task file"):
        list(read_trajectories(folder))


def test_state_patch_is_rfc6902_and_round_trips() -> None:
    base = {"mail": {"messages": {"m1": {"to": "a", "tags": [1]}, "m/2": {}}}, "gone": 1, "x~y": {"k": 0}}
    target = {"mail": {"messages": {"m1": {"to": "b", "tags": [1, 2]}, "m3": {"to": None}}}, "x~y": {"k": 1}}
    patch = state_patch(base, target)
    assert {op["op"] for op in patch} == {"add", "remove", "replace"}
    assert {"op": "remove", "path": "/mail/messages/m~12"} in patch and any(p["path"] == "/x~0y/k" for p in patch)
    assert apply_state_patch(json.loads(json.dumps(base)), patch) == target
    assert state_patch(target, target) == []


def test_a_synthesized_run_of_the_offline_synth_tasks_stays_under_1_kb_a_step(tmp_path: Path, monkeypatch) -> None:
    """The goal of the issue on a realistic run: offline-synthesized tasks (scenario, ground truth: ~190 KB
    each), the oracle, the default fault policy, a few seeds. The issue's goal was 25 KB a line for episodes
    of ~20 steps; tasks verified by their outcome are longer (14-28 plan steps, 18-46 episode steps), so the
    line is measured per step: the whole line, end state included, over its steps."""
    from cworld.synth import SynthOptions, prepare, run_prepared

    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")  # the model-free embedder: the tasks are the same kind
    ws = Workspace.resolve(tmp_path / "ws")
    tasks_file = tmp_path / "tasks.jsonl"
    asyncio.run(run_prepared(prepare(Environment.resolve(), ws, SynthOptions(n=6, seed=0), out=tasks_file)))
    tasks = read_jsonl(tasks_file, Task)
    config = RunConfig(agent="scripted:oracle", mode="synthesized", policy="default", seeds=3, concurrency=4,
                       progress=False)
    out = tmp_path / "run"
    report = asyncio.run(Runner(tasks, config, scratch_context(tmp_path / "ws"), out).run())
    lines = (out / TRAJECTORIES_FILE).read_bytes().splitlines()
    sizes = [len(line) for line in lines]
    per_step = [len(line) / max(1, len(json.loads(line)["steps"])) for line in lines]
    assert report.ran == len(sizes) == 3 * len(tasks) >= 15
    assert statistics.median(per_step) <= 1_000, sorted(per_step)
    full = [len(t.model_dump_json()) for t in read_trajectories(out)]  # the old format, same episodes
    assert statistics.median(full) > 5 * statistics.median(sizes)
