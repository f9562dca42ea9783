"""The judges' environment content: rubrics (`judges/rubrics/*.yaml`), prompt templates
(`judges/prompts/*.md`) and weights (`judges/weights.yaml`). A user changes how episodes are graded
by editing these files, not the code; a file that does not validate is a `ContentError` naming it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cworld.environment import Environment
from cworld.errors import ContentError

Evidence = Literal["task", "constraints", "trajectory", "final_answer", "plan", "reference"]
AppliesWhen = Literal["always", "constraints", "plan", "progress"]


class Rubric(BaseModel):
    """One judge dimension: the question, what evidence the judge sees, and what each score means."""

    model_config = ConfigDict(extra="forbid")

    dimension: str
    title: str
    group: str = ""
    question: str
    shows: list[Evidence] = Field(min_length=1)
    applies_when: AppliesWhen = Field(
        "always", description="constraints: the task has some; plan: the agent logged a plan; progress: status updates"
    )
    pass_threshold: float = Field(6.0, ge=0, le=10)
    scale: dict[int, str] = Field(min_length=2)

    @field_validator("scale")
    @classmethod
    def _in_range(cls, scale: dict[int, str]) -> dict[int, str]:
        bad = [k for k in scale if not 0 <= k <= 10]
        if bad:
            raise ValueError(f"scale points must be 0-10, got {bad}")
        return dict(sorted(scale.items()))

    def scale_text(self) -> str:
        return "\n".join(f"- {k}: {v.strip()}" for k, v in self.scale.items())


class Weights(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verifiable: dict[str, float] = Field(default_factory=dict)
    judges: dict[str, float] = Field(default_factory=dict)
    #: the state outcome's parts (state_success, R_c, R_b_complement), for tasks with a ground truth
    outcome: dict[str, float] = Field(default_factory=dict)
    #: the outcome's share of the overall score when the task has one; the process parts share the rest
    outcome_share: float = Field(0.0, ge=0.0, le=1.0)

    @field_validator("verifiable", "judges", "outcome")
    @classmethod
    def _non_negative(cls, weights: dict[str, float]) -> dict[str, float]:
        bad = [k for k, w in weights.items() if w < 0]
        if bad:
            raise ValueError(f"weights must be >= 0: {bad}")
        return weights


@dataclass(frozen=True)
class Prompts:
    system: Template
    dimension: Template


@dataclass(frozen=True)
class JudgeContent:
    rubrics: dict[str, Rubric]
    prompts: Prompts
    weights: Weights

    @classmethod
    def load(cls, folder: Path) -> JudgeContent:
        return cls(load_rubrics(folder / "rubrics"), load_prompts(folder / "prompts"),
                   load_weights(folder / "weights.yaml"))

    @classmethod
    def from_environment(cls, env: Environment | None = None) -> JudgeContent:
        return cls.load((env or Environment.resolve()).judges)


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ContentError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None


def _problem(exc: ValidationError) -> str:
    e = exc.errors()[0]
    return f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"


def load_rubrics(folder: Path) -> dict[str, Rubric]:
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise ContentError(f"{folder}: no rubric files (*.yaml); copy them from the default environment")
    rubrics: dict[str, Rubric] = {}
    for path in files:
        try:
            rubric = Rubric.model_validate(_yaml(path))
        except ValidationError as exc:
            raise ContentError(f"{path}: {_problem(exc)}") from None
        if rubric.dimension in rubrics:
            raise ContentError(f"{path}: dimension {rubric.dimension!r} is defined twice; rename one")
        rubrics[rubric.dimension] = rubric
    return rubrics


def load_prompts(folder: Path) -> Prompts:
    templates = {}
    for name in ("system", "dimension"):
        path = folder / f"{name}.md"
        if not path.is_file():
            raise ContentError(f"{path}: missing judge prompt template; copy it from the default environment")
        templates[name] = Template(path.read_text(encoding="utf-8"))
    return Prompts(**templates)


def load_weights(path: Path) -> Weights:
    if not path.is_file():
        raise ContentError(f"{path}: missing; it sets how the overall score is made (see docs/reward.md)")
    try:
        return Weights.model_validate(_yaml(path) or {})
    except ValidationError as exc:
        raise ContentError(f"{path}: {_problem(exc)}") from None
