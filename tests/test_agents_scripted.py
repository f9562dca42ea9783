"""Scripted agents on the hand-made sandbox tasks: the fixtures replay, the oracle reaches every ground
truth, and each graded variant fails exactly where its missing skill is needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_helpers import fired, scratch_context, succeeded

from cworld.agents import make_agent, resolve_references, scripted_skills
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import Task, read_jsonl
from cworld.errors import UsageError
from cworld.rollout import build_episode, run_episode
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import build_all

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = {t.id: t for t in read_jsonl(FIXTURE, Task)}


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return scratch_context(tmp_path_factory.mktemp("ws"))


def only(ctx, kind: str, turn: int = 1, **params) -> str:
    """A policy with exactly one fault of `kind`, due at `turn`."""
    name = f"only-{kind}-{turn}"
    ctx.policies[name] = Policy(name=name, faults={kind: FaultRule(budget=1, turns=(turn, turn), params=params)})
    return name


async def episode(ctx, task_id: str, agent: str, policy: str = "none", seed: int = 0):
    ep = build_episode(TASKS[task_id], agent=agent, access="full", mode="live", policy=policy, seed=seed, ctx=ctx)
    return await run_episode(make_agent(agent), ep)


def test_fixture_tasks_replay_to_their_ground_truth():
    """Every gold plan runs without an error in a fresh session and ends in the recorded ground truth.
    (If a sandbox app changes, regenerate with tests/fixtures/make_tasks_sandbox.py.)"""
    assert 8 <= len(TASKS) <= 10
    for task in TASKS.values():
        session = SandboxSession(task.initial_state_seed, all_apps())
        servers, results = build_all(session), {}
        for step in task.gold_plan:
            app, name = step.tool.split("/")
            answer = servers[app].call_tool_sync(name, resolve_references(step.arguments, results))
            assert not answer.is_error, (task.id, step.id, answer.content[0].text)
            results[step.id] = answer.structured_content
        assert session.snapshot() == task.ground_truth, task.id
        assert set(task.tools) == {s.tool for s in task.gold_plan} and task.verifiable


async def test_oracle_reaches_every_ground_truth_without_faults(ctx):
    for task_id in TASKS:
        trajectory = await episode(ctx, task_id, "scripted:oracle")
        assert succeeded(trajectory), (task_id, trajectory.status, trajectory.final_answer)
        assert len(trajectory.tool_steps) == len(TASKS[task_id].gold_plan)
        assert trajectory.final_answer and "{{" not in trajectory.final_answer


@pytest.mark.parametrize("name", ["scripted:bogus", "scripted:noisy-1.5", "scripted:noisy-x", "scripted:"])
def test_unknown_scripted_names_are_usage_errors(name):
    with pytest.raises(UsageError, match="scripted:oracle"):
        scripted_skills(name)


def test_variant_names_map_to_the_missing_skill():
    assert scripted_skills("scripted:no-retry").retry is False
    assert scripted_skills("scripted:no-look").look is False
    assert scripted_skills("scripted:no-replan").replan is False
    assert scripted_skills("scripted:noisy-0.25").noise == 0.25
    assert make_agent("scripted:oracle", access="search").name == "scripted:oracle[search]"


async def test_no_retry_gives_up_on_the_first_error_the_oracle_retries(ctx):
    policy = only(ctx, "network_error")
    oracle = await episode(ctx, "sbx-mail-forward-audit", "scripted:oracle", policy)
    quitter = await episode(ctx, "sbx-mail-forward-audit", "scripted:no-retry", policy)
    assert succeeded(oracle) and fired(oracle) == ["network_error"]
    assert quitter.status == "gave_up" and len(quitter.tool_steps) == 1
    assert "ECONNRESET" in quitter.final_answer or "network" in quitter.final_answer


async def test_no_look_uses_a_pending_answer_as_if_it_were_the_result(ctx):
    policy = only(ctx, "delayed", calls=2)
    oracle = await episode(ctx, "sbx-calendar-sync", "scripted:oracle", policy)
    careless = await episode(ctx, "sbx-calendar-sync", "scripted:no-look", policy)
    assert succeeded(oracle)
    asked_again = [s for s in oracle.tool_steps if s.tool_call.tool == "calendar/find_people"]
    assert len(asked_again) == 4  # two people, the first one asked three times
    assert not succeeded(careless) and careless.status == "gave_up"


async def test_no_replan_ignores_a_requirement_added_mid_episode(ctx):
    policy = only(ctx, "new_constraint", turn=2, variant="deliverable")
    oracle = await episode(ctx, "sbx-travel-kathmandu", "scripted:oracle", policy)
    stubborn = await episode(ctx, "sbx-travel-kathmandu", "scripted:no-replan", policy)
    added = oracle.constraints_final[-1]
    assert added.added_at_turn == 2 and added.verification["kind"] == "final_answer_contains"
    assert any(s.kind == "user" for s in oracle.steps)
    assert succeeded(oracle) and str(added.verification["value"]) in oracle.final_answer
    assert stubborn.status == "completed" and not succeeded(stubborn)


async def test_noise_calls_wrong_tools_and_costs_success(ctx):
    noisy = [await episode(ctx, "sbx-taskboard-room-card", "scripted:noisy-0.6", seed=s) for s in range(4)]
    plan_tools = set(TASKS["sbx-taskboard-room-card"].tools)
    wrong = [s.tool_call.tool for t in noisy for s in t.steps if s.kind == "tool" and s.tool_call.tool not in plan_tools]
    assert wrong and all(w.startswith("taskboard/") for w in wrong)
    assert sum(succeeded(t) for t in noisy) < 4
    same = [await episode(ctx, "sbx-taskboard-room-card", "scripted:noisy-0.6", seed=0) for _ in range(2)]
    assert [s.tool_call.tool for s in same[0].tool_steps] == [s.tool_call.tool for s in same[1].tool_steps]


async def test_scripted_agents_need_a_gold_plan(ctx):
    task = TASKS["sbx-travel-kathmandu"].model_copy(update={"gold_plan": [], "id": "no-plan"})
    ep = build_episode(task, agent="scripted:oracle", access="full", mode="live", policy="none", seed=0, ctx=ctx)
    with pytest.raises(UsageError, match="no gold plan"):
        await run_episode(make_agent("scripted:oracle"), ep)
