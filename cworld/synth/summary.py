"""The end-of-run summary: what was accepted and rejected, and the numbers the task set must meet.

The quality figures are recomputed from the accepted tasks themselves, not copied from the run: every
task is checked again, every query leak-checked again, every verifiable gold plan executed again in a
fresh session (its end state must equal the stored ground truth), and all pairs of queries compared.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from statistics import mean
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from cworld.data_model import Task
from cworld.sandbox.statediff import sandbox_state_diff
from cworld.sandbox.statediff.world import WORLD_KEY
from cworld.synth.checks import content_words, run_checks
from cworld.synth.dedupe import DuplicateGuard
from cworld.synth.draft import Draft
from cworld.synth.outcome import run_plan
from cworld.synth.pipeline import Synthesis
from cworld.synth.plan_exec import execute_plan
from cworld.synth.scheduler import RunResult


class SynthSummary(BaseModel):
    source: str
    requested: int
    accepted: int
    rejected: int
    attempts: int
    seconds: float
    output: str = ""
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)
    rejection_examples: dict[str, str] = Field(default_factory=dict)
    rounds: dict[str, float] = Field(default_factory=dict)
    tools_per_task: dict[str, float] = Field(default_factory=dict)
    servers_per_task: dict[str, float] = Field(default_factory=dict)
    constraint_types_per_task: dict[str, float] = Field(default_factory=dict)
    constraint_types: dict[str, int] = Field(default_factory=dict)
    passing_checks: int = 0
    leaking_queries: int = 0
    verifiable: int = 0
    verifiable_share: float = 0.0
    gold_plans_replayed: int = 0
    ground_truth_matches: int = 0
    duplicate_method: str = ""
    max_pair_similarity: float = 0.0
    near_duplicate_pairs: int = 0
    notes: list[str] = Field(default_factory=list)


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"mean": round(mean(values), 2), "min": min(values), "max": max(values)}


def summarize(
    result: RunResult, synthesis: Synthesis, guard: DuplicateGuard, output: str = ""
) -> SynthSummary:
    tasks = result.accepted
    reasons = Counter(o.code or "unknown" for o in result.rejected)
    examples: dict[str, str] = {}
    for outcome in result.rejected:
        examples.setdefault(outcome.code or "unknown", outcome.reason[:300])
    summary = SynthSummary(
        source=synthesis.source,
        requested=synthesis.options.n,
        accepted=len(tasks),
        rejected=len(result.rejected),
        attempts=result.attempts,
        seconds=round(result.seconds, 1),
        output=output,
        rejected_by_reason=dict(reasons.most_common()),
        rejection_examples=examples,
        rounds=_stats([t.metadata.get("rounds", 1) for t in tasks]),
        tools_per_task=_stats([len(t.tools) for t in tasks]),
        servers_per_task=_stats([len(t.servers) for t in tasks]),
        constraint_types_per_task=_stats([len({c.type for c in t.constraints}) for t in tasks]),
        constraint_types=dict(
            Counter(c.type for t in tasks for c in {c.type: c for c in t.constraints}.values()).most_common()
        ),
        notes=list(synthesis.universe.notes),
    )
    _recheck(summary, tasks, synthesis)
    _replay(summary, tasks, synthesis)
    _pairs(summary, tasks, guard)
    if synthesis.source == "offline":
        summary.notes.append(
            "offline synthesizer: tasks come from a fixed set of workflow blocks and phrasings, so "
            "they are less diverse than LLM-written ones"
        )
    if guard.fallback_reason:
        summary.notes.append(guard.fallback_reason)
    return summary


def _recheck(summary: SynthSummary, tasks: list[Task], synthesis: Synthesis) -> None:
    for task in tasks:
        draft = Draft.of_task(task)
        report = run_checks(
            draft,
            task.metadata.get("candidates", task.tools),
            synthesis.universe,
            synthesis.taxonomy,
            synthesis.options,
            synthesis.leaks,
        )
        summary.passing_checks += report.passed
        summary.leaking_queries += bool(synthesis.leaks.leaks(task.query))


def _replay(summary: SynthSummary, tasks: list[Task], synthesis: Synthesis) -> None:
    """Every verifiable gold plan run again where it was verified: live in the sandbox, or through the
    synthesis engine in the world of its seed (then the end state is graded against the ground truth by
    the state diff, as an episode's is: the engine's records carry its clock)."""
    verifiable = [t for t in tasks if t.verifiable]
    summary.verifiable = len(verifiable)
    summary.verifiable_share = round(len(verifiable) / len(tasks), 3) if tasks else 0.0
    for task in verifiable:
        if synthesis.engine is not None and task.ground_truth is not None and WORLD_KEY in task.ground_truth:
            ok, equal = _replay_in_world(task, synthesis)
        else:
            trace = execute_plan(task.gold_plan, task.initial_state_seed)
            ok, equal = trace.ok, trace.ok and trace.end_state == task.ground_truth
        summary.gold_plans_replayed += ok
        summary.ground_truth_matches += equal


def _replay_in_world(task: Task, synthesis: Synthesis) -> tuple[bool, bool]:
    from cworld.engine import SessionLog

    session = SessionLog(seed=task.initial_state_seed, context=task.public())
    trace, _ = run_plan(task.gold_plan, synthesis.universe.tools, synthesis.engine, session)
    if not trace.ok or trace.end_state is None or task.ground_truth is None:
        return trace.ok, False
    return True, sandbox_state_diff(task.initial_state_seed, task.ground_truth, trace.end_state).success


def _pairs(summary: SynthSummary, tasks: list[Task], guard: DuplicateGuard) -> None:
    summary.duplicate_method = guard.method
    if len(tasks) < 2:
        return
    threshold = guard.cosine if guard.embedder is not None else guard.jaccard
    scores = _embedding_pairs(tasks, guard) if guard.embedder is not None else _word_pairs(tasks)
    summary.max_pair_similarity = round(max(scores), 4)
    summary.near_duplicate_pairs = sum(s > threshold for s in scores)


def _embedding_pairs(tasks: list[Task], guard: DuplicateGuard) -> list[float]:
    vectors = np.asarray(guard.embedder.embed_queries([t.query for t in tasks]), dtype=np.float32)
    sims = vectors @ vectors.T
    return [float(sims[i, j]) for i, j in combinations(range(len(tasks)), 2)]


def _word_pairs(tasks: list[Task]) -> list[float]:
    words = [content_words(t.query) for t in tasks]
    return [len(a & b) / len(a | b) if a | b else 1.0 for a, b in combinations(words, 2)]


def render_lines(s: SynthSummary) -> list[str]:
    """The summary as plain lines (the CLI prints them; rich markup is left to the caller)."""
    mean_of = lambda d: d.get("mean", 0)  # noqa: E731
    lines = [
        f"accepted {s.accepted}/{s.requested} ({s.source}) after {s.attempts} attempts in {s.seconds:.0f}s; "
        f"rejected {s.rejected}",
        *(
            f"  rejected {n} x {code}: {s.rejection_examples.get(code, '')[:160]}"
            for code, n in s.rejected_by_reason.items()
        ),
        f"rounds per task: mean {mean_of(s.rounds)} (max {s.rounds.get('max', 0)})",
        f"tools per task: mean {mean_of(s.tools_per_task)} (min {s.tools_per_task.get('min', 0)}); servers "
        "per task: "
        f"mean {mean_of(s.servers_per_task)} (min {s.servers_per_task.get('min', 0)})",
        f"constraint types per task: mean {mean_of(s.constraint_types_per_task)} "
        f"(min {s.constraint_types_per_task.get('min', 0)}); types: "
        + ", ".join(f"{k} {v}" for k, v in s.constraint_types.items()),
        f"checks passed on re-check: {s.passing_checks}/{s.accepted}; queries naming a tool or server: "
        f"{s.leaking_queries}",
        f"verifiable: {s.verifiable}/{s.accepted} ({s.verifiable_share:.0%}); gold plans re-executed: "
        f"{s.gold_plans_replayed}/{s.verifiable}, end state equal to the ground truth: "
        f"{s.ground_truth_matches}/{s.verifiable}",
        f"near-duplicates ({s.duplicate_method}): {s.near_duplicate_pairs} pairs; highest pair similarity "
        f"{s.max_pair_similarity}",
        *(f"note: {n}" for n in s.notes),
    ]
    return lines


def as_dict(summary: SynthSummary) -> dict[str, Any]:
    return summary.model_dump(mode="json")
