"""The LLM-judge ensemble (paper §2.4): every judge model grades every applicable rubric dimension and
answers JSON; per dimension the verdict is the majority of pass/fail votes and the score the median.

Each judge is shown evidence sized to its own context window (`budget.py`). A vote's `passed` is its
score against the rubric's threshold, never the model's own `passed`: a judge talked into "passed"
by text in the evidence would otherwise pass a failing episode. When the model's `passed` contradicts
its score the vote keeps it as `claimed_passed` and the dimension's note says so.

An answer that does not parse is sent back for repair (the gateway's JSON repair loop); if it still
fails, or the model fails for good, that vote is *unscored*, never 0. A dimension with no usable vote
is unscored. A pass/fail tie (two usable votes that disagree) is settled by the median score against
the rubric's pass threshold, and noted.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from pydantic import BaseModel, Field

from cworld.config import ModelConfig
from cworld.data_model import DimensionScore, JudgeVote, Trajectory, Usage
from cworld.errors import ModelError
from cworld.judges.budget import evidence_budget
from cworld.judges.condense import Evidence, applies, evidence, evidence_for
from cworld.judges.content import JudgeContent, Rubric
from cworld.llm import Gateway, jsonrepair
from cworld.llm.completion import Completion
from cworld.redact import Redactor

ROLE = "judge"


class JudgeAnswer(BaseModel):
    """What a judge must return for one dimension."""

    score: float = Field(ge=0, le=10, description="0-10 on the rubric's scale")
    passed: bool | None = Field(None, description="true when the score reaches the rubric's pass threshold; "
                                "checked against the score, never trusted")
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
    return vote_of(judge.model, answer, rubric), usage


def vote_of(judge: str, answer: JudgeAnswer, rubric: Rubric) -> JudgeVote:
    """The vote an answer stands for: passed from the score; the model's own `passed` kept if it disagrees."""
    passed = answer.score >= rubric.pass_threshold
    claimed = answer.passed if answer.passed is not None and answer.passed != passed else None
    return JudgeVote(judge=judge, score=answer.score, passed=passed, claimed_passed=claimed, rationale=answer.rationale)


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
    contradicted = [v for v in usable if v.claimed_passed is not None]
    if contradicted:
        said = ", ".join(f"{v.judge} said passed={str(v.claimed_passed).lower()} with {v.score:g}" for v in contradicted)
        note = (note + "; " if note else "") + (f"{said} (threshold {rubric.pass_threshold:g}): "
                                                "passed taken from the score")
    return DimensionScore(dimension=rubric.dimension, votes=votes, score=score, passed=passed,
                          split=yes > 0 and no > 0, note=note)


@dataclass
class EnsembleResult:
    """Per dimension the verdict; per judge model what it cost and the evidence it was shown."""

    dimensions: dict[str, DimensionScore]
    usage: dict[str, Usage]
    evidence: dict[str, Evidence] = field(default_factory=dict)

    def evidence_stats(self) -> dict[str, dict[str, object]]:
        return {model: shown.stats() for model, shown in self.evidence.items()}


async def judge_episode(gateway: Gateway, judges: list[ModelConfig], content: JudgeContent,
                        trajectory: Trajectory, redactor: Redactor, *, evidence_chars: int | None = None,
                        max_repairs: int = 1) -> EnsembleResult:
    """Every applicable dimension by every judge, concurrently (the gateway bounds each model); each judge
    shown the evidence its context allows (`evidence_chars` sets it for all)."""
    rubrics = [r for r in content.rubrics.values() if applies(r, trajectory)]
    shown = evidence_per_judge(trajectory, redactor, judges, evidence_chars)
    jobs = [(r, j) for r in rubrics for j in judges]
    results = await asyncio.gather(*(ask(gateway, j, messages_for(content, r, shown[j.model].pieces), r,
                                         max_repairs=max_repairs) for r, j in jobs))
    usage: dict[str, Usage] = {j.model: Usage() for j in judges}
    votes: dict[str, list[JudgeVote]] = {r.dimension: [] for r in rubrics}
    for (rubric, judge), (vote, spent) in zip(jobs, results, strict=True):
        votes[rubric.dimension].append(vote)
        usage[judge.model].add(spent)
    dimensions = {r.dimension: aggregate(r, votes[r.dimension]) for r in rubrics}
    return EnsembleResult(dimensions, usage, shown)


def evidence_per_judge(trajectory: Trajectory, redactor: Redactor, judges: list[ModelConfig],
                       evidence_chars: int | None) -> dict[str, Evidence]:
    """Each judge's evidence, built once per distinct budget."""
    by_budget: dict[int, Evidence] = {}
    shown: dict[str, Evidence] = {}
    for judge in judges:
        budget = evidence_budget(judge, evidence_chars)
        if budget not in by_budget:
            by_budget[budget] = evidence(trajectory, redactor, budget)
        shown[judge.model] = by_budget[budget]
    return shown


def unscored_dimensions(content: JudgeContent, trajectory: Trajectory, reason: str) -> dict[str, DimensionScore]:
    """Offline: the applicable dimensions, each unscored with the reason (so reports can say so)."""
    return {r.dimension: DimensionScore(dimension=r.dimension, note=f"unscored: {reason}")
            for r in content.rubrics.values() if applies(r, trajectory)}
