"""Serving on every core (issue 35): `cworld serve --workers 2` puts two worker processes behind one front.
Sessions served at once land on both workers, each session's calls reach the worker that opened it, and
every trajectory is stored exactly once in the one run folder; processes appending to one run folder
never interleave or repeat a line; a bad --workers is one line."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from collections import Counter
from pathlib import Path

import httpx
import pytest
from serve_helpers import FIXTURE, TASK, TOKEN, call, free_port, http_client, start_http, stop, write_tasks

from cworld.cli.main import main
from cworld.data_model import Task, Trajectory, read_jsonl
from cworld.rollout import TrajectoryStore, read_trajectories
from cworld.serve.workers import split_sessions

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}


async def test_two_workers_serve_sessions_at_once_and_store_every_trajectory_once(tmp_path: Path) -> None:
    tasks, run, port = write_tasks(tmp_path / "tasks.jsonl"), tmp_path / "ws" / "runs" / "served", free_port()
    proc = start_http(tmp_path / "ws", tasks, run, port, "--workers", "2")
    sessions: set[str] = set()

    async def seen(response: httpx.Response) -> None:
        if "mcp-session-id" in response.headers:
            sessions.add(response.headers["mcp-session-id"])

    async def play(seed: int) -> str:
        async with http_client(port, on_response=seen) as client:
            started = await call(client, "start_episode", {"task": TASK, "mode": "synthesized", "policy": "none",
                                                           "seed": seed})
            assert not started.is_error
            assert not (await call(client, "mail__search_messages", {"query": "Security audit findings"})).is_error
            submitted = await call(client, "submit", {"answer": "Forwarded it."})
            assert submitted.structured_content["status"] == "completed"
            return str(submitted.structured_content["episode_id"])

    try:
        ids = await asyncio.gather(*(play(seed) for seed in range(6)))
        unknown = await asyncio.to_thread(httpx.post, f"http://127.0.0.1:{port}/mcp", headers={
            **HEADERS, "mcp-session-id": "w7-no-such-worker"}, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    finally:
        stop(proc)
    assert {s.split("-", 1)[0] for s in sessions} == {"w0", "w1"}  # the front spread the sessions
    assert unknown.status_code == 404
    lines = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    assert Counter(line["episode_id"] for line in lines) == Counter(ids)  # each one stored, once
    assert _each_once(run / "tasks.jsonl")
    assert {t.episode_id: t.status for t in read_trajectories(run)} == dict.fromkeys(ids, "completed")
    assert proc.returncode == 0  # SIGTERM stopped the front and its workers cleanly


def test_processes_appending_to_one_run_folder_write_each_line_once_and_whole(tmp_path: Path) -> None:
    from cworld.sandbox.statediff import sandbox_initial_state

    for task in read_jsonl(FIXTURE, Task):  # the writers are forked with the seeds' states at hand
        sandbox_initial_state(task.initial_state_seed)
    fork = multiprocessing.get_context("fork")
    writers = [fork.Process(target=_append_episodes, args=(str(tmp_path), n, 25)) for n in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert [w.exitcode for w in writers] == [0, 0, 0]
    lines = [json.loads(line) for line in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert Counter(line["episode_id"] for line in lines) == Counter(f"w{n}-{i}" for n in range(3) for i in range(25))
    assert _each_once(tmp_path / "tasks.jsonl") and _each_once(tmp_path / "states.jsonl")
    stored = list(read_trajectories(tmp_path))
    assert len(stored) == 75 and all(t.task is not None and t.end_state is not None for t in stored)


def _append_episodes(folder: str, writer: int, count: int) -> None:
    """One process's episodes, appended as they end, each with a task and a changed sandbox end state
    (so its line refers to a task and a state record that every process needs)."""
    from cworld.sandbox.statediff import sandbox_initial_state

    tasks = read_jsonl(FIXTURE, Task)
    store = TrajectoryStore(Path(folder))
    store.open(resume=True)

    def episode(i: int) -> Trajectory:
        task = tasks[i % len(tasks)]
        end = sandbox_initial_state(task.initial_state_seed)
        end["mail"]["messages"][f"mail_{900 + i}"] = {"id": f"mail_{900 + i}", "subject": "x" * (i * 40)}
        return Trajectory(episode_id=f"w{writer}-{i}", task_id=task.id, task=task, agent="writer",
                          mode="synthesized", end_state=end, final_answer="y" * 2000)

    async def append_all() -> None:
        for i in range(count):
            await store.append(episode(i))
            await asyncio.sleep(0.001 * (i % 3))  # vary the timing between the processes

    asyncio.run(append_all())


def _each_once(path: Path) -> bool:
    shas = [json.loads(line)["sha256"] for line in path.read_text().splitlines()]
    return bool(shas) and len(shas) == len(set(shas))


@pytest.mark.parametrize(("argv", "message"), [
    (["serve", "--transport", "http", "--workers", "0"], "--workers must be at least 1, got 0"),
    (["serve", "--workers", "2"], "--workers applies to --transport http"),
    (["openenv", "serve", "--workers", "-1"], "--workers must be at least 1, got -1"),
])
def test_a_bad_workers_flag_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                        message: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--workspace", str(tmp_path / "ws"), *argv])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_sessions_split_over_workers_add_up() -> None:
    assert split_sessions(64, 2) == [32, 32] and split_sessions(5, 3) == [2, 2, 1] and split_sessions(2, 2) == [1, 1]
