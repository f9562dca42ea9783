"""The agent contract: `reset(task, toolbox, seed)` once, then `act(observation) -> Action` per turn.

The rollout loop owns the world: it sends each tool action through the state controller, runs
searches, delivers the user's mid-episode messages, counts turns and writes the trajectory. An agent
only decides. One action is one turn, so waiting (a back-off in virtual time) is a `message` action.
Scripted agents and LLM agents, and an RL policy driving `cworld.make(...)`, all fit this shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from cworld.data_model import Constraint, Task, ToolCall, ToolResult, Usage
from cworld.data_model.trajectory import EpisodeStatus

if TYPE_CHECKING:
    from cworld.agents.toolbox import Toolbox

ActionKind = Literal["tool", "search", "message", "final"]


@dataclass(frozen=True)
class UserContext:
    """Who the agent works for and when, as the world has it (never from the task's answer key): what a
    deployed assistant knows of its user without asking."""

    now: datetime
    """The world's clock as the episode starts (timezone-aware)."""
    user: dict[str, str] = field(default_factory=dict)
    """The user's public profile in the world: name, email, title, company, city, timezone, ..."""


@dataclass
class Observation:
    """What the agent learns before it acts at `turn`."""

    turn: int
    call: ToolCall | None = None
    """The tool call (or search) of the previous action, which `result` answers."""
    result: ToolResult | None = None
    user_messages: list[str] = field(default_factory=list)
    """New messages from the user (mid-episode changes of the requirements), oldest first."""
    constraints: list[Constraint] = field(default_factory=list)
    """The new or changed constraints those messages carry (for agents that read them structured)."""
    context: UserContext | None = None
    """The first observation only: the user's date and time and who the user is."""


@dataclass
class Action:
    kind: ActionKind
    text: str = ""
    """The model's thought or message; for `final`, the final answer."""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""
    query: str = ""
    k: int = 5
    status: EpisodeStatus | None = None
    """`final` only: how the agent ends (completed, gave_up, inaction, turn_limit, agent_error)."""
    arguments_error: str | None = None
    """`tool` only: the model's arguments were not a JSON object (why); the call is answered, never made."""
    raw_arguments: str = ""
    """`tool` only: the arguments as the model wrote them, kept when they could not be read."""
    error: str = ""
    """`final` with status `agent_error`: why the agent could not go on (its model failed it)."""
    tokens: Usage = field(default_factory=Usage)
    planner_events: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    """The model's reply that made this action was cut at its output budget."""

    @classmethod
    def call(cls, tool: str, arguments: dict[str, Any], call_id: str, text: str = "") -> Action:
        return cls("tool", text=text, tool=tool, arguments=arguments, call_id=call_id)

    @classmethod
    def search(cls, query: str, k: int, call_id: str, text: str = "") -> Action:
        return cls("search", text=text, query=query, k=k, call_id=call_id)

    @classmethod
    def say(cls, text: str) -> Action:
        return cls("message", text=text)

    @classmethod
    def final(cls, text: str, status: EpisodeStatus = "completed") -> Action:
        return cls("final", text=text, status=status)

    @classmethod
    def failed(cls, error: str, text: str = "") -> Action:
        """The agent's own failure ends the episode (a model that cannot follow the protocol or that the
        provider refuses): recorded as `agent_error`, held against the agent, never retried."""
        return cls("final", text=text, status="agent_error", error=error)


class Agent(Protocol):
    """An agent may declare `privileged = True` when it reads the task's answer key (gold plan, hints):
    the runner copies it to `Trajectory.privileged` and reports label such agents (read with getattr)."""

    name: str

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        """Start an episode: forget the last one; `seed` drives any randomness the agent has."""
        ...

    async def act(self, observation: Observation) -> Action: ...
