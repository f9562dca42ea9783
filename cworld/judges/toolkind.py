"""What kind of tool a call went to: read-only or destructive. The tool's own MCP annotation decides
when it has one; otherwise the first word of its name does (`get_...` reads, `delete_...` destroys)."""

from __future__ import annotations

from collections.abc import Mapping

from cworld.data_model import ToolSpec
from cworld.judges.calls import CallRecord

READ_VERBS = frozenset({"get", "list", "search", "read", "find", "fetch", "view", "show", "lookup", "query",
                        "describe", "check", "count", "browse"})
DESTRUCTIVE_VERBS = frozenset({"delete", "remove", "cancel", "archive", "drop", "purge", "destroy", "revoke", "clear"})


def _verb(tool_id: str) -> str:
    return tool_id.split("/", 1)[-1].lower().replace("-", "_").split("_", 1)[0]


def is_read_only(call: CallRecord, tools: Mapping[str, ToolSpec]) -> bool:
    spec = tools.get(call.tool)
    if spec is not None and spec.annotations.read_only_hint is not None:
        return bool(spec.annotations.read_only_hint)
    return _verb(call.tool) in READ_VERBS


def is_destructive(call: CallRecord, tools: Mapping[str, ToolSpec]) -> bool:
    spec = tools.get(call.tool)
    if spec is not None and spec.annotations.destructive_hint is not None:
        return bool(spec.annotations.destructive_hint)
    return _verb(call.tool) in DESTRUCTIVE_VERBS
