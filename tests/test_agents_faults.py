"""Every fault type fires on a live sandbox episode, is logged on the trajectory, and the oracle recovers.

Each case is one fault, due at turn 1 (constraint changes at turn 2), on a task whose gold plan gives it
something to act on; three seeds vary the fault's parameters and the sandbox answers around it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_helpers import fired, scratch_context, succeeded

from cworld.agents import make_agent
from cworld.controller import FAULT_TYPES
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import Task, read_jsonl
from cworld.rollout import build_episode, run_episode

TASKS = {t.id: t for t in read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)}

CASES: dict[str, tuple[str, dict[str, object]]] = {
    "timeout": ("sbx-mail-forward-audit", {"delay_s": [5, 60]}),
    "rate_limit": ("sbx-finance-transfer", {"retry_after_turns": [1, 3]}),
    "unavailable": ("sbx-shop-checkout", {"calls": [1, 3]}),
    "network_error": ("sbx-chat-offsite-reminder", {"flavor": {"choice": [0, 1, 2]}}),
    "deprecated": ("sbx-docs-share-audit", {}),
    "delayed": ("sbx-calendar-sync", {"calls": [1, 3]}),
    "corrupted": ("sbx-taskboard-room-card", {"fields": [2, 4]}),
    "truncated": ("sbx-mail-forward-audit", {"keep_fraction": [0.2, 0.6], "min_chars": 100}),
    "stale": ("sbx-mail-reply-offsite", {}),
    "session_expired": ("sbx-chat-offsite-reminder", {}),
    "new_constraint": ("sbx-travel-kathmandu", {}),
}


def test_the_cases_cover_every_registered_fault_type():
    assert set(CASES) == set(FAULT_TYPES)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return scratch_context(tmp_path_factory.mktemp("ws"))


@pytest.mark.parametrize("kind", sorted(CASES))
async def test_fault_fires_is_logged_and_the_oracle_recovers(ctx, kind):
    task_id, params = CASES[kind]
    turn = 2 if FAULT_TYPES[kind].level == "constraint" else 1
    ctx.policies[f"only-{kind}"] = Policy(name=f"only-{kind}",
                                          faults={kind: FaultRule(budget=1, turns=(turn, turn), params=params)})
    for seed in range(3):
        episode = build_episode(TASKS[task_id], agent="scripted:oracle", access="full", mode="live",
                                policy=f"only-{kind}", seed=seed, ctx=ctx)
        trajectory = await run_episode(make_agent("scripted:oracle"), episode)
        assert fired(trajectory) == [kind], (seed, fired(trajectory))
        logged = [i for i in trajectory.interventions if i.kind == kind]
        assert logged[0].level == FAULT_TYPES[kind].level and logged[0].turn >= turn
        assert succeeded(trajectory), (kind, seed, trajectory.status, trajectory.final_answer)
        if FAULT_TYPES[kind].level == "state" and kind != "session_expired":
            hit = next(s for s in trajectory.steps if any(i.kind == kind for i in s.interventions))
            assert hit.raw_result is not None and hit.observation != hit.raw_result
