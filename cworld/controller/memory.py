"""What the controller remembers of earlier results, so a stale-data fault can serve an older truth.

Two views of "a previous state": the earlier answer to the very same call (a lagging cache), and the
earlier version of an entity seen in any answer (a lagging replica), found by the entity's id field.

Cheap by design, since it runs on every call while a stale fault is armed: remembering is one reference
per successful result (results are never changed after they are returned); the indexes are built
lazily, each result once, when a stale fault looks; and nothing is looked at until a write has
succeeded after the first remembered answer (before that, there is no older truth to show).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from cworld.data_model import ToolResult, ToolSpec

MAX_RESULTS = 500
"""Results remembered per episode; later ones are not (a stale fault has had plenty to choose from)."""


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


class Seen(NamedTuple):
    tool_id: str
    arguments: dict[str, Any]
    result: ToolResult
    writes: int
    """How many writes had succeeded when this result was seen."""


class CallMemory:
    def __init__(self) -> None:
        self.history: list[Seen] = []
        self.writes = 0
        self._indexed = 0
        self._calls: dict[str, list[ToolResult]] = {}
        self._entities: dict[str, list[dict[str, Any]]] = {}

    def remember(self, tool: ToolSpec, arguments: dict[str, Any], result: ToolResult) -> None:
        if result.is_error:
            return
        if not tool.is_read_only:
            self.writes += 1
        if result.structured_content is not None and len(self.history) < MAX_RESULTS:
            self.history.append(Seen(tool.id, arguments, result, self.writes))

    def may_be_stale(self) -> bool:
        """True once something was seen before the latest write: only then can an answer be out of date."""
        return bool(self.history) and self.history[0].writes < self.writes

    def earlier_result(self, tool_id: str, arguments: dict[str, Any], current: ToolResult) -> ToolResult | None:
        """The newest earlier answer to the same call that differs from `current`."""
        self._index(current)
        for old in reversed(self._calls.get(call_key(tool_id, arguments), [])):
            if old.structured_content != current.structured_content:
                return old
        return None

    def stale_entities(self, structured: dict[str, Any], current: ToolResult) -> tuple[dict[str, Any], int]:
        """A copy of `structured` with each entity replaced by its newest earlier, different version of the
        same shape (a summary in a list is never swapped for a full record)."""
        self._index(current)
        out = _copy(structured)
        replaced = 0
        for entity in _walk_entities(out):
            older = next((v for v in reversed(self._entities.get(entity_key(entity) or "", []))
                          if v != entity and v.keys() == entity.keys()), None)
            if older is not None:
                entity.clear()
                entity.update(_copy(older))
                replaced += 1
        return out, replaced

    def _index(self, current: ToolResult) -> None:
        """Add the results seen since the last look (all but `current`) to the call and entity indexes."""
        while self._indexed < len(self.history) and self.history[self._indexed].result is not current:
            seen = self.history[self._indexed]
            self._indexed += 1
            versions = self._calls.setdefault(call_key(seen.tool_id, seen.arguments), [])
            if versions and versions[-1].structured_content == seen.result.structured_content:
                continue
            versions.append(seen.result)
            for entity in _walk_entities(seen.result.structured_content):
                self._entities.setdefault(entity_key(entity) or "", []).append(entity)


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
