"""The LLM path: draft, revise from feedback, critique and fuzzy-rewrite, all through the gateway (role
`synth`).

Prompts are environment content (`task_synth/prompts/*.md`, `$name` placeholders); replies are parsed
and repaired by `Gateway.complete_json`, so a model that returns malformed JSON is shown its error and
asked again before the attempt fails with a one-line `ModelError`.
"""

from __future__ import annotations

import json
from pathlib import Path
from string import Template
from typing import Any

from pydantic import BaseModel, Field

from cworld.config import ModelConfig
from cworld.data_model import ToolSpec
from cworld.errors import ContentError
from cworld.llm import Gateway
from cworld.synth.draft import Draft
from cworld.synth.options import SynthOptions
from cworld.synth.samples import SampleAnswers
from cworld.synth.shapes import schema_shape, value_shape
from cworld.synth.taxonomy import Taxonomy
from cworld.synth.world_brief import world_brief

PROMPTS = ("draft", "revise", "critic", "rewrite")


class CriticVerdict(BaseModel):
    passed: bool
    issues: list[str] = Field(default_factory=list)


class Rewritten(BaseModel):
    query: str


def load_prompts(folder: Path) -> dict[str, Template]:
    found = {}
    for name in PROMPTS:
        path = folder / "prompts" / f"{name}.md"
        if not path.is_file():
            raise ContentError(f"{path}: missing; the LLM synthesizer needs prompts {', '.join(PROMPTS)}")
        found[name] = Template(path.read_text(encoding="utf-8"))
    return found


def tool_card(spec: ToolSpec, returns: str | None = None) -> str:
    """A tool as the drafter sees it: id, description, argument names with types (required marked *) and,
    when known, the shape of what it returns (keys and types), so references into its result can be written."""
    props = spec.input_schema.get("properties", {}) or {}
    required = set(spec.input_schema.get("required", []) or [])
    args = ", ".join(f"{k}{'*' if k in required else ''}: {_type(v)}" for k, v in props.items())
    live = "" if spec.availability == "live" else " [schema-only]"
    summary = (spec.description.strip().splitlines() or ["(no description)"])[0][:200]
    shape = f"\n    returns {returns}" if returns else ""
    return f"- {spec.id}{live}: {summary} ({args or 'no arguments'}){shape}"


def _type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema:
        return "|".join(map(str, schema["enum"]))[:60]
    if "anyOf" in schema:
        return "|".join(_type(s) for s in schema["anyOf"])
    return str(schema.get("type", "any"))


class LLMDrafter:
    def __init__(
        self,
        gateway: Gateway,
        model: ModelConfig | str | None,
        taxonomy: Taxonomy,
        prompts: dict[str, Template],
        tools: dict[str, ToolSpec],
        options: SynthOptions,
        samples: SampleAnswers | None = None,
    ) -> None:
        """`samples` answers one call of a tool that has no output schema, for its shape in the candidates."""
        self.gateway = gateway
        self.model = model
        self.taxonomy = taxonomy
        self.prompts = prompts
        self.tools = tools
        self.options = options
        self.samples = samples

    async def draft(self, candidates: list[str], world_seed: int) -> Draft:
        prompt = self.prompts["draft"].safe_substitute(self._fill(candidates, world_seed))
        return await self._json([{"role": "user", "content": prompt}], Draft, world_seed)

    async def revise(self, candidates: list[str], world_seed: int, previous: Draft, feedback: str) -> Draft:
        first = self.prompts["draft"].safe_substitute(self._fill(candidates, world_seed))
        again = self.prompts["revise"].safe_substitute(
            draft=json.dumps(previous.compact(), ensure_ascii=False),
            feedback=feedback,
            min_types=self.options.min_constraint_types,
        )
        messages = [
            {"role": "user", "content": first},
            {"role": "assistant", "content": previous.model_dump_json()},
            {"role": "user", "content": again},
        ]
        return await self._json(messages, Draft, world_seed)

    async def critique(self, draft: Draft, world_seed: int) -> CriticVerdict:
        prompt = self.prompts["critic"].safe_substitute(task=json.dumps(draft.compact(), ensure_ascii=False))
        return await self._json([{"role": "user", "content": prompt}], CriticVerdict, world_seed)

    async def rewrite(self, query: str, leaks: list[str], world_seed: int) -> str:
        prompt = self.prompts["rewrite"].safe_substitute(query=query, leaks=", ".join(leaks))
        return (await self._json([{"role": "user", "content": prompt}], Rewritten, world_seed)).query

    def _fill(self, candidates: list[str], world_seed: int) -> dict[str, Any]:
        servers = sorted({t.split("/", 1)[0] for t in candidates})
        specs = [self.tools[t] for t in candidates if t in self.tools]
        cards = "\n".join(tool_card(spec, self._returns(spec)) for spec in specs)
        return {
            "taxonomy": self.taxonomy.prompt_text(),
            "world": world_brief(world_seed, servers),
            "candidates": cards,
            "min_tools": self.options.min_tools,
            "min_servers": self.options.min_servers,
            "min_types": self.options.min_constraint_types,
        }

    def _returns(self, spec: ToolSpec) -> str | None:
        """Its output schema's shape, else the shape of one sample answer, else None (unknown)."""
        shape = schema_shape(spec.output_schema)
        if shape is None and self.samples is not None:
            sample = self.samples.answer(spec)
            shape = None if sample is None else f"(a sample answer) {value_shape(sample)}"
        return shape

    async def _json(self, messages: list[dict[str, Any]], schema: type[BaseModel], world_seed: int) -> Any:
        return await self.gateway.complete_json(
            "synth",
            messages,
            schema,
            model=self.model,
            seed=world_seed,
            metadata={"purpose": f"synth:{schema.__name__}"},
        )
