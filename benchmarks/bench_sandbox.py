"""How fast the sandbox is: in-memory calls per second against a no-op MCP tool, and session start-up cost.

    python benchmarks/bench_sandbox.py            # prints a small table
    from benchmarks.bench_sandbox import run      # returns the figures as a dict

The baseline is an `MCPServer` whose only tool returns 0: the ratio says how much the sandbox
(argument checks, virtual clock, checkpoint and rollback, the app's own logic) costs on top of the SDK.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import mcp
from mcp.server import MCPServer

from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import build_all, build_server

READ_CALL = ("mail", "list_messages", {"folder": "inbox", "page_size": 10})
WRITE_CALL = ("mail", "star_message", {"message_id": "mail_0001", "starred": True})


def _noop_server() -> MCPServer:
    server = MCPServer("noop", log_level="WARNING")

    @server.tool()
    def noop() -> int:
        """Do nothing."""
        return 0

    return server


async def _rate(server: Any, tool: str, args: dict[str, Any], calls: int) -> float:
    """Calls per second through an in-memory `mcp.Client` (after one warm-up call)."""
    async with mcp.Client(server) as client:
        await client.call_tool(tool, args)
        start = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool(tool, args)
        elapsed = time.perf_counter() - start
    assert not result.is_error, result.content
    return calls / elapsed


def _direct_rate(calls: int) -> float:
    """Calls per second with no transport at all (`SandboxServer.call_tool_sync`)."""
    server = build_server(SandboxSession(seed=0, apps=all_apps()), READ_CALL[0])
    start = time.perf_counter()
    for _ in range(calls):
        server.call_tool_sync(READ_CALL[1], READ_CALL[2])
    return calls / (time.perf_counter() - start)


def _session_cost(repeats: int) -> dict[str, float]:
    build_all(SandboxSession(seed=0, apps=all_apps()))  # schemas are derived once per app class; measure the steady state
    sessions, servers = [], []
    for seed in range(1, repeats + 1):
        start = time.perf_counter()
        session = SandboxSession(seed=seed, apps=all_apps())
        middle = time.perf_counter()
        build_all(session)
        servers.append((time.perf_counter() - middle) * 1000)
        sessions.append((middle - start) * 1000)
    return {"session_ms": statistics.median(sessions), "servers_ms": statistics.median(servers),
            "apps": len(SandboxSession(seed=0, apps=all_apps()).apps)}


def run(calls: int = 400, repeats: int = 10) -> dict[str, Any]:
    """The figures: calls/s (read, write, no-op baseline, direct), their ratio, and start-up cost in ms."""
    session = SandboxSession(seed=0, apps=all_apps())
    read = asyncio.run(_rate(build_server(session, READ_CALL[0]), READ_CALL[1], READ_CALL[2], calls))
    write = asyncio.run(_rate(build_server(session, WRITE_CALL[0]), WRITE_CALL[1], WRITE_CALL[2], calls))
    noop = asyncio.run(_rate(_noop_server(), "noop", {}, calls))
    return {"calls": calls, "sandbox_read_calls_per_s": round(read), "sandbox_write_calls_per_s": round(write),
            "noop_calls_per_s": round(noop), "read_vs_noop": round(read / noop, 3),
            "write_vs_noop": round(write / noop, 3), "direct_calls_per_s": round(_direct_rate(calls)),
            **{k: round(v, 2) for k, v in _session_cost(repeats).items()}}


def main() -> None:
    figures = run()
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
