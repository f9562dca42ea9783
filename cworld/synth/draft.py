"""A task draft: what a drafter (LLM or offline) proposes and the checks judge, before it becomes a `Task`.

It is the JSON the LLM drafter must return (its schema goes into the prompt), so field descriptions
say what a good value looks like.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from cworld.data_model import Constraint, PlanStep, Scenario, SubGoal, Task


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
    scenario: Scenario = Field(
        default_factory=Scenario,
        description="facts about the world the task presumes, before it starts: the entities it relies on "
        "(app = server id, kind, id = the record's key, attributes = its fields) and the relations between "
        "them (handles app/kind/id). Facts only: no tool names, references, plan steps or answers",
    )
    #: Why the drafter's scenario could not be read (then `scenario` is empty): a check failure that the
    #: revision answers, not a reply to repair.
    scenario_problem: SkipJsonSchema[str | None] = Field(None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _keep_bad_scenario_apart(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if k != "scenario_problem"}
        if data.get("scenario") is None:
            data.pop("scenario", None)
            return data
        try:
            Scenario.model_validate(data["scenario"])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "scenario"
            data["scenario"] = {}
            data["scenario_problem"] = f"{where}: {first['msg']}"
        return data

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
    return {name: getattr(source, name) for name in Draft.model_fields if name != "scenario_problem"}


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
