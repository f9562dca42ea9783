"""kill -9 during `cworld run` (a real subprocess), then `--resume`: nothing lost, nothing duplicated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cworld.data_model import Task, read_jsonl
from cworld.rollout import TRAJECTORIES_FILE, episode_id, read_trajectories

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
SEEDS = 4
# `run` is registered in cworld/cli/main.py by the lead; the bootstrap makes this test independent of that.
BOOT = "import sys; from cworld.cli.main import COMMANDS, main; COMMANDS.setdefault('run', 'run'); main(sys.argv[1:])"


def cworld_run(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", BOOT, "run", "--tasks", str(FIXTURE), "--agent", "scripted:oracle", "--policy",
            "default", "--seeds", str(SEEDS), "--concurrency", "2", "--out", str(out), "--no-progress", *extra]


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    env = {**os.environ, "CWORLD_WORKSPACE": str(tmp_path / "ws"), "HF_HUB_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = tmp_path / "run"
    path = out / TRAJECTORIES_FILE
    tasks = read_jsonl(FIXTURE, Task)
    total = len(tasks) * SEEDS

    process = subprocess.Popen(cworld_run(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while count_lines(path) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()[-2000:] if process.stderr else ""
    before = path.read_bytes()
    survived = before.count(b"\n")
    assert 3 <= survived < total, "the run must be cut mid-way for this test to mean anything"

    resumed = subprocess.run(cworld_run(out, "--resume"), env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{total - survived} episode(s) run, {survived} already done" in resumed.stdout

    after = path.read_bytes()
    assert after.startswith(before[: before.rfind(b"\n") + 1])  # finished lines are never rewritten
    records = list(read_trajectories(out))
    ids = [r.episode_id for r in records]
    expected = {episode_id(t.id, "scripted:oracle", "live", "default", s) for t in tasks for s in range(SEEDS)}
    assert len(ids) == len(set(ids)) == total and set(ids) == expected
    assert all(r.status == "completed" for r in records)
