"""Trajectories: one episode of one agent on one task, appended as one JSONL line."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from cworld.data_model.tasks import Constraint, Task
from cworld.data_model.tools import ToolCall, ToolResult
from cworld.data_model.versioning import Versioned

FaultLevel = Literal["tool", "state", "constraint"]


class Intervention(BaseModel):
    """What the state controller did to a call, an observation, or the conversation."""

    kind: str = Field(description="fault type, e.g. timeout, rate_limit, truncated, new_constraint")
    level: FaultLevel
    turn: int
    tool: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    message: str = ""


class Usage(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0

    @classmethod
    def spent(cls, *, cached: bool, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> Usage:
        """What one model call consumed: a cache hit consumed nothing, it only counts as a hit."""
        if cached:
            return cls(cache_hits=1)
        return cls(calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=cost_usd)

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.cache_hits += other.cache_hits


ModelCallOutcome = Literal["ok", "error", "cancelled"]


class ModelCall(BaseModel):
    """One model call an episode made (any role), kept even when the episode was cut short: what a slow or
    runaway model cost is the first thing to read when an episode timed out."""

    role: str
    model: str
    turn: int | None = Field(None, description="the episode's turn when the call was made")
    started_at: float = 0.0
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    max_tokens: int | None = Field(None, description="the output budget the request carried")
    finish_reason: str | None = None
    cached: bool = False
    outcome: ModelCallOutcome = "ok"
    error: str | None = Field(None, description="outcome error: the failure, one line")

    @property
    def truncated(self) -> bool:
        """The reply was cut at its output budget."""
        return self.finish_reason == "length"

    @property
    def usage(self) -> Usage:
        return Usage.spent(cached=self.cached, prompt_tokens=self.prompt_tokens,
                           completion_tokens=self.completion_tokens, cost_usd=self.cost_usd)


StepKind = Literal["tool", "search", "message", "user", "final"]


class Step(BaseModel):
    index: int
    turn: int
    kind: StepKind = "tool"
    message: str = Field("", description="the model's text for this step (thought or reply)")
    tool_call: ToolCall | None = None
    raw_result: ToolResult | None = Field(None, description="what the backend returned")
    observation: ToolResult | None = Field(None, description="what the agent saw, after interventions")
    interventions: list[Intervention] = Field(default_factory=list)
    started_at: float = 0.0
    duration_ms: float = 0.0
    tokens: Usage = Field(default_factory=Usage)
    truncated: bool = Field(False, description="the agent's reply for this step was cut at its output budget")


class InfraErrorRecord(BaseModel):
    kind: str
    message: str
    attempt: int = 1


EpisodeStatus = Literal["completed", "turn_limit", "gave_up", "timeout", "infra_error", "inaction", "abandoned",
                        "agent_error"]


class Trajectory(Versioned):
    episode_id: str
    task_id: str
    task: Task | None = None
    agent: str
    privileged: bool = Field(False, description="the agent read the task's answer key (gold plan, hints)")
    mode: Literal["live", "synthesized", "hybrid"]
    policy: str = "none"
    seed: int = 0
    status: EpisodeStatus = "completed"
    steps: list[Step] = Field(default_factory=list)
    planner_events: list[dict[str, Any]] = Field(default_factory=list)
    constraints_final: list[Constraint] = Field(default_factory=list)
    final_answer: str = ""
    end_state: dict[str, Any] | None = None
    usage: dict[str, Usage] = Field(default_factory=dict, description="per LLM role")
    model_calls: list[ModelCall] = Field(default_factory=list, description="every model call the episode made")
    infra_errors: list[InfraErrorRecord] = Field(default_factory=list)
    agent_error: str | None = Field(None, description="status agent_error: why the agent's own model failed it")
    started_at: float = 0.0
    finished_at: float = 0.0

    @property
    def tool_steps(self) -> list[Step]:
        return [s for s in self.steps if s.tool_call is not None]

    @property
    def interventions(self) -> list[Intervention]:
        return [i for s in self.steps for i in s.interventions]
