"""Composable interventions: every step is `(ctx, call_next) -> ToolResult`; the innermost calls the backend.

A step may answer without calling `call_next` (a fault that stands in for the server), call it and
rewrite what comes back (a fault on the observation), or pass through. `ctx` carries what the backend
really returned (`raw`) and every intervention made on the way, so the trajectory can show both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cworld.data_model import Intervention, ToolResult, ToolSpec
from cworld.data_model.trajectory import FaultLevel


@dataclass(slots=True)
class CallContext:
    """One call on its way through the chain. Steps read the call and add interventions; never raise."""

    tool: ToolSpec
    arguments: dict[str, Any]
    turn: int
    index: int
    """The call's position in the episode (0-based), counted over every call the agent made."""
    raw: ToolResult | None = None
    """What the backend returned; stays None when a step answered without calling it."""
    interventions: list[Intervention] = field(default_factory=list)

    @property
    def tool_id(self) -> str:
        return self.tool.id

    def intervene(self, kind: str, level: FaultLevel, message: str = "",
                  params: dict[str, Any] | None = None) -> Intervention:
        """Record what a step did to this call (the controller logs it and puts it on the outcome)."""
        record = Intervention(kind=kind, level=level, turn=self.turn, tool=self.tool.id, params=params or {},
                              message=message)
        self.interventions.append(record)
        return record


CallNext = Callable[[CallContext], Awaitable[ToolResult]]


class Middleware(Protocol):
    async def __call__(self, ctx: CallContext, call_next: CallNext) -> ToolResult: ...


def chain(steps: Sequence[Middleware], innermost: CallNext) -> CallNext:
    """Compose once: the first step is the outermost. Built at open, so a call pays no composition cost."""
    handler = innermost
    for step in reversed(steps):
        handler = _Bound(step, handler)
    return handler


class _Bound:
    """A step with its `call_next` filled in. Not a coroutine itself: calling it returns the step's own
    awaitable, so each step costs one coroutine frame, not two."""

    __slots__ = ("call_next", "step")

    def __init__(self, step: Middleware, call_next: CallNext) -> None:
        self.step = step
        self.call_next = call_next

    def __call__(self, ctx: CallContext) -> Awaitable[ToolResult]:
        return self.step(ctx, self.call_next)
