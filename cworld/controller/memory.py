"""What the controller remembers of earlier results, so a stale-data fault can serve an older truth.

Two views of "a previous state": the earlier answer to the very same call (a lagging cache), and the
earlier version of an entity seen in any answer (a lagging replica), found by the entity's id field.
Remembering is a reference per successful result (results are never changed after they are returned);
the entity index is built only when a stale fault asks for it, so the cost lands on one call, not all.
"""

from __future__ import annotations

import json
from typing import Any

from cworld.data_model import ToolResult

MAX_RESULTS = 500
"""Results kept for an episode; older ones are dropped first."""


def call_key(tool_id: str, arguments: dict[str, Any]) -> str:
    return tool_id + "\x1f" + json.dumps(arguments, sort_keys=True, default=str)


def entity_key(value: dict[str, Any]) -> str | None:
    """`field=value` of the dict's id: `id`, else its first `*_id` string field (message_id, event_id...)."""
    ident = value.get("id")
    if isinstance(ident, str | int) and not isinstance(ident, bool):
        return f"id={ident}"
    for name, item in value.items():
        if name.endswith("_id") and isinstance(item, str):
            return f"{name}={item}"
    return None


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class CallMemory:
    def __init__(self) -> None:
        self.history: list[tuple[str, ToolResult]] = []
        """(call key, result) of every successful structured result, oldest first."""

    def remember(self, tool_id: str, arguments: dict[str, Any], result: ToolResult) -> None:
        if result.is_error or result.structured_content is None:
            return
        self.history.append((call_key(tool_id, arguments), result))
        if len(self.history) > MAX_RESULTS:
            del self.history[0]

    def earlier_result(self, tool_id: str, arguments: dict[str, Any], current: ToolResult) -> ToolResult | None:
        """The newest earlier answer to the same call that differs from `current`."""
        key = call_key(tool_id, arguments)
        for seen_key, old in reversed(self.history):
            if seen_key == key and old is not current and old.structured_content != current.structured_content:
                return old
        return None

    def stale_entities(self, structured: dict[str, Any], current: ToolResult | None = None) -> tuple[dict[str, Any], int]:
        """A copy of `structured` with each entity replaced by its newest earlier, different version of the
        same shape (a summary in a list is never swapped for a full record)."""
        versions = self._entity_versions(exclude=current)
        out = _copy(structured)
        replaced = 0
        for entity in _walk_entities(out):
            older = next((v for v in reversed(versions.get(entity_key(entity) or "", []))
                          if v != entity and v.keys() == entity.keys()), None)
            if older is not None:
                entity.clear()
                entity.update(_copy(older))
                replaced += 1
        return out, replaced

    def _entity_versions(self, exclude: ToolResult | None) -> dict[str, list[dict[str, Any]]]:
        index: dict[str, list[dict[str, Any]]] = {}
        for _, result in self.history:
            if result is exclude:
                continue
            for entity in _walk_entities(result.structured_content):
                index.setdefault(entity_key(entity) or "", []).append(entity)
        return index


def _walk_entities(value: Any) -> list[dict[str, Any]]:
    """Outermost dicts with an id, depth-first (an entity's own sub-entities stay part of it)."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if entity_key(value) is not None:
            return [value]
        for item in value.values():
            found.extend(_walk_entities(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_walk_entities(item))
    return found
