"""The LLM-judge ensemble (paper §2.4): every judge model grades every applicable rubric dimension and
answers JSON; per dimension the verdict is the majority of pass/fail votes and the score the median.

An answer that does not parse is sent back for repair (the gateway's JSON repair loop); if it still
fails, or the model fails for good, that vote is *unscored*, never 0. A dimension with no usable vote
is unscored. A pass/fail tie (two usable votes that disagree) is settled by the median score against
the rubric's pass threshold, and noted.
"""

from __future__ import annotations

import asyncio
from statistics import median
from typing import Any

from pydantic import BaseModel, Field

from cworld.config import ModelConfig
from cworld.data_model import DimensionScore, JudgeVote, Trajectory, Usage
from cworld.errors import ModelError
from cworld.judges.condense import applies, evidence_for
from cworld.judges.content import JudgeContent, Rubric
from cworld.llm import Gateway, jsonrepair
from cworld.llm.completion import Completion

ROLE = "judge"


class JudgeAnswer(BaseModel):
    """What a judge must return for one dimension."""

    score: float = Field(ge=0, le=10, description="0-10 on the rubric's scale")
    passed: bool | None = Field(None, description="true when the score reaches the rubric's pass threshold")
    rationale: str = Field("", description="one to three sentences citing the evidence")


def messages_for(content: JudgeContent, rubric: Rubric, pieces: dict[str, str]) -> list[dict[str, str]]:
    system = content.prompts.system.safe_substitute(pass_threshold=f"{rubric.pass_threshold:g}")
    user = content.prompts.dimension.safe_substitute(
        title=rubric.title, question=rubric.question.strip(), scale=rubric.scale_text(),
        evidence=evidence_for(rubric, pieces), dimension=rubric.dimension,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _spent(completion: Completion) -> Usage:
    if completion.cached:
        return Usage(cache_hits=1)
    return Usage(calls=1, prompt_tokens=completion.usage.prompt_tokens,
                 completion_tokens=completion.usage.completion_tokens, cost_usd=completion.cost_usd)


async def ask(gateway: Gateway, judge: ModelConfig, messages: list[dict[str, str]], rubric: Rubric, *,
              max_repairs: int = 1) -> tuple[JudgeVote, Usage]:
    """One judge on one dimension: its vote (unscored when it never gave valid JSON) and what it cost."""
    usage = Usage()

    async def complete(role: str, convo: list[Any], **kwargs: Any) -> Completion:
        completion = await gateway.complete(role, convo, **kwargs)
        usage.add(_spent(completion))
        return completion

    kwargs: dict[str, Any] = {"model": judge}
    if gateway.supports_json_mode(judge.model):
        kwargs["response_format"] = {"type": "json_object"}
    try:
        answer = await jsonrepair.complete_json(complete, ROLE, messages, JudgeAnswer, max_repairs=max_repairs,
                                                hint=False, **kwargs)
    except ModelError as exc:
        return JudgeVote(judge=judge.model, rationale=f"unscored: {str(exc)[:300]}"), usage
    passed = answer.passed if answer.passed is not None else answer.score >= rubric.pass_threshold
    return JudgeVote(judge=judge.model, score=answer.score, passed=passed, rationale=answer.rationale), usage


def aggregate(rubric: Rubric, votes: list[JudgeVote]) -> DimensionScore:
    usable = [v for v in votes if v.score is not None and v.passed is not None]
    if not usable:
        return DimensionScore(dimension=rubric.dimension, votes=votes,
                              note="unscored: no judge gave a usable answer")
    score = float(median(v.score for v in usable if v.score is not None))
    yes = sum(1 for v in usable if v.passed)
    no = len(usable) - yes
    note = ""
    if yes == no:
        passed = score >= rubric.pass_threshold
        note = f"pass/fail tie {yes}-{no}: settled by the median score against {rubric.pass_threshold:g}"
    else:
        passed = yes > no
    if len(usable) < len(votes):
        note = (note + "; " if note else "") + f"{len(votes) - len(usable)} of {len(votes)} judge(s) unscored"
    return DimensionScore(dimension=rubric.dimension, votes=votes, score=score, passed=passed,
                          split=yes > 0 and no > 0, note=note)


async def judge_episode(gateway: Gateway, judges: list[ModelConfig], content: JudgeContent,
                        trajectory: Trajectory, pieces: dict[str, str], *,
                        max_repairs: int = 1) -> tuple[dict[str, DimensionScore], dict[str, Usage]]:
    """Every applicable dimension by every judge, concurrently (the gateway bounds each model)."""
    rubrics = [r for r in content.rubrics.values() if applies(r, trajectory)]
    jobs = [(r, j) for r in rubrics for j in judges]
    results = await asyncio.gather(*(ask(gateway, j, messages_for(content, r, pieces), r, max_repairs=max_repairs)
                                     for r, j in jobs))
    usage: dict[str, Usage] = {j.model: Usage() for j in judges}
    votes: dict[str, list[JudgeVote]] = {r.dimension: [] for r in rubrics}
    for (rubric, judge), (vote, spent) in zip(jobs, results, strict=True):
        votes[rubric.dimension].append(vote)
        usage[judge.model].add(spent)
    return {r.dimension: aggregate(r, votes[r.dimension]) for r in rubrics}, usage


def unscored_dimensions(content: JudgeContent, trajectory: Trajectory, reason: str) -> dict[str, DimensionScore]:
    """Offline: the applicable dimensions, each unscored with the reason (so reports can say so)."""
    return {r.dimension: DimensionScore(dimension=r.dimension, note=f"unscored: {reason}")
            for r in content.rubrics.values() if applies(r, trajectory)}
