"""The gym API and `cworld serve` are two doors to one episode: the same actions through each give the same
trajectory (wall-clock fields and the episode id aside; a served id also hashes its session)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from rollout_helpers import without_timings
from serve_helpers import SCHEMA_ONLY, TASK, write_tasks

from cworld.data_model import Task, Trajectory, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.gym import make
from cworld.judges import JudgeContent, JudgeSetup
from cworld.registry.tools import environment_tools
from cworld.rollout import RolloutContext, read_trajectories
from cworld.serve import EpisodeService, build_server
from cworld.serve.names import ToolNames

AGENT = "parity-check"
ACTIONS: list[dict] = [
    {"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
    {"tool": "mail/search_messages", "arguments": {"query": "audit"}},
    {"search": "find a contact in the crm", "k": 3},
    {"tool": SCHEMA_ONLY, "arguments": {"query": "Deborah Kapoor"}},
    {"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}},
    {"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
    {"tool": "mail/forward_message", "arguments": {"message_id": "mail_001", "to": ["contact_014"], "note": "rotate"}},
    {"final": "Forwarded it to Deborah."},
]


def comparable(trajectory: Trajectory) -> dict:
    return {k: v for k, v in without_timings(trajectory).items() if k != "episode_id"}


async def through_gym(task: Task, mode: str, ws: Workspace) -> Trajectory:
    env = make(task, mode=mode, policy="stress", agent=AGENT, workspace=ws)
    await env.areset(seed=5)
    for action in ACTIONS:
        *_, info = await env.astep(action)
    return info["trajectory"]


async def through_serve(task: Task, mode: str, ws: Workspace, run: Path) -> Trajectory:
    env = Environment.resolve()
    ctx = RolloutContext(env, ws, environment_tools(env, ws).episode())
    service = EpisodeService(ctx, [task], run, judges=JudgeSetup(JudgeContent.from_environment(env), tools=ctx.tools))
    names = ToolNames()
    async with Client(build_server(service), mode="legacy") as client:
        started = await client.call_tool("start_episode", {"task": task.id, "mode": mode, "policy": "stress",
                                                           "seed": 5, "agent": AGENT})
        for action in ACTIONS:
            if "tool" in action:
                await client.call_tool(names.name(action["tool"]), action["arguments"])
            elif "search" in action:
                await client.call_tool("search_tools", {"query": action["search"], "k": action["k"]})
            else:
                await client.call_tool("submit", {"answer": action["final"]})
    served = started.structured_content["episode_id"]
    return next(t for t in read_trajectories(run) if t.episode_id == served)


@pytest.mark.parametrize("mode", ["hybrid", "synthesized"])
async def test_gym_and_serve_record_the_same_trajectory(mode: str, tmp_path: Path) -> None:
    task = next(t for t in read_jsonl(write_tasks(tmp_path / "tasks.jsonl"), Task) if t.id == TASK)
    gym = await through_gym(task, mode, Workspace.resolve(tmp_path / "gym"))
    served = await through_serve(task, mode, Workspace.resolve(tmp_path / "serve"), tmp_path / "run")
    assert len(gym.steps) >= len(ACTIONS) and gym.interventions  # faults fired, the same ones
    assert comparable(served) == comparable(gym), list(_diff(comparable(served), comparable(gym)))[:8]


def _diff(a, b, path=""):  # the first differing fields, for the failure message
    if isinstance(a, dict) and isinstance(b, dict):
        for k in set(a) | set(b):
            yield from _diff(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield path, str(a)[:200], str(b)[:200]


async def test_the_reward_and_the_score_come_from_one_state_diff(tmp_path: Path, monkeypatch) -> None:
    """A served submit diffs the end state once: the gym reward and the score's state success are that diff."""
    import cworld.sandbox.statediff.diff as diff_module

    task = next(t for t in read_jsonl(write_tasks(tmp_path / "tasks.jsonl"), Task) if t.id == TASK)
    gym = await through_gym(task, "synthesized", Workspace.resolve(tmp_path / "gym"))
    diffs: list[object] = []
    real = diff_module.diff_from
    monkeypatch.setattr(diff_module, "diff_from", lambda *a, **k: diffs.append(a) or real(*a, **k))
    env, ws = Environment.resolve(), Workspace.resolve(tmp_path / "serve")
    ctx = RolloutContext(env, ws, environment_tools(env, ws).episode())
    service = EpisodeService(ctx, [task], tmp_path / "run",
                             judges=JudgeSetup(JudgeContent.from_environment(env), tools=ctx.tools))
    names = ToolNames()
    async with Client(build_server(service), mode="legacy") as client:
        await client.call_tool("start_episode", {"task": task.id, "mode": "synthesized", "policy": "stress",
                                                 "seed": 5, "agent": AGENT})
        for action in ACTIONS[:-1]:
            if "tool" in action:
                await client.call_tool(names.name(action["tool"]), action["arguments"])
            elif "search" in action:
                await client.call_tool("search_tools", {"query": action["search"], "k": action["k"]})
        submitted = (await client.call_tool("submit", {"answer": ACTIONS[-1]["final"]})).structured_content
    assert len(diffs) == 1
    assert submitted["reward_known"] and submitted["reward"] == float(submitted["success"])
    assert submitted["metrics"]["state_success"] == submitted["reward"]
    from cworld.rollout.summary import state_matches

    assert submitted["reward"] == float(bool(state_matches(gym)))  # the gym door's reward for the same actions
