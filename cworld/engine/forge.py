"""`cworld forge`: a new app's tools, designed by an LLM under a category card, as a schema-only catalog.

The model proposes tools (name, description, input and output schemas, annotations); each is checked
(a snake_case name, unique; valid JSON Schemas with an object at the top) and a rejected reply is sent
back with the problems, a bounded number of times. The catalog is written atomically in the registry's
catalog format, and every tool is run once through the schema engine, so synthesized mode can use it at once.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, field_validator, model_validator

from cworld.data_model import ToolAnnotations, ToolSpec
from cworld.engine.cards.card import CategoryCard, require_match, require_unique
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.errors import ConfigError, UsageError
from cworld.llm import Gateway
from cworld.schemas.validation import schema_problem

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
ROLES = ("synth", "engine")


class ForgedTool(BaseModel):
    name: str
    description: str = Field(min_length=10)
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)

    @field_validator("name")
    @classmethod
    def _snake_case(cls, value: str) -> str:
        rule = "must be snake_case: lowercase letters, digits and _, 2-64 characters"
        return require_match(TOOL_NAME, value, f"'{value}' {rule}")

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        if value.get("type") != "object":
            raise ValueError("must be a JSON Schema with type 'object' at the top")
        problem = schema_problem(value)
        if problem:
            raise ValueError(f"is not a valid JSON Schema ({problem})")
        return value


class ForgedCatalog(BaseModel):
    tools: list[ForgedTool] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> ForgedCatalog:
        require_unique("tool", [t.name for t in self.tools])
        return self


def forge_role(gateway: Gateway) -> str:
    """The role that designs: `synth` when configured, else `engine`; neither is one clear error."""
    for role in ROLES:
        if gateway.models.configured(role):  # type: ignore[arg-type]
            return role
    raise ConfigError("forge needs a model: set CWORLD_SYNTH_MODEL (or CWORLD_ENGINE_MODEL) to a litellm model "
                      "string, e.g. openai/gpt-4o-mini, or configure models.synth in the workspace config.yaml")


def _messages(description: str, card: CategoryCard, count: int) -> list[dict[str, str]]:
    card_yaml = yaml.safe_dump({"name": card.name, "title": card.title, "description": card.description,
                                "entities": [{"name": e.name, "fields": e.fields} for e in card.entities],
                                "operations": {k: v.description for k, v in card.operations.items()}},
                               sort_keys=False, width=110)
    system = ("You design the tool interface of a new software service for an environment where AI agents are "
              "tested. Tools look like MCP tools: snake_case names, a clear description, an input_schema and an "
              "output_schema (JSON Schema objects with properties, required fields, enums and descriptions), and "
              "annotations (read_only_hint, destructive_hint, idempotent_hint). Ids are strings shown with an "
              "example in their description (e.g. 'order id, e.g. ord_0042').")
    user = (f"The service: {description}\n\nIt belongs to this category:\n{card_yaml}\n"
            f"Design about {count} tools covering listing, searching, reading, creating, updating and deleting "
            "its main entities, plus one or two actions specific to the service. Reply with one JSON object: "
            '{"tools": [{"name", "description", "input_schema", "output_schema", "annotations"}, ...]}.')
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def design_tools(gateway: Gateway, description: str, card: CategoryCard, count: int = 8,
                       max_repairs: int = 2) -> list[ForgedTool]:
    role = forge_role(gateway)
    catalog = await gateway.complete_json(role, _messages(description, card, count), ForgedCatalog,
                                          max_repairs=max_repairs, temperature=0.0)
    return catalog.tools


def catalog_entries(tools: list[ForgedTool], card: CategoryCard) -> list[dict[str, Any]]:
    """The registry's catalog format; `category` names the card so synthesized mode picks it directly."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema,
             "output_schema": t.output_schema, "annotations": t.annotations.model_dump(exclude_none=True),
             "category": card.name} for t in tools]


def write_catalog(path: Path, entries: list[dict[str, Any]]) -> None:
    """Write to a temporary file beside the target, then rename: a reader never sees half a catalog."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(entries, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def smoke_run(entries: list[dict[str, Any]], cards: dict[str, CategoryCard], server: str) -> dict[str, str]:
    """Each tool once through the schema engine (with schema-made arguments): tool -> ok | error class."""
    from cworld.registry.probe_args import generate_args

    specs = [ToolSpec(server=server, name=e["name"], description=e["description"], input_schema=e["input_schema"],
                      output_schema=e["output_schema"], annotations=ToolAnnotations(**e["annotations"]),
                      category=e["category"], availability="schema-only", server_kind="catalog") for e in entries]
    engine = SchemaEngine(cards, specs)
    outcome = {}
    for spec in specs:
        result = engine.respond_sync(spec, generate_args(spec), SessionLog(seed=0))
        outcome[spec.name] = str(result.error_class) if result.is_error else "ok"
    return outcome


def check_category(cards: dict[str, CategoryCard], name: str) -> CategoryCard:
    if name not in cards:
        raise UsageError(f"no category card '{name}'; choose one of {', '.join(sorted(cards))}")
    return cards[name]
