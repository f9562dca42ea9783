"""`cworld openenv serve` (cworld[openenv]): openenv-core's own client plays whole episodes over the WebSocket,
two sessions at once each with its own episode; the trajectories land in the run folder; a session that
leaves mid-episode is stored `abandoned`; bad actions and bad flags are one clear line. The server runs two
worker processes on one port (`--workers 2`): sessions held at once land on both, and every trajectory is
stored once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from serve_helpers import TASK, free_port, stop, subprocess_env, write_tasks

pytest.importorskip("openenv.core")

from openenv.core import GenericEnvClient  # noqa: E402

from cworld.rollout import read_trajectories  # noqa: E402

ACTIONS = [
    {"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
    {"search": "find a contact", "k": 3},
    {"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}},
    {"tool": "mail/forward_message", "arguments": {"message_id": "mail_001", "to": ["contact_014"], "note": "rotate"}},
]


def start(tmp_path: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    args = ["-m", "cworld", "--workspace", str(tmp_path / "ws"), "openenv", "serve", "--tasks", str(tasks),
            "--out", str(tmp_path / "run"), "--port", str(port), *extra]
    proc = subprocess.Popen([sys.executable, *args], env=subprocess_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"cworld openenv serve exited: {proc.stderr.read().decode()[-800:]}")  # type: ignore[union-attr]
        try:
            import httpx

            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise AssertionError("cworld openenv serve did not answer /health")


async def play(port: int, seed: int, policy: str = "stress") -> tuple[list, object]:
    async with GenericEnvClient(base_url=f"http://127.0.0.1:{port}", message_timeout_s=120) as env:
        first = await env.reset(task=TASK, seed=seed, policy=policy, agent="openenv-test")
        assert not first.done and first.observation["task"] and first.observation["tools"]
        steps = [first]
        for action in ACTIONS:
            steps.append(await env.step(action))
            assert not steps[-1].done
        last = await env.step({"final": "Forwarded the audit findings to Deborah."})
        return steps, last


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("openenv")
    port = free_port()
    proc = start(tmp, port, "--workers", "2")
    yield tmp, port, proc
    stop(proc)


def test_an_openenv_client_plays_whole_episodes_each_session_its_own(server):
    tmp, port, _ = server

    async def both():
        return await asyncio.gather(play(port, 5), play(port, 6))

    (steps_a, last_a), (steps_b, last_b) = asyncio.run(both())
    for steps, last in ((steps_a, last_a), (steps_b, last_b)):
        assert last.done and last.reward in (0.0, 1.0)
        summary = last.observation["summary"]
        assert summary["status"] == "completed" and summary["reward_known"]
        assert summary["reward"] == last.reward and "state_success" in summary["metrics"]
        assert Path(summary["run"]) == tmp / "run"
        searched = steps[2].observation["result"]
        assert searched is not None and not searched["is_error"]
    ids = {last_a.observation["summary"]["episode_id"], last_b.observation["summary"]["episode_id"]}
    stored = {t.episode_id: t for t in read_trajectories(tmp / "run")}
    assert ids <= set(stored) and len(ids) == 2
    assert {stored[i].seed for i in ids} == {5, 6} and {stored[i].agent for i in ids} == {"openenv-test"}
    assert all([s.kind for s in stored[i].steps if s.kind != "user"] == ["tool", "search", "tool", "tool", "final"]
               for i in ids)


def test_a_session_that_leaves_mid_episode_is_stored_abandoned(server):
    tmp, port, _ = server

    async def leave() -> str:
        async with GenericEnvClient(base_url=f"http://127.0.0.1:{port}", message_timeout_s=120) as env:
            first = await env.reset(task=TASK, seed=9)
            await env.step(ACTIONS[0])
            return str(first.observation["episode_id"])

    left = asyncio.run(leave())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        stored = {t.episode_id: t for t in read_trajectories(tmp / "run")}
        if left in stored:
            break
        time.sleep(0.3)
    assert stored[left].status == "abandoned" and len(stored[left].steps) >= 1


def test_a_bad_action_is_an_error_message_and_the_session_goes_on(server):
    _, port, _ = server

    async def bad() -> object:
        async with GenericEnvClient(base_url=f"http://127.0.0.1:{port}", message_timeout_s=120) as env:
            await env.reset(task=TASK, seed=1)
            with pytest.raises(RuntimeError, match="exactly one of tool, search, message, final"):
                await env.step({"tool": "mail/search_messages", "final": "both"})
            return await env.step({"final": "done"})

    assert asyncio.run(bad()).done


def test_two_workers_hold_sessions_at_once_and_every_trajectory_is_stored_once(server):
    tmp, port, proc = server

    async def hold(sessions: int) -> tuple[list[str], list[int]]:
        async with contextlib.AsyncExitStack() as stack:
            envs = [await stack.enter_async_context(GenericEnvClient(base_url=f"http://127.0.0.1:{port}",
                                                                     message_timeout_s=120)) for _ in range(sessions)]
            await asyncio.gather(*(env.reset(task=TASK, seed=100 + n, policy="none") for n, env in enumerate(envs)))
            held = _sessions_per_worker(proc.pid, port)  # every session is open now, each on one worker
            lasts = await asyncio.gather(*(env.step({"final": "Done."}) for env in envs))
        return [str(last.observation["summary"]["episode_id"]) for last in lasts], held

    ids, held = asyncio.run(hold(12))
    assert len(held) == 2 and all(held) and sum(held) == 12  # the kernel spread them over both workers
    lines = [json.loads(line) for line in (tmp / "run" / "trajectories.jsonl").read_text().splitlines()]
    counts = Counter(line["episode_id"] for line in lines)
    assert set(ids) <= set(counts) and set(counts.values()) == {1}  # every episode of the module, once


def _sessions_per_worker(pid: int, port: int) -> list[int]:
    """The WebSocket connections each worker (a child listening on `port`) holds."""
    held = []
    for child in psutil.Process(pid).children():
        mine = [c for c in child.net_connections(kind="tcp") if c.laddr and c.laddr.port == port]
        if any(c.status == psutil.CONN_LISTEN for c in mine):
            held.append(sum(1 for c in mine if c.status == psutil.CONN_ESTABLISHED))
    return held


def test_a_bad_flag_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "cworld", "--workspace", str(tmp_path / "ws"), "openenv", "serve",
                           "--tasks", str(write_tasks(tmp_path / "t.jsonl")), "--max-sessions", "0"],
                          env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--max-sessions must be at least 1" in done.stderr
