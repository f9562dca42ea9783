"""The offline synthesizer end to end: a small run meets every "done when" property of `cworld synth --n 50`,
and the revise loop, schema-only tasks, determinism and Ctrl-C behave."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from cworld.data_model import Task, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.synth import Hooks, SynthOptions, prepare, run_prepared
from cworld.synth.checks import content_words
from cworld.synth.scheduler import run_synthesis

ENV = Environment.resolve()
N = 12


@pytest.fixture(scope="module")
def hashed(tmp_path_factory: pytest.TempPathFactory):
    """The model-free hashing embedder: fast, and the summary still reports embedding similarity."""
    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_EMBED_MODEL", "hash")
    yield Workspace.resolve(tmp_path_factory.mktemp("ws"))
    mp.undo()


@pytest.fixture(scope="module")
def run(hashed, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("out") / "tasks.jsonl"
    prepared = prepare(ENV, hashed, SynthOptions(n=N, seed=11), out=out)
    result, summary = asyncio.run(run_prepared(prepared))
    return prepared, result, summary, out


def test_a_run_meets_the_done_when_numbers(run) -> None:
    prepared, result, summary, out = run
    tasks = read_jsonl(out, Task)
    assert summary.source == "offline" and summary.accepted == N == len(tasks) == len(result.accepted)
    assert summary.passing_checks == N and summary.leaking_queries == 0
    assert "internal" not in summary.rejected_by_reason
    assert summary.tools_per_task["mean"] >= 6 and summary.servers_per_task["mean"] >= 2
    assert summary.constraint_types_per_task["min"] >= 4
    assert summary.near_duplicate_pairs == 0 and summary.max_pair_similarity < prepared.guard.cosine
    assert summary.verifiable_share >= 0.9
    assert summary.gold_plans_replayed == summary.verifiable == summary.ground_truth_matches
    assert any("less diverse" in note for note in summary.notes)


def test_tasks_carry_what_scoring_and_agents_need(run) -> None:
    _, _, _, out = run
    tasks = read_jsonl(out, Task)
    assert len({t.id for t in tasks}) == N and len({t.initial_state_seed for t in tasks}) == N
    for task in tasks:
        assert task.source == "offline" and task.gold_plan and task.subgoals and task.final_answer_hints
        assert set(task.rationales) == set(task.tools)
        assert task.verifiable == (task.ground_truth is not None)
        stages = [p["stage"] for p in task.provenance]
        assert stages[0] == "sample" and stages.count("round") == task.metadata["rounds"]
        assert task.provenance[-1]["verification"]["ok"] and task.provenance[-1]["checks"]["passed"]
        assert any(c.interacts_with for c in task.constraints)


def test_nobody_left_out_is_asked_for_elsewhere(run) -> None:
    """'Leave Nicholas King out of it' must not meet 'ping Nicholas King' in the same task."""
    _, _, _, out = run
    for task in read_jsonl(out, Task):
        for constraint in task.constraints:
            match = re.match(r"I mean (.+?); leave (.+) out of it", constraint.description)
            for name in re.split(r", | or ", match.group(2)) if match else []:
                assert name not in task.query, (task.id, name)


def test_queries_differ_in_words_not_only_names(run) -> None:
    _, _, _, out = run
    queries = [t.query for t in read_jsonl(out, Task)]
    openings = {" ".join(q.split()[:4]) for q in queries}
    assert len(openings) >= N // 2
    words = set().union(*(content_words(q) for q in queries))
    assert len(words) > 20 * N


def test_same_seed_same_task(hashed) -> None:
    prepared = prepare(ENV, hashed, SynthOptions(n=1, seed=4), out=hashed.root / "x.jsonl")
    first, second = (asyncio.run(prepared.synthesis.attempt(3)) for _ in range(2))
    assert first.task is not None and second.task is not None
    assert first.task.query == second.task.query and first.task.gold_plan == second.task.gold_plan
    assert first.task.ground_truth == second.task.ground_truth


def test_a_task_with_a_schema_only_step_is_not_verifiable(hashed) -> None:
    prepared = prepare(
        ENV, hashed, SynthOptions(n=1, seed=5, schema_only_share=1.0), out=hashed.root / "s.jsonl"
    )
    outcome = asyncio.run(prepared.synthesis.attempt(0))
    task = outcome.task
    assert task is not None, outcome.reason
    assert "helio-crm" in task.servers and not task.verifiable and task.ground_truth is None
    assert "not executed" in task.provenance[-1]["verification"]["reason"]


def test_revision_answers_the_feedback(hashed) -> None:
    """Round 1 mixes coverage with variety; told candidates went unused, round 2 picks blocks by coverage."""
    prepared = prepare(
        ENV, hashed, SynthOptions(n=1, seed=1, min_candidate_share=0.6), out=hashed.root / "r.jsonl"
    )
    outcomes = [asyncio.run(prepared.synthesis.attempt(i)) for i in range(3)]
    revised = [o for o in outcomes if o.task is not None and o.rounds > 1]
    assert revised, [o.reason for o in outcomes]
    rounds = [p for p in revised[0].provenance if p["stage"] == "round"]
    first, last = rounds[0]["checks"], rounds[-1]["checks"]
    assert (
        "candidates_unused" in {i["code"] for i in first["issues"]}
        and "candidate tools" in rounds[0]["feedback"]
    )
    assert last["passed"] and last["metrics"]["candidate_share"] > first["metrics"]["candidate_share"]
    assert revised[0].task.metadata["rounds"] == len(rounds) and revised[0].code == ""


def test_a_task_that_never_converges_is_dropped_with_its_reason(hashed) -> None:
    prepared = prepare(
        ENV,
        hashed,
        SynthOptions(n=1, seed=8, min_candidate_share=1.0, max_rounds=2, max_attempts=1),
        out=hashed.root / "d.jsonl",
    )
    result, summary = asyncio.run(run_prepared(prepared))
    assert summary.accepted == 0 and summary.rejected == 1
    (outcome,) = result.rejected
    assert (
        outcome.code == "coverage:candidates_unused" and outcome.rounds == 2 and "candidate" in outcome.reason
    )
    assert not (hashed.root / "d.jsonl").exists()


def test_interrupting_keeps_the_finished_tasks(hashed, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    prepared = prepare(ENV, hashed, SynthOptions(n=5, seed=9, concurrency=2), out=out)
    seen: list[str] = []

    def stop_after_two(task: Task) -> None:
        seen.append(task.id)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_synthesis(prepared.synthesis, out, prepared.guard, Hooks(accepted=stop_after_two)))
    assert [t.id for t in read_jsonl(out, Task)] == seen


def test_appending_to_a_file_rejects_repeats_of_its_tasks(hashed, tmp_path: Path) -> None:
    out = tmp_path / "again.jsonl"
    for _ in range(2):
        result, summary = asyncio.run(run_prepared(prepare(ENV, hashed, SynthOptions(n=1, seed=12), out=out)))
    assert (
        summary.rejected_by_reason == {"duplicate": 1}
        and "near-duplicate of synth-12-0000" in result.rejected[0].reason
    )
    assert [t.id for t in read_jsonl(out, Task)] == ["synth-12-0000", "synth-12-0001"]
