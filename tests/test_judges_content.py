"""The judges' content files (rubrics, prompts, weights) and the overall score they define."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cworld.data_model import DimensionScore
from cworld.environment import Environment
from cworld.errors import ContentError
from cworld.judges import BASIS_ALL, BASIS_VERIFIABLE, JudgeContent, Weights, overall

PAPER_DIMENSIONS = {"completeness", "grounding", "format", "tradeoff", "goal_decomposition", "progress_tracking"}


def test_the_default_rubrics_cover_the_paper_dimensions_with_full_scales():
    content = JudgeContent.from_environment()
    assert set(content.rubrics) == PAPER_DIMENSIONS
    for rubric in content.rubrics.values():
        assert min(rubric.scale) == 0 and max(rubric.scale) == 10 and len(rubric.scale) >= 5
    assert set(content.weights.judges) == PAPER_DIMENSIONS
    prompt = content.prompts.dimension.substitute(title="T", question="Q", scale="S", evidence="E")
    assert "T" in prompt and "E" in prompt


def copy_judges(tmp_path: Path) -> Path:
    target = tmp_path / "judges"
    shutil.copytree(Environment.resolve().judges, target)
    return target


def test_a_broken_rubric_names_its_file(tmp_path: Path):
    folder = copy_judges(tmp_path)
    (folder / "rubrics" / "grounding.yaml").write_text("dimension: grounding\ntitle: G\nquestion: q\nshows: [nonsense]\n"
                                                       "scale: {0: bad, 10: good}\n")
    with pytest.raises(ContentError, match=r"grounding\.yaml: shows\.0"):
        JudgeContent.load(folder)


def test_duplicate_dimensions_and_negative_weights_are_refused(tmp_path: Path):
    folder = copy_judges(tmp_path)
    shutil.copy(folder / "rubrics" / "format.yaml", folder / "rubrics" / "zz_format_again.yaml")
    with pytest.raises(ContentError, match="defined twice"):
        JudgeContent.load(folder)
    (folder / "rubrics" / "zz_format_again.yaml").unlink()
    (folder / "weights.yaml").write_text("verifiable: {order: -1}\n")
    with pytest.raises(ContentError, match="weights must be >= 0"):
        JudgeContent.load(folder)


def test_overall_is_ten_times_the_weighted_mean_of_the_parts_that_have_a_value():
    weights = Weights(verifiable={"order": 1.0, "recovery": 1.0, "R_b_complement": 2.0},
                      judges={"completeness": 2.0, "format": 1.0})
    metrics = {"order": 0.5, "recovery": None, "R_b": 0.25}
    dims = {"completeness": DimensionScore(dimension="completeness", score=8.0, passed=True),
            "format": DimensionScore(dimension="format")}            # unscored: drops out
    result = overall(metrics, dims, weights)
    # order 0.5 (w1), R_b complement 0.75 (w2), completeness 0.8 (w2) -> (0.5 + 1.5 + 1.6) / 5 = 0.72
    assert result.score == pytest.approx(7.2) and result.basis == BASIS_ALL
    assert result.parts == {"order": 0.5, "R_b_complement": 0.75, "judge:completeness": 0.8}


def test_with_every_judge_unscored_the_overall_is_verifiable_only():
    weights = Weights(verifiable={"order": 1.0}, judges={"completeness": 3.0})
    result = overall({"order": 0.4}, {"completeness": DimensionScore(dimension="completeness")}, weights)
    assert result.score == pytest.approx(4.0) and result.basis == BASIS_VERIFIABLE
    assert overall({}, {}, weights).score is None
