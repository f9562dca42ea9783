"""Synthesized mode: the World Engine predicts every response from the tool, the arguments and the log.

One `SessionLog` per episode is the engine's memory of the simulated world; it carries the task's public
part (`PublicTask`: query, constraints as stated, tools, scenario; never the gold plan, hints or ground
truth). The world engine (the default) never reads it: its world is the seed's, which exists before any
task; the schema engine (`--engine schema`) grounds its world in it, and the LLM engine shows it to its
model. The engine answers tool faults as error results. An engine whose model is down is never the agent's
failure; what happens follows the run's `on_model_failure` (`cworld.config.load_model_failure_policy`):

- `infra` (the default): an engine that raises a `CworldError` (ModelError/InfraError), or the LLM engine
  falling back because of a model error (`meta.fallback_reason` "model error: ..."), becomes an `infra`
  result here, so the runner retries the episode and records `infra_error` instead of scoring a
  half-simulated one (`cworld run --resume` runs it again);
- `stop`: a model error raises `RunStopped`: the run ends with one line, finished episodes kept;
- `fallback`: the fallback's answer stays (marked `meta.fallback`, counted in the run summary and scores).

Fallbacks for an invalid answer (the model is up, its answer was unusable) stay results under every policy:
that is the engine's fidelity, and they are counted the same way.
"""

from __future__ import annotations

import time
from typing import Any

from cworld.controller.backends.endstate import change_set
from cworld.data_model import PublicTask, ToolResult, ToolSpec
from cworld.engine.protocol import SessionLog, WorldEngine
from cworld.errors import CworldError, ModelError, RunStopped


class EngineBackend:
    mode = "synthesized"

    def __init__(self, engine: WorldEngine, *, context: PublicTask | None = None,
                 on_model_failure: str = "infra") -> None:
        self.engine = engine
        self.context = context
        self.on_model_failure = on_model_failure
        self.session: SessionLog | None = None

    @property
    def model_down_is_infra(self) -> bool:
        return self.on_model_failure == "infra"

    async def open(self, seed: int) -> None:
        self.session = SessionLog(seed=seed, context=self.context)

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        if self.session is None:
            return ToolResult.error("not_found", f"not_found: the episode is not open; cannot call {tool.id}")
        started = time.perf_counter()
        try:
            result = await self.engine.respond(tool, arguments, self.session)
        except CworldError as exc:
            if self.on_model_failure == "stop" and isinstance(exc, ModelError):
                raise self._stopped(str(exc)) from None
            return ToolResult.error("infra", f"world engine '{self.engine.name}' failed: {exc}", source="engine")
        reason = str(result.meta.get("fallback_reason", ""))
        if result.meta.get("fallback") and reason.startswith("model error"):
            if self.on_model_failure == "stop":
                raise self._stopped(reason.removeprefix("model error: "))
            if self.model_down_is_infra:
                return ToolResult.error("infra", f"world engine '{self.engine.name}': {reason}", source="engine")
        self.session.record(tool.id, arguments, result)
        result.meta.setdefault("source", "engine")
        result.meta.setdefault("latency_ms", round((time.perf_counter() - started) * 1000.0, 3))
        return result

    def _stopped(self, why: str) -> RunStopped:
        first = " ".join(why.split())[:300]
        return RunStopped(f"the world engine's model failed mid-run ({first}); stopped as on_model_failure: stop "
                          "says, finished episodes kept: bring the model back, then `cworld run --resume`")

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
