"""A task draft: what a drafter (LLM or offline) proposes and the checks judge, before it becomes a `Task`.

It is the JSON the LLM drafter must return (its schema goes into the prompt), so field descriptions
say what a good value looks like.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cworld.data_model import Constraint, PlanStep, SubGoal, Task


class Draft(BaseModel):
    query: str = Field(
        description="the user's request, in their words: intent-level, no tool or server names"
    )
    tools: list[str] = Field(
        default_factory=list, description="ids (server/name) of the candidate tools the task needs"
    )
    rationales: dict[str, str] = Field(default_factory=dict, description="tool id -> why the query needs it")
    constraints: list[Constraint] = Field(default_factory=list)
    subgoals: list[SubGoal] = Field(
        default_factory=list, description="an acyclic graph of steps toward the goal"
    )
    gold_plan: list[PlanStep] = Field(
        default_factory=list,
        description="tool calls that solve the task; string arguments may use {{step_id.path.to.field}}",
    )
    final_answer_hints: list[str] = Field(
        default_factory=list, description="lines a correct final answer contains; may use {{step_id.path}}"
    )

    def plan_tools(self) -> list[str]:
        return list(dict.fromkeys(step.tool for step in self.gold_plan))

    def servers(self) -> list[str]:
        return sorted({t.split("/", 1)[0] for t in self.tools})

    def compact(self) -> dict[str, Any]:
        """The draft as stored in provenance (all of it: a reader must be able to see what was judged)."""
        return self.model_dump(mode="json")

    @classmethod
    def of_task(cls, task: Task) -> Draft:
        """The draft a stored task was made from (to re-run the checks on it)."""
        return cls(**_draft_fields(task))


def _draft_fields(source: BaseModel) -> dict[str, Any]:
    """The fields a `Draft` and a `Task` share, taken from either."""
    return {name: getattr(source, name) for name in Draft.model_fields}


def to_task(
    draft: Draft,
    *,
    task_id: str,
    world_seed: int,
    source: str,
    provenance: list[dict[str, Any]],
    metadata: dict[str, Any],
) -> Task:
    return Task(
        id=task_id,
        **_draft_fields(draft),
        initial_state_seed=world_seed,
        source=source,  # type: ignore[arg-type]
        provenance=provenance,
        metadata=metadata,
    )
