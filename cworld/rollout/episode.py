"""One episode, seen from the world: turns, tool calls through the controller, searches, the user's
mid-episode messages, and the trajectory they add up to.

    episode = Episode(task, controller, toolbox, agent="scripted:oracle", mode="live", policy="default", seed=0)
    observation = await episode.start()
    while observation is not None:
        observation = await episode.apply(await agent.act(observation))
    trajectory = await episode.finish()

Every action is one turn. A tool action goes `controller.call(spec, arguments, turn=...)`; the step keeps
the raw result, the observation after interventions and the interventions. A tool the agent cannot call
(not found by a search yet, or unknown) is answered `not_found` without reaching the controller, and so is a
call whose arguments the model did not write as a JSON object (`invalid_args`, saying so: never sent with
empty arguments). An agent whose own model fails it ends the episode as `agent_error`. An
infrastructure failure (server crash, engine down) raises `EpisodeInfraError`: the runner retries the
episode, and never counts it against the agent.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from typing import Any

from cworld.agents.base import Action, Observation, UserContext
from cworld.agents.toolbox import SEARCH_TOOL, Toolbox
from cworld.controller import StateController
from cworld.controller.stated import candidate_tools, stated_call_limit
from cworld.data_model import (
    Constraint,
    ModelCall,
    PublicTask,
    Step,
    Task,
    ToolCall,
    ToolResult,
    Trajectory,
    Usage,
)
from cworld.data_model.trajectory import EpisodeStatus, InfraErrorRecord

DEFAULT_MAX_TURNS = 30


def turn_budget(task: PublicTask, max_turns: int | None) -> int:
    """The episode's turn limit: the one asked for, else three turns per candidate tool (find it, call it,
    retry or check) plus ten, at least ten more than a tool-call limit the user states, and never under
    DEFAULT_MAX_TURNS. From the public task only: the environment never reads the gold plan."""
    if max_turns is not None:
        return max_turns
    stated = stated_call_limit(task)
    return max(DEFAULT_MAX_TURNS, 3 * candidate_tools(task) + 10, (stated or 0) + 10)


def episode_id(task_id: str, agent: str, mode: str, policy: str, seed: int) -> str:
    """Stable across runs and machines: what `--resume` uses to recognise a finished episode."""
    key = "\x1f".join([task_id, agent, mode, policy, str(seed)])
    return hashlib.sha256(key.encode()).hexdigest()[:20]


class EpisodeInfraError(Exception):
    """The world failed under the agent (not the agent's fault): retry the episode from scratch."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Episode:
    def __init__(self, task: Task, controller: StateController, toolbox: Toolbox, *, agent: str, mode: str,
                 policy: str, seed: int, max_turns: int = DEFAULT_MAX_TURNS,
                 context: UserContext | None = None) -> None:
        self.task, self.controller, self.toolbox = task, controller, toolbox
        self.context = context
        """The user's date and time and who the user is, told the agent in its first observation."""
        self.agent, self.mode, self.policy, self.seed = agent, mode, policy, seed
        self.max_turns = max_turns
        self.id = episode_id(task.id, agent, mode, policy, seed)
        self.steps: list[Step] = []
        self.model_calls: list[ModelCall] = []
        """Every model call made while the episode ran (`cworld.llm.calls.recording`), kept when it is cut short."""
        self.planner_events: list[dict[str, Any]] = []
        self.usage = Usage()
        self.turn = 0
        self.status: EpisodeStatus | None = None
        self.privileged = False
        """Whether the agent reads the answer key (set by `run_episode` from the agent)."""
        self.final_answer = ""
        self.agent_error: str | None = None
        self.started_at = 0.0
        self._mark = 0.0

    @property
    def done(self) -> bool:
        return self.status is not None

    async def start(self) -> Observation:
        """Open the controller's episode world and hand the agent its first observation (turn 1)."""
        self.started_at = time.time()
        await self.controller.open(self.seed)
        if not self.toolbox.prepared:
            await self.toolbox.prepare()
        self.turn = 1
        first = self._observation(None, None)
        first.context = self.context
        return first

    async def apply(self, action: Action) -> Observation | None:
        """Carry out one action; the next observation, or None when the episode has ended."""
        self._record_agent_side(action)
        if action.kind == "final":
            self._end(action.status or "completed", action.text, action)
            return None
        call, result = await self._carry_out(action)
        if self.turn >= self.max_turns:
            self.status = "turn_limit"
            return None
        self.turn += 1
        return self._observation(call, result)

    async def finish(self) -> Trajectory:
        """The trajectory (with the end state when the backend has one); closes the controller."""
        try:
            end_state = await self.controller.end_state()
        finally:
            await self.controller.close()
        return self.trajectory(end_state=end_state)

    def trajectory(self, status: EpisodeStatus | None = None, *, end_state: dict[str, Any] | None = None,
                   infra_errors: list[InfraErrorRecord] | None = None) -> Trajectory:
        """The record as it stands; `status` overrides (a timeout or an infrastructure failure cut it short)."""
        return Trajectory(
            episode_id=self.id, task_id=self.task.id, task=self.task, agent=self.agent, mode=self.mode,  # type: ignore[arg-type]
            policy=self.policy, seed=self.seed, status=status or self.status or "turn_limit", steps=self.steps,
            planner_events=self.planner_events, constraints_final=self.controller.constraints,
            final_answer=self.final_answer, end_state=end_state, usage=self._usage(status is not None),
            model_calls=list(self.model_calls),
            infra_errors=infra_errors or [], agent_error=self.agent_error, started_at=self.started_at,
            finished_at=time.time(),
            privileged=self.privileged,
        )

    # --- internals ------------------------------------------------------------------------------
    def _usage(self, cut_short: bool) -> dict[str, Usage]:
        """The agent's tokens, from its actions; an episode cut short (timeout, infrastructure) also counts the
        calls whose action never came (a reply still being written when the clock ran out)."""
        usage = self.usage
        if cut_short:
            recorded = usage_of_calls(c for c in self.model_calls if c.role == "agent")
            usage = recorded if recorded.calls + recorded.cache_hits > usage.calls + usage.cache_hits else usage
        return {"agent": usage} if usage.calls or usage.cache_hits else {}

    def _record_agent_side(self, action: Action) -> None:
        self.usage.add(action.tokens)
        for event in action.planner_events:
            self.planner_events.append({"turn": self.turn, **event})

    async def _carry_out(self, action: Action) -> tuple[ToolCall | None, ToolResult | None]:
        if action.kind == "message":
            self._add_step("message", action)
            return None, None
        if action.kind == "search":
            call = ToolCall(id=action.call_id or f"search_{self.turn}", tool=SEARCH_TOOL,
                            arguments={"query": action.query, "k": action.k})
            result = await self._search(action.query, action.k)
            self._add_step("search", action, call=call, raw=result, observation=result)
            return call, result
        return await self._call_tool(action)

    async def _call_tool(self, action: Action) -> tuple[ToolCall, ToolResult]:
        call = ToolCall(id=action.call_id or f"call_{self.turn}", tool=action.tool or "", arguments=action.arguments)
        spec = self.toolbox.spec(call.tool) if self.toolbox.is_callable(call.tool) else None
        if spec is None or action.arguments_error is not None:
            result = _unreadable(action) if action.arguments_error is not None else _not_callable(call.tool, self.toolbox)
            self._add_step("tool", action, call=call, observation=result)
            return call, result
        outcome = await self.controller.call(spec, call.arguments, turn=self.turn)
        self._add_step("tool", action, call=call, raw=outcome.raw, observation=outcome.observation,
                       interventions=outcome.interventions)
        if outcome.observation.is_infra_error:
            raise EpisodeInfraError(outcome.observation.error_class or "infra", outcome.observation.text[:300])
        return call, outcome.observation

    async def _search(self, query: str, k: int) -> ToolResult:
        found = await self.toolbox.search(query, k)
        tools = [{"id": t.id, "description": t.description, "input_schema": t.input_schema} for t in found]
        return ToolResult.ok({"query": query, "tools": tools}, source="search")

    def _observation(self, call: ToolCall | None, result: ToolResult | None) -> Observation:
        messages: list[str] = []
        constraints: list[Constraint] = []
        for text, constraint, record in self.controller.due_user_messages(self.turn):
            messages.append(text)
            constraints.append(constraint)
            self.steps.append(Step(index=len(self.steps), turn=self.turn, kind="user", message=text,
                                   interventions=[record], started_at=time.time()))
        self._mark = time.perf_counter()
        return Observation(turn=self.turn, call=call, result=result, user_messages=messages, constraints=constraints)

    def _add_step(self, kind: str, action: Action, *, call: ToolCall | None = None, raw: ToolResult | None = None,
                  observation: ToolResult | None = None, interventions: list[Any] | None = None) -> None:
        elapsed = (time.perf_counter() - self._mark) * 1000.0 if self._mark else 0.0
        self.steps.append(Step(
            index=len(self.steps), turn=self.turn, kind=kind, message=action.text, tool_call=call,  # type: ignore[arg-type]
            raw_result=raw, observation=observation, interventions=interventions or [],
            started_at=time.time() - elapsed / 1000.0, duration_ms=round(elapsed, 3), tokens=action.tokens,
            truncated=action.truncated,
        ))

    def _end(self, status: EpisodeStatus, answer: str, action: Action) -> None:
        self.status, self.final_answer = status, answer
        if status == "agent_error":
            self.agent_error = action.error or "the agent failed without saying why"
        self._add_step("final", action)


def usage_of_calls(calls: Iterable[ModelCall]) -> Usage:
    usage = Usage()
    for call in calls:
        usage.add(call.usage)
    return usage


def _not_callable(tool_id: str, toolbox: Toolbox) -> ToolResult:
    if toolbox.spec(tool_id) is None:
        return ToolResult.error("not_found", f"not_found: there is no tool '{tool_id}'; check the name")
    hint = "find it with search_tools first" if toolbox.offers_search else "it is not among your tools"
    return ToolResult.error("not_found", f"not_found: tool '{tool_id}' is not available to you; {hint}")


def _unreadable(action: Action) -> ToolResult:
    """Arguments the model did not write as a JSON object: said as such, with the parser's reason."""
    return ToolResult.error("invalid_args", f"invalid_args: {action.arguments_error}; the call was not made. "
                            "Call the tool again with its arguments as one JSON object.", source="agent",
                            raw_arguments=action.raw_arguments[:2000])
