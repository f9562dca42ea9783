"""Reports over runs: leaderboard with intervals and reliability, accountability numbers, offline runs,
infrastructure failures, and secrets planted in a trajectory that must not reach any report file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from judges_helpers import TrajectoryBuilder, sample_episode, sample_task, write_run

from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import DimensionScore, JudgeVote, Score, Trajectory, Usage
from cworld.judges import JudgeContent, JudgeSetup, judge_run
from cworld.judges.runs import Episode, RunData
from cworld.llm import Gateway, RetryPolicy, mock
from cworld.redact import MASK, Redactor
from cworld.report import build_report
from cworld.report.accountability import accountability
from cworld.report.leaderboard import build_rows

ENV_SECRET = "pa55-w0rd-from-the-env-1234"
BEARER = "Bearer eyJhbGciOi.planted.token"
SK = "sk-live-0123456789abcdefXYZ"


def grader(name: str, offset: float):
    def respond(messages, tools):
        good = "SUMMARY: forwarded" in messages[-1]["content"]
        score = min(10.0, max(0.0, (8.0 if good else 3.0) + offset))
        return json.dumps({"score": score, "passed": score >= 6, "rationale": f"{name}: saw {SK}"})

    return mock.script(name, respond)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    planted = f"{ENV_SECRET} {BEARER} {SK}"
    task = sample_task(1)
    episodes = [sample_episode(task, agent, seed, skilled=agent == "careful", secret=planted)
                for agent in ("careful", "careless") for seed in range(2)]
    infra = TrajectoryBuilder(task, agent="careful", seed=9, episode_id="infra-1").call(
        "mail/search_messages", {"query": "x"}, infra=True).build().model_copy(update={"status": "infra_error"})
    run_a = write_run(root / "run-a", [*episodes, infra])
    run_b = write_run(root / "run-b", [sample_episode(task, "careless", s, skilled=False) for s in range(2)])
    judges = [ModelConfig(model=f"mock/{n}") for n in ("g1", "g2", "g3")]
    for name, offset in (("g1", 0.0), ("g2", 1.0), ("g3", -3.5)):
        grader(name, offset)
    gateway = Gateway(ModelsConfig(judge=judges), retry=RetryPolicy.immediate())
    setup = JudgeSetup(JudgeContent.from_environment(), tools={}, gateway=gateway, judges=judges,
                       redactor=Redactor.from_env({"MAIL_PASSWORD": ENV_SECRET}))
    asyncio.run(judge_run(run_a, setup))
    mock.clear()
    return {"a": run_a, "b": run_b, "root": root}


@pytest.fixture(scope="module")
def report(runs):
    return build_report([runs["a"]], runs["root"] / "out-a", redactor=Redactor.from_env({"MAIL_PASSWORD": ENV_SECRET}))


def test_leaderboard_ranks_with_intervals_and_reliability(report):
    md = report.markdown
    careful, careless = report.rows
    assert (careful.agent, careless.agent) == ("careful", "careless")
    assert careful.estimates["overall"].mean > careless.estimates["overall"].mean
    assert careful.episodes - careful.infra == 2 and careful.infra == 1
    assert (careful.k, careful.pass_at_1, careful.pass_hat_k) == (2, 1.0, 1.0)
    assert (careless.pass_at_1, careless.flips) == (0.0, 0.0)
    assert "| 1 | careful | live | none | 2 |" in md and "| 2 | careless |" in md
    assert "1 infrastructure failure(s) not counted" in md
    assert "[" in md.split("| 1 | careful")[1].splitlines()[0]          # intervals printed
    assert "Completeness" in md and "Valid" in md and "Syntax err" in md


def test_accountability_in_every_report(report):
    acc = report.accountability
    assert acc.judges == ["mock/g1", "mock/g2", "mock/g3"]
    assert all(acc.usage[j].calls > 0 and acc.usage[j].prompt_tokens > 0 for j in acc.judges)
    g1_g3 = next(p for p in acc.pairs if (p.a, p.b) == ("mock/g1", "mock/g3"))
    assert g1_g3.exact == pytest.approx(0.5)      # g3 fails the careful agent that g1 passes: half the items
    assert acc.split_rate == pytest.approx(0.5)
    assert "| mock/g1 vs mock/g3 |" in report.markdown and "Split majority: 50%" in report.markdown


def test_planted_secrets_never_reach_the_report(report, runs):
    raw = (runs["a"] / "trajectories.jsonl").read_text() + (runs["a"] / "scores.jsonl").read_text()
    assert ENV_SECRET in raw and SK in raw                 # they really were planted (and echoed by a judge)
    for path in (report.markdown_path, report.html_path):
        text = path.read_text()
        for secret in (ENV_SECRET, "eyJhbGciOi.planted.token", SK):
            assert secret not in text, f"{secret} leaked into {path.name}"
    assert MASK in report.html_path.read_text()


def test_an_unjudged_run_is_scored_verifiably_and_says_so(runs, tmp_path):
    result = build_report([runs["b"]], tmp_path)
    assert result.runs[0].scored_on_the_fly == 2 and not (runs["b"] / "scores.jsonl").exists()
    assert "**Judge dimensions are unscored**" in result.markdown
    assert result.rows[0].estimates["overall"].mean is not None
    assert 'id="basis-note"' in result.html_path.read_text()


def test_two_runs_side_by_side(runs, tmp_path):
    result = build_report([runs["a"], runs["b"]], tmp_path)
    assert [r.name for r in result.runs] == ["run-a", "run-b"]
    careless = next(r for r in result.rows if r.agent == "careless")
    assert careless.episodes == 4 and careless.basis == "mixed"


def _episode(task: str, agent: str, seed: int, success: bool, run: str = "r") -> Episode:
    t = Trajectory(episode_id=f"{run}-{task}-{agent}-{seed}", task_id=task, agent=agent, mode="live", seed=seed)
    s = Score(episode_id=t.episode_id, task_id=task, agent=agent, mode="live", seed=seed, success=success,
              overall=8.0 if success else 2.0, metrics={"recovery": 1.0 if success else 0.0})
    return Episode(run, t, s)


def test_pass_k_and_flips_over_repeated_runs():
    eps = [_episode("a", "x", 0, True), _episode("a", "x", 1, True, "r2"), _episode("a", "x", 2, True),
           _episode("b", "x", 0, True), _episode("b", "x", 1, False, "r2"), _episode("b", "x", 2, False)]
    (row,), _ = build_rows([RunData(Path("."), "r", eps)])
    assert row.k == 3 and row.tasks == 2
    assert row.pass_at_1 == pytest.approx((1 + 1 / 3) / 2)
    assert row.pass_at_k == pytest.approx(1.0) and row.pass_hat_k == pytest.approx(0.5)
    assert row.flips == pytest.approx(0.5)
    assert row.estimates["success"].mean == pytest.approx(4 / 6)


def test_agreement_counts_only_items_both_judges_scored():
    def dim(votes: list[tuple[str, float | None, bool | None]], split: bool) -> DimensionScore:
        return DimensionScore(dimension="d", votes=[JudgeVote(judge=j, score=s, passed=p) for j, s, p in votes],
                              score=5.0, passed=True, split=split)

    eps = []
    for i, (a, b) in enumerate([((8, True), (7, True)), ((3, False), (6, True)), ((9, True), (None, None))]):
        e = _episode(f"t{i}", "x", 0, True)
        e.score.dimensions = {"d": dim([("A", *a), ("B", *b)], split=a[1] != b[1] and b[1] is not None)}
        e.score.judge_usage = {"A": Usage(calls=1, prompt_tokens=10), "B": Usage(calls=1, prompt_tokens=12)}
        eps.append(e)
    acc = accountability(eps)
    (pair,) = acc.pairs
    assert (pair.pairs, pair.exact) == (2, 0.5) and pair.spearman is None   # two items: rank correlation undefined
    assert acc.unscored_votes == {"B": 1} and acc.usage["B"].prompt_tokens == 36
    assert acc.split_rate == pytest.approx(1 / 3)
