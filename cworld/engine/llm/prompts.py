"""The LLM engine's prompt: a template from the environment (`category_cards/_prompts/engine.md`) filled
with the card, the tool, the response schema, demonstrations, the condensed session and the arguments.

Arguments and the session are data from the agent under test. They are JSON inside delimited blocks,
with `</` escaped (as `<\\/`, still valid JSON) so nothing inside can close a block early.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, Demonstration, EntityType
from cworld.errors import ContentError

TEMPLATE_FILE = Path("_prompts") / "engine.md"
#: The errors a service decides. Transient faults (timeouts, rate limits, outages) are the state controller's:
#: the model is never offered them, so an answer never carries one that the agent would be scored for.
TRANSIENT_ERROR_CLASSES = ("rate_limit", "unavailable", "timeout")
ENGINE_ERROR_CLASSES = ("invalid_args", "not_found", "auth", "business")
_SECTION = re.compile(r"^## (system|user)\s*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
STRING_LIMIT = 600


def escape_data(text: str) -> str:
    """Data may not close its block: `</arguments>` inside an argument becomes `<\\/arguments>`."""
    return text.replace("</", "<\\/")


def data_json(value: Any) -> str:
    return escape_data(json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True, default=str))


@dataclass(frozen=True)
class PromptTemplate:
    system: str
    user: str
    source: str

    @classmethod
    def load(cls, cards_dir: Path) -> PromptTemplate:
        path = cards_dir / TEMPLATE_FILE
        try:
            text = _COMMENT.sub("", path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ContentError(f"{path}: the LLM engine's prompt template is missing; restore it from cworld") from None
        parts = _SECTION.split(text)
        sections = dict(zip(parts[1::2], parts[2::2], strict=False))
        if set(sections) != {"system", "user"}:
            raise ContentError(f"{path}: needs two sections, '## system' and '## user'")
        return cls(sections["system"].strip(), sections["user"].strip(), str(path))

    def render(self, values: dict[str, str]) -> list[dict[str, str]]:
        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)

        return [{"role": "system", "content": fill(self.system)}, {"role": "user", "content": fill(self.user)}]


def card_text(card: CategoryCard, op: str, entity: EntityType) -> str:
    """The parts of the card that matter for this call, as compact YAML."""
    pattern = card.operations.get(op)  # type: ignore[call-overload]
    summary = {
        "category": card.title,
        "description": " ".join(card.description.split()),
        "entities": [{"name": e.name, "key": e.key_field, "id_format": e.id_format.replace("{prefix}", e.id_prefix),
                      "fields": e.fields} for e in card.entities],
        "this_call": {"entity": entity.name, "operation": op,
                      "pattern": pattern.description if pattern is not None else "respond as the service would"},
        "failures": [{"when": f.when, "error_class": f.error_class, "message": f.message} for f in card.failures
                     if f.error_class not in TRANSIENT_ERROR_CLASSES],
        "consistency": card.consistency,
    }
    return yaml.safe_dump(summary, sort_keys=False, allow_unicode=True, width=110).strip()


def demonstrations_text(card: CategoryCard, limit: int = 3) -> str:
    """The card's first demonstrations, each as the envelope the model must write (validated on card load)."""
    lines = []
    for demo in card.demonstrations[:limit]:
        answer = demo_envelope(demo)
        lines.append(f"call {demo.tool} {json.dumps(demo.arguments, ensure_ascii=False)}\n-> {json.dumps(answer, ensure_ascii=False)}")
    return "\n".join(lines) or "(none)"


def demo_envelope(demo: Demonstration) -> dict[str, Any]:
    if demo.is_error:
        return {"status": "error", "error_class": demo.error_class, "message": demo.response}
    return {"status": "ok", "result": demo.response}


def tool_text(tool: ToolSpec) -> str:
    return f"{tool.id}\nDescription: {' '.join(tool.description.split())}\nInput schema: {json.dumps(tool.input_schema)}"


def envelope_schema(result_schema: dict[str, Any]) -> dict[str, Any]:
    """What the model must return: a success with `result`, or an error with class and message."""
    ok = {"type": "object", "properties": {"status": {"const": "ok"}, "result": result_schema},
          "required": ["status", "result"]}
    error = {"type": "object", "properties": {"status": {"const": "error"},
                                               "error_class": {"enum": list(ENGINE_ERROR_CLASSES)},
                                               "message": {"type": "string", "minLength": 1, "maxLength": 400}},
             "required": ["status", "error_class", "message"]}
    return {"anyOf": [ok, error]}


def envelope_text() -> str:
    return ('{"status": "ok", "result": <the response>}  or  '
            '{"status": "error", "error_class": "<one of ' + ", ".join(ENGINE_ERROR_CLASSES) + '>", '
            '"message": "<the service\'s error text>"}')


def bounded(schema: dict[str, Any], limit: int = STRING_LIMIT) -> dict[str, Any]:
    """A copy with `maxLength` on every string, so grammar-constrained output cannot run away."""
    out = copy.deepcopy(schema)
    _bound(out, limit, 0)
    return out


def _bound(node: Any, limit: int, depth: int) -> None:
    if depth > 30:
        return
    if isinstance(node, dict):
        kinds = node.get("type")
        if (kinds == "string" or (isinstance(kinds, list) and "string" in kinds)) and "maxLength" not in node:
            node["maxLength"] = max(limit, node.get("minLength", 0))
        for value in node.values():
            _bound(value, limit, depth + 1)
    elif isinstance(node, list):
        for value in node:
            _bound(value, limit, depth + 1)
