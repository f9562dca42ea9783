"""One trajectory -> one `Score`: verifiable rewards always, the judge ensemble when judges are set.

An episode that ended in an infrastructure failure is recorded but never scored against the agent:
no metrics, no verdict, no overall.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cworld.config import ModelConfig
from cworld.data_model import DimensionScore, Score, ToolSpec, Trajectory
from cworld.judges.content import JudgeContent
from cworld.judges.ensemble import judge_episode, unscored_dimensions
from cworld.judges.overall import comparable_overall, overall
from cworld.judges.verifiable import VerifiableResult, verifiable_scores
from cworld.llm import Gateway
from cworld.redact import Redactor
from cworld.rollout.summary import engine_fallbacks
from cworld.sandbox.statediff import StateDiffResult

OFFLINE_REASON = "no judge model configured (set CWORLD_JUDGE_MODELS or pass --judges)"


@dataclass
class JudgeSetup:
    content: JudgeContent
    tools: Mapping[str, ToolSpec]
    gateway: Gateway | None = None
    judges: list[ModelConfig] = field(default_factory=list)
    redactor: Redactor = field(default_factory=Redactor.from_env)
    max_repairs: int = 1
    offline_reason: str = OFFLINE_REASON
    evidence_chars: int | None = None
    """Characters of evidence every judge is shown; None sizes it to each judge model's context."""

    @property
    def online(self) -> bool:
        return self.gateway is not None and bool(self.judges)

    @property
    def judge_names(self) -> list[str]:
        return [j.model for j in self.judges] if self.online else []


def base_score(trajectory: Trajectory) -> Score:
    return Score(episode_id=trajectory.episode_id, task_id=trajectory.task_id, agent=trajectory.agent,
                 mode=trajectory.mode, policy=trajectory.policy, seed=trajectory.seed, status=trajectory.status,
                 engine_fallbacks=engine_fallbacks(trajectory))


async def score_trajectory(trajectory: Trajectory, setup: JudgeSetup, state: StateDiffResult | None = None) -> Score:
    """`state`: the trajectory's state diff when the caller has it already (a served episode's reward)."""
    if not setup.online or trajectory.status == "infra_error":
        return score_offline(trajectory, setup, state)
    assert setup.gateway is not None
    score = _start(trajectory, setup)
    result = verifiable_scores(trajectory, setup.tools, state)
    ensemble = await judge_episode(setup.gateway, setup.judges, setup.content, trajectory, setup.redactor,
                                   evidence_chars=setup.evidence_chars, max_repairs=setup.max_repairs)
    score.judge_usage = ensemble.usage
    score = _complete(score, result, ensemble.dimensions, setup.content)
    score.details["judge_evidence"] = ensemble.evidence_stats()
    return score


def score_offline(trajectory: Trajectory, setup: JudgeSetup, state: StateDiffResult | None = None) -> Score:
    """Verifiable rewards only; the judge dimensions that apply are listed as unscored, with the reason."""
    score = _start(trajectory, setup)
    if trajectory.status == "infra_error":
        score.details = {"note": "infrastructure failure: not scored against the agent"}
        return score
    result = verifiable_scores(trajectory, setup.tools, state)
    dims = unscored_dimensions(setup.content, trajectory, setup.offline_reason)
    return _complete(score, result, dims, setup.content)


def _start(trajectory: Trajectory, setup: JudgeSetup) -> Score:
    score = base_score(trajectory)
    score.judges = setup.judge_names
    return score


def _complete(score: Score, result: VerifiableResult, dims: dict[str, DimensionScore],
              content: JudgeContent) -> Score:
    comparable = comparable_overall(result.metrics, dims, content.weights)
    score.metrics = {**result.metrics, "overall_comparable": comparable.score}
    score.constraints, score.personas = result.constraints, result.personas
    score.dimensions = dims
    total = overall(result.metrics, dims, content.weights)
    score.overall, score.overall_basis = total.score, total.basis
    score.success = episode_success(result, dims)
    score.details = {**result.details, "overall_parts": total.parts}
    return score


def episode_success(result: VerifiableResult, dims: dict[str, DimensionScore]) -> bool | None:
    """The episode's pass/fail verdict (for pass@k): the state diff when the task has a ground truth;
    otherwise the judges' completeness verdict with no machine-checked constraint broken; else unknown."""
    if result.state is not None:
        return result.state.success
    completeness = dims.get("completeness")
    if completeness is None or completeness.passed is None:
        return None
    return completeness.passed and all(v is not False for v in result.constraints.values())
