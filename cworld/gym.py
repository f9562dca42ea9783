"""Gym-style access for RL trainers: one task as an environment with `reset` and `step`.

    env = cworld.make(task, mode="live", policy="default")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"tool": "mail/search_messages",
                                                         "arguments": {"query": "audit"}})
    ...
    obs, reward, terminated, truncated, info = env.step({"final": "Forwarded it."})

The same episode machinery as `cworld run` (controller, faults, user messages, trajectory), driven by the
caller's actions instead of an agent, through `cworld.rollout.driver.EpisodeDriver` (the one driver
`cworld serve` and the Inspect task use too: the same actions give the same trajectory through each). Actions are dicts: `{"tool", "arguments"}`, `{"search", "k"}`,
`{"message"}` (a turn without a call) or `{"final"}` (the answer; ends the episode). Observations are
plain dicts. The reward is 0 until the episode ends; then 1.0 if the end state matches the task's ground
truth (live/hybrid tasks that carry one), else 0.0 (`info["reward_known"]` says whether it could be
told; `info["state"]` is the state diff behind it, for a scorer to reuse). `areset`/`astep` are the
async versions, for callers that already run an event loop.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from cworld.agents.base import Action
from cworld.agents.toolbox import Toolbox
from cworld.data_model import Task, ToolSpec, Trajectory
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.rollout.driver import EpisodeDriver
from cworld.rollout.episode import Episode
from cworld.rollout.loop import RolloutContext

AGENT = "gym"


class CworldEnv:
    def __init__(self, task: Task, ctx: RolloutContext, *, mode: str, policy: str, access: str, agent: str) -> None:
        self.task, self.ctx, self.mode, self.policy, self.access, self.agent = task, ctx, mode, policy, access, agent
        self.driver: EpisodeDriver | None = None
        self._seeds = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def episode(self) -> Episode | None:
        return self.driver.episode if self.driver is not None else None

    @property
    def trajectory(self) -> Trajectory | None:
        return self.driver.trajectory if self.driver is not None else None

    # --- sync API -----------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._run(self.areset(seed=seed, options=options))

    def step(self, action: dict[str, Any] | Action) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return self._run(self.astep(action))

    def close(self) -> None:
        if self._loop is not None:
            if self.driver is not None and self.driver.open:
                self._loop.run_until_complete(self.driver.episode.controller.close())
            self._loop.close()
            self._loop = None

    # --- async API ----------------------------------------------------------------------------
    async def areset(self, *, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start a fresh episode (a new seeded world, faults planned for this seed)."""
        if self.driver is not None and self.driver.open:
            await self.driver.episode.controller.close()
        if options and "task" in options:
            self.task = _as_task(options["task"])
        seed = next(self._seeds) if seed is None else seed
        self.driver = EpisodeDriver(self.ctx, self.task, mode=self.mode, policy=self.policy, access=self.access,
                                    agent=self.agent, seed=seed)
        observation = await self.driver.start()
        episode = self.driver.episode
        return observation, {"episode_id": episode.id, "seed": seed, "max_turns": episode.max_turns}

    async def astep(self, action: dict[str, Any] | Action) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        driver = self._open_driver()
        step = await driver.act(action)
        info: dict[str, Any] = {"interventions": step.interventions}
        if step.trajectory is None:
            assert step.observation is not None
            return step.observation, 0.0, False, False, info
        info.update(status=step.trajectory.status, reward_known=step.reward_known, trajectory=step.trajectory,
                    state=step.state)
        return {"turn": driver.episode.turn, "done": True}, step.reward, not step.truncated, step.truncated, info

    # --- helpers ------------------------------------------------------------------------------
    @property
    def toolbox(self) -> Toolbox:
        return self._open_driver().episode.toolbox

    def _open_driver(self) -> EpisodeDriver:
        if self.driver is None:
            raise UsageError("call reset() before step()")
        if not self.driver.open:
            raise UsageError("the episode has ended; call reset() to start another")
        return self.driver

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
    from cworld.config import serving_failure_policy
    from cworld.registry.tools import environment_tools

    ws = workspace or Workspace.resolve()
    chosen = env or Environment.resolve()
    one = _as_task(task)
    ctx = RolloutContext(chosen, ws, tools if tools is not None else environment_tools(chosen, ws).tasks_tools([one]),
                         max_turns=max_turns, on_model_failure=serving_failure_policy(ws.root))
    ctx.policy(policy)
    return CworldEnv(one, ctx, mode=mode, policy=policy, access=access, agent=agent)


def _as_task(task: Task | dict[str, Any]) -> Task:
    return task if isinstance(task, Task) else Task.model_validate(task)
