"""Model configuration: which LLM serves each role (agent, engine, synth, judge).

Sources, later wins: `<workspace>/config.yaml` (`models: {role: model | {model, api_base, ...}}`),
then environment variables `CWORLD_AGENT_MODEL`, `CWORLD_ENGINE_MODEL`, `CWORLD_SYNTH_MODEL`,
`CWORLD_JUDGE_MODELS` (comma-separated) and `CWORLD_API_BASE`. No model configured means offline:
every command falls back to its deterministic path. Keys are read from the environment only.

A model named outside the config (`cworld run --agent openai/NAME`) takes the role's settings
(`ModelsConfig.for_model`): the same endpoint and key variable for the same provider, else `CWORLD_API_BASE`.

Every role has a budget per model call (`budgets: {role: {max_tokens, timeout_s}}` in `config.yaml`, else
`DEFAULT_BUDGETS`): a reply's output cap and one call's timeout. An unbounded reply costs time and money, and a
local model left without a cap writes until its context is full. A model entry's own `max_tokens`/`timeout_s`
win over its role's budget.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from cworld.errors import ConfigError

Role = Literal["agent", "engine", "synth", "judge"]
ROLES: tuple[Role, ...] = ("agent", "engine", "synth", "judge")


class ModelConfig(BaseModel):
    model: str
    api_base: str | None = None
    api_key_env: str | None = Field(None, description="name of the env var holding the key")
    max_concurrency: int = 8
    temperature: float = 0.0
    max_tokens: int | None = Field(None, gt=0, description="a reply's output cap; None: the role's budget")
    timeout_s: float | None = Field(None, gt=0, description="one call's timeout; None: the role's budget")
    history_tokens: int | None = Field(
        None, gt=0, description="the agent's conversation budget in tokens; None: from the model's context window")
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else "openai"


class RoleBudget(BaseModel):
    """What one model call of a role may take: its reply's tokens and its wall-clock seconds."""

    max_tokens: int = Field(gt=0)
    timeout_s: float = Field(gt=0)


DEFAULT_BUDGETS: dict[Role, RoleBudget] = {
    "agent": RoleBudget(max_tokens=1024, timeout_s=120.0),  # a turn: a tool call or a short answer
    "engine": RoleBudget(max_tokens=1200, timeout_s=120.0),  # one tool answer (engine.llm.max_tokens wins)
    "judge": RoleBudget(max_tokens=1024, timeout_s=120.0),  # one vote with its reasons
    "synth": RoleBudget(max_tokens=4096, timeout_s=300.0),  # a whole task draft
}


class ModelsConfig(BaseModel):
    agent: ModelConfig | None = None
    engine: ModelConfig | None = None
    synth: ModelConfig | None = None
    judge: list[ModelConfig] = Field(default_factory=list)
    api_base: str | None = Field(None, description="CWORLD_API_BASE: the endpoint of a model no entry names")
    budgets: dict[Role, RoleBudget] = Field(default_factory=lambda: dict(DEFAULT_BUDGETS))

    def budget(self, role: str) -> RoleBudget | None:
        """The role's per-call budget; None for a call outside the four roles (a one-off model)."""
        return self.budgets.get(role)  # type: ignore[call-overload, no-any-return]

    def budgeted(self, role: str, cfg: ModelConfig) -> ModelConfig:
        """`cfg` with its output cap and call timeout filled from the role's budget where it sets none (a call
        outside the four roles keeps what it has)."""
        budget = self.budget(role)
        if budget is None:
            return cfg
        update = {k: getattr(budget, k) for k in ("max_tokens", "timeout_s") if getattr(cfg, k) is None}
        return cfg.model_copy(update=update) if update else cfg

    def for_role(self, role: Role) -> list[ModelConfig]:
        value = getattr(self, role)
        if isinstance(value, list):
            return value
        return [value] if value is not None else []

    def configured(self, role: Role) -> bool:
        return bool(self.for_role(role))

    def for_model(self, role: Role, model: str) -> ModelConfig:
        """The settings `model` runs with in `role`: its own entry when the role lists it; else the role's
        first entry with the model swapped in (its endpoint, key variable and extras only when the provider
        is the same: another provider's endpoint is never right); else the model at `CWORLD_API_BASE`."""
        configured = self.for_role(role)
        own = next((c for c in configured if c.model == model), None)
        if own is not None:
            return own
        alone = ModelConfig(model=model, api_base=self.api_base)
        if not configured:
            return alone
        first = configured[0]
        if first.provider != alone.provider:
            return first.model_copy(update={"model": model, "api_base": self.api_base, "api_key_env": None,
                                            "extra": {}})
        return first.model_copy(update={"model": model})


def _as_model(value: Any, api_base: str | None) -> ModelConfig:
    if isinstance(value, str):
        return ModelConfig(model=value, api_base=api_base)
    if isinstance(value, dict):
        value = {"api_base": api_base, **value}
        return ModelConfig.model_validate(value)
    raise ConfigError(f"model entry {value!r} must be a model string or a mapping with 'model'")


ModelFailurePolicy = Literal["stop", "infra", "fallback"]
MODEL_FAILURE_POLICIES: tuple[ModelFailurePolicy, ...] = ("stop", "infra", "fallback")
DEFAULT_MODEL_FAILURE: ModelFailurePolicy = "infra"


def load_model_failure_policy(workspace_root: Path | None, given: str | None = None) -> ModelFailurePolicy:
    """What a run does when a model role fails past its retries after the preflight: `given` (the CLI's
    `--on-model-failure`), else `on_model_failure` in `<workspace>/config.yaml`, else `infra`.

    `stop`: the run ends with one line, finished episodes kept; `infra`: the episode is recorded as
    `infra_error` (resume runs it again); `fallback`: the engine answers without its model (counted)."""
    value: Any = given
    cfg = workspace_root / "config.yaml" if workspace_root is not None else None
    if value is None and cfg is not None and cfg.is_file():
        try:
            value = (yaml.safe_load(cfg.read_text()) or {}).get("on_model_failure")
        except (yaml.YAMLError, AttributeError):
            raise ConfigError(f"{cfg}: not a YAML mapping; fix the file") from None
    if value is None:
        return DEFAULT_MODEL_FAILURE
    if value not in MODEL_FAILURE_POLICIES:
        where = "--on-model-failure" if given is not None else f"on_model_failure in {cfg}"
        raise ConfigError(f"{where}: {value!r} is not a policy; use one of {', '.join(MODEL_FAILURE_POLICIES)}")
    return value  # type: ignore[no-any-return]


def serving_failure_policy(workspace_root: Path | None) -> ModelFailurePolicy:
    """The workspace's policy for a door that serves episodes to a client (the gym, `cworld serve`, the trainer
    doors): `fallback` as configured; `stop` acts as `infra` there: the client's episode fails with the cause,
    and the server goes on serving the other sessions."""
    policy = load_model_failure_policy(workspace_root)
    return "infra" if policy == "stop" else policy


def load_budgets(raw: Any, source: str = "config.yaml") -> dict[Role, RoleBudget]:
    """The default budgets with the config's `budgets:` over them (a role may set either key alone)."""
    where = f"{source}: budgets"
    if raw is None:
        return dict(DEFAULT_BUDGETS)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must map a role to {{max_tokens, timeout_s}}")
    budgets = dict(DEFAULT_BUDGETS)
    for role, value in raw.items():
        if role not in ROLES:
            raise ConfigError(f"{where}: unknown role {role!r}; use one of {', '.join(ROLES)}")
        if not isinstance(value, dict) or set(value) - {"max_tokens", "timeout_s"}:
            raise ConfigError(f"{where}.{role}: must be a mapping of max_tokens and/or timeout_s")
        try:
            budgets[role] = RoleBudget.model_validate({**DEFAULT_BUDGETS[role].model_dump(), **value})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise ConfigError(f"{where}.{role}.{error['loc'][0]}: {error['msg']}") from None
    return budgets


def load_models(workspace_root: Path | None = None, env: dict[str, str] | None = None) -> ModelsConfig:
    env = dict(os.environ if env is None else env)
    api_base = env.get("CWORLD_API_BASE") or None
    raw: dict[str, Any] = {}
    budgets = dict(DEFAULT_BUDGETS)
    if workspace_root is not None:
        cfg = workspace_root / "config.yaml"
        if cfg.is_file():
            try:
                document = yaml.safe_load(cfg.read_text()) or {}
            except yaml.YAMLError as exc:
                raise ConfigError(f"{cfg}: not valid YAML ({str(exc).splitlines()[0]})") from None
            if not isinstance(document, dict):
                raise ConfigError(f"{cfg}: not a YAML mapping; fix the file")
            raw = document.get("models", {}) or {}
            budgets = load_budgets(document.get("budgets"), str(cfg))
    for role in ("agent", "engine", "synth"):
        if env.get(f"CWORLD_{role.upper()}_MODEL"):
            raw[role] = env[f"CWORLD_{role.upper()}_MODEL"]
    if env.get("CWORLD_JUDGE_MODELS"):
        raw["judge"] = [m.strip() for m in env["CWORLD_JUDGE_MODELS"].split(",") if m.strip()]
    try:
        out: dict[str, Any] = {"api_base": api_base, "budgets": budgets}
        for role, value in raw.items():
            if role not in ROLES:
                raise ConfigError(f"unknown role {role!r} in models config; use one of {', '.join(ROLES)}")
            if role == "judge":
                values = value if isinstance(value, list) else [value]
                out[role] = [_as_model(v, api_base) for v in values]
            elif value:
                out[role] = _as_model(value, api_base)
        return ModelsConfig.model_validate(out)
    except ValidationError as exc:
        raise ConfigError(f"models config: {str(exc).splitlines()[0]}") from None
