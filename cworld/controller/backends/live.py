"""Live mode: sandbox apps in process and real MCP servers, behind one backend.

A call is routed by the tool's `server_kind`. A schema-only tool (a catalog entry) cannot run live: the
call is an `unavailable` result that says which modes can run it.
"""

from __future__ import annotations

from typing import Any

from cworld.controller.backends.real import RealServerBackend
from cworld.controller.backends.sandbox import SandboxBackend
from cworld.data_model import ToolResult, ToolSpec


def is_live(tool: ToolSpec) -> bool:
    return tool.availability == "live" and tool.server_kind in ("sandbox", "real")


class LiveBackend:
    mode = "live"

    def __init__(self, sandbox: SandboxBackend, real: RealServerBackend | None = None) -> None:
        self.sandbox = sandbox
        self.real = real

    async def open(self, seed: int) -> None:
        await self.sandbox.open(seed)
        if self.real is not None:
            await self.real.open(seed)

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        if not is_live(tool):
            return ToolResult.error(
                "unavailable", f"unavailable: {tool.id} is schema-only here; run it with --mode synthesized or hybrid"
            )
        if tool.server_kind == "real":
            if self.real is None:
                return ToolResult.error("not_found", f"not_found: no real MCP servers are configured for {tool.id}")
            return await self.real.call(tool, arguments)
        return await self.sandbox.call(tool, arguments)

    async def end_state(self) -> dict[str, Any] | None:
        """The sandbox snapshot (what the state diff compares); real servers' scratch files under `_scratch`."""
        state = await self.sandbox.end_state()
        scratch = await self.real.end_state() if self.real is not None else None
        if scratch:
            state = {**(state or {}), "_scratch": scratch}
        return state

    async def close(self) -> None:
        await self.sandbox.close()
        if self.real is not None:
            await self.real.close()
