"""Tool ids as MCP tool names, and back.

A cworld tool id is `server/name`; an MCP tool name allows `[A-Za-z0-9_.-]` (up to 128 characters), so
`server/name` becomes `server__name` (the LLM agent's function-name convention) and any other character
becomes `_`. Two ids that land on one name get `_2`, `_3`, ... Names are handed out per episode and kept
in a table, so the way back is a lookup, exact whatever the id holds; a name the table never gave out is
read as `server__name` -> `server/name` (the episode then answers `not_found` if there is no such tool).
"""

from __future__ import annotations

import re

MAX_NAME = 128
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.-]")


class ToolNames:
    def __init__(self, reserved: set[str] | frozenset[str] = frozenset()) -> None:
        self.reserved = set(reserved)
        """Names of the server's own tools (start_episode, submit, ...): never given to a task tool."""
        self._ids: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def name(self, tool_id: str) -> str:
        if tool_id in self._names:
            return self._names[tool_id]
        base = _NOT_ALLOWED.sub("_", tool_id.replace("/", "__"))[:MAX_NAME] or "tool"
        name, n = base, 1
        while name in self.reserved or self._ids.get(name, tool_id) != tool_id:
            n += 1
            name = f"{base[: MAX_NAME - 6]}_{n}"
        self._ids[name], self._names[tool_id] = tool_id, name
        return name

    def tool_id(self, name: str) -> str:
        return self._ids.get(name) or (name if "/" in name else name.replace("__", "/", 1))
