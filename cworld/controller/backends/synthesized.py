"""Synthesized mode: the World Engine predicts every response from the tool, the arguments and the log.

One `SessionLog` per episode is the engine's memory of the simulated world; it carries the task's public
part (`PublicTask`: query, constraints as stated, tools, scenario; never the gold plan, hints or ground
truth). The world engine (the default) never reads it: its world is the seed's, which exists before any
task; the schema engine (`--engine schema`) grounds its world in it, and the LLM engine shows it to its
model. The engine answers tool faults as error results. An engine whose model is down is an infrastructure failure, never the agent's:
an engine that raises a `CworldError` (ModelError/InfraError), or the LLM engine falling back to the
schema engine because of a model error (`meta.fallback_reason` "model error: ..."), becomes an `infra`
result here, so the runner retries the episode instead of scoring a half-simulated one. Fallbacks for an
invalid answer (the model is up, its answer was unusable) stay results: that is the engine's fidelity.
"""

from __future__ import annotations

import time
from typing import Any

from cworld.controller.backends.endstate import change_set
from cworld.data_model import PublicTask, ToolResult, ToolSpec
from cworld.engine.protocol import SessionLog, WorldEngine
from cworld.errors import CworldError


class EngineBackend:
    mode = "synthesized"

    def __init__(self, engine: WorldEngine, *, context: PublicTask | None = None,
                 model_down_is_infra: bool = True) -> None:
        self.engine = engine
        self.context = context
        self.model_down_is_infra = model_down_is_infra
        self.session: SessionLog | None = None

    async def open(self, seed: int) -> None:
        self.session = SessionLog(seed=seed, context=self.context)

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        if self.session is None:
            return ToolResult.error("not_found", f"not_found: the episode is not open; cannot call {tool.id}")
        started = time.perf_counter()
        try:
            result = await self.engine.respond(tool, arguments, self.session)
        except CworldError as exc:
            return ToolResult.error("infra", f"world engine '{self.engine.name}' failed: {exc}", source="engine")
        reason = str(result.meta.get("fallback_reason", ""))
        if self.model_down_is_infra and result.meta.get("fallback") and reason.startswith("model error"):
            return ToolResult.error("infra", f"world engine '{self.engine.name}': {reason}", source="engine")
        self.session.record(tool.id, arguments, result)
        result.meta.setdefault("source", "engine")
        result.meta.setdefault("latency_ms", round((time.perf_counter() - started) * 1000.0, 3))
        return result

    async def end_state(self) -> dict[str, Any] | None:
        """The simulated world's end state. The world engine (and the LLM engine on its world) gives the
        world's own state: the full state of every sandbox app, graded exactly as a live end state, with the
        records other servers' worlds changed under `_world` (graded too). An engine that only tracks changes (the
        schema engine) gives a change set in the sandbox's state schema (`endstate.py`), which the grader
        overlays on the task's initial state."""
        if self.session is None:
            return None
        world_end = getattr(self.engine, "end_state", None)
        full = world_end(self.session) if world_end is not None else None
        if full is not None:  # the world's own state (the rules engine): graded as a live end state is
            return full
        world_changes = getattr(self.engine, "world_changes", None)
        return change_set(world_changes(self.session)) if world_changes is not None else None

    async def close(self) -> None:
        return None
