"""MCP `Tool` definitions as cworld `ToolSpec`s."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from cworld.data_model import ToolAnnotations, ToolSpec
from cworld.data_model.tools import ServerKind


def to_annotations(tool: types.Tool) -> ToolAnnotations:
    """Hints with snake_case names; the tool's own `title` fills in when the annotations carry none.

    Unknown hint fields a newer server sends are kept (ToolAnnotations allows extras).
    """
    raw: dict[str, Any] = {}
    if tool.annotations is not None:
        raw = tool.annotations.model_dump(mode="json", by_alias=False, exclude_none=True)
    if raw.get("title") is None and tool.title:
        raw["title"] = tool.title
    return ToolAnnotations(**raw)


def to_tool_spec(tool: types.Tool, server_id: str, server_kind: ServerKind | None = None) -> ToolSpec:
    """One live tool. `server_id` is the caller's name for the server, not what the server calls itself."""
    fields: dict[str, Any] = {
        "server": server_id,
        "name": tool.name,
        "description": tool.description or "",
        "input_schema": dict(tool.input_schema),
        "output_schema": dict(tool.output_schema) if tool.output_schema is not None else None,
        "annotations": to_annotations(tool),
        "availability": "live",
    }
    if server_kind is not None:
        fields["server_kind"] = server_kind
    return ToolSpec(**fields)
