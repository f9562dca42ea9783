"""Pure tools: a stateless sandbox server's tool is computed by its own implementation, never simulated.

Math, units, dates, text, crypto and graph tools have one right answer, and cworld holds the code that
computes it (`cworld/sandbox/stateless/`). A World Engine's guess at it (a loan payment of 49.69 where the
formula gives 2.56) would teach an agent wrong facts and make synthesized runs disagree with live ones for
no reason. Stateless servers hold no state and never read the sandbox clock, so one shared session per
process answers every episode exactly as a live episode's own session does.

Whatever else an engine answers (a harvested calculator nobody runs included) is a simulation, and says so:
`mark_simulated` sets `meta.simulated`.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.mcp.normalize import from_call_result
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_all, tool_specs

__all__ = ["is_pure", "is_pure_id", "mark_simulated", "pure_result", "pure_server"]

_build_lock = threading.Lock()
_servers: dict[str, SandboxServer] | None = None


@cache
def _pure_tool_names() -> dict[str, frozenset[str]]:
    """Tool names by stateless server id. A sandbox server's id is its app's name (servers.yaml `app:`
    repeats it; the live sandbox backend calls `tool.server` as the app), so no manifest is read."""
    return {app.name: frozenset(t.name for t in tool_specs(app)) for app in all_apps() if not app.stateful}


def pure_server(server: str) -> bool:
    """Whether `server` is a stateless sandbox server (math, units, datetime, text, crypto, graph)."""
    return server in _pure_tool_names()


def is_pure_id(tool_id: str) -> bool:
    """Whether a tool id (`server/name`, as a session log holds it) is a stateless sandbox server's tool."""
    server, _, name = tool_id.partition("/")
    return name in _pure_tool_names().get(server, frozenset())


def is_pure(tool: ToolSpec) -> bool:
    """Whether cworld computes this tool itself: a sandbox tool its stateless server implements."""
    return tool.server_kind == "sandbox" and is_pure_id(tool.id)


def _shared_servers() -> dict[str, SandboxServer]:
    """One session over the stateless servers alone, built once per process on first use: nothing in it
    changes an answer (a call only ticks the session's clock, which these servers never read), so every
    episode shares it. Calls are synchronous, so asyncio tasks never interleave inside one."""
    global _servers
    if _servers is None:
        with _build_lock:
            if _servers is None:
                stateless = [app for app in all_apps() if not app.stateful]
                _servers = build_all(SandboxSession(0, stateless))
    return _servers


def pure_result(tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult | None:
    """The call computed as live computes it, errors included; None for a tool cworld does not compute.

    The server's answer becomes a `ToolResult` by the same normalization as any MCP call's; its meta says
    the engine computed it (`engine: pure`, `computed: true`), with no latency: the backend times the call."""
    if not is_pure(tool):
        return None
    answer = _shared_servers()[tool.server].call_tool_sync(tool.name, arguments)
    result = from_call_result(answer, 0.0)
    result.meta = {"source": "engine", "engine": "pure", "computed": True}
    return result


def mark_simulated(result: ToolResult) -> ToolResult:
    """Flags an engine's answer that no implementation computed (`meta.simulated`), so a trajectory tells a
    simulated answer from a computed or live one. Returns the same result."""
    result.meta["simulated"] = True
    return result
