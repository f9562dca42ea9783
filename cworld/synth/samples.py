"""One sample answer per tool that declares no output schema: what the LLM drafter is shown of its result.

A tool without an output schema (most harvested ones) still answers with keys a plan's references must
name. One call with generated arguments (`cworld.registry.probe_args.generate_args`, ids taken from what
earlier answers and the seeded state hold) shows them: in a seeded sandbox session when the tool runs
there, else on the World Engine (the world engine a synthesized run uses). A refused call gives no
sample; the drafter is then told nothing rather than something wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.registry.probe_args import ValueBank, generate_args
from cworld.synth.outcome import answer_value


class SampleAnswers:
    def __init__(self, seed: int, engine: Callable[[], Any] | None = None,
                 executable: Callable[[str], bool] | None = None) -> None:
        """`engine` builds the World Engine on first need; `executable(tool_id)` says a tool runs in the sandbox."""
        self.seed = seed
        self._engine_factory: Callable[[], Any] | None = engine
        self._engine: Any = None
        self._executable = executable or (lambda _: False)
        self._runner: Any = None
        self._session: Any = None
        self.bank = ValueBank()
        self._answers: dict[str, Any] = {}

    def answer(self, spec: ToolSpec) -> Any | None:
        """The structured answer (or its text) of one successful call; None when refused or nothing can run it."""
        if spec.id not in self._answers:
            self._answers[spec.id] = self._call(spec)
        return self._answers[spec.id]

    def _call(self, spec: ToolSpec) -> Any | None:
        if self._executable(spec.id):
            result = self._in_sandbox(spec)
        elif self._engine_factory is not None:
            result = self._on_engine(spec)
        else:
            return None
        if result.is_error:
            return None
        self.bank.learn(result)
        return answer_value(result)

    def _in_sandbox(self, spec: ToolSpec) -> ToolResult:
        from cworld.mcp.normalize import from_call_result
        from cworld.synth.plan_exec import PlanRunner

        if self._runner is None:
            self._runner = PlanRunner(self.seed)
            self.bank.seed(self._runner.snapshot())
        raw = self._runner.server(spec.server).call_tool_sync(spec.name, generate_args(spec, self.bank))
        return from_call_result(raw, 0.0)

    def _on_engine(self, spec: ToolSpec) -> ToolResult:
        from cworld.engine import SessionLog

        if self._engine is None:
            assert self._engine_factory is not None
            self._engine, self._session = self._engine_factory(), SessionLog(seed=self.seed)
        arguments = generate_args(spec, self.bank)
        answer: ToolResult = self._engine.respond_sync(spec, arguments, self._session)
        self._session.record(spec.id, arguments, answer)
        return answer
