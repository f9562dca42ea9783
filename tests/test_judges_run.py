"""`cworld judge` and `cworld report` on a run folder: scores.jsonl beside the trajectories, resume,
offline mode that says the judge dimensions are unscored, judge answers cached across runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from judges_helpers import TrajectoryBuilder, sample_episode, sample_task, write_run

from cworld.cli.judge import command as judge_command
from cworld.cli.report import command as report_command
from cworld.data_model import Score, read_jsonl
from cworld.environment import Workspace
from cworld.judges import JudgeContent, JudgeSetup, judge_run, load_scores
from cworld.llm import mock


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    task = sample_task(3)
    episodes = [sample_episode(task, agent, 0, skilled=agent == "good") for agent in ("good", "bad")]
    return write_run(tmp_path / "ws" / "runs" / "r1", episodes)


def invoke(command, args: list[str], ws: Path):
    return CliRunner().invoke(command, args, obj={"env_dir": None, "workspace": str(ws)}, catch_exceptions=False)


async def test_offline_judging_writes_scores_and_resumes(run_dir: Path):
    setup = JudgeSetup(JudgeContent.from_environment(), tools={})
    first = await judge_run(run_dir, setup)
    assert (first.judged, first.skipped, first.judges) == (2, 0, [])
    scores = load_scores(run_dir)
    assert len(scores) == 2 and all(s.overall_basis == "verifiable only" for s in scores.values())
    assert all(d.unscored and "no judge model configured" in d.note
               for s in scores.values() for d in s.dimensions.values())
    again = await judge_run(run_dir, setup)
    assert (again.judged, again.skipped) == (0, 2)
    assert len((run_dir / "scores.jsonl").read_text().splitlines()) == 2


async def test_resume_survives_a_torn_line_and_judges_new_episodes(run_dir: Path):
    setup = JudgeSetup(JudgeContent.from_environment(), tools={})
    await judge_run(run_dir, setup)
    with (run_dir / "scores.jsonl").open("a") as fh:
        fh.write('{"episode_id": "torn')                      # a crash mid-write
    extra = TrajectoryBuilder(sample_task(4), agent="late", episode_id="late-1").final("hi").build()
    write_run(run_dir, [extra])
    report = await judge_run(run_dir, setup)
    assert report.judged == 1 and report.skipped == 2
    ids = [s.episode_id for s in read_jsonl(run_dir / "scores.jsonl", Score)]
    assert ids[-1] == "late-1" and len(ids) == 3


def test_cli_offline_says_judge_dimensions_are_unscored(run_dir: Path):
    ws = run_dir.parents[1]
    Workspace(ws).mark_latest("run", run_dir)
    result = invoke(judge_command, [], ws)
    assert result.exit_code == 0, result.output
    assert "judge dimensions unscored" in result.output and "verifiable metrics only" in result.output
    assert (run_dir / "scores.jsonl").is_file()


def test_cli_judges_with_models_caches_and_rejudges_after_offline(run_dir: Path):
    ws = run_dir.parents[1]
    invoke(judge_command, [str(run_dir)], ws)                                       # offline first
    script = mock.script("cj", lambda messages, tools: json.dumps({"score": 7, "passed": True, "rationale": "ok"}))
    result = invoke(judge_command, [str(run_dir), "--judges", "mock/cj"], ws)
    assert result.exit_code == 0, result.output
    assert "judged 2 of 2" in result.output and "mock/cj" in result.output        # new judge set: judged again
    calls = len(script.calls)
    assert calls > 0
    scores = load_scores(run_dir)
    assert all(s.judges == ["mock/cj"] and s.overall_basis == "verifiable+judges" for s in scores.values())
    forced = invoke(judge_command, [str(run_dir), "--judges", "mock/cj", "--force"], ws)
    assert len(script.calls) == calls and "cache hit" in forced.output              # answered from the LLM cache


def test_cli_report_prints_the_leaderboard_and_writes_files(run_dir: Path, tmp_path: Path):
    ws = run_dir.parents[1]
    out = tmp_path / "rep"
    result = invoke(report_command, [str(run_dir), "--out", str(out)], ws)
    assert result.exit_code == 0, result.output
    assert "cworld leaderboard" in result.output and "good" in result.output
    assert (out / "leaderboard.md").is_file() and (out / "report.html").is_file()
    assert str(out / "report.html") in result.output


def test_cli_all_judges_and_reports_every_run_of_the_workspace(run_dir: Path):
    ws = run_dir.parents[1]
    write_run(ws / "runs" / "r2", [sample_episode(sample_task(5), "other", 0, skilled=True)])
    result = invoke(judge_command, ["--all", "--offline"], ws)
    assert result.exit_code == 0, result.output
    assert result.output.count("judged ") == 2 and "turned off with --offline" in result.output
    assert (ws / "runs" / "r2" / "scores.jsonl").is_file() and (run_dir / "scores.jsonl").is_file()
    report = invoke(report_command, ["--all", "--quiet"], ws)
    assert report.exit_code == 0, report.output
    html_path = Path(report.output.split("report:")[1].strip())
    assert html_path.parent.parent == ws / "reports" and "other" in html_path.read_text()
    both = CliRunner().invoke(report_command, ["--all", str(run_dir)], obj={"env_dir": None, "workspace": str(ws)})
    assert both.exit_code != 0 and "not both" in both.output


def test_judges_named_on_the_command_line_take_the_judge_roles_settings(tmp_path: Path) -> None:
    """`--judges M` for a model the config does not list runs with the judge role's settings (its token cap,
    extras; endpoint and key only for the same provider: `ModelsConfig.for_model`), as `--agent M` does, not
    with bare defaults."""
    from cworld.cli.judge import _gateway

    root = tmp_path / "ws"
    root.mkdir()
    (root / "config.yaml").write_text(
        "models:\n  judge:\n    - {model: mock/cj, max_tokens: 321, temperature: 0.2, api_base: 'http://x:1/v1'}\n")
    setup = JudgeSetup(JudgeContent.from_environment(None), tools={})
    gateway = _gateway(Workspace.resolve(root), ["mock/other", "mock/cj"], setup)
    assert gateway is not None
    gateway.close()
    named, listed = setup.judges
    assert (named.model, named.max_tokens, named.temperature, named.api_base) == ("mock/other", 321, 0.2, "http://x:1/v1")
    assert listed.model == "mock/cj" and listed.max_tokens == 321


def test_cli_judges_several_runs_in_one_call(run_dir: Path):
    ws = run_dir.parents[1]
    other = write_run(ws / "runs" / "r2", [sample_episode(sample_task(5), "other", 0, skilled=True)])
    result = invoke(judge_command, [str(run_dir), str(other)], ws)
    assert result.exit_code == 0, result.output
    assert result.output.count("judged ") == 2
    assert (other / "scores.jsonl").is_file() and (run_dir / "scores.jsonl").is_file()
