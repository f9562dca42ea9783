"""What an executor runs and hands back: (task, seed) jobs in, finished trajectories out.

The driver (`Runner`) alone writes the run's `trajectories.jsonl`; an executor only runs episodes, here or
on a cluster, and passes each finished `Trajectory` to the driver's sink. `EpisodeRunner` is the one episode
(its infrastructure retries, its timeout): the same code runs on the driver (local executor) and inside a
Ray worker, so the same tasks and seeds give the same trajectories either way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from cworld.agents import Agent, default_access, is_rule_based, make_agent
from cworld.data_model import Task, Trajectory
from cworld.data_model.trajectory import InfraErrorRecord
from cworld.errors import CworldError, InfraError, ModelError, RunStopped
from cworld.llm import Gateway
from cworld.llm.calls import within
from cworld.rollout.episode import EpisodeInfraError
from cworld.rollout.loop import RolloutContext, build_episode, run_episode

if TYPE_CHECKING:
    from cworld.rollout.run_tasks import RunConfig

log = logging.getLogger("cworld.rollout")
AgentFactory = Callable[[], Agent]
Job = tuple[Task, int]
Sink = Callable[[Trajectory], Coroutine[Any, Any, None]]
"""The driver's side: records one finished episode (de-duplicated by episode id, appended to the store)."""


class Executor(Protocol):
    async def run(self, jobs: Sequence[Job], sink: Sink) -> None:
        """Run every job; await `sink(trajectory)` as each ends. Returns when all are recorded."""


class EpisodeRunner:
    """One (task, seed) episode of a run's agent, mode and policy, with its retries and timeout."""

    def __init__(self, config: RunConfig, ctx: RolloutContext, *, agent_factory: AgentFactory | None = None,
                 gateway: Gateway | None = None) -> None:
        self.config, self.ctx = config, ctx
        self.ctx.max_turns = config.max_turns
        self.ctx.on_model_failure = config.on_model_failure
        self.gateway = gateway
        self._owns_gateway = gateway is None and agent_factory is None
        self.agent_factory = agent_factory or self._default_factory
        self.fatal: CworldError | None = None
        """The first infrastructure failure marked `fatal`: the run reports it and exits non-zero."""

    async def run_one(self, task: Task, seed: int) -> Trajectory:
        """One episode; always returns a trajectory. An infrastructure failure (a crashed server, a model
        that stays down) restarts it from scratch up to `infra_retries` times, then records `infra_error`."""
        records: list[InfraErrorRecord] = []
        for attempt in range(1, self.config.infra_retries + 2):
            episode = build_episode(task, agent=self.config.label, access=self.access, mode=self.config.mode,
                                    policy=self.config.policy, seed=seed, ctx=self.ctx)
            try:
                with within(self.config.timeout_s):  # a model call's timeout stays below the episode's
                    trajectory = await asyncio.wait_for(run_episode(self.agent_factory(), episode),
                                                        self.config.timeout_s)
            except TimeoutError:
                return episode.trajectory("timeout", infra_errors=records)
            except (EpisodeInfraError, InfraError) as exc:
                if self.config.on_model_failure == "stop" and isinstance(exc, ModelError):
                    raise RunStopped(f"{exc}; stopped as on_model_failure: stop says, finished episodes kept: "
                                     "bring the model back, then `cworld run --resume`") from None
                records.append(InfraErrorRecord(kind=getattr(exc, "kind", type(exc).__name__),
                                                message=str(exc)[:500], attempt=attempt))
                if getattr(exc, "fatal", False) and isinstance(exc, CworldError):
                    self.fatal = self.fatal or exc  # no retry can help (a dead local model server): said at the end
                    break
                log.warning("episode %s attempt %d: infrastructure failure: %s", episode.id, attempt, exc)
                continue
            trajectory.infra_errors = records + trajectory.infra_errors
            return trajectory
        return episode.trajectory("infra_error", infra_errors=records)

    @property
    def access(self) -> str:
        return self.config.access or default_access(self.config.agent)

    def _default_factory(self) -> Agent:
        if self.gateway is None and not is_rule_based(self.config.agent):
            self.gateway = Gateway.from_workspace(self.ctx.workspace)
        return make_agent(self.config.agent, access=self.config.access, style=self.config.style,
                          gateway=self.gateway, workspace=self.ctx.workspace, concurrency=self.config.concurrency)

    def close(self) -> None:
        """Close the gateway this runner opened itself (a caller's gateway stays the caller's)."""
        if self.gateway is not None and self._owns_gateway:
            self.gateway.close()
