"""What the controller remembers of earlier results, so a stale-data fault can serve an older truth.

Two views of "a previous state": the earlier answer to the very same call (a lagging cache), and the
earlier version of an entity seen in any answer (a lagging replica), found by the entity's id field.
Only kept when a stale fault is planned: remembering costs a copy of every successful result.
"""

from __future__ import annotations

import json
from typing import Any

from cworld.data_model import ToolResult

MAX_VERSIONS = 8
"""Versions kept per call and per entity; older ones are dropped first."""


def call_key(tool_id: str, arguments: dict[str, Any]) -> str:
    return tool_id + "\x1f" + json.dumps(arguments, sort_keys=True, default=str)


def entity_key(value: dict[str, Any]) -> str | None:
    """`field=value` of the dict's id: `id`, else its first `*_id` string field (message_id, event_id...)."""
    if isinstance(value.get("id"), str | int) and not isinstance(value.get("id"), bool):
        return f"id={value['id']}"
    for name, item in value.items():
        if name.endswith("_id") and isinstance(item, str):
            return f"{name}={item}"
    return None


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class CallMemory:
    def __init__(self) -> None:
        self.calls: dict[str, list[ToolResult]] = {}
        self.entities: dict[str, list[dict[str, Any]]] = {}

    def remember(self, tool_id: str, arguments: dict[str, Any], result: ToolResult) -> None:
        """Keep a successful result (and every entity in it) as the newest version."""
        if result.is_error or result.structured_content is None:
            return
        _push(self.calls.setdefault(call_key(tool_id, arguments), []), result.model_copy(deep=True))
        for entity in _walk_entities(result.structured_content):
            key = entity_key(entity)
            if key is not None:
                versions = self.entities.setdefault(key, [])
                if not versions or versions[-1] != entity:
                    _push(versions, _copy(entity))

    def earlier_result(self, tool_id: str, arguments: dict[str, Any], current: ToolResult) -> ToolResult | None:
        """The newest earlier answer to the same call that differs from `current`."""
        for old in reversed(self.calls.get(call_key(tool_id, arguments), [])):
            if old.structured_content != current.structured_content:
                return old
        return None

    def stale_entities(self, structured: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """A copy of `structured` with each entity replaced by its newest earlier, different version."""
        out = _copy(structured)
        replaced = 0
        for entity in _walk_entities(out):
            key = entity_key(entity)
            older = self._older_version(key, entity) if key else None
            if older is not None:
                entity.clear()
                entity.update(_copy(older))
                replaced += 1
        return out, replaced

    def _older_version(self, key: str, current: dict[str, Any]) -> dict[str, Any] | None:
        for version in reversed(self.entities.get(key, [])):
            if version != current:
                return version
        return None


def _push(versions: list[Any], item: Any) -> None:
    versions.append(item)
    if len(versions) > MAX_VERSIONS:
        del versions[0]


def _walk_entities(value: Any) -> list[dict[str, Any]]:
    """Outermost dicts with an id, depth-first (an entity's own sub-entities stay part of it)."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if entity_key(value) is not None:
            found.append(value)
            return found
        for item in value.values():
            found.extend(_walk_entities(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_walk_entities(item))
    return found
