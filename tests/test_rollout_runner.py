"""The runner: one fsynced line per episode, resume without loss or duplicates, infrastructure retries,
timeouts, bounded concurrency, the summary, and `cworld run` itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rollout_helpers import CrashingServer, SleepyAgent, scratch_context, succeeded

from cworld.cli.main import COMMANDS, cli
from cworld.data_model import Task, read_jsonl
from cworld.errors import UsageError
from cworld.rollout import TRAJECTORIES_FILE, RunConfig, Runner, TrajectoryStore, episode_id

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = read_jsonl(FIXTURE, Task)


def lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / TRAJECTORIES_FILE).read_text().splitlines()]


async def test_every_episode_lands_once_and_resume_skips_them(tmp_path):
    ctx = scratch_context(tmp_path / "ws")
    config = RunConfig(agent="scripted:oracle", policy="light", seeds=2, concurrency=3, progress=False)
    report = await Runner(TASKS[:3], config, ctx, tmp_path / "run").run()
    records = lines(tmp_path / "run")
    expected = {episode_id(t.id, "scripted:oracle", "live", "light", s) for t in TASKS[:3] for s in range(2)}
    assert {r["episode_id"] for r in records} == expected and len(records) == 6
    assert report.ran == 6 and report.statuses["completed"] == 6
    (row,) = report.rows
    assert (row.agent, row.episodes, row.state_matched, row.state_checked) == ("scripted:oracle", 6, 6, 6)
    with pytest.raises(UsageError, match="--resume"):
        await Runner(TASKS[:3], config, ctx, tmp_path / "run").run()
    config.resume = True
    again = await Runner(TASKS[:3], config, ctx, tmp_path / "run").run()
    assert again.ran == 0 and again.skipped == 6 and len(lines(tmp_path / "run")) == 6


async def test_resume_cuts_a_torn_last_line_and_reruns_only_that_episode(tmp_path):
    ctx = scratch_context(tmp_path / "ws")
    config = RunConfig(agent="scripted:oracle", policy="none", seeds=1, progress=False)
    await Runner(TASKS[:2], config, ctx, tmp_path / "run").run()
    path = tmp_path / "run" / TRAJECTORIES_FILE
    first, second = path.read_text().splitlines()
    path.write_text(first + "\n" + second[: len(second) // 2])  # killed mid-write
    config.resume = True
    report = await Runner(TASKS[:2], config, ctx, tmp_path / "run").run()
    records = lines(tmp_path / "run")
    assert report.ran == 1 and [r["task_id"] for r in records] == [TASKS[0].id, TASKS[1].id]
    assert json.loads(first) == records[0]


async def test_infrastructure_failures_are_retried_then_recorded_never_blamed_on_the_agent(tmp_path):
    crash = CrashingServer(episodes=2)
    ctx = scratch_context(tmp_path / "ws", middlewares=[crash])
    config = RunConfig(agent="scripted:oracle", policy="none", infra_retries=2, concurrency=1, progress=False)
    (recovered,) = [await Runner(TASKS[:1], config, ctx, tmp_path / "a").run_one(TASKS[0], 0)]
    assert recovered.status == "completed" and succeeded(recovered)
    assert [e.attempt for e in recovered.infra_errors] == [1, 2] and "server_crash" in recovered.infra_errors[0].kind

    crash.episodes = 1000  # the server never comes back
    config.infra_retries = 1
    failed = await Runner(TASKS[:1], config, ctx, tmp_path / "b").run_one(TASKS[0], 0)
    assert failed.status == "infra_error" and len(failed.infra_errors) == 2
    assert all("exited" in e.message for e in failed.infra_errors)


async def test_an_episode_that_runs_too_long_is_cut_and_recorded_as_timeout(tmp_path):
    ctx = scratch_context(tmp_path / "ws")
    config = RunConfig(agent="scripted:oracle", policy="none", timeout_s=0.3, progress=False)
    runner = Runner(TASKS[:1], config, ctx, tmp_path / "run", agent_factory=lambda: SleepyAgent(0.1))
    report = await runner.run()
    (record,) = list(TrajectoryStore(tmp_path / "run"))
    assert report.statuses == {"timeout": 1} and record.status == "timeout"
    assert 1 <= len(record.steps) <= 3 and all(s.kind == "message" for s in record.steps)


@pytest.fixture
def cli_runner(monkeypatch, tmp_path):
    monkeypatch.setitem(COMMANDS, "run", "run")  # the lead registers it in cworld/cli/main.py
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("COLUMNS", "160")
    return CliRunner()


def test_cworld_run_prints_a_summary_and_chains_through_the_workspace(cli_runner, tmp_path):
    args = ["run", "--tasks", str(FIXTURE), "--agent", "scripted:no-retry", "--policy", "light", "--limit", "2",
            "--seeds", "2", "--no-progress"]
    done = cli_runner.invoke(cli, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "run summary" in done.output and "scripted:no-retry / live / light" in done.output
    latest = Path((tmp_path / "ws" / "LATEST_RUN").read_text().strip())
    assert len(lines(latest)) == 4
    resumed = cli_runner.invoke(cli, [*args, "--resume", "--json"], catch_exceptions=False)
    report = json.loads(resumed.output)
    assert report["ran"] == 0 and report["skipped"] == 4 and report["out"] == str(latest)
    assert report["rows"][0]["episodes"] == 4


@pytest.mark.parametrize(("extra", "message"), [
    (["--agent", "scripted:sloppy"], "unknown scripted agent"),
    (["--agent", "scripted:oracle", "--policy", "nope"], "unknown fault policy"),
    (["--agent", "scripted:oracle", "--access", "rag-0"], "unknown tool access mode"),
    (["--agent", "scripted:oracle", "--seeds", "0"], "--seeds must be at least 1"),
])
def test_cworld_run_rejects_bad_options_in_one_line(cli_runner, tmp_path, capsys, extra, message):
    from cworld.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["run", "--tasks", str(FIXTURE), "--out", str(tmp_path / "run"), "--no-progress", *extra])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / TRAJECTORIES_FILE).exists()
