"""Ranking fidelity statistics: rho/tau, bootstrap intervals over tasks, per-task agreement, references."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.stats import kendalltau, spearmanr

from cworld.data_model import Score
from cworld.errors import UsageError
from cworld.fidelity.stats import compare_rankings
from cworld.fidelity.tables import AGENT_LEVEL, ScoreTable, metric_value, table_from_csv

AGENTS = ["a", "b", "c", "d", "e"]


def table(name: str, scores: dict[str, list[float]], seeds: int = 1) -> ScoreTable:
    """Agent -> one value per task (t0, t1, ...), repeated for each seed."""
    out = ScoreTable(name)
    for agent, values in scores.items():
        for i, v in enumerate(values):
            for _ in range(seeds):
                out.add(agent, f"t{i}", v)
    return out


LIVE = {"a": [9, 8, 9, 7], "b": [7, 7, 6, 8], "c": [5, 6, 5, 4], "d": [4, 3, 5, 3], "e": [1, 2, 1, 2]}


def test_identical_rankings_give_one_with_a_tight_interval() -> None:
    shifted = {k: [v - 1.5 for v in vals] for k, vals in LIVE.items()}
    c = compare_rankings(table("live", LIVE), table("synth", shifted), bootstrap=300)
    assert c.spearman.value == pytest.approx(1.0) and c.kendall.value == pytest.approx(1.0)
    assert c.spearman.low is not None and c.spearman.low <= 1.0 <= (c.spearman.high or 0) + 1e-9
    assert [r.agent for r in c.agents] == AGENTS and all(r.rank_a == r.rank_b for r in c.agents)
    assert c.mean_task_agreement == pytest.approx(1.0)


def test_point_estimates_match_scipy_and_intervals_bracket_them() -> None:
    synth = {"a": [6, 7, 5, 6], "b": [8, 7, 7, 9], "c": [4, 6, 5, 5], "d": [5, 2, 4, 3], "e": [2, 1, 3, 1]}
    c = compare_rankings(table("live", LIVE), table("synth", synth), bootstrap=500, seed=3)
    means_l = [sum(LIVE[a]) / 4 for a in AGENTS]
    means_s = [sum(synth[a]) / 4 for a in AGENTS]
    assert c.spearman.value == pytest.approx(spearmanr(means_l, means_s).statistic)
    assert c.kendall.value == pytest.approx(kendalltau(means_l, means_s).statistic)
    assert c.spearman.low <= c.spearman.value <= c.spearman.high  # type: ignore[operator]
    assert c.kendall.low <= c.kendall.value <= c.kendall.high  # type: ignore[operator]
    again = compare_rankings(table("live", LIVE), table("synth", synth), bootstrap=500, seed=3)
    assert (again.spearman.low, again.spearman.high) == (c.spearman.low, c.spearman.high)  # seeded
    worst = c.per_task[0]
    assert worst.agreement < 1.0 and worst.agreement == min(t.agreement for t in c.per_task)


def test_reversed_ranking_is_minus_one_and_seeds_average_first() -> None:
    reverse = {k: [10 - v for v in vals] for k, vals in LIVE.items()}
    c = compare_rankings(table("live", LIVE, seeds=3), table("synth", reverse), bootstrap=200)
    assert c.spearman.value == pytest.approx(-1.0)
    assert c.mean_task_agreement == pytest.approx(1 / 40)  # only t2's c/d tie is alike (tied on both sides)


def test_only_common_agents_and_complete_tasks_count() -> None:
    synth = dict(LIVE)
    synth["zz"] = [1, 1, 1, 1]
    live = table("live", LIVE)
    live.add("a", "t9", 0.0)  # a task only one agent ran is not comparable
    c = compare_rankings(live, table("synth", synth), bootstrap=100)
    assert [r.agent for r in c.agents] == AGENTS and c.tasks == ["t0", "t1", "t2", "t3"]


def test_too_few_or_no_common_agents_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="no agent appears in both"):
        compare_rankings(table("live", {"a": [1], "b": [2]}), table("synth", {"x": [1], "y": [2]}))
    with pytest.raises(UsageError, match="only 2 agent"):
        compare_rankings(table("live", {"a": [1], "b": [2], "c": [3]}), table("synth", {"a": [1], "b": [2]}))


def test_a_constant_side_has_no_correlation() -> None:
    flat = {k: [5.0] * 4 for k in LIVE}
    c = compare_rankings(table("live", LIVE), table("synth", flat), bootstrap=100)
    assert c.spearman.value is None and c.spearman.low is None
    assert any("constant side" in n for n in c.notes)


def test_reference_csv_per_agent_and_per_task(tmp_path: Path) -> None:
    per_agent = tmp_path / "human.csv"
    per_agent.write_text("Agent,Score\na,4.5\nb,4\nc,3\nd,2.5\ne,1\n")
    ref = table_from_csv(per_agent)
    assert ref.agent_level and ref.task_mean("a", AGENT_LEVEL) == 4.5
    c = compare_rankings(table("live", LIVE), ref, bootstrap=200)
    assert c.spearman.value == pytest.approx(1.0) and c.per_task == []
    assert any("resampled on each side apart" in n for n in c.notes)
    per_task = tmp_path / "tasks.csv"
    per_task.write_text(
        "task_id,agent,score\n"
        + "".join(f"t{i},{a},{v}\n" for a, vals in LIVE.items() for i, v in enumerate(vals))
    )
    assert (
        compare_rankings(table("live", LIVE), table_from_csv(per_task), bootstrap=100).mean_task_agreement
        == 1.0
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("agent,rating\na,1\n", "missing column"),
        ("agent,score\na,high\n", "not a number"),
        ("agent,score\n", "no scores"),
    ],
)
def test_bad_reference_files(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(UsageError, match=expected):
        table_from_csv(path)
    with pytest.raises(UsageError, match="no such reference"):
        table_from_csv(tmp_path / "missing.csv")


def test_metric_values() -> None:
    score = Score(
        episode_id="e",
        task_id="t",
        agent="a",
        mode="live",
        overall=7.5,
        success=False,
        metrics={"R_c": 0.5, "recovery": None},
    )
    assert metric_value(score, "overall") == 7.5
    assert metric_value(score, "success") == 0.0
    assert metric_value(score, "R_c") == 0.5
    assert metric_value(score, "recovery") is None and metric_value(score, "nope") is None
