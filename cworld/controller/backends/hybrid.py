"""Hybrid mode: live where a tool is live, the World Engine for schema-only tools.

The end state is the live part's (the sandbox snapshot) with the engine-served part's changes: those on
sandbox apps overlaid on it (a sandbox tool the run served from the engine). The world engine's changes to
other servers' worlds stay under `_world` and are graded with the apps; a change-set engine's (the schema
engine's) are kept aside under `_engine_changes` (bookkeeping: it has no world to grade them against).
"""

from __future__ import annotations

from typing import Any

from cworld.controller.backends.endstate import split_mirrored
from cworld.controller.backends.live import LiveBackend, is_live
from cworld.controller.backends.synthesized import EngineBackend
from cworld.data_model import ToolResult, ToolSpec
from cworld.sandbox.statediff.overlay import apply_changes, is_change_set
from cworld.sandbox.statediff.world import WORLD_KEY

ENGINE_CHANGES_KEY = "_engine_changes"


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
        state = await self.live.end_state()
        simulated = await self.engine.end_state()
        if state is None or simulated is None:
            return state
        if not is_change_set(simulated):  # a world's full state: its sandbox apps served no call here
            worlds = simulated.get(WORLD_KEY)
            return {**state, WORLD_KEY: worlds} if worlds else state
        mirrored, rest = split_mirrored(simulated)
        if any(not k.startswith("_") for k in mirrored):
            state = apply_changes(state, mirrored)
        return {**state, ENGINE_CHANGES_KEY: rest} if rest else state

    async def close(self) -> None:
        await self.live.close()
        await self.engine.close()
