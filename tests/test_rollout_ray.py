"""The Ray executor on a real two-node Ray cluster on this machine (`ray.cluster_utils.Cluster`, 1 CPU per
node): a raylet killed mid-run, the driver killed with SIGKILL, an unreachable cluster."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rollout_helpers
from rollout_helpers import SleepyOracle, scratch_context, without_timings

from cworld.data_model import Task, read_jsonl
from cworld.rollout import TRAJECTORIES_FILE, RunConfig, Runner, episode_id, read_trajectories

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'cworld[ray]'")
from ray.cluster_utils import Cluster  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = read_jsonl(FIXTURE, Task)
NODE = {"num_cpus": 1, "object_store_memory": 100 * 2**20}
FAST_HEALTH = {"health_check_period_ms": 500, "health_check_failure_threshold": 4, "health_check_timeout_ms": 500}
BOOT = "import sys; from cworld.cli.main import main; main(sys.argv[1:])"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head node (1 CPU) under a short private temp dir; tests add the second node they need."""
    tmp = tempfile.mkdtemp(prefix="cwray-", dir="/tmp")
    (Path(tmp) / "ray").mkdir()
    old = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tmp
    head = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False, "temp_dir": tmp,
                                                         "_system_config": FAST_HEALTH})
    try:
        yield head
    finally:
        ray.shutdown()
        head.shutdown()
        os.environ.pop("RAY_TMPDIR") if old is None else os.environ.__setitem__("RAY_TMPDIR", old)
        shutil.rmtree(tmp, ignore_errors=True)


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def config(**kwargs: Any) -> RunConfig:
    return RunConfig(agent="scripted:oracle", mode="synthesized", policy="default", progress=False, **kwargs)


def test_a_raylet_killed_mid_run_loses_and_duplicates_nothing(cluster, tmp_path, caplog):
    ray.cloudpickle.register_pickle_by_value(rollout_helpers)  # the workers cannot import tests/
    worker = cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    seeds, out = 2, tmp_path / "ray"
    runner = Runner(TASKS, config(seeds=seeds, concurrency=4, executor="ray", ray_address=cluster.address),
                    scratch_context(tmp_path / "ws"), out, agent_factory=functools.partial(SleepyOracle, 0.15))

    async def run_and_kill() -> int:
        running = asyncio.create_task(runner.run())
        deadline = time.monotonic() + 120
        while lines(out / TRAJECTORIES_FILE) < 3 and not running.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        at_kill = lines(out / TRAJECTORIES_FILE)
        worker.kill_raylet()
        await running
        return at_kill

    with caplog.at_level(logging.WARNING, logger="cworld.rollout"):
        at_kill = asyncio.run(run_and_kill())
    total = len(TASKS) * seeds
    assert 3 <= at_kill < total, "the raylet must die mid-run for this test to mean anything"
    assert any("Ray worker died" in r.getMessage() for r in caplog.records), "no episode was on the killed node"

    ray_run = {t.episode_id: t for t in read_trajectories(out)}
    assert lines(out / TRAJECTORIES_FILE) == len(ray_run) == total
    local = tmp_path / "local"
    asyncio.run(Runner(TASKS, config(seeds=seeds, concurrency=8), scratch_context(tmp_path / "ws2"), local).run())
    local_run = {t.episode_id: t for t in read_trajectories(local)}
    assert set(ray_run) == set(local_run)
    for eid, trajectory in local_run.items():
        assert without_timings(ray_run[eid]) == without_timings(trajectory), eid


def cworld_run(address: str, out: Path, seeds: int, *extra: str) -> list[str]:
    return [sys.executable, "-c", BOOT, "run", "--tasks", str(FIXTURE), "--agent", "scripted:oracle", "--mode",
            "synthesized", "--seeds", str(seeds), "--concurrency", "2", "--out", str(out), "--no-progress",
            "--executor", "ray", "--ray-address", address, *extra]


def test_the_driver_killed_then_resume_finishes_the_run_once(cluster, tmp_path):
    env = {**os.environ, "CWORLD_WORKSPACE": str(tmp_path / "ws")}
    seeds, out = 6, tmp_path / "run"
    path, total = out / TRAJECTORIES_FILE, len(TASKS) * seeds
    process = subprocess.Popen(cworld_run(cluster.address, out, seeds), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while lines(path) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()[-2000:] if process.stderr else ""
    survived = lines(path)
    assert 3 <= survived < total, "the driver must die mid-run for this test to mean anything"

    resumed = subprocess.run(cworld_run(cluster.address, out, seeds, "--resume"), env=env, capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{total - survived} episode(s) run, {survived} already done" in resumed.stdout
    ids = [t.episode_id for t in read_trajectories(path.parent)]
    expected = {episode_id(t.id, "scripted:oracle", "synthesized", "default", s) for t in TASKS for s in range(seeds)}
    assert len(ids) == len(set(ids)) == total and set(ids) == expected


def test_an_unreachable_cluster_is_one_line_and_a_non_zero_exit(tmp_path):
    env = {**os.environ, "CWORLD_WORKSPACE": str(tmp_path / "ws")}
    result = subprocess.run(cworld_run("127.0.0.1:1", tmp_path / "run", 1), env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0 and "cannot reach a Ray cluster at 127.0.0.1:1" in result.stderr
