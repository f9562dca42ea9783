"""Run a gold plan in a fresh seeded sandbox session, in process, with no faults.

`{{step_id.path}}` references are resolved with the same resolver scripted agents use
(`cworld.agents.references`), so a plan that verifies here is a plan an oracle can follow. Calls go
through `SandboxServer.call_tool_sync`: the exact argument validation, clock ticks, checkpoints and
error results an agent meets over MCP, without the transport.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cworld.agents.references import UnresolvedReference, resolve
from cworld.data_model import PlanStep


@dataclass
class CallRecord:
    step_id: str
    tool: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None


@dataclass
class ExecutionTrace:
    calls: list[CallRecord] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    end_state: dict[str, Any] | None = None
    failure: str | None = None
    #: The seeded state before the first call and the session clock then (ISO): what the scenario is
    #: written from. Kept by `execute_plan` only (the composer's probes do not need them).
    initial_state: dict[str, Any] | None = None
    started_at: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


class PlanRunner:
    """One seeded session; `run(step)` resolves, calls and records. Also the offline composer's probe."""

    def __init__(self, seed: int) -> None:
        from cworld.sandbox.catalog import all_apps
        from cworld.sandbox.framework import SandboxSession

        self.session = SandboxSession(seed, all_apps())
        self._servers: dict[str, Any] = {}
        self.trace = ExecutionTrace()

    def server(self, app: str) -> Any:
        from cworld.sandbox.framework.server import build_server

        if app not in self._servers:
            self._servers[app] = build_server(self.session, app)
        return self._servers[app]

    def run(self, step: PlanStep) -> CallRecord:
        try:
            arguments = resolve(step.arguments, self.trace.results)
        except UnresolvedReference as exc:
            return self._record(
                CallRecord(step.id, step.tool, step.arguments, False, error=f"unresolved {exc}")
            )
        app, _, name = step.tool.partition("/")
        if app not in self.session.apps:
            return self._record(
                CallRecord(step.id, step.tool, arguments, False, error=f"no sandbox app {app!r}")
            )
        raw = self.server(app).call_tool_sync(name, arguments)
        value = _value_of(raw)
        record = CallRecord(
            step.id,
            step.tool,
            arguments,
            not raw.is_error,
            result=value,
            error=_text_of(raw) if raw.is_error else None,
        )
        if record.ok:
            self.trace.results[step.id] = value
        return self._record(record)

    def _record(self, record: CallRecord) -> CallRecord:
        self.trace.calls.append(record)
        if not record.ok and self.trace.failure is None:
            self.trace.failure = f"step {record.step_id} ({record.tool}) failed: {record.error}"
        return record

    def snapshot(self) -> dict[str, Any]:
        return self.session.snapshot()


def execute_plan(plan: list[PlanStep], seed: int) -> ExecutionTrace:
    """Every step in order, stopping at the first failure; the end state is kept only on success, the
    initial state always."""
    runner = PlanRunner(seed)
    runner.trace.initial_state = runner.snapshot()
    runner.trace.started_at = runner.session.clock.now().isoformat()
    for step in plan:
        if not runner.run(step).ok:
            return runner.trace
    runner.trace.end_state = runner.snapshot()
    return runner.trace


def _text_of(raw: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in raw.content if getattr(c, "type", "") == "text").strip()


def _value_of(raw: Any) -> Any:
    """The structured result; else the text parsed as JSON when it is JSON; else the text."""
    if raw.structured_content is not None:
        return raw.structured_content
    text = _text_of(raw)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text
