"""The state controller (paper §2.3): the in-process middleware between an agent and its tools.

Every call goes `agent -> StateController.call -> middleware chain -> Backend.call`. The chain holds the
fault injector (tool- and state-level faults) and any extra steps; the innermost step calls the backend
and remembers what it really returned. Constraint-level faults do not ride on calls: the agent loop asks
`due_user_messages(turn)` between turns and shows the user's new requirement to the agent.

One controller serves one (task, policy, agent); `open(seed)` starts an episode — it plans the faults
for that seed, times them for the agent and opens the backend's isolated world — so a gym-style `reset`
is just another `open`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cworld.controller.backend import Backend
from cworld.controller.faults import FaultEnv
from cworld.controller.faults.constraint_level import graded_change
from cworld.controller.injector import FaultInjector
from cworld.controller.memory import CallMemory
from cworld.controller.middleware import CallContext, CallNext, Middleware, chain
from cworld.controller.planning import (
    FaultSchedule,
    PlannedFault,
    ScheduledFault,
    plan_faults,
    time_faults,
    timing_agent,
)
from cworld.controller.policy import Policy
from cworld.data_model import Constraint, Intervention, PublicTask, Task, ToolResult, ToolSpec

log = logging.getLogger(__name__)


@dataclass
class CallOutcome:
    raw: ToolResult | None
    """What the backend returned; None when a fault answered without calling it."""
    observation: ToolResult
    """What the agent sees, after interventions."""
    interventions: list[Intervention] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def infra(self) -> bool:
        """An infrastructure failure (server crash, engine down): never the agent's fault; retry the episode."""
        return self.observation.is_infra_error


@dataclass
class FaultReport:
    """Planned versus fired, for the trajectory and for fairness checks."""

    planned: list[PlannedFault]
    fired: list[str]
    unfired: list[str]
    turns: dict[str, int]


class StateController:
    _constraints: list[Constraint]
    _constraint_queue: list[ScheduledFault]
    plan: list[PlannedFault]
    schedule: FaultSchedule

    def __init__(
        self,
        backend: Backend,
        *,
        task: Task,
        policy: Policy,
        agent: str,
        tools: Mapping[str, ToolSpec] | None = None,
        seed: int = 0,
        world_seed: int | None = None,
        middlewares: Sequence[Middleware] = (),
    ) -> None:
        self.backend = backend
        self.world_seed = world_seed
        """The seed the backend's world opens at, whatever the episode seed (a task's world is fixed by
        the task: its query and ground truth were written against it); None: the episode seed."""
        self.task: PublicTask = task.public()
        """What the controller may know of the task: faults are planned from this alone."""
        self._task_constraints = [c.model_copy(deep=True) for c in task.constraints]
        """The task's constraints as written (with their machine forms): only the grader's record of what
        the episode is judged against (`constraints`) starts from them; no fault reads them."""
        self.policy = policy
        self.agent = agent
        self.tools: dict[str, ToolSpec] = dict(tools or {})
        self.extra_middlewares = list(middlewares)
        self.log: list[Intervention] = []
        """Every intervention of the episode, in order (call-level and constraint-level)."""
        self.infra_errors: list[ToolResult] = []
        self._opened = False
        self._plan_for(seed)

    def _plan_for(self, seed: int) -> None:
        self.seed = seed
        self.plan = plan_faults(self.task, self.policy, seed, self.tools)
        self.schedule = time_faults(self.plan, seed, timing_agent(self.policy, self.agent))
        self._reset_episode()

    # --- episode ---------------------------------------------------------------------------------
    async def open(self, seed: int | None = None) -> None:
        """Start an episode (default: the seed given at build): plan and time the faults for it, then open
        the backend's isolated world. Opening again starts a fresh episode (a gym `reset`)."""
        if self._opened:
            await self.backend.close()
        self._plan_for(self.seed if seed is None else seed)
        await self.backend.open(self.seed if self.world_seed is None else self.world_seed)
        self._opened = True

    async def close(self) -> None:
        self._opened = False
        await self.backend.close()

    async def end_state(self) -> dict[str, Any] | None:
        return await self.backend.end_state()

    async def __aenter__(self) -> StateController:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- calls -----------------------------------------------------------------------------------
    async def call(self, tool: ToolSpec, arguments: dict[str, Any], *, turn: int) -> CallOutcome:
        """One tool call through the chain; faults are results, never exceptions.

        When nothing intervened, `observation` is the very result in `raw` (neither is copied: treat both
        as read-only)."""
        started = time.perf_counter()
        if self._plain and self.injector.quiet(turn):  # nothing can intervene: straight to the backend
            self._calls += 1
            raw = await self.backend.call(tool, arguments)
            if self._remember:
                self.memory.remember(tool, arguments, raw)
            if raw.is_error and raw.is_infra_error:
                self.infra_errors.append(raw)
            return CallOutcome(raw, raw, [], (time.perf_counter() - started) * 1000.0)
        ctx = CallContext(tool=tool, arguments=arguments, turn=turn, index=self._calls)
        self._calls += 1
        observation = await self._handler(ctx)
        outcome = CallOutcome(ctx.raw, observation, ctx.interventions, (time.perf_counter() - started) * 1000.0)
        if ctx.interventions:
            self.log.extend(ctx.interventions)
            log.debug("interventions on %s at turn %d: %s", tool.id, turn, [i.kind for i in ctx.interventions])
        if observation.is_infra_error:
            self.infra_errors.append(observation)
        return outcome

    async def call_tool(self, tool_id: str, arguments: dict[str, Any], *, turn: int) -> CallOutcome:
        """A call by tool id; an id the environment does not know is a `not_found` result for the agent."""
        spec = self.tools.get(tool_id)
        if spec is None:
            result = ToolResult.error("not_found", f"not_found: no tool '{tool_id}' in this environment")
            self._calls += 1
            return CallOutcome(None, result, [])
        return await self.call(spec, arguments, turn=turn)

    def due_user_messages(self, turn: int) -> list[tuple[str, Constraint, Intervention]]:
        """Constraint changes due at `turn`, each delivered once: (user message, new constraint, log record)."""
        due = []
        for item in self._constraint_queue:
            if item.turn > turn:
                break
            due.append(self._deliver(item.planned, turn))
        self._constraint_queue = self._constraint_queue[len(due):]
        return due

    @property
    def constraints(self) -> list[Constraint]:
        """The task's constraints as changed so far: what the episode is judged against."""
        return list(self._constraints)

    def fault_report(self) -> FaultReport:
        fired = {i.params.get("fault") for i in self.log if i.params.get("phase") == "fire"}
        keys = [p.key for p in self.plan]
        return FaultReport(self.plan, [k for k in keys if k in fired], [k for k in keys if k not in fired],
                           self.schedule.turns())

    # --- internals -------------------------------------------------------------------------------
    def _reset_episode(self) -> None:
        self._calls = 0
        self.log = []
        self.infra_errors = []
        self._constraints = [c.model_copy(deep=True) for c in self._task_constraints]
        self._constraint_queue = list(self.schedule.constraint_faults)
        self.memory = CallMemory()
        self.injector = FaultInjector(self.schedule, FaultEnv(tools=self.tools, memory=self.memory, seed=self.seed))
        self._plain = not self.extra_middlewares
        self._remember = self.injector.needs_memory
        self._handler: CallNext = chain([*self.extra_middlewares, self.injector], self._backend_call)

    async def _backend_call(self, ctx: CallContext) -> ToolResult:
        raw = await self.backend.call(ctx.tool, ctx.arguments)
        ctx.raw = raw
        if self._remember:
            self.memory.remember(ctx.tool, ctx.arguments, raw)
        return raw

    def _deliver(self, planned: PlannedFault, turn: int) -> tuple[str, Constraint, Intervention]:
        message = str(planned.content["message"])
        constraint = graded_change(planned.content, self._task_constraints).model_copy(update={"added_at_turn": turn})
        if constraint.replaces:
            self._constraints = [c for c in self._constraints if c.id != constraint.replaces]
        self._constraints = [c for c in self._constraints if c.id != constraint.id] + [constraint]
        record = Intervention(kind=planned.kind, level="constraint", turn=turn, tool=None, message=message,
                              params={**planned.params, "fault": planned.key, "phase": "fire",
                                      "change": planned.content.get("variant"), "constraint_id": constraint.id})
        self.log.append(record)
        return message, constraint, record
