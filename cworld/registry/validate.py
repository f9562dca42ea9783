"""Three-stage validation of every tool, as in C-World §2.1.

(i) available: the server starts, finishes the handshake and lists the tool;
(ii) invocable: a call with schema-respecting arguments is accepted: not rejected as bad arguments,
     and answered at all (no timeout, no crash);
(iii) usable: the answer is neither an error nor an error payload in disguise (see `usability`).

A tool that stops at (iii) for an *environmental* reason (auth, network, rate limit: it cannot work
here) is recorded `schema-only`, so that synthesized mode can stand in for it; one that stops for a
*data* reason (the probe's id did not exist) still runs here and stays `live`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from cworld.data_model import ServerSpec, ToolResult, ToolSpec
from cworld.data_model.tools import Availability
from cworld.mcp import classify_error_text
from cworld.mcp.connection import ToolConnection
from cworld.registry.probe_args import ValueBank, looks_read_only, planned_args, probe_order, schema_problem
from cworld.registry.usability import unusable_reason

Stage = Literal[0, 1, 2, 3]
STAGE_NAMES = {0: "unavailable", 1: "available", 2: "invocable", 3: "usable"}

#: Error classes meaning the call itself was not accepted (stage ii fails).
REJECTED = frozenset({"invalid_args", "timeout", "server_crash", "infra"})
#: Error classes at stage iii meaning the tool cannot work in this environment.
ENVIRONMENTAL = frozenset({"auth", "rate_limit", "unavailable", "timeout", "server_crash", "infra"})

INFRA_STREAK_LIMIT = 2
"""After this many timeouts/crashes in a row a server is not probed further: it stopped answering."""


class ToolValidation(BaseModel):
    """The outcome for one tool; `stage` is the last stage passed (0-3)."""

    server: str
    tool: str
    stage: int
    reason: str
    error_class: str | None = None
    availability: Availability = "live"
    arguments: dict[str, Any] | None = None
    args_source: str | None = None
    args_note: str | None = None
    call_ms: float | None = None

    @property
    def id(self) -> str:
        return f"{self.server}/{self.tool}"


class ServerValidation(BaseModel):
    """The outcome for one server: whether it started, its tools' outcomes, and the timings."""

    schema_version: str = "1"
    server: str
    kind: str
    started: bool
    reason: str = ""
    content_hash: str | None = None
    reused: bool = False
    start_ms: float | None = None
    list_ms: float | None = None
    total_ms: float | None = None
    tools: list[ToolValidation] = Field(default_factory=list)

    def stage_counts(self) -> dict[str, int]:
        counts = {name: 0 for name in STAGE_NAMES.values()}
        for t in self.tools:
            counts[STAGE_NAMES[t.stage]] += 1
        return counts


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 1)


def judge(result: ToolResult) -> tuple[int, str, str | None]:
    """(stage reached, reason, error class) for the answer to a probe call."""
    if result.is_error and result.error_class in REJECTED:
        return 1, f"call not accepted ({result.error_class}): {_short(result.text)}", result.error_class
    reason = unusable_reason(result)
    if reason is None and (schema_err := result.meta.get("output_schema_error")):
        reason = f"answer breaks the tool's outputSchema: {_short(str(schema_err))}"
        return 2, reason, "business"
    if reason is None:
        return 3, "usable answer", None
    error_class = result.error_class if result.is_error else classify_error_text(result.text)
    return 2, reason, error_class


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def availability_for(stage: int, error_class: str | None) -> Availability:
    if stage == 3 or (stage == 2 and error_class not in ENVIRONMENTAL):
        return "live"
    return "schema-only"


def may_call(tool: ToolSpec, spec: ServerSpec, has_scratch: bool) -> bool:
    """Side effects only against scratch targets: a tool that may write is called only on a sandbox
    (a throwaway session), on a server launched against scratch, or when the manifest gives its
    probe arguments (the author's say-so)."""
    return spec.kind == "sandbox" or has_scratch or tool.name in spec.probe_args or looks_read_only(tool)


async def validate_tools(
    conn: ToolConnection,
    spec: ServerSpec,
    tools: list[ToolSpec],
    *,
    timeout_s: float,
    has_scratch: bool,
    bank: ValueBank | None = None,
    edges: list[tuple[str, str]] | None = None,
    on_tool: Callable[[ToolValidation], None] | None = None,
) -> list[ToolValidation]:
    """Probe each listed tool in dependency order; every tool listed has passed stage (i)."""
    bank = bank or ValueBank()
    results: dict[str, ToolValidation] = {}
    streak = 0
    for tool in probe_order(tools, edges or []):
        if streak >= INFRA_STREAK_LIMIT:
            outcome = _skipped(tool, "not probed: the server stopped answering earlier calls", "timeout")
        elif not may_call(tool, spec, has_scratch):
            outcome = _skipped(
                tool,
                "not probed: it may write and the server has no scratch target; "
                "give probe_args in servers.yaml to probe it",
                None,
            )
        else:
            outcome = await _probe(conn, spec, tool, bank, timeout_s)
            streak = streak + 1 if outcome.error_class in ("timeout", "server_crash") else 0
        results[tool.name] = outcome
        if on_tool is not None:
            on_tool(outcome)
    _share_environmental_verdict(results)
    return [results[t.name] for t in tools]


def _share_environmental_verdict(results: dict[str, ToolValidation]) -> None:
    """Tools left unprobed on a server where no probed tool works and some cannot work here (no network,
    no key) are marked schema-only too: they would meet the same wall."""
    probed = [r for r in results.values() if r.arguments is not None]
    walls = [r.error_class for r in probed if r.stage == 2 and r.error_class in ENVIRONMENTAL]
    if not walls or any(r.stage == 3 for r in probed):
        return
    for r in results.values():
        if r.arguments is None and r.availability == "live":
            r.availability = "schema-only"
            r.reason += f" (the server's probed tools cannot work here: {walls[0]})"


def _skipped(tool: ToolSpec, reason: str, error_class: str | None) -> ToolValidation:
    return ToolValidation(
        server=tool.server,
        tool=tool.name,
        stage=1,
        reason=reason,
        error_class=error_class,
        availability="schema-only" if error_class else "live",
    )


async def _probe(
    conn: ToolConnection, spec: ServerSpec, tool: ToolSpec, bank: ValueBank, timeout_s: float
) -> ToolValidation:
    args, source = planned_args(tool, spec.probe_args, bank)
    started = time.perf_counter()
    result = await conn.call(tool.name, args, timeout_s=timeout_s)
    call_ms = _ms(started)
    stage, reason, error_class = judge(result)
    if stage == 3:
        bank.learn(result)
    return ToolValidation(
        server=tool.server,
        tool=tool.name,
        stage=stage,
        reason=reason,
        error_class=error_class,
        availability=availability_for(stage, error_class),
        arguments=args,
        args_source=source,
        args_note=schema_problem(tool, args),
        call_ms=call_ms,
    )


def schema_only_results(tools: list[ToolSpec], reason: str) -> list[ToolValidation]:
    """Catalog tools: described, never run; they pass no stage and are marked schema-only."""
    return [
        ToolValidation(server=t.server, tool=t.name, stage=0, reason=reason, availability="schema-only")
        for t in tools
    ]
