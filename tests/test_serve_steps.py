"""What a served step's `env_ms` measures (issue 35): in synthesized mode with the verifiable judges, a step
runs from its action to its observation without handing the event loop to another session, the final
answer included (state diff, score, the trajectory's line), so its time is its own work and never another
session's. The episode's line is in the run folder when the answer returns; its fsync follows."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import TASK, write_tasks

pytest.importorskip("openenv.core")

from cworld.environment import Environment, Workspace  # noqa: E402
from cworld.harness.doors import DoorConfig, episode_service  # noqa: E402
from cworld.harness.openenv_env import CworldAction, CworldEnvironment, CworldObservation  # noqa: E402
from cworld.rollout import read_trajectories  # noqa: E402

ACTIONS: list[dict[str, Any]] = [
    {"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
    {"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}},
    {"tool": "mail/forward_message", "arguments": {"message_id": "mail_001", "to": ["contact_014"], "note": "x"}},
    {"final": "Forwarded it."},
]


def without_yielding(coro: Coroutine[Any, Any, CworldObservation]) -> CworldObservation:
    """Run `coro` by one `send`: its result if it finished without awaiting anything that suspends it."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise AssertionError("the step handed the event loop to other sessions before its answer")


async def test_a_synthesized_step_runs_to_its_answer_without_yielding_and_stores_the_line_first(
        tmp_path: Path) -> None:
    door = DoorConfig(tasks=str(write_tasks(tmp_path / "tasks.jsonl")), policy="stress", agent="openenv",
                      out=str(tmp_path / "run"))
    service = episode_service(door, env=Environment.resolve(), workspace=Workspace.resolve(tmp_path / "ws"))
    env = CworldEnvironment(service)
    first = await env.reset_async(task=TASK, seed=5)
    observations = [without_yielding(env.step_async(CworldAction(**action))) for action in ACTIONS]
    assert all(obs.env_ms > 0 for obs in observations)
    assert [obs.done for obs in observations] == [False, False, False, True]
    last = observations[-1]
    assert last.summary is not None and last.summary["status"] == "completed" and last.summary["reward_known"]
    stored = [t for t in read_trajectories(tmp_path / "run") if t.episode_id == first.episode_id]  # no await yet
    assert len(stored) == 1 and stored[0].final_answer == "Forwarded it."
    await service.flush()
    assert [t.episode_id for t in read_trajectories(tmp_path / "run")] == [first.episode_id]
