"""Hybrid mode: live where a tool is live, the World Engine for schema-only tools.

The end state is the live part's (the sandbox snapshot): the only state a state diff can trust.
"""

from __future__ import annotations

from typing import Any

from cworld.controller.backends.live import LiveBackend, is_live
from cworld.controller.backends.synthesized import EngineBackend
from cworld.data_model import ToolResult, ToolSpec


class HybridBackend:
    mode = "hybrid"

    def __init__(self, live: LiveBackend, engine: EngineBackend) -> None:
        self.live = live
        self.engine = engine

    async def open(self, seed: int) -> None:
        await self.live.open(seed)
        await self.engine.open(seed)

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        if is_live(tool):
            return await self.live.call(tool, arguments)
        return await self.engine.call(tool, arguments)

    async def end_state(self) -> dict[str, Any] | None:
        return await self.live.end_state()

    async def close(self) -> None:
        await self.live.close()
        await self.engine.close()
