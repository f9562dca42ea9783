"""Arguments for validation calls: from the manifest, else generated from the tool's input schema.

Generated arguments respect the schema (required fields, enums, formats, bounds) so that a rejection
at stage (ii) means the tool, not the probe, is at fault. Identifiers cannot be invented: a `ValueBank`
collects values that earlier responses (and a sandbox app's seeded state) returned, and a parameter
named like one of their keys (`order_id`, `token`, `email`) takes such a value when it fits the schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import jsonschema

from cworld.data_model import ToolSpec
from cworld.registry.value_bank import ValueBank
from cworld.schemas.probe import FORMAT_HINTS, ProbeValues, described_example, singular
from cworld.schemas.walk import resolve_ref

__all__ = ["ValueBank", "generate_args", "looks_read_only", "planned_args", "probe_order", "schema_problem"]

_READ_LIKE = re.compile(
    r"^(get|list|search|read|fetch|find|describe|show|query|lookup|count|view|check|browse)"
)


# --- arguments for one tool -------------------------------------------------------------------------


def _fits(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(value, {**schema, **({"$defs": root["$defs"]} if "$defs" in root else {})})
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True


_ID_WORDS = re.compile(r"\b([a-z]+) ids?\b", re.IGNORECASE)


def bank_keys(name: str, prop: dict[str, Any]) -> list[str]:
    """Keys whose harvested values may fill this parameter: its name, the singular of an `_ids` list,
    and `<word>_id` for every "<word> id(s)" its description mentions ("contact ids from search_contacts")."""
    keys = [name]
    if prop.get("type") == "array" or name.endswith("_ids"):
        keys.append(singular(name))
    keys += [f"{w.lower()}_id" for w in _ID_WORDS.findall(str(prop.get("description", "")))]
    return list(dict.fromkeys(keys))


def _harvested(name: str, prop: dict[str, Any], root: dict[str, Any], bank: ValueBank) -> Any:
    """A harvested value (wrapped in a list for array parameters) that fits the schema, else None."""
    is_array = prop.get("type") == "array"
    for key in bank_keys(name, prop):
        for value in bank.candidates(key):
            candidate = [value] if is_array and not isinstance(value, list) else value
            if _fits(candidate, prop, root):
                return candidate
    return None


def generate_args(tool: ToolSpec, bank: ValueBank | None = None) -> dict[str, Any]:
    """Required parameters only: a harvested value when one fits, else an example from the schema."""
    schema = tool.input_schema or {}
    props: dict[str, Any] = schema.get("properties", {}) or {}
    gen = ProbeValues(schema, bank.now if bank else None)
    args: dict[str, Any] = {}
    for key in schema.get("required", []) or []:
        prop = resolve_ref(props.get(key, {}), schema)
        harvested = _harvested(key, prop, schema, bank) if bank else None
        args[key] = (
            harvested if harvested is not None and _prefer_harvest(key, prop) else gen.value(prop, key)
        )
    return args


def _prefer_harvest(name: str, prop: dict[str, Any]) -> bool:
    """Identifiers always come from the bank; other strings (an account's email) only when the description
    does not say what to pass itself; numbers, lists and objects are never borrowed from other answers."""
    if is_identifier(name, prop):
        return True
    if prop.get("type") != "string":
        return False
    description = str(prop.get("description", ""))
    return described_example(description) is None and not any(p.search(description) for p, _ in FORMAT_HINTS)


_IDENTIFIER = re.compile(r"(^|_)(id|ids|token|key|code|sku|handle|slug)$", re.IGNORECASE)


def is_identifier(name: str, prop: dict[str, Any]) -> bool:
    """Ids and tokens must be harvested (an invented one names nothing); other values may be invented,
    and a description's own example beats a value seen elsewhere."""
    return bool(_IDENTIFIER.search(name) or _ID_WORDS.search(str(prop.get("description", ""))))


def planned_args(
    tool: ToolSpec, probe_args: dict[str, dict[str, Any]], bank: ValueBank | None
) -> tuple[dict[str, Any], str]:
    """(arguments, source): the manifest's own for this tool (over its "*" defaults), else generated."""
    defaults = {
        k: v for k, v in probe_args.get("*", {}).items() if k in tool.input_schema.get("properties", {})
    }
    if tool.name in probe_args:
        return {**defaults, **probe_args[tool.name]}, "manifest"
    generated = generate_args(tool, bank)
    return {**generated, **defaults}, ("manifest+generated" if defaults else "generated")


def schema_problem(tool: ToolSpec, args: dict[str, Any]) -> str | None:
    """Why `args` break the tool's input schema (a probe bug, noted in the report), or None."""
    try:
        jsonschema.validate(args, tool.input_schema)
    except jsonschema.ValidationError as exc:
        return exc.message[:200]
    except jsonschema.SchemaError:
        return None
    return None


def looks_read_only(tool: ToolSpec) -> bool:
    """The annotation when the server gives one; otherwise a read-like name (get_, list_, search_ ...)."""
    hint = tool.annotations.read_only_hint
    if hint is not None:
        return bool(hint)
    return bool(_READ_LIKE.match(tool.name.lower()))


def probe_order(tools: list[ToolSpec], edges: Iterable[tuple[str, str]] = ()) -> list[ToolSpec]:
    """Producers before consumers (declared edges `before -> after`, by tool name), destructive tools last,
    otherwise the server's own order: ids exist before tools that need them, deletes come at the end."""
    by_name = {t.name: t for t in tools}
    position = {t.name: i for i, t in enumerate(tools)}
    incoming: dict[str, set[str]] = {t.name: set() for t in tools}
    for before, after in edges:
        if before in by_name and after in by_name and before != after:
            incoming[after].add(before)
    done: list[ToolSpec] = []
    while incoming:
        ready = [n for n, deps in incoming.items() if not deps] or list(
            incoming
        )  # a cycle: take the rest as is
        pick = min(ready, key=lambda n: (bool(by_name[n].annotations.destructive_hint), position[n]))
        done.append(by_name[pick])
        del incoming[pick]
        for deps in incoming.values():
            deps.discard(pick)
    return done
