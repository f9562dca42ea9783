"""One episode driven by a caller's actions instead of an agent: the one implementation behind the gym
API (`cworld.make`), `cworld serve` and the Inspect task.

    driver = EpisodeDriver(ctx, task, mode="synthesized", policy="default", access="full", agent="gym", seed=0)
    first = await driver.start()                      # {"turn", "result", "user_messages", "tools", "task", ...}
    step = await driver.act({"tool": "mail/search_messages", "arguments": {"query": "audit"}})
    step = await driver.act({"final": "Forwarded it."})   # step.done, step.trajectory, step.reward

Everything an episode is made of stays where `cworld run` has it: `build_episode` wires the controller
(backends, faults, the World Engine) and the toolbox, `Episode` records the trajectory. The driver only
turns plain actions into `Action`s (call ids `call_1`, `call_2`, ... unless the action names one) and
observations into plain dicts, and scores the end: the reward is
1.0 when the end state matches the task's ground truth, 0.0 otherwise (`reward_known` says whether it could
be told). The state diff behind it (`Step.state`), a few ms of CPU, runs on the caller's loop, and a door
that scores the episode reuses it. (It ran in a worker thread once: under the GIL that thread took the
core from the loop in 5 ms slices, so every session on the loop waited and each step's time counted the
others' work.)
Two doors that send the same actions through a driver get the same trajectory.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from cworld.agents.base import Action, Observation
from cworld.agents.prompt import context_block
from cworld.data_model import Task, ToolResult, ToolSpec, Trajectory
from cworld.data_model.trajectory import EpisodeStatus, InfraErrorRecord
from cworld.errors import UsageError
from cworld.rollout.episode import Episode, EpisodeInfraError
from cworld.rollout.loop import RolloutContext, build_episode
from cworld.rollout.summary import state_result
from cworld.sandbox.statediff import StateDiffResult

ACTION_KINDS = "'tool' (+ 'arguments'), 'search' (+ 'k'), 'message' or 'final'"


@dataclass
class Step:
    """What one action led to. `observation` is None once the episode has ended."""

    observation: dict[str, Any] | None
    raw: Observation | None = None
    """The episode's own observation (the tool result with its content blocks), for doors that need more
    than the plain dict."""
    interventions: list[dict[str, Any]] = field(default_factory=list)
    trajectory: Trajectory | None = None
    reward: float = 0.0
    reward_known: bool = False
    state: StateDiffResult | None = None
    """The end state's diff against the task's ground truth (the reward's source), once the episode ended."""

    @property
    def done(self) -> bool:
        return self.trajectory is not None

    @property
    def truncated(self) -> bool:
        return self.trajectory is not None and self.trajectory.status == "turn_limit"


class EpisodeDriver:
    """One (task, mode, policy, access, agent, seed) episode; `episode_id` replaces the run-stable id where
    one door runs the same episode many times at once (served sessions)."""

    def __init__(self, ctx: RolloutContext, task: Task, *, mode: str, policy: str, access: str, agent: str,
                 seed: int, episode_id: str | None = None) -> None:
        self.ctx, self.task = ctx, task
        self.episode: Episode = build_episode(task, agent=agent, access=access, mode=mode, policy=policy,
                                              seed=seed, ctx=ctx)
        if episode_id is not None:
            self.episode.id = episode_id
        self.trajectory: Trajectory | None = None
        self._call_ids = itertools.count(1)

    @property
    def open(self) -> bool:
        return self.episode.turn > 0 and not self.episode.done and self.trajectory is None

    async def start(self) -> dict[str, Any]:
        """Open the episode's world; the first observation with the task as the user states it (the
        constraints stated up front: one added mid-episode arrives as a user message at its turn) and the
        context an LLM agent's system prompt carries (the world's date and time, who the user is)."""
        first = await self.episode.start()
        context = self.episode.context
        return {**self.observation(first), "task": self.task.query,
                "constraints": [c.description for c in self.task.constraints if c.added_at_turn is None],
                "context": context_block(context) if context is not None else ""}

    async def act(self, action: dict[str, Any] | Action) -> Step:
        """Carry out one action. An infrastructure failure raises `EpisodeInfraError` (the episode is then
        closed: `fail` records it)."""
        if not self.open:
            raise UsageError("the episode has ended; start another" if self.trajectory is not None
                             else "the episode has not started")
        step = as_action(action, f"call_{next(self._call_ids)}")
        before = len(self.episode.steps)
        try:
            observation = await self.episode.apply(step)
        except EpisodeInfraError:
            await self.episode.controller.close()
            raise
        interventions = [i.model_dump() for s in self.episode.steps[before:] for i in s.interventions]
        if observation is not None:
            return Step(self.observation(observation), observation, interventions)
        self.trajectory = await self.episode.finish()
        state = state_result(self.trajectory)
        reward = float(state is not None and state.success)
        return Step(None, None, interventions, self.trajectory, reward, state is not None, state)

    async def end(self, status: EpisodeStatus, *, infra: EpisodeInfraError | None = None) -> Trajectory:
        """Close an open episode without an answer (the caller left, or the world failed under it)."""
        if self.trajectory is not None:
            return self.trajectory
        records = [InfraErrorRecord(kind=infra.kind, message=str(infra)[:500], attempt=1)] if infra else []
        await self.episode.controller.close()
        self.trajectory = self.episode.trajectory(status, infra_errors=records)
        return self.trajectory

    def observation(self, obs: Observation) -> dict[str, Any]:
        return {"turn": obs.turn, "result": result_json(obs.result), "user_messages": list(obs.user_messages),
                "tools": [tool_json(t) for t in self.episode.toolbox.visible()], "search_available": True}


def result_json(result: ToolResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"text": result.text, "is_error": result.is_error, "error_class": result.error_class,
            "structured": result.structured_content}


def tool_json(tool: ToolSpec) -> dict[str, Any]:
    return {"id": tool.id, "description": tool.description, "input_schema": tool.input_schema}


def as_action(action: dict[str, Any] | Action, call_id: str) -> Action:
    """A plain action dict as the episode's `Action`; a one-line UsageError for anything else."""
    if isinstance(action, Action):
        return action
    if not isinstance(action, dict):
        raise UsageError(f"an action is a dict with {ACTION_KINDS}; got {type(action).__name__}")
    if "tool" in action:
        return Action.call(str(action["tool"]), dict(action.get("arguments") or {}), str(action.get("id") or call_id))
    if "search" in action:
        return Action.search(str(action["search"]), int(action.get("k", 5)), str(action.get("id") or call_id))
    if "final" in action:
        return Action.final(str(action["final"]))
    if "message" in action:
        return Action.say(str(action["message"]))
    raise UsageError(f"unknown action {sorted(action)}; use {ACTION_KINDS}")
