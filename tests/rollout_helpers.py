"""Helpers for tests and benchmarks of rollouts: contexts, outcome checks, timing-free comparison, fakes.

Kept in one module so every suite (and `benchmarks/bench_rollout.py`) uses the same ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cworld.agents import ScriptedAgent, scripted_skills
from cworld.agents.base import Action, Observation
from cworld.agents.toolbox import Toolbox
from cworld.controller.middleware import CallContext, CallNext
from cworld.data_model import Task, ToolResult, Trajectory
from cworld.environment import Environment, Workspace
from cworld.registry.tools import environment_tools
from cworld.rollout.loop import RolloutContext
from cworld.rollout.summary import state_matches

TIMING_FIELDS = frozenset({"started_at", "finished_at", "duration_ms", "latency_ms", "seconds"})
"""Fields that record wall-clock time: the only ones two runs with the same seed may differ in."""


def scratch_context(workspace: Path, env: Environment | None = None, **kwargs: Any) -> RolloutContext:
    """A context over the sandbox tools with a private workspace (no registry built)."""
    ws = Workspace.resolve(workspace)
    return RolloutContext(env or Environment.resolve(), ws, environment_tools(workspace=ws).episode(), **kwargs)


def without_timings(value: Any) -> Any:
    """A trajectory (or its JSON form) with every wall-clock field removed, for same-seed comparisons."""
    if isinstance(value, Trajectory):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def constraints_met(trajectory: Trajectory) -> bool:
    """The machine-checkable constraints the fixtures and the controller use, as they stood at the end."""
    answer = trajectory.final_answer
    for constraint in trajectory.constraints_final:
        check = constraint.verification or {}
        kind, value = check.get("kind"), check.get("value")
        if kind == "final_answer_contains" and str(value) not in answer:
            return False
        if kind == "final_answer_max_words" and len(answer.split()) > int(value):  # type: ignore[arg-type]
            return False
        if kind == "final_answer_format" and value == "bullets" and not _bulleted(answer):
            return False
        if kind == "max_calls" and sum(s.kind == "tool" for s in trajectory.steps) > int(value):  # type: ignore[arg-type]
            return False
    return True


def succeeded(trajectory: Trajectory) -> bool:
    """Completed, reached the ground-truth end state, and kept every checkable constraint."""
    return trajectory.status == "completed" and bool(state_matches(trajectory)) and constraints_met(trajectory)


def success_rate(trajectories: Iterable[Trajectory]) -> float:
    outcomes = [succeeded(t) for t in trajectories]
    return sum(outcomes) / len(outcomes) if outcomes else 0.0


def fired(trajectory: Trajectory) -> list[str]:
    """The fault kinds that fired in the episode, in order."""
    return [i.kind for s in trajectory.steps for i in s.interventions if i.params.get("phase") == "fire"]


def _bulleted(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith(("-", "*", "•")) for line in lines)


class CrashingServer:
    """A controller step that makes the first `crashes` calls of each of the first `episodes` episodes come
    back as a server crash (an infrastructure failure), then lets everything through."""

    def __init__(self, episodes: int, crashes: int = 1) -> None:
        self.episodes, self.crashes = episodes, crashes
        self.opened = 0
        self._calls = 0

    def new_episode(self) -> None:
        self.opened += 1
        self._calls = 0

    async def __call__(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        if ctx.index == 0:
            self.new_episode()
        self._calls += 1
        if self.opened <= self.episodes and self._calls <= self.crashes:
            return ToolResult.error("server_crash", "server_crash: the MCP server exited (status -9)")
        return await call_next(ctx)


class SleepyAgent:
    """An agent that thinks for `seconds` before every action (to exercise timeouts)."""

    name = "test:sleepy"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        self.turns = 0

    async def act(self, observation: Observation) -> Action:
        await asyncio.sleep(self.seconds)
        self.turns += 1
        return Action.say("still thinking")


def busy_actor(calls: int = 2) -> Any:
    """A mock-model responder (see `cworld.llm.mock.script`) for an LLM agent in ReAct style: it calls one
    offered tool that needs no arguments `calls` times, then answers. Any task, any access mode but search."""

    def respond(messages: list[Any], tools: list[Any] | None) -> Any:
        done = sum(1 for m in messages if (m.get("role") if isinstance(m, dict) else getattr(m, "role", "")) == "tool")
        free = [t["function"]["name"] for t in tools or [] if not t["function"]["parameters"].get("required")]
        if done >= calls or not free:
            return f"Done after {done} call(s)."
        return {"tool_calls": [{"name": sorted(free)[0], "arguments": {}}]}

    return respond


class SleepyOracle(ScriptedAgent):
    """The scripted oracle, thinking `seconds` before every action: a model's latency without a model.
    Its trajectories equal the oracle's (timings aside)."""

    def __init__(self, seconds: float = 0.2) -> None:
        super().__init__("scripted:oracle", scripted_skills("scripted:oracle"))
        self.seconds = seconds

    async def act(self, observation: Observation) -> Action:
        await asyncio.sleep(self.seconds)
        return await super().act(observation)
