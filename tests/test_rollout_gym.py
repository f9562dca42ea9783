"""`cworld.make(task, mode=..., policy=...)`: a Gym-style environment over the same episode machinery."""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_helpers import without_timings

from cworld.data_model import Task, read_jsonl
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.gym import make

TASKS = {t.id: t for t in read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)}
NOTE = "Deborah, could you rotate the stale API keys this week? Thanks."


@pytest.fixture
def env(tmp_path):
    environment = make(TASKS["sbx-mail-forward-audit"], mode="live", policy="none",
                       workspace=Workspace.resolve(tmp_path / "ws"))
    yield environment
    environment.close()


def solve(env):
    """Play the forward task by hand, the way an RL policy would: read observations, send actions."""
    obs, _, _, _, _ = env.step({"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}})
    message = obs["result"]["structured"]["messages"][0]["message_id"]
    obs, _, _, _, _ = env.step({"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}})
    contact = obs["result"]["structured"]["contacts"][0]["contact_id"]
    return env.step({"tool": "mail/forward_message", "arguments": {"message_id": message, "to": [contact], "note": NOTE}})


def test_reset_step_and_reward_for_a_solved_task(env):
    obs, info = env.reset(seed=0)
    assert obs["turn"] == 1 and "Security audit findings" in obs["task"] and obs["result"] is None
    assert {"mail/search_messages", "mail/forward_message"} <= {t["id"] for t in obs["tools"]}
    assert info["seed"] == 0 and info["episode_id"]
    obs, reward, terminated, truncated, _ = solve(env)
    assert obs["turn"] == 4 and reward == 0.0 and not terminated and not truncated
    obs, reward, terminated, truncated, info = env.step({"final": "Forwarded it to Deborah."})
    assert (reward, terminated, truncated, info["status"], info["reward_known"]) == (1.0, True, False, "completed", True)
    assert env.trajectory is info["trajectory"] and env.trajectory.final_answer == "Forwarded it to Deborah."
    with pytest.raises(UsageError, match="reset"):
        env.step({"final": "again"})


def test_an_unsolved_task_scores_zero_and_the_turn_limit_truncates(tmp_path):
    env = make(TASKS["sbx-travel-kathmandu"], policy="none", max_turns=2, workspace=Workspace.resolve(tmp_path / "w"))
    env.reset(seed=0)
    env.step({"message": "thinking"})
    obs, reward, terminated, truncated, info = env.step({"search": "book a flight", "k": 3})
    assert (reward, terminated, truncated, info["status"]) == (0.0, False, True, "turn_limit")
    env.close()


def test_faults_and_user_messages_reach_the_policy_and_resets_are_reproducible(tmp_path):
    env = make(TASKS["sbx-mail-forward-audit"], policy="stress", workspace=Workspace.resolve(tmp_path / "w"))
    runs = []
    for _ in range(2):
        env.reset(seed=5)
        seen, messages = [], []
        for _ in range(10):
            obs, _, _, _, info = env.step({"tool": "mail/search_messages", "arguments": {"query": "audit"}})
            seen += [i["kind"] for i in info["interventions"]]
            messages += obs["user_messages"]
        env.step({"final": "done"})
        runs.append((seen, messages, without_timings(env.trajectory)))
    assert runs[0] == runs[1] and runs[0][0] and runs[0][1]
    env.close()


def test_bad_actions_are_usage_errors(env):
    with pytest.raises(UsageError, match="reset"):
        env.step({"final": "too early"})
    env.reset()
    with pytest.raises(UsageError, match="unknown action"):
        env.step({"jump": True})
    obs, *_ = env.step({"tool": "nope/nothing", "arguments": {}})
    assert obs["result"]["is_error"] and obs["result"]["error_class"] == "not_found"


def test_reset_states_only_what_the_user_said_up_front_and_the_context(tmp_path):
    """A requirement the task adds at turn 3 is not in the reset observation (every door reads it: gym,
    `cworld serve`, OpenEnv); the context block an LLM agent's system prompt carries is."""
    from cworld.data_model import Constraint

    task = TASKS["sbx-mail-forward-audit"]
    later = Constraint(id="later", type="response_content", description="Also mention the deadline.", added_at_turn=3)
    env = make(task.model_copy(update={"constraints": [*task.constraints, later]}), policy="none",
               workspace=Workspace.resolve(tmp_path / "w"))
    obs, _ = env.reset(seed=0)
    assert "Also mention the deadline." not in obs["constraints"]
    assert [c for c in obs["constraints"]] == [c.description for c in task.constraints if c.added_at_turn is None]
    assert obs["context"].startswith("Context:\n- Now: ") and "The user: " in obs["context"]
    env.close()
