"""Connections to MCP servers (stdio, streamable HTTP, in memory) whose every outcome is a `ToolResult`."""

from cworld.mcp.connection import Connection, ToolConnection
from cworld.mcp.errors import NotConnectableError, ServerStartError
from cworld.mcp.normalize import classify_error_text, from_call_result, from_exception
from cworld.mcp.pool import ServerPool
from cworld.mcp.targets import Target, http_target, memory_target, stdio_target, target_from_spec
from cworld.mcp.toolspec import to_tool_spec

__all__ = [
    "Connection",
    "NotConnectableError",
    "ServerPool",
    "ServerStartError",
    "Target",
    "ToolConnection",
    "classify_error_text",
    "from_call_result",
    "from_exception",
    "http_target",
    "memory_target",
    "stdio_target",
    "target_from_spec",
    "to_tool_spec",
]
