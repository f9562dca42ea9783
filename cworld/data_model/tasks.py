"""Tasks and their constraints: the task distribution written by `cworld synth`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class ScenarioEntity(BaseModel):
    """One thing the task presumes exists, with what is true of it before the episode starts.

    `app` is the application the entity lives in (a server id such as `finance`), `kind` the entity type as
    the category cards name it (`payee`, `flight`, `card`), `id` its key as the service knows it."""

    app: str
    kind: str
    id: str | None = Field(None, description="the entity's key; None for one known only by its attributes")
    attributes: dict[str, Any] = Field(default_factory=dict)

    @property
    def handle(self) -> str:
        """`app/kind/id`: how relations name the entity."""
        return f"{self.app}/{self.kind}/{self.id}"


class ScenarioRelation(BaseModel):
    """A fact that links two entities: `finance/transaction/txn_0004` `account` `finance/account/acct_0001`."""

    subject: str = Field(description="the handle `app/kind/id` of one entity")
    relation: str
    object: str = Field(description="the handle of the other")


class Scenario(BaseModel):
    """Facts about the world a task presumes (docs/task-synthesis.md, "Scenario"): entities, their attributes
    and the relations between them, as they are before the episode. Facts only: never a call, a tool name or
    the answer. The same for every agent; the World Engine seeds its session world from it."""

    today: str | None = Field(None, description="the user's date and time, ISO 8601")
    entities: list[ScenarioEntity] = Field(default_factory=list)
    relations: list[ScenarioRelation] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="other facts, in words")

    def of(self, app: str, kind: str | None = None) -> list[ScenarioEntity]:
        return [e for e in self.entities if e.app == app and (kind is None or e.kind == kind)]


class PublicTask(BaseModel):
    """What an environment may know of a task (C-World §3.2): what the agent is told and the scenario.

    The World Engine receives this, never a `Task`, so by construction it cannot see the gold plan, sub-goals,
    rationales, hints, ground truth, provenance or metadata. Constraints added mid-episode are left out:
    the agent hears them when the controller injects them."""

    model_config = ConfigDict(frozen=True)

    id: str
    query: str
    constraints: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    scenario: Scenario = Field(default_factory=Scenario)


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
    scenario: Scenario = Field(default_factory=Scenario, description="facts about the world the task presumes")
    source: Literal["offline", "llm", "manual"] = "manual"
    provenance: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def public(self) -> PublicTask:
        """The part of the task an environment may read: query, constraints as stated, tools, scenario."""
        return PublicTask(
            id=self.id,
            query=self.query,
            constraints=tuple(c.description for c in self.constraints if c.added_at_turn is None),
            tools=tuple(self.tools),
            scenario=self.scenario.model_copy(deep=True),
        )

    @property
    def servers(self) -> list[str]:
        return sorted({t.split("/", 1)[0] for t in self.tools})
