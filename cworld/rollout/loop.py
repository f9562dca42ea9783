"""The episode loop (agent -> controller -> observation) and the wiring of one episode.

`RolloutContext` holds what every episode of a run shares: the environment, the workspace, the tools,
one searcher, one LLM gateway, one World Engine. `build_episode` makes a fresh controller, toolbox and
`Episode` for one (task, agent, mode, policy, seed); `run_episode` drives an agent through it.

The sandbox (or simulated) world of an episode is the task's world, `SandboxSession(task.initial_state_seed)`:
the task's query and its ground-truth end state were written against that world, whatever the episode
seed (`build_controller(world_seed=...)`). The episode seed drives everything that may vary between
episodes of one task: the faults' parameters and timing, distractors, the agent's sampling.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cworld.agents.base import Agent, Observation
from cworld.agents.search import LazySearch, ToolSearch, default_search
from cworld.agents.toolbox import Toolbox
from cworld.controller import Middleware, Policy, build_controller, load_policy
from cworld.controller.factory import build_engine
from cworld.data_model import Task, ToolSpec, Trajectory
from cworld.engine.protocol import WorldEngine
from cworld.environment import Environment, Workspace
from cworld.llm.calls import at_turn, recording
from cworld.rollout.episode import Episode, turn_budget
from cworld.rollout.user_context import user_context


@dataclass
class RolloutContext:
    env: Environment
    workspace: Workspace
    tools: dict[str, ToolSpec]
    engine: WorldEngine | None = None
    searcher: ToolSearch | None = None
    max_turns: int | None = None
    distractors: int = 10
    via: str = "direct"
    """How live sandbox calls travel: `direct` (the server's own call cycle, in process) or `mcp` (an in-memory
    MCP client per app: the real protocol path)."""
    registry_search: bool = False
    """search_tools asks the built registry index (dense + BM25 + dependency graph) instead of BM25 in process."""
    middlewares: list[Middleware] = field(default_factory=list)
    """Extra controller steps for every episode (outermost first), e.g. logging or a test's crash injector."""
    policies: dict[str, Policy] = field(default_factory=dict)
    engine_kind: str = "auto"
    """The World Engine built on first need (`world`, `schema`, `llm`, or `auto`: llm when the engine role has
    a model, else world); a Ray worker rebuilds the same one from this name."""
    on_model_failure: str = "infra"
    """What a model role that fails mid-run does: `stop`, `infra` or `fallback` (`cworld.config`)."""

    def policy(self, name: str) -> Policy:
        """Loaded once per run (a policy file is parsed and validated on load)."""
        if name not in self.policies:
            self.policies[name] = load_policy(self.env, name)
        return self.policies[name]

    def world_engine(self, mode: str) -> WorldEngine | None:
        """One World Engine for the whole run (synthesized and hybrid modes), built on first need."""
        if mode != "live" and self.engine is None:
            self.engine = build_engine(self.engine_kind, self.env, self.workspace, self.tools.values())
        return self.engine

    def search(self) -> ToolSearch:
        """One searcher for the run, built on the first search (BM25 over the tools takes a moment)."""
        if self.searcher is None:
            self.searcher = LazySearch(lambda: default_search(self.tools, self.workspace, self.registry_search))
        return self.searcher


def build_episode(task: Task, *, agent: str, access: str, mode: str, policy: str, seed: int,
                  ctx: RolloutContext) -> Episode:
    """A fresh episode: its own controller (faults planned for this seed, world at the task's seed), toolbox,
    and what the agent is told of its user (the world's clock and "you")."""
    engine = ctx.world_engine(mode)
    controller = build_controller(task, mode=mode, policy=ctx.policy(policy), seed=seed, agent=agent, env=ctx.env,
                                  world_seed=task.initial_state_seed, workspace=ctx.workspace, tools=ctx.tools,
                                  engine=engine, middlewares=ctx.middlewares, via=ctx.via,  # type: ignore[arg-type]
                                  on_model_failure=ctx.on_model_failure)
    toolbox = Toolbox(ctx.tools, task, access, seed=seed, searcher=ctx.search(), distractors=ctx.distractors)
    return Episode(task, controller, toolbox, agent=agent, mode=mode, policy=policy, seed=seed,
                   max_turns=turn_budget(task.public(), ctx.max_turns), context=user_context(task, mode, engine))


async def run_episode(agent: Agent, episode: Episode) -> Trajectory:
    """Drive `agent` until it answers, gives up or hits the turn limit. Every model call made meanwhile (the
    agent's, the planner's, the World Engine's) is recorded on the episode. On an exception (infrastructure,
    a timeout's cancellation) the controller is closed and the exception goes up to the runner."""
    episode.privileged = bool(getattr(agent, "privileged", False))
    with recording(episode.model_calls):
        try:
            observation: Observation | None = await episode.start()
            await agent.reset(episode.task, episode.toolbox, seed=episode.seed)
            while observation is not None:
                at_turn(observation.turn)
                observation = await episode.apply(await agent.act(observation))
        except BaseException:
            await episode.controller.close()
            raise
        return await episode.finish()
