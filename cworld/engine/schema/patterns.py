"""The card's response pattern for a tool without an output schema: a JSON shape or a text rendering.

Many real servers declare no output schema (git, sqlite, GitHub, Brave). A response must still be
checkable, by the schema engine's tests and by the LLM engine's validation: a card operation's `shape`
compiles to a JSON Schema, and a `text` pattern means "a non-empty text answer" rendered from records.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.schemas.walk import inline_refs

TEXT_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_JSON_TYPE = {"int": "integer", "float": "number", "money": "number", "bool": "boolean"}


@dataclass(frozen=True)
class ResponsePattern:
    """What a response must look like: `json` with a schema, or `text` with a rendering template."""

    kind: str  # json | text
    schema: dict[str, Any]
    template: str = ""
    header: str = ""
    from_output_schema: bool = False


def type_schema(kind: str | Any) -> dict[str, Any]:
    """A card field type (or shape leaf) as JSON Schema."""
    if not isinstance(kind, str):
        return {}
    if kind.startswith("enum["):
        return {"type": "string", "enum": [v.strip() for v in kind[5:-1].split(",")]}
    if kind.startswith("list["):
        return {"type": "array", "items": type_schema(kind[5:-1])}
    if kind == "id":
        return {"type": ["string", "integer"]}
    return {"type": _JSON_TYPE.get(kind, "string")}


def entity_schema(entity: EntityType) -> dict[str, Any]:
    props = {name: type_schema(kind) for name, kind in entity.fields.items()}
    props.setdefault("id", {"type": ["string", "integer"]})
    return {"type": "object", "properties": props, "required": [entity.key_field]}


def shape_schema(shape: Any, entity: EntityType) -> dict[str, Any]:
    """`{items: [ENTITY], total: int}` -> an object schema; `ENTITY` as a key means the entity's name."""
    if shape == "ENTITY":
        return entity_schema(entity)
    if isinstance(shape, list):
        return {"type": "array", "items": shape_schema(shape[0], entity) if shape else {}}
    if isinstance(shape, dict):
        props = {(entity.name if k == "ENTITY" else str(k)): shape_schema(v, entity) for k, v in shape.items()}
        return {"type": "object", "properties": props, "required": list(props)}
    return type_schema(shape)


def response_pattern(tool: ToolSpec, card: CategoryCard, op: str, entity: EntityType) -> ResponsePattern:
    """The tool's output schema when it has one; else the card's pattern for this operation."""
    if tool.output_schema:
        return ResponsePattern("json", inline_refs(tool.output_schema), from_output_schema=True)
    text = text_template(card, op, entity)
    if text is not None:
        return ResponsePattern("text", TEXT_SCHEMA, text[0], text[1])
    pattern = card.operations.get(op)  # type: ignore[call-overload]
    if pattern is not None and pattern.shape:
        return ResponsePattern("json", shape_schema(pattern.shape, entity))
    return ResponsePattern("json", {"type": "object"})


def text_template(card: CategoryCard, op: str, entity: EntityType) -> tuple[str, str] | None:
    """(template, header) when the card renders this operation as text; the entity's own text wins. A card's
    template names the fields of the kind it was written for (a search result's title and URL): a kind that
    holds none of them (a sitemap known by its name) is shown as its records are, never as empty lines."""
    if op in entity.text:
        return entity.text[op], ""  # type: ignore[index]
    pattern = card.operations.get(op)  # type: ignore[call-overload]
    if pattern is None or not pattern.text:
        return None
    named = set(_PLACEHOLDER.findall(pattern.text))
    if named and not named & {*entity.fields, "id", entity.key_field}:
        return None
    return pattern.text, pattern.text_header


# --- text rendering -------------------------------------------------------------------------------
def _fill(template: str, record: dict[str, Any]) -> str:
    def value(match: re.Match[str]) -> str:
        found = record.get(match.group(1), "")
        if isinstance(found, list):
            return ", ".join(str(v) for v in found)
        return "" if found is None else str(found)

    return _PLACEHOLDER.sub(value, template)


def _records(payload: Any) -> tuple[list[dict[str, Any]], int]:
    """The records a payload holds (a page's items, a batch, or one record) and the honest total."""
    if isinstance(payload, dict) and isinstance(payload.get("items"), list):
        items = [i for i in payload["items"] if isinstance(i, dict)]
        return items, int(payload.get("total", len(items)))
    if isinstance(payload, list):
        return [i for i in payload if isinstance(i, dict)], len(payload)
    if isinstance(payload, dict):
        return [payload], 1
    return [], 0


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    """Drop the engine's id aliases so printed rows look like the server's own."""
    return {k: v for k, v in record.items() if not k.startswith("_")}


def render_text(template: str, header: str, payload: Any, many: bool) -> str:
    """Text for a card `text` pattern. `many`: every record (list, search), else the first one only;
    `@json` and `@repr` print a page, a batch or a list of rows whole, as servers that print rows do."""
    records, total = _records(payload)
    many = many or (template in ("@json", "@repr") and (isinstance(payload, list)
                                                        or (isinstance(payload, dict) and "items" in payload)))
    rows = [_plain(r) for r in records] if many else [_plain(r) for r in records[:1]]
    if template == "@json":
        value: Any = rows if many or isinstance(payload, list) else (rows[0] if rows else {})
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if template == "@repr":
        return repr(rows)
    head = _fill(header, {"total": total}) if header else ""
    body = "\n".join(_fill(template, r) for r in rows) if rows else ("No matches found" if many else "")
    text = f"{head}\n{body}" if head else body
    return text if text.strip() else "(empty)"
