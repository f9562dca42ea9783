"""Gym-style access for RL trainers: one task as an environment with `reset` and `step`.

    env = cworld.make(task, mode="live", policy="default")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"tool": "mail/search_messages",
                                                         "arguments": {"query": "audit"}})
    ...
    obs, reward, terminated, truncated, info = env.step({"final": "Forwarded it."})

The same episode machinery as `cworld run` (controller, faults, user messages, trajectory), driven by the
caller's actions instead of an agent. Actions are dicts: `{"tool", "arguments"}`, `{"search", "k"}`,
`{"message"}` (a turn without a call) or `{"final"}` (the answer; ends the episode). Observations are
plain dicts. The reward is 0 until the episode ends; then 1.0 if the end state matches the task's ground
truth (live/hybrid tasks that carry one), else 0.0 (`info["reward_known"]` says whether it could be
told). `areset`/`astep` are the async versions, for callers that already run an event loop.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from cworld.agents.base import Action, Observation
from cworld.agents.toolbox import Toolbox
from cworld.data_model import Task, ToolSpec, Trajectory
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.rollout.episode import Episode
from cworld.rollout.loop import RolloutContext, build_episode
from cworld.rollout.summary import state_matches

AGENT = "gym"


class CworldEnv:
    def __init__(self, task: Task, ctx: RolloutContext, *, mode: str, policy: str, access: str, agent: str) -> None:
        self.task, self.ctx, self.mode, self.policy, self.access, self.agent = task, ctx, mode, policy, access, agent
        self.episode: Episode | None = None
        self.trajectory: Trajectory | None = None
        self._seeds = itertools.count()
        self._call_ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- sync API -----------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._run(self.areset(seed=seed, options=options))

    def step(self, action: dict[str, Any] | Action) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return self._run(self.astep(action))

    def close(self) -> None:
        if self._loop is not None:
            if self.episode is not None and not self.episode.done:
                self._loop.run_until_complete(self.episode.controller.close())
            self._loop.close()
            self._loop = None

    # --- async API ----------------------------------------------------------------------------
    async def areset(self, *, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start a fresh episode (a new seeded world, faults planned for this seed)."""
        if self.episode is not None and not self.episode.done:
            await self.episode.controller.close()
        if options and "task" in options:
            self.task = _as_task(options["task"])
        seed = next(self._seeds) if seed is None else seed
        self.trajectory = None
        self._call_ids = itertools.count(1)
        self.episode = build_episode(self.task, agent=self.agent, access=self.access, mode=self.mode,
                                     policy=self.policy, seed=seed, ctx=self.ctx)
        first = await self.episode.start()
        observation = {**self._observation(first), "task": self.task.query,
                       "constraints": [c.description for c in self.task.constraints]}
        return observation, {"episode_id": self.episode.id, "seed": seed, "max_turns": self.episode.max_turns}

    async def astep(self, action: dict[str, Any] | Action) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        episode = self._open_episode()
        step = _as_action(action, f"gym_{next(self._call_ids)}")
        before = len(episode.steps)
        observation = await episode.apply(step)
        info: dict[str, Any] = {"interventions": [i.model_dump() for s in episode.steps[before:] for i in s.interventions]}
        if observation is not None:
            return self._observation(observation), 0.0, False, False, info
        self.trajectory = await episode.finish()
        matched = state_matches(self.trajectory)
        info.update(status=self.trajectory.status, reward_known=matched is not None, trajectory=self.trajectory)
        truncated = self.trajectory.status == "turn_limit"
        return {"turn": episode.turn, "done": True}, float(bool(matched)), not truncated, truncated, info

    # --- helpers ------------------------------------------------------------------------------
    @property
    def toolbox(self) -> Toolbox:
        return self._open_episode().toolbox

    def _observation(self, obs: Observation) -> dict[str, Any]:
        result = None
        if obs.result is not None:
            result = {"text": obs.result.text, "is_error": obs.result.is_error, "error_class": obs.result.error_class,
                      "structured": obs.result.structured_content}
        tools = [_tool_json(t) for t in self.toolbox.visible()]
        return {"turn": obs.turn, "result": result, "user_messages": list(obs.user_messages), "tools": tools,
                "search_available": True}

    def _open_episode(self) -> Episode:
        if self.episode is None:
            raise UsageError("call reset() before step()")
        if self.episode.done:
            raise UsageError("the episode has ended; call reset() to start another")
        return self.episode

    def _run(self, coro: Any) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def __enter__(self) -> CworldEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make(task: Task | dict[str, Any], mode: str = "live", policy: str = "default", *, access: str = "full",
         max_turns: int | None = None, env: Environment | None = None, workspace: Workspace | None = None,
         tools: dict[str, ToolSpec] | None = None, agent: str = AGENT) -> CworldEnv:
    """An environment for one task. `agent` names the policy being trained (it picks the fault timing
    stream, so two trainees on one (task, policy, seed) meet the same faults at their own turns)."""
    from cworld.registry.tools import environment_tools

    ws = workspace or Workspace.resolve()
    chosen = env or Environment.resolve()
    ctx = RolloutContext(chosen, ws, tools if tools is not None else environment_tools(chosen, ws).episode(),
                         max_turns=max_turns)
    ctx.policy(policy)
    return CworldEnv(_as_task(task), ctx, mode=mode, policy=policy, access=access, agent=agent)


def _as_task(task: Task | dict[str, Any]) -> Task:
    return task if isinstance(task, Task) else Task.model_validate(task)


def _as_action(action: dict[str, Any] | Action, call_id: str) -> Action:
    if isinstance(action, Action):
        return action
    if not isinstance(action, dict):
        raise UsageError(f"an action is a dict with 'tool', 'search', 'message' or 'final'; got {type(action).__name__}")
    if "tool" in action:
        return Action.call(str(action["tool"]), dict(action.get("arguments") or {}), str(action.get("id") or call_id))
    if "search" in action:
        return Action.search(str(action["search"]), int(action.get("k", 5)), str(action.get("id") or call_id))
    if "final" in action:
        return Action.final(str(action["final"]))
    if "message" in action:
        return Action.say(str(action["message"]))
    raise UsageError(f"unknown action {sorted(action)}; use 'tool' (+ 'arguments'), 'search', 'message' or 'final'")


def _tool_json(tool: ToolSpec) -> dict[str, Any]:
    return {"id": tool.id, "description": tool.description, "input_schema": tool.input_schema}
