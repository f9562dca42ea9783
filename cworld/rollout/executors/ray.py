"""The Ray executor: episodes run in Ray actors across a cluster; trajectories stream back to the driver.

One async actor per CPU of the cluster (`num_cpus=1` each, so Ray spreads them over the nodes). Each actor
rebuilds the run's `RolloutContext` on its own node from plain data (`WorkerSpec`: the environment and
workspace paths, the tools, the run config), so real MCP servers, sandbox sessions and the World Engine
start on the worker that runs the episode, and it serves many episodes at once on its event loop (an
episode mostly waits on a model). The LLM cache is shared by path (`<workspace>/cache/`, SQLite in WAL
mode): on several machines, put the workspace on a shared filesystem.

Faults of the cluster are infrastructure, never the agent's. When an actor dies (its worker or its node's
raylet killed), every episode it held is re-run on the actors left, from scratch; the driver records each
episode id once. Ray's own actor restart is not used: it needs a free CPU, which a lost node took with it.
A cworld error raised inside an episode (a wrong model name) stops the run with its own message.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cworld.controller import Middleware
from cworld.data_model import Task, ToolSpec, Trajectory
from cworld.environment import Environment, Workspace
from cworld.errors import CworldError, InfraError, MissingDependency, UsageError
from cworld.rollout.executors.base import AgentFactory, EpisodeRunner, Job, Sink
from cworld.rollout.loop import RolloutContext

if TYPE_CHECKING:
    from cworld.rollout.run_tasks import RunConfig

log = logging.getLogger("cworld.rollout")
INSTALL_HINT = "the Ray executor needs Ray: pip install 'cworld[ray]' (or use --executor local)"
MAX_REASSIGN = 3
"""Times one episode may be re-run after its actor died before the run stops as an infrastructure failure."""


def import_ray() -> Any:
    """Ray, imported only when a run asks for it; one line on how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise MissingDependency(INSTALL_HINT) from None
    return ray


@dataclass
class WorkerSpec:
    """Everything an actor needs to rebuild the run's context on its node: plain, picklable data."""

    env_root: str
    workspace_root: str
    tools: dict[str, ToolSpec]
    config: RunConfig
    via: str = "direct"
    registry_search: bool = False
    distractors: int = 10
    engine_kind: str = "auto"
    middlewares: list[Middleware] = field(default_factory=list)
    agent_factory: AgentFactory | None = None
    """A caller's agent factory (tests, benchmarks); it must pickle. None: the agent named in `config`."""

    @classmethod
    def of(cls, ctx: RolloutContext, config: RunConfig, agent_factory: AgentFactory | None = None) -> WorkerSpec:
        return cls(str(ctx.env.root), str(ctx.workspace.root), dict(ctx.tools), config, via=ctx.via,
                   registry_search=ctx.registry_search, distractors=ctx.distractors, engine_kind=ctx.engine_kind,
                   middlewares=list(ctx.middlewares), agent_factory=agent_factory)

    def context(self) -> RolloutContext:
        return RolloutContext(Environment.resolve(self.env_root), Workspace.resolve(Path(self.workspace_root)),
                              self.tools, via=self.via, registry_search=self.registry_search,
                              distractors=self.distractors, engine_kind=self.engine_kind,
                              middlewares=self.middlewares)


class EpisodeActor:
    """Runs episodes on a worker (wrapped by `ray.remote` at run time, so importing this needs no Ray)."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.episodes = EpisodeRunner(spec.config, spec.context(), agent_factory=spec.agent_factory)

    async def run(self, task: Task, seed: int) -> str:
        """The trajectory as JSON: encoded on the worker, so the driver only decodes and appends."""
        trajectory = await self.episodes.run_one(task, seed)
        return trajectory.model_dump_json()


class RayExecutor:
    def __init__(self, spec: WorkerSpec, concurrency: int, *, address: str | None = None,
                 actors: int | None = None, keep: bool = False) -> None:
        self.spec, self.concurrency, self.address, self.actors = spec, concurrency, address, actors
        self.keep = keep
        """Keep the actors between runs of this executor (a benchmark's warm pool); else they end with the run,
        freeing their CPUs for the next run (a fidelity experiment runs many)."""
        self.pool: list[Any] = []

    async def run(self, jobs: Sequence[Job], sink: Sink) -> None:
        ray = import_ray()
        connect(ray, self.address)
        if not self.pool:
            actor_class = ray.remote(num_cpus=1, max_restarts=0, max_concurrency=self.concurrency)(EpisodeActor)
            spec_ref = ray.put(self.spec)
            self.pool = [actor_class.remote(spec_ref) for _ in range(self._pool_size(ray))]
        try:
            await _Dispatch(ray, list(self.pool), self.concurrency, sink).run(jobs)
        finally:
            if not self.keep:
                self.close()

    def close(self) -> None:
        """End the actors (their node's CPUs are free again)."""
        if self.pool:
            ray = import_ray()
            for actor in self.pool:
                ray.kill(actor)
            self.pool = []

    def _pool_size(self, ray: Any) -> int:
        if self.actors is not None:
            return self.actors
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            raise InfraError("the Ray cluster has no CPU to run episodes on; add a node with `ray start --address ...`")
        return max(1, min(cpus, self.concurrency))


class _Dispatch:
    """The driver's loop: at most `concurrency` episodes in flight, each on the least-loaded live actor."""

    def __init__(self, ray: Any, pool: list[Any], concurrency: int, sink: Sink) -> None:
        self.ray, self.pool, self.concurrency, self.sink = ray, pool, concurrency, sink
        self.load = {id(a): 0 for a in pool}
        self.inflight: dict[asyncio.Future[str], tuple[Job, Any]] = {}
        self.reruns: dict[tuple[str, int], int] = {}
        self.task_refs: dict[str, Any] = {}

    async def run(self, jobs: Sequence[Job]) -> None:
        queue: deque[Job] = deque(jobs)
        try:
            while queue or self.inflight:
                while queue and len(self.inflight) < self.concurrency:
                    self._submit(queue.popleft())
                done, _ = await asyncio.wait(self.inflight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    job, actor = self.inflight.pop(future)
                    self.load[id(actor)] = self.load.get(id(actor), 1) - 1
                    trajectory = self._outcome(future, job, actor, queue)
                    if trajectory is not None:
                        await self.sink(trajectory)
        finally:
            for future in self.inflight:
                future.cancel()

    def _submit(self, job: Job) -> None:
        task, seed = job
        if not self.pool:
            raise InfraError("every Ray worker running this run died; check the cluster (`ray status`) "
                             "and continue with --resume")
        actor = min(self.pool, key=lambda a: self.load[id(a)])
        self.load[id(actor)] += 1
        if task.id not in self.task_refs:
            self.task_refs[task.id] = self.ray.put(task)
        ref = actor.run.remote(self.task_refs[task.id], seed)
        self.inflight[asyncio.wrap_future(ref.future())] = (job, actor)

    def _outcome(self, future: asyncio.Future[str], job: Job, actor: Any, queue: deque[Job]) -> Trajectory | None:
        from ray.exceptions import RayError, RayTaskError

        try:
            return Trajectory.model_validate_json(future.result())
        except RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            raise (cause if isinstance(cause, CworldError) else InfraError(f"an episode failed on a Ray worker: "
                                                                          f"{str(cause).splitlines()[0]}")) from None
        except RayError as exc:  # the actor died, or its node with the episode's result (ObjectLostError)
            self._lost(actor, job, queue, exc)
            return None

    def _lost(self, actor: Any, job: Job, queue: deque[Job], exc: BaseException) -> None:
        """The actor died under the episode (or its result died with its node): drop the actor if it is
        gone, and run the episode again on another one."""
        from ray.exceptions import RayActorError

        if isinstance(exc, RayActorError) and actor in self.pool:
            self.pool.remove(actor)
            log.warning("a Ray worker died (%s); re-running its episodes elsewhere", type(exc).__name__)
        key = (job[0].id, job[1])
        self.reruns[key] = self.reruns.get(key, 0) + 1
        if self.reruns[key] > MAX_REASSIGN:
            raise InfraError(f"episode of task {job[0].id} seed {job[1]} lost its Ray worker "
                             f"{self.reruns[key]} times; check the cluster and continue with --resume")
        queue.appendleft(job)


def connect(ray: Any, address: str | None) -> None:
    """Join the cluster at `address` (`auto`: the one running on this machine), or start a local one."""
    if ray.is_initialized():
        return
    if address not in (None, "auto"):
        probe(address)
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    try:
        if address is None:
            ray.init(**options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"at {address}" if address else "on this machine"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InfraError(f"cannot reach a Ray cluster {where}: {first[:200]}; start one with `ray start --head` "
                         "or check --ray-address") from None



def probe(address: str, timeout_s: float = 5.0) -> None:
    """Fail in seconds, not minutes: `ray.init` keeps retrying an address where nothing listens."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--ray-address {address!r} is not HOST:PORT (or auto); e.g. 10.0.0.5:6379")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise InfraError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}; start one with "
                         "`ray start --head` or check --ray-address") from None
