"""The run of a task set: every (task, seed) episode of one agent, mode and policy, with bounded concurrency.

- an executor runs the episodes: `local` (asyncio in this process, at most `concurrency` at once; each LLM
  call and tool call yields, so waiting on a model overlaps across episodes) or `ray` (Ray actors across a
  cluster, `rollout/executors/ray.py`); either way this driver alone writes the store, once per episode id;
- a wall-clock timeout per episode: a cut episode is recorded with status `timeout`;
- each trajectory is appended to `trajectories.jsonl` and fsynced the moment its episode ends;
- `resume` skips every episode already on record (ids are a hash of task, agent, mode, policy, seed), except
  those whose latest record is `infra_error`: they run again and the new record supersedes the old one
  (`retry_infra=False`, `--no-retry-infra`, keeps them as they are);
- an infrastructure failure (a crashed server, a model that stays down) restarts the episode from
  scratch, up to `infra_retries` times; if it persists the episode is recorded as `infra_error`
  with every attempt's error, never as the agent's failure;
- a model role that fails past its retries mid-run follows `on_model_failure`: `infra` (the default) records
  the episode as `infra_error` (so resume runs it again), `stop` ends the run (`RunStopped`, one line),
  `fallback` lets the engine answer without its model (an agent has no fallback: its outage stays infra);
  every engine fallback is counted in the summary;
- any other cworld error (a wrong model name, a bad policy file) stops the run: finished episodes stay
  on disk, and `--resume` continues after the fix.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cworld.agents import agent_label
from cworld.config import MODEL_FAILURE_POLICIES
from cworld.data_model import Task, Trajectory
from cworld.errors import CworldError, UsageError
from cworld.llm import Gateway
from cworld.rollout.episode import episode_id
from cworld.rollout.executors.base import AgentFactory, EpisodeRunner, Executor
from cworld.rollout.executors.local import LocalExecutor
from cworld.rollout.loop import RolloutContext
from cworld.rollout.store import TrajectoryStore
from cworld.rollout.summary import SummaryRow, summarize

log = logging.getLogger("cworld.rollout")
EXECUTORS = ("local", "ray")


@dataclass
class RunConfig:
    agent: str
    mode: str = "live"
    policy: str = "default"
    seeds: int = 1
    concurrency: int = 4
    access: str | None = None
    style: str | None = None
    max_turns: int | None = None
    """None: each task's own budget (`turn_budget`)."""
    timeout_s: float = 600.0
    infra_retries: int = 2
    resume: bool = False
    retry_infra: bool = True
    """On resume, run again the episodes recorded as `infra_error` (the new record supersedes the old)."""
    progress: bool = True
    summarize: bool = True
    """Read the whole run back at the end for the summary rows (a benchmark may skip it)."""
    executor: str = "local"
    """`local` (this process) or `ray` (a Ray cluster; `ray_address` None starts a local one, `auto` joins
    the cluster running on this machine)."""
    ray_address: str | None = None
    on_model_failure: str = "infra"
    """A model role that fails past its retries mid-run: `stop`, `infra` or `fallback` (`cworld.config`)."""

    def __post_init__(self) -> None:
        for name in ("seeds", "concurrency", "max_turns"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.executor not in EXECUTORS:
            raise UsageError(f"unknown executor {self.executor!r}; use one of: {', '.join(EXECUTORS)}")
        if self.ray_address is not None and self.executor != "ray":
            raise UsageError("--ray-address needs --executor ray")
        if self.on_model_failure not in MODEL_FAILURE_POLICIES:
            raise UsageError(f"unknown on_model_failure {self.on_model_failure!r}; use one of: "
                             f"{', '.join(MODEL_FAILURE_POLICIES)}")
        if self.timeout_s <= 0 or self.infra_retries < 0:
            raise UsageError("--timeout must be positive and --infra-retries at least 0")

    @property
    def label(self) -> str:
        return agent_label(self.agent, self.access, self.style)


@dataclass
class RunReport:
    out: Path
    planned: int
    skipped: int
    ran: int
    statuses: Counter[str] = field(default_factory=Counter)
    rerun: int = 0
    """Of `ran`: episodes on record as `infra_error` that this (resumed) run ran again."""
    rows: list[SummaryRow] = field(default_factory=list)
    fatal: CworldError | None = None  # an infrastructure failure no retry can help (a dead local model server)


class Runner:
    def __init__(self, tasks: Sequence[Task], config: RunConfig, ctx: RolloutContext, out: Path, *,
                 agent_factory: AgentFactory | None = None, gateway: Gateway | None = None,
                 console: Console | None = None, executor: Executor | None = None) -> None:
        if not tasks:
            raise UsageError("no tasks to run; give --tasks FILE with at least one task")
        self.tasks, self.config, self.ctx, self.out = list(tasks), config, ctx, out
        self.episodes = EpisodeRunner(config, ctx, agent_factory=agent_factory, gateway=gateway)
        self.console = console or Console(stderr=True)
        self.store = TrajectoryStore(out)
        self.statuses: Counter[str] = Counter()
        self._recorded: set[str] = set()
        self._executor = executor
        """A caller's executor (a benchmark's warm Ray pool); None: the one `config.executor` names."""

    async def run(self) -> RunReport:
        done = self.store.open(resume=self.config.resume, retry_infra=self.config.retry_infra)
        jobs = [(t, s) for t in self.tasks for s in range(self.config.seeds) if self._id(t, s) not in done]
        rerun = sum(self._id(t, s) in self.store.infra_on_record for t, s in jobs)
        planned = len(self.tasks) * self.config.seeds
        self._recorded = set(done)
        with self._progress(len(jobs)) as progress:
            bar = progress.add_task(self.config.label, total=len(jobs)) if progress else None

            async def sink(trajectory: Trajectory) -> None:
                await self._record(trajectory, progress, bar)

            try:
                await self.executor().run(jobs, sink)
            except ExceptionGroup as failures:
                raise _first(failures) from None
        rows = summarize(self.store) if self.config.summarize else []
        return RunReport(self.out, planned, planned - len(jobs), len(jobs), self.statuses, rerun, rows,
                         self.episodes.fatal)

    def executor(self) -> Executor:
        """The executor the config names: this process (`local`) or a Ray cluster (`ray`)."""
        if self._executor is not None:
            return self._executor
        if self.config.executor == "local":
            return LocalExecutor(self.episodes, self.config.concurrency)
        from cworld.rollout.executors.ray import RayExecutor, WorkerSpec

        factory = None if self.episodes.agent_factory == self.episodes._default_factory else self.episodes.agent_factory
        spec = WorkerSpec.of(self.ctx, self.config, factory)
        return RayExecutor(spec, self.config.concurrency, address=self.config.ray_address)

    async def run_one(self, task: Task, seed: int) -> Trajectory:
        """One episode with its infrastructure retries and its timeout; always returns a trajectory."""
        return await self.episodes.run_one(task, seed)

    # --- helpers --------------------------------------------------------------------------------
    async def _record(self, trajectory: Trajectory, progress: Any, bar: Any) -> None:
        """Append a finished episode once: an episode an executor re-ran (its worker died) is not doubled."""
        if trajectory.episode_id in self._recorded:
            return
        self._recorded.add(trajectory.episode_id)
        await self.store.append(trajectory)
        self.statuses[trajectory.status] += 1
        if progress is not None:
            progress.update(bar, advance=1, description=f"{self.config.label} {_counts(self.statuses)}")

    def _id(self, task: Task, seed: int) -> str:
        return episode_id(task.id, self.config.label, self.config.mode, self.config.policy, seed)

    def _progress(self, total: int) -> Any:
        if not self.config.progress or total == 0:
            return nullcontext(None)
        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=self.console, transient=False)


def _counts(statuses: Counter[str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))


def _first(group: BaseExceptionGroup) -> BaseException:  # type: ignore[type-arg]
    """The error to report: a cworld error if there is one (it says what to fix), else the first."""
    flat: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        item = stack.pop(0)
        if isinstance(item, BaseExceptionGroup):
            stack[:0] = list(item.exceptions)
        else:
            flat.append(item)
    return next((e for e in flat if isinstance(e, CworldError)), flat[0])
