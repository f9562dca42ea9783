"""Scores: verifiable metrics and judge verdicts for one trajectory (`scores.jsonl`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cworld.data_model.trajectory import Usage
from cworld.data_model.versioning import Versioned


class JudgeVote(BaseModel):
    judge: str
    score: float | None = Field(None, description="0-10; None when the answer could not be parsed (unscored)")
    passed: bool | None = Field(None, description="the score against the rubric's threshold, never the model's word")
    claimed_passed: bool | None = Field(
        None, description="the model's own 'passed' when it contradicted its score: a judge the evidence may have swayed"
    )
    rationale: str = ""


class DimensionScore(BaseModel):
    dimension: str
    votes: list[JudgeVote] = Field(default_factory=list)
    score: float | None = Field(None, description="median of parsed scores; None = unscored")
    passed: bool | None = Field(None, description="majority vote on pass/fail; None = unscored")
    split: bool = Field(False, description="the majority was not unanimous")
    note: str = Field("", description="why the dimension is unscored, when it is")

    @property
    def unscored(self) -> bool:
        return self.score is None and self.passed is None


class Score(Versioned):
    episode_id: str
    task_id: str
    agent: str
    mode: str
    policy: str = "none"
    seed: int = 0
    status: str = Field("", description="the episode's status (an infra_error episode is never held against the agent)")
    metrics: dict[str, float | None] = Field(default_factory=dict)
    constraints: dict[str, bool | None] = Field(default_factory=dict, description="constraint id -> verified")
    dimensions: dict[str, DimensionScore] = Field(default_factory=dict)
    overall: float | None = None
    overall_basis: str = Field("", description="'verifiable+judges', 'verifiable only' (judges unscored) or ''")
    success: bool | None = None
    judges: list[str] = Field(default_factory=list, description="the judge models asked; empty = offline")
    personas: dict[str, float | None] = Field(default_factory=dict, description="persona -> 0-1, from the logs")
    judge_usage: dict[str, Usage] = Field(default_factory=dict)
    engine_fallbacks: int = Field(0, description="tool answers the World Engine made without its model")
    details: dict[str, Any] = Field(default_factory=dict)
