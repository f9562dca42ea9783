"""Every tool call of a trajectory, classified the way ComplexMCP's table 2 counts them.

- **valid**: the tool exists, the arguments fit its input schema, and the backend answered without error;
- **execution failure**: well-formed, but the backend said no (a missing id, a business rule);
- **syntactic error**: a tool the agent was not given (hallucinated or never unlocked), or arguments
  that violate the schema (wrong type, missing required field, a property the schema does not have);
- **injected**: the state controller's fault answered or broke the call, so it says nothing about the
  agent's syntax or the backend (counted apart; robustness metrics read these);
- **infra**: a crashed server or a failed engine: never the agent's fault, left out of every rate.

Search steps (`search_tools`) are not tool calls here: they are counted apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import jsonschema
from jsonschema.exceptions import SchemaError

from cworld.data_model import Step, ToolSpec, Trajectory

CallClass = Literal["valid", "execution_failure", "syntactic_error", "injected", "infra"]
CALL_CLASSES: tuple[CallClass, ...] = ("valid", "execution_failure", "syntactic_error", "injected", "infra")


@dataclass(frozen=True)
class CallRecord:
    step: Step
    position: int
    """0-based position among the trajectory's tool calls."""
    outcome: CallClass
    failed: bool
    """The agent saw an error (whatever its cause)."""
    injected: bool
    """A tool- or state-level fault of the controller touched this call."""
    schema_ok: bool | None
    """None when the tool's schema is unknown."""
    schema_errors: list[str] = field(default_factory=list)

    @property
    def tool(self) -> str:
        return self.step.tool_call.tool if self.step.tool_call else ""

    @property
    def arguments(self) -> dict[str, Any]:
        return self.step.tool_call.arguments if self.step.tool_call else {}

    @property
    def server(self) -> str:
        return self.tool.split("/", 1)[0]

    @property
    def turn(self) -> int:
        return self.step.turn

    @property
    def infra(self) -> bool:
        return self.outcome == "infra"

    def same_call(self, other: CallRecord) -> bool:
        return self.tool == other.tool and self.arguments == other.arguments


def tool_call_steps(trajectory: Trajectory) -> list[Step]:
    return [s for s in trajectory.steps if s.kind == "tool" and s.tool_call is not None]


def classify_calls(trajectory: Trajectory, tools: Mapping[str, ToolSpec]) -> list[CallRecord]:
    return [classify(step, i, tools.get(step.tool_call.tool)) for i, step in enumerate(tool_call_steps(trajectory))
            if step.tool_call is not None]


def classify(step: Step, position: int, spec: ToolSpec | None) -> CallRecord:
    assert step.tool_call is not None
    obs, raw = step.observation, step.raw_result
    injected = any(i.level in ("tool", "state") for i in step.interventions)
    failed = obs is None or obs.is_error
    errors = schema_errors(step.tool_call.arguments, spec.input_schema) if spec is not None else None
    schema_ok = None if errors is None else not errors
    outcome = _outcome(step, spec, errors, injected)
    if spec is None and outcome == "syntactic_error" and raw is None:
        schema_ok = False  # a tool that does not exist cannot be called in its schema
    return CallRecord(step, position, outcome, failed, injected, schema_ok, errors or [])


def _outcome(step: Step, spec: ToolSpec | None, errors: list[str] | None, injected: bool) -> CallClass:
    obs, raw = step.observation, step.raw_result
    if (obs is not None and obs.is_infra_error) or (raw is not None and raw.is_infra_error):
        return "infra"
    if errors or _unreachable(step, spec, injected):
        return "syntactic_error"
    if spec is None and raw is not None and raw.is_error and raw.error_class == "invalid_args":
        return "syntactic_error"  # schema unknown to us: the server's own validation is the evidence
    if injected and (raw is None or (obs is not None and obs.is_error and not raw.is_error)):
        return "injected"
    if raw is not None:
        return "execution_failure" if raw.is_error else "valid"
    return "execution_failure" if obs is None or obs.is_error else "valid"


def _unreachable(step: Step, spec: ToolSpec | None, injected: bool) -> bool:
    """Answered by the rollout itself, before any backend: an unknown/locked tool or unparseable arguments."""
    obs = step.observation
    if step.raw_result is not None or injected or obs is None or not obs.is_error:
        return False
    return obs.error_class == "not_found" and spec is None or obs.error_class == "invalid_args"


def schema_errors(arguments: dict[str, Any], schema: dict[str, Any] | None) -> list[str] | None:
    """Problems of `arguments` under `schema`; None when the schema itself is unusable.

    Beyond JSON Schema, a property the schema does not list counts as an error unless the schema
    allows extra properties explicitly: a hallucinated argument is a syntactic error (ComplexMCP)."""
    if not isinstance(schema, dict):
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    if validator is None:
        return None
    problems = [_describe(e) for e in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))]
    problems += [f"unknown argument '{k}'" for k in _unknown_arguments(arguments, schema)]
    return problems


def _unknown_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties")
    if not isinstance(props, dict) or not props or "additionalProperties" in schema:
        return []  # extra properties allowed explicitly, or forbidden (JSON Schema reports those itself)
    return sorted(k for k in arguments if k not in props)


def _describe(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.path)
    return f"{where}: {error.message}" if where else error.message


@lru_cache(maxsize=4096)
def _validator(key: str) -> Any:
    """Validators are built once per distinct schema (keyed by its canonical JSON)."""
    schema = json.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None
    return cls(schema)
