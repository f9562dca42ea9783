"""Tool ids as MCP tool names, and back: the one table every door uses (`data_model.tool_names`).

MCP allows `[A-Za-z0-9_.-]` up to 128 characters; the shared table gives `server__name` (the OpenAI
function-name rule, a subset), a hashed name for ids that would not split back, and never a name of the
server's own control tools. A name the table never gave out is read as `server__name` -> `server/name` (the
episode then answers `not_found` when there is no such tool).
"""

from __future__ import annotations

from cworld.data_model.tool_names import ToolNames

__all__ = ["ToolNames"]
