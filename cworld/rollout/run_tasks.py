"""The run of a task set: every (task, seed) episode of one agent, mode and policy, with bounded concurrency.

- asyncio, at most `concurrency` episodes at once (each LLM call and tool call yields, so waiting on a
  model overlaps across episodes);
- a wall-clock timeout per episode: a cut episode is recorded with status `timeout`;
- each trajectory is appended to `trajectories.jsonl` and fsynced the moment its episode ends;
- `resume` skips every episode already on record (ids are a hash of task, agent, mode, policy, seed);
- an infrastructure failure (a crashed server, a model that stays down) restarts the episode from
  scratch, up to `infra_retries` times; if it persists the episode is recorded as `infra_error`
  with every attempt's error, never as the agent's failure;
- any other cworld error (a wrong model name, a bad policy file) stops the run: finished episodes stay
  on disk, and `--resume` continues after the fix.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cworld.agents import Agent, agent_label, default_access, is_rule_based, make_agent
from cworld.data_model import Task, Trajectory
from cworld.data_model.trajectory import InfraErrorRecord
from cworld.errors import CworldError, InfraError, UsageError
from cworld.llm import Gateway
from cworld.rollout.episode import EpisodeInfraError, episode_id
from cworld.rollout.loop import RolloutContext, build_episode, run_episode
from cworld.rollout.store import TrajectoryStore
from cworld.rollout.summary import SummaryRow, summarize

log = logging.getLogger("cworld.rollout")
AgentFactory = Callable[[], Agent]


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
    progress: bool = True
    summarize: bool = True
    """Read the whole run back at the end for the summary rows (a benchmark may skip it)."""

    def __post_init__(self) -> None:
        for name in ("seeds", "concurrency", "max_turns"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
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
    rows: list[SummaryRow] = field(default_factory=list)
    fatal: CworldError | None = None  # an infrastructure failure no retry can help (a dead local model server)


class Runner:
    def __init__(self, tasks: Sequence[Task], config: RunConfig, ctx: RolloutContext, out: Path, *,
                 agent_factory: AgentFactory | None = None, gateway: Gateway | None = None,
                 console: Console | None = None) -> None:
        if not tasks:
            raise UsageError("no tasks to run; give --tasks FILE with at least one task")
        self.tasks, self.config, self.ctx, self.out = list(tasks), config, ctx, out
        self.ctx.max_turns = config.max_turns
        self.gateway = gateway
        self.agent_factory = agent_factory or self._default_factory
        self.console = console or Console(stderr=True)
        self.store = TrajectoryStore(out)
        self.statuses: Counter[str] = Counter()
        self.fatal: CworldError | None = None

    async def run(self) -> RunReport:
        done = self.store.open(resume=self.config.resume)
        jobs = [(t, s) for t in self.tasks for s in range(self.config.seeds) if self._id(t, s) not in done]
        planned = len(self.tasks) * self.config.seeds
        gate = asyncio.Semaphore(self.config.concurrency)
        with self._progress(len(jobs)) as progress:
            task_id = progress.add_task(self.config.label, total=len(jobs)) if progress else None
            try:
                async with asyncio.TaskGroup() as group:
                    for task, seed in jobs:
                        group.create_task(self._job(task, seed, gate, progress, task_id))
            except ExceptionGroup as failures:
                raise _first(failures) from None
            finally:
                self._close_gateway()
        rows = summarize(self.store) if self.config.summarize else []
        return RunReport(self.out, planned, planned - len(jobs), len(jobs), self.statuses, rows, self.fatal)

    # --- one episode ----------------------------------------------------------------------------
    async def _job(self, task: Task, seed: int, gate: asyncio.Semaphore, progress: Any, bar: Any) -> None:
        async with gate:
            trajectory = await self.run_one(task, seed)
            await self.store.append(trajectory)
        self.statuses[trajectory.status] += 1
        if progress is not None:
            progress.update(bar, advance=1, description=f"{self.config.label} {_counts(self.statuses)}")

    async def run_one(self, task: Task, seed: int) -> Trajectory:
        """One episode with its infrastructure retries and its timeout; always returns a trajectory."""
        records: list[InfraErrorRecord] = []
        for attempt in range(1, self.config.infra_retries + 2):
            episode = build_episode(task, agent=self.config.label, access=self._access(), mode=self.config.mode,
                                    policy=self.config.policy, seed=seed, ctx=self.ctx)
            try:
                trajectory = await asyncio.wait_for(run_episode(self.agent_factory(), episode), self.config.timeout_s)
            except TimeoutError:
                return episode.trajectory("timeout", infra_errors=records)
            except (EpisodeInfraError, InfraError) as exc:
                records.append(InfraErrorRecord(kind=getattr(exc, "kind", type(exc).__name__),
                                                message=str(exc)[:500], attempt=attempt))
                if getattr(exc, "fatal", False) and isinstance(exc, CworldError):
                    self.fatal = self.fatal or exc  # said once, at the end of the run
                    break
                log.warning("episode %s attempt %d: infrastructure failure: %s", episode.id, attempt, exc)
                continue
            trajectory.infra_errors = records + trajectory.infra_errors
            return trajectory
        return episode.trajectory("infra_error", infra_errors=records)

    # --- helpers --------------------------------------------------------------------------------
    def _id(self, task: Task, seed: int) -> str:
        return episode_id(task.id, self.config.label, self.config.mode, self.config.policy, seed)

    def _access(self) -> str:
        return self.config.access or default_access(self.config.agent)

    def _default_factory(self) -> Agent:
        if self.gateway is None and not is_rule_based(self.config.agent):
            self.gateway = Gateway.from_workspace(self.ctx.workspace)
        return make_agent(self.config.agent, access=self.config.access, style=self.config.style,
                          gateway=self.gateway, workspace=self.ctx.workspace, concurrency=self.config.concurrency)

    def _close_gateway(self) -> None:
        if self.gateway is not None and self.agent_factory == self._default_factory:
            self.gateway.close()

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
