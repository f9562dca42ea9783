"""The episode loop (agent -> controller -> observation) and the wiring of one episode.

`RolloutContext` holds what every episode of a run shares: the environment, the workspace, the tools,
one searcher, one LLM gateway, one World Engine. `build_episode` makes a fresh controller, toolbox and
`Episode` for one (task, agent, mode, policy, seed); `run_episode` drives an agent through it.

The sandbox (or simulated) world of an episode is the task's world, `SandboxSession(task.initial_state_seed)`:
the task's query and its ground-truth end state were written against that world, whatever the episode
seed. The episode seed drives everything that may vary between episodes of one task: the faults'
parameters and timing, distractors, the agent's sampling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cworld.agents.base import Agent
from cworld.agents.search import ToolSearch, default_search
from cworld.agents.toolbox import Toolbox
from cworld.controller import Backend, build_controller
from cworld.data_model import Task, ToolResult, ToolSpec, Trajectory
from cworld.engine.protocol import WorldEngine
from cworld.environment import Environment, Workspace
from cworld.rollout.episode import DEFAULT_MAX_TURNS, Episode


class TaskWorld:
    """A backend opened at the task's world seed, whatever seed the episode passes (see module docstring)."""

    def __init__(self, inner: Backend, world_seed: int) -> None:
        self.inner = inner
        self.world_seed = world_seed
        self.mode = inner.mode

    async def open(self, seed: int) -> None:
        await self.inner.open(self.world_seed)

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        return await self.inner.call(tool, arguments)

    async def end_state(self) -> dict[str, Any] | None:
        return await self.inner.end_state()

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class RolloutContext:
    env: Environment
    workspace: Workspace
    tools: dict[str, ToolSpec]
    engine: WorldEngine | None = None
    searcher: ToolSearch | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    distractors: int = 10
    extra: dict[str, Any] = field(default_factory=dict)

    def search(self) -> ToolSearch:
        if self.searcher is None:
            self.searcher = default_search(self.tools, self.workspace)
        return self.searcher


def build_episode(task: Task, *, agent: str, access: str, mode: str, policy: str, seed: int,
                  ctx: RolloutContext) -> Episode:
    """A fresh episode: its own controller (faults planned for this seed) and toolbox."""
    controller = build_controller(task, mode=mode, policy=policy, seed=seed, agent=agent, env=ctx.env,
                                  workspace=ctx.workspace, tools=ctx.tools, engine=ctx.engine)
    controller.backend = TaskWorld(controller.backend, task.initial_state_seed)
    toolbox = Toolbox(ctx.tools, task, access, seed=seed, searcher=ctx.search(), distractors=ctx.distractors)
    return Episode(task, controller, toolbox, agent=agent, mode=mode, policy=policy, seed=seed,
                   max_turns=ctx.max_turns)


async def run_episode(agent: Agent, episode: Episode) -> Trajectory:
    """Drive `agent` until it answers, gives up or hits the turn limit. On an exception (infrastructure,
    a timeout's cancellation) the controller is closed and the exception goes up to the runner."""
    try:
        observation = await episode.start()
        await agent.reset(episode.task, episode.toolbox, seed=episode.seed)
        while observation is not None:
            observation = await episode.apply(await agent.act(observation))
    except BaseException:
        await episode.controller.close()
        raise
    return await episode.finish()
