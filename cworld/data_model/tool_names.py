"""Function names for chat formats and MCP: `server/name` tool ids become `server__name`, reversibly.

One table for every place a tool id meets a name-restricted protocol: the LLM agent's function calls,
`cworld serve`'s MCP tools, the Inspect bridge and the SFT export, so a tool has the same name in each.

OpenAI (and every trainer that reads its format) accepts function names that match
`^[a-zA-Z0-9_-]{1,64}$`. A tool id `mail/search_messages` becomes `mail__search_messages`, and the
first `__` splits it back. Ids that would not survive the trip (a server name holding `__` or ending
in `_`, characters outside the set, more than 64 characters) get a sanitized name with a short hash;
`ToolNames.mapping` records every name -> id, and the export summary carries that table.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
SEPARATOR = "__"
_SERVER_OK = re.compile(r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$")
_NAME_OK = re.compile(r"^[A-Za-z0-9_-]+$")
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def simple_name(tool_id: str) -> str | None:
    """`server__name` when splitting at the first `__` gives `tool_id` back; else None."""
    if "/" not in tool_id:
        return tool_id if FUNCTION_NAME.match(tool_id) and SEPARATOR not in tool_id else None
    server, name = tool_id.split("/", 1)
    if not _SERVER_OK.match(server) or not _NAME_OK.match(name):
        return None
    joined = f"{server}{SEPARATOR}{name}"
    return joined if len(joined) <= 64 else None


def hashed_name(tool_id: str) -> str:
    """A valid name for any id: the sanitized id cut to fit, plus 8 hex of its hash (`-h` keeps it apart)."""
    digest = hashlib.sha1(tool_id.encode()).hexdigest()[:8]
    base = _BAD.sub("_", tool_id.replace("/", SEPARATOR)).strip("_") or "tool"
    return f"{base[:53]}-h{digest}"


def split_name(name: str) -> str:
    """The tool id of a simple name (`server__name` -> `server/name`); hashed names need the table."""
    if SEPARATOR not in name:
        return name
    server, rest = name.split(SEPARATOR, 1)
    return f"{server}/{rest}"


@dataclass
class ToolNames:
    """One export's name table: each tool id gets one function name, and no name is shared."""

    reserved: frozenset[str] = frozenset()
    """Names taken by the caller's own tools (`submit`, `search_tools`, ...): never given to a tool id."""
    mapping: dict[str, str] = field(default_factory=dict)
    """function name -> tool id"""
    _by_id: dict[str, str] = field(default_factory=dict)

    def name(self, tool_id: str) -> str:
        if tool_id in self._by_id:
            return self._by_id[tool_id]
        chosen = simple_name(tool_id)
        if chosen is None or chosen in self.mapping or chosen in self.reserved:
            chosen = hashed_name(tool_id)
        self.mapping[chosen] = tool_id
        self._by_id[tool_id] = chosen
        return chosen

    def tool_id(self, name: str) -> str:
        return self.mapping.get(name) or split_name(name)

    @property
    def hashed(self) -> dict[str, str]:
        """Names that do not split back by themselves (the table a reader needs)."""
        return {n: t for n, t in self.mapping.items() if split_name(n) != t}
