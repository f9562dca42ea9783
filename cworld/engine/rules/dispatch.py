"""Tools whose `action`/`operation` argument picks the operation (`manage_project(action='list'|'get'|
'delete', ...)`, `incidents(operation=...)`): each value runs the rule of that operation, as if the tool
were named for it (`list_manage_project`), so such a tool lists, reads and deletes as its siblings do
instead of collapsing into one lookup."""

from __future__ import annotations

from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import verb_kind
from cworld.engine.rules.infer import snake

#: Argument names that pick a multi-operation tool's operation (in snake case).
OPERATION_ARGS = ("action", "operation", "op", "method", "command", "mode", "verb", "subcommand")


def operation_variants(tool: ToolSpec) -> tuple[str, dict[str, ToolSpec]] | None:
    """(the argument that picks the operation, {its value: the tool as named for that operation}), for the
    enum values that name an operation; None for a tool without such an argument."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    for prop, schema in props.items():
        values = (schema or {}).get("enum") if snake(prop) in OPERATION_ARGS else None
        if not isinstance(values, list):
            continue
        variants = {str(v): _named_for(tool, prop, str(v)) for v in values
                    if isinstance(v, str) and verb_kind(v) is not None}
        if variants:
            return prop, variants
    return None


def _named_for(tool: ToolSpec, prop: str, value: str) -> ToolSpec:
    """The tool as its `value` operation: named `<value>_<name>`, without the argument that chose it."""
    schema = dict(tool.input_schema)
    schema["properties"] = {k: v for k, v in (schema.get("properties") or {}).items() if k != prop}
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r != prop]
    return tool.model_copy(update={"name": f"{value}_{tool.name}", "input_schema": schema})
