"""The sandbox half of live mode: our own apps, in process, one seeded `SandboxSession` per episode.

`via="direct"` calls `SandboxServer.call_tool_sync` (the same cycle the MCP server runs, without the
protocol: fastest); `via="mcp"` talks to each app through an in-memory `mcp.Client`, the real protocol
path. Both see the same session, so the end state is the same either way.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from mcp.types import CallToolResult

from cworld.data_model import ToolResult, ToolSpec
from cworld.mcp import Connection, memory_target
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import INTERNAL_ERROR_PREFIX, META_KEY, SandboxServer, build_server
from cworld.sandbox.framework.tools import ERROR_CLASS_OF_KIND

Via = Literal["direct", "mcp"]


def to_tool_result(result: CallToolResult, latency_ms: float) -> ToolResult:
    """A sandbox answer as a ToolResult; the server's own error class wins over reading the text."""
    blocks = [{"type": "text", "text": b.text} if b.type == "text" else b.model_dump(mode="json", exclude_none=True)
              for b in result.content]
    structured = result.structured_content
    if structured is not None and not isinstance(structured, dict):
        structured = {"result": structured}
    out = ToolResult(content=blocks, structured_content=structured, is_error=bool(result.is_error),
                     meta={"latency_ms": round(latency_ms, 3), "source": "live"})
    if out.is_error:
        out.error_class = ((result.meta or {}).get(META_KEY) or {}).get("error_class") or "business"
    return out


def error_class_from_text(text: str) -> str | None:
    """The class a sandbox error states in its first word (`not_found: ...`): what `_meta` says, read back
    on the MCP path, where the client keeps the text but not the result's `_meta`."""
    if text.startswith(INTERNAL_ERROR_PREFIX):
        return "server_crash"
    kind = text.split(":", 1)[0].strip()
    return ERROR_CLASS_OF_KIND.get(kind) or (kind if kind in ("invalid_args", "not_found") else None)


class SandboxBackend:
    mode = "live"

    def __init__(self, *, via: Via = "direct") -> None:
        self.via = via
        self.session: SandboxSession | None = None
        self._servers: dict[str, SandboxServer] = {}
        self._connections: dict[str, Connection] = {}

    async def open(self, seed: int) -> None:
        await self.close()
        self.session = SandboxSession(seed, all_apps())

    def server(self, app: str) -> SandboxServer | None:
        """The app's server in this episode's session, built on first use (None for an unknown app)."""
        server = self._servers.get(app)
        if server is None and self.session is not None and app in self.session.apps:
            server = self._servers[app] = build_server(self.session, app)
        return server

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        started = time.perf_counter()
        server = self.server(tool.server)
        if server is None:
            why = "the episode is not open" if self.session is None else f"no sandbox app '{tool.server}'"
            return ToolResult.error("not_found", f"not_found: {why}; cannot call {tool.id}", source="live")
        if self.via == "mcp":
            return await self._call_mcp(server, tool, arguments)
        result = server.call_tool_sync(tool.name, arguments)
        return to_tool_result(result, (time.perf_counter() - started) * 1000.0)

    async def _call_mcp(self, server: SandboxServer, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        conn = self._connections.get(tool.server)
        if conn is None:
            conn = self._connections[tool.server] = Connection(memory_target(server), tool.server, server_kind="sandbox")
        result = await conn.call(tool.name, arguments)
        if result.is_error and not result.is_infra_error:
            result.error_class = error_class_from_text(result.text) or result.error_class  # type: ignore[assignment]
        return result

    async def end_state(self) -> dict[str, Any] | None:
        return self.session.snapshot() if self.session is not None else None

    async def close(self) -> None:
        for conn in self._connections.values():
            await conn.close()
        self._connections = {}
        self._servers = {}

