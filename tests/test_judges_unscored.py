"""Issue 27: every unscored judge vote and every engine fallback is counted in the scores, `cworld judge` and
the report; a run whose votes were more than 10% unscored says so on its last line; an episode recorded
again (an infra_error run again on resume) is judged again."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from judges_helpers import TrajectoryBuilder, sample_episode, sample_task, write_run

from cworld.cli.judge import command as judge_command
from cworld.cli.report import command as report_command
from cworld.data_model import Score, read_jsonl
from cworld.data_model.tools import ToolResult
from cworld.judges import JudgeContent, JudgeSetup, judge_run
from cworld.llm import mock


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    task = sample_task(3)
    episodes = [sample_episode(task, agent, 0, skilled=agent == "good") for agent in ("good", "bad")]
    fell_back = episodes[0].steps[0]
    assert fell_back.raw_result is not None
    fell_back.raw_result.meta.update(fallback=True, fallback_reason="model error: quota spent")
    return write_run(tmp_path / "ws" / "runs" / "r1", episodes)


def invoke(command, args: list[str], ws: Path):
    return CliRunner().invoke(command, args, obj={"env_dir": None, "workspace": str(ws)}, catch_exceptions=False)


def last_line(output: str) -> str:
    return [line for line in output.splitlines() if line.strip()][-1]


def flaky_judge(every: int):
    """A judge whose every `every`-th answer is prose (an unscored vote: no repairs are allowed)."""
    counter = itertools.count(1)

    def answer(messages, tools) -> str:
        if next(counter) % every == 0:
            return "I would rather not say."
        return json.dumps({"score": 7, "passed": True, "rationale": "ok"})

    return answer


def test_a_run_with_more_than_a_tenth_of_its_votes_unscored_says_so_last(run_dir: Path, tmp_path: Path) -> None:
    ws = run_dir.parents[1]
    mock.script("flaky", flaky_judge(every=3))
    judged = invoke(judge_command, [str(run_dir), "--judges", "mock/flaky", "--max-repairs", "0"], ws)
    assert judged.exit_code == 0, judged.output
    scores = read_jsonl(run_dir / "scores.jsonl", Score)
    votes = [v for s in scores for d in s.dimensions.values() for v in d.votes]
    unscored = sum(v.score is None for v in votes)
    assert votes and unscored / len(votes) > 0.1
    assert f"judge votes: {len(votes)}, unscored: {unscored}" in judged.output
    assert last_line(judged.output).startswith(f"warning: {unscored} of {len(votes)} judge votes")
    reported = invoke(report_command, [str(run_dir), "--out", str(tmp_path / "rep"), "--quiet"], ws)
    assert last_line(reported.output).startswith(f"warning: {unscored} of {len(votes)} judge votes")
    assert f"engine fallbacks: 1; judge votes: {len(votes)}, unscored: {unscored}" in reported.output
    board = (tmp_path / "rep" / "leaderboard.md").read_text()
    assert (f"Engine fallbacks: 1 tool answer(s) in 1 episode(s) made without the engine's model; unscored judge "
            f"votes: {unscored} of {len(votes)}.") in board
    assert [s.engine_fallbacks for s in scores] == [1, 0]


def test_a_run_with_every_vote_scored_ends_without_the_warning(run_dir: Path) -> None:
    ws = run_dir.parents[1]
    mock.script("steady", flaky_judge(every=10_000))
    judged = invoke(judge_command, [str(run_dir), "--judges", "mock/steady"], ws)
    assert "warning" not in judged.output and last_line(judged.output).endswith("unscored: 0")


async def test_an_episode_recorded_again_is_judged_again(tmp_path: Path) -> None:
    task = sample_task(4)
    down = TrajectoryBuilder(task, episode_id="e-1").call("mail/search_messages", infra=True).final(
        "", status="infra_error").build()
    run = write_run(tmp_path / "run", [down])
    setup = JudgeSetup(JudgeContent.from_environment(), tools={})
    first = await judge_run(run, setup)
    assert first.judged == 1 and read_jsonl(run / "scores.jsonl", Score)[0].status == "infra_error"
    back = TrajectoryBuilder(task, episode_id="e-1").call("mail/search_messages", result={"messages": []}).final(
        "none found").build()
    back.steps[0].raw_result = ToolResult.ok({"messages": []}, fallback=True)
    write_run(run, [back])  # what `cworld run --resume` appends: the same id, a new record
    again = await judge_run(run, setup)
    (score,) = read_jsonl(run / "scores.jsonl", Score)
    assert (again.judged, again.episodes) == (1, 1) and score.status == "completed" and score.engine_fallbacks == 1
