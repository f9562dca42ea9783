"""Tasks and their constraints: the task distribution written by `cworld synth`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from cworld.data_model.versioning import Versioned


class Constraint(BaseModel):
    """A requirement on how the task is solved. `verification` is machine-checkable where possible.

    `verification` is a small dict whose `kind` names a checker in `cworld.judges` (e.g.
    `{"kind": "max_calls", "value": 12}`); `None` means only an LLM judge can tell.
    """

    id: str
    type: str
    description: str
    verification: dict[str, Any] | None = None
    interacts_with: list[str] = Field(default_factory=list)
    added_at_turn: int | None = Field(None, description="set when injected mid-episode by the controller")
    replaces: str | None = Field(None, description="id of a constraint this one changes")


class SubGoal(BaseModel):
    id: str
    description: str
    depends_on: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)


class PlanStep(BaseModel):
    """One call of a gold plan. String arguments may hold `{{step_id.path.to.field}}` references."""

    id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    subgoal: str | None = None
    note: str = ""


class Task(Versioned):
    id: str
    query: str
    constraints: list[Constraint] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list, description="candidate tool ids")
    rationales: dict[str, str] = Field(default_factory=dict, description="tool id -> why it is needed")
    subgoals: list[SubGoal] = Field(default_factory=list)
    gold_plan: list[PlanStep] = Field(default_factory=list)
    verifiable: bool = False
    ground_truth: dict[str, Any] | None = Field(None, description="sandbox end state after the gold plan")
    initial_state_seed: int = 0
    final_answer_hints: list[str] = Field(default_factory=list)
    source: Literal["offline", "llm", "manual"] = "manual"
    provenance: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def servers(self) -> list[str]:
        return sorted({t.split("/", 1)[0] for t in self.tools})
