"""Per-call cost of an MCP tool call through `cworld.mcp.Connection`: in memory vs a stdio subprocess.

Run: `python benchmarks/bench_mcp.py [calls]`. Calls a trivial tool (`echo`) after a warm-up, one
call at a time, and reports milliseconds per call for each transport, their ratio, and the raw
`mcp.Client` in-memory cost so the connection layer's own overhead is visible.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from mcp import Client

from cworld.mcp import Connection, memory_target, stdio_target

TOY = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mcp_servers" / "toy_server.py"
WARMUP = 20


def _toy_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_toy_server", TOY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _per_call_ms(conn: Connection, calls: int) -> float:
    for _ in range(WARMUP):
        await conn.call("echo", {"text": "warm"})
    started = time.perf_counter()
    for i in range(calls):
        result = await conn.call("echo", {"text": str(i)})
        if result.is_error:
            raise RuntimeError(f"benchmark call failed: {result.text}")
    return (time.perf_counter() - started) * 1000.0 / calls


async def _raw_client_ms(server: Any, calls: int) -> float:
    async with Client(server, cache=None) as client:
        for _ in range(WARMUP):
            await client.call_tool("echo", {"text": "warm"})
        started = time.perf_counter()
        for i in range(calls):
            await client.call_tool("echo", {"text": str(i)})
        return (time.perf_counter() - started) * 1000.0 / calls


async def _measure(calls: int) -> dict[str, Any]:
    toy = _toy_module()
    async with Connection(memory_target(toy.build_server()), "toy") as conn:
        memory_ms = await _per_call_ms(conn, calls)
    raw_memory_ms = await _raw_client_ms(toy.build_server(), calls)
    started = time.perf_counter()
    async with Connection(stdio_target(sys.executable, [str(TOY)]), "toy") as conn:
        start_s = time.perf_counter() - started
        stdio_ms = await _per_call_ms(conn, calls)
    return {
        "calls": calls,
        "memory_ms_per_call": round(memory_ms, 3),
        "raw_client_memory_ms_per_call": round(raw_memory_ms, 3),
        "stdio_ms_per_call": round(stdio_ms, 3),
        "stdio_over_memory": round(stdio_ms / memory_ms, 2),
        "stdio_server_start_s": round(start_s, 3),
    }


def run(calls: int = 300) -> dict[str, Any]:
    """Measure both transports in one run; returns the figures as a dict."""
    return asyncio.run(_measure(calls))


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 300), indent=2))
