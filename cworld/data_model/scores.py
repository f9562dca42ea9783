"""Scores: verifiable metrics and judge verdicts for one trajectory (`scores.jsonl`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cworld.data_model.trajectory import Usage
from cworld.data_model.versioning import Versioned


class JudgeVote(BaseModel):
    judge: str
    score: float | None = Field(None, description="0-10; None when the answer could not be parsed (unscored)")
    passed: bool | None = None
    rationale: str = ""


class DimensionScore(BaseModel):
    dimension: str
    votes: list[JudgeVote] = Field(default_factory=list)
    score: float | None = Field(None, description="median of parsed scores; None = unscored")
    passed: bool | None = Field(None, description="majority vote on pass/fail; None = unscored")
    split: bool = Field(False, description="the majority was not unanimous")


class Score(Versioned):
    episode_id: str
    task_id: str
    agent: str
    mode: str
    seed: int = 0
    metrics: dict[str, float | None] = Field(default_factory=dict)
    constraints: dict[str, bool | None] = Field(default_factory=dict, description="constraint id -> verified")
    dimensions: dict[str, DimensionScore] = Field(default_factory=dict)
    overall: float | None = None
    success: bool | None = None
    judge_usage: dict[str, Usage] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
