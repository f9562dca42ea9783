"""Which episodes become training examples: loading runs with their scores, the filters, and the
paper's first-round selection (§5.5: the valid first-round actions, tool search and first invocation).

Episodes that ended in an infrastructure failure are never exported: the agent did not act in a
working world. Every other filter is opt-in, and each rejected episode is counted under the first
filter it failed, so the summary says what each filter cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from cworld.agents.toolbox import SEARCH_TOOL
from cworld.data_model import Score, ToolSpec, Trajectory
from cworld.errors import UsageError
from cworld.judges.calls import classify_calls
from cworld.judges.runs import SCORES_FILE, load_scores, load_trajectories

NO_FAULTS = "none"
VALID_FIRST_CALL = ("valid", "injected")
"""A first invocation counts when it fit its schema and the backend accepted it, or a fault of the
controller (not the agent) answered it."""


@dataclass(frozen=True)
class Episode:
    trajectory: Trajectory
    score: Score | None
    run: Path


def load_run(run: Path, *, need_scores: bool) -> list[Episode]:
    """A run folder's episodes joined with their scores; a clear error for an empty or unjudged run."""
    trajectories = load_trajectories(run)
    if not trajectories:
        raise UsageError(f"{run} holds no episodes; run `cworld run` into it first")
    scores = load_scores(run)
    if need_scores and not scores:
        raise UsageError(
            f"{run} has no {SCORES_FILE}; score it with `cworld judge {run}` "
            "(--min-score, --only-success and --judge-agreement need scores)"
        )
    return [Episode(t, scores.get(t.episode_id), run) for t in trajectories]


def load_runs(runs: Sequence[Path], *, need_scores: bool) -> list[Episode]:
    return [ep for run in runs for ep in load_run(run, need_scores=need_scores)]


@dataclass(frozen=True)
class ExportFilters:
    min_score: float | None = None
    only_success: bool = False
    fault_types: tuple[str, ...] = ()
    """keep episodes that faced at least one of these faults (`none`: episodes with no fault)"""
    judge_agreement: float | None = None
    """least share of judges that agree with the majority, on every judged dimension"""
    first_round: bool = False

    def __post_init__(self) -> None:
        if self.judge_agreement is not None and not 0.0 < self.judge_agreement <= 1.0:
            raise UsageError(f"--judge-agreement must be in (0, 1], got {self.judge_agreement}")
        from cworld.controller import FAULT_TYPES

        unknown = sorted(set(self.fault_types) - set(FAULT_TYPES) - {NO_FAULTS})
        if unknown:
            known = ", ".join([*sorted(FAULT_TYPES), NO_FAULTS])
            raise UsageError(f"unknown fault type(s) {', '.join(unknown)} for --fault-types; use {known}")

    @property
    def needs_scores(self) -> bool:
        return self.min_score is not None or self.only_success or self.judge_agreement is not None

    def describe(self) -> dict[str, Any]:
        return {
            "min_score": self.min_score,
            "only_success": self.only_success,
            "fault_types": list(self.fault_types),
            "judge_agreement": self.judge_agreement,
            "first_round": self.first_round,
        }

    def reason(self, episode: Episode) -> str | None:
        """The first filter `episode` fails (its name), or None when it passes them all."""
        t, s = episode.trajectory, episode.score
        if t.status == "infra_error":
            return "infra_error"
        if self.min_score is not None and (s is None or s.overall is None or s.overall < self.min_score):
            return "min_score"
        if self.only_success and (s is None or s.success is not True):
            return "only_success"
        if self.fault_types and not _faced(t, self.fault_types):
            return "fault_types"
        if self.judge_agreement is not None:
            agreement = judge_agreement(s) if s is not None else None
            if agreement is None or agreement < self.judge_agreement:
                return "judge_agreement"
        return None


def _faced(trajectory: Trajectory, kinds: Sequence[str]) -> bool:
    faced = {i.kind for i in trajectory.interventions}
    return bool(faced & set(kinds)) or (NO_FAULTS in kinds and not faced)


def judge_agreement(score: Score) -> float | None:
    """The least agreement over dimensions judged by two or more judges: the share of pass/fail votes
    with the majority, or (no pass/fail votes) the share of scores within one point of the median."""
    shares = [
        share for d in score.dimensions.values() if (share := _dimension_agreement(d.votes)) is not None
    ]
    return min(shares) if shares else None


def _dimension_agreement(votes: Sequence[Any]) -> float | None:
    passed = [v.passed for v in votes if v.passed is not None]
    if len(passed) >= 2:
        return max(passed.count(True), passed.count(False)) / len(passed)
    scores = [v.score for v in votes if v.score is not None]
    if len(scores) >= 2:
        mid = median(scores)
        return sum(1 for x in scores if abs(x - mid) <= 1.0) / len(scores)
    return None


@dataclass
class FirstRound:
    """Why episodes were left out of a first-round selection (counted for the summary)."""

    skipped: dict[str, int] = field(default_factory=dict)

    def cut(self, trajectory: Trajectory, catalog: Mapping[str, ToolSpec]) -> Trajectory | None:
        """The episode up to its first tool invocation (searches before it included), when that
        invocation is valid; None otherwise."""
        calls = {c.step.index: c for c in classify_calls(trajectory, catalog)}
        for position, step in enumerate(trajectory.steps):
            if step.tool_call is None or step.tool_call.tool == SEARCH_TOOL:
                continue
            record = calls.get(step.index)
            if record is None or record.outcome not in VALID_FIRST_CALL or record.schema_ok is False:
                self._skip("first_call_invalid")
                return None
            return trajectory.model_copy(update={"steps": trajectory.steps[: position + 1]})
        self._skip("no_tool_call")
        return None

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1
