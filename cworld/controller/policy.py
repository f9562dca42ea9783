"""Fault policies: `controller/policies/NAME.yaml` in an environment, validated on load.

A policy gives, per fault kind, a budget per episode (a count or a `[min, max]` range), the turns in
which it may fire, the tool categories / tool-id globs it may hit, and its parameters. A parameter is a
fixed value, a `[low, high]` range, or `{choice: [...]}`; ranges and choices are drawn once per
(task, policy, seed) when the faults are planned, so every agent meets the same values.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cworld.controller.faults import FAULT_TYPES
from cworld.environment import Environment
from cworld.errors import ConfigError, ContentError

ParamSpec = Any
"""A scalar, a [low, high] range of two numbers, or {choice: [...]}."""


class FaultRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget: int | tuple[int, int] = Field(0, description="faults of this kind per episode: n or [min, max]")
    turns: tuple[int, int] = Field((1, 30), description="first and last turn in which it may fire (inclusive)")
    categories: list[str] = Field(default_factory=list, description="tool categories it may hit; empty = any")
    tools: list[str] = Field(default_factory=list, description="tool-id globs it may hit (e.g. 'mail/*'); empty = any")
    params: dict[str, ParamSpec] = Field(default_factory=dict)

    @field_validator("budget")
    @classmethod
    def _budget(cls, value: int | tuple[int, int]) -> int | tuple[int, int]:
        low, high = (value, value) if isinstance(value, int) else value
        if low < 0 or high < low:
            raise ValueError("budget must be n >= 0 or [min, max] with 0 <= min <= max")
        return value

    @field_validator("turns")
    @classmethod
    def _turns(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[0] < 0 or value[1] < value[0]:
            raise ValueError("turns must be [first, last] with 0 <= first <= last")
        return value


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    timing: Literal["per-agent", "shared"] = Field(
        "per-agent", description="per-agent: the firing turn varies per agent (paper); shared: one timing for all"
    )
    faults: dict[str, FaultRule] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_faults(self) -> Policy:
        for kind, rule in self.faults.items():
            if kind not in FAULT_TYPES:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(sorted(FAULT_TYPES))}")
            _check_params(kind, rule.params)
        return self

    @property
    def is_empty(self) -> bool:
        return all(rule.budget in (0, (0, 0)) for rule in self.faults.values())


def _check_params(kind: str, params: dict[str, ParamSpec]) -> None:
    """Every parameter a policy names must exist on the fault, and every value of its range must be valid."""
    model = FAULT_TYPES[kind].Params
    for name in params:
        if name not in model.model_fields:
            raise ValueError(f"{kind}: unknown parameter {name!r}; it takes: {', '.join(model.model_fields) or 'none'}")
    for probe in _extremes(params):
        try:
            model.model_validate(probe)
        except ValidationError as exc:
            raise ValueError(f"{kind}: bad params ({str(exc).splitlines()[1].strip()})") from None


def _extremes(params: dict[str, ParamSpec]) -> list[dict[str, Any]]:
    low = {k: _ends(v)[0] for k, v in params.items()}
    high = {k: _ends(v)[1] for k, v in params.items()}
    return [low, high]


def _ends(spec: ParamSpec) -> tuple[Any, Any]:
    if _is_range(spec):
        return spec[0], spec[1]
    if isinstance(spec, dict) and set(spec) == {"choice"}:
        return spec["choice"][0], spec["choice"][-1]
    return spec, spec


def _is_range(spec: ParamSpec) -> bool:
    return (isinstance(spec, list | tuple) and len(spec) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in spec))


def sample_param(spec: ParamSpec, rng: random.Random) -> Any:
    """One concrete value: ints from an int range, floats (3 decimals) from a float range, one choice."""
    if _is_range(spec):
        low, high = spec
        if isinstance(low, int) and isinstance(high, int):
            return rng.randint(low, high)
        return round(rng.uniform(float(low), float(high)), 3)
    if isinstance(spec, dict) and set(spec) == {"choice"}:
        return rng.choice(list(spec["choice"]))
    return spec


def sample_budget(budget: int | tuple[int, int], rng: random.Random) -> int:
    return budget if isinstance(budget, int) else rng.randint(budget[0], budget[1])


def policies_dir(env: Environment) -> Path:
    return env.controller / "policies"


def policy_names(env: Environment) -> list[str]:
    return sorted(p.stem for p in policies_dir(env).glob("*.yaml"))


def load_policy(env: Environment, name: str) -> Policy:
    """The named policy of the environment; a `ConfigError` for an unknown name, `ContentError` for a bad file."""
    path = policies_dir(env) / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(policy_names(env)) or "none"
        raise ConfigError(f"unknown fault policy {name!r}; choose one of: {known} (files in {policies_dir(env)})")
    return load_policy_file(path)


def load_policy_file(path: Path) -> Policy:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ContentError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ContentError(f"{path}: a policy file must be a mapping with 'name' and 'faults'")
    data.setdefault("name", path.stem)
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ContentError(f"{path}: {where}: {err['msg']}") from None
