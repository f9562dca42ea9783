"""The middleware step that fires an episode's scheduled faults and keeps their lasting effects.

Per call: effects of faults that fired earlier come first (a deprecated tool stays gone, a rate limit
holds for its window, a pending result waits for its repeat). If none claims the call, the armed faults
whose turn has come and which the call is eligible for are "due": a due fault that acts before the
backend (timeout, 503, ...) fires; otherwise the call runs and the first due fault that finds something
to act on in the result (a long payload to truncate, an older version to serve) rewrites it. At most one
new fault fires per call, so faults never stack on one observation. Firing depends only on the call (tool, turn,
position), never on the world's state; a fault deferred by an infrastructure failure stays armed.
"""

from __future__ import annotations

from cworld.controller.faults import FAULT_TYPES, Fault, FaultEnv
from cworld.controller.middleware import CallContext, CallNext
from cworld.controller.planning import FaultSchedule
from cworld.data_model import ToolResult


class FaultInjector:
    def __init__(self, schedule: FaultSchedule, env: FaultEnv) -> None:
        self.faults: list[Fault] = []
        self._armed: list[tuple[int, Fault]] = []
        for item in schedule.call_faults:
            fault = FAULT_TYPES[item.planned.kind](item.planned, env)
            self.faults.append(fault)
            self._armed.append((item.turn, fault))
        self._active: list[Fault] = []
        self._eligibility: dict[tuple[int, str], bool] = {}
        self._next_turn = min((t for t, _ in self._armed), default=0)

    @property
    def needs_memory(self) -> bool:
        return any(f.needs_memory for f in self.faults)

    @property
    def idle(self) -> bool:
        return not self._armed and not self._active

    def quiet(self, turn: int) -> bool:
        """Nothing can happen to a call at `turn`: no lasting effect, no fault due yet. The controller then
        skips the chain altogether (the common case, and the one whose cost matters)."""
        if self._active:
            return False
        return not self._armed or turn < self._next_turn or not any(
            t <= turn and f.ready() for t, f in self._armed)

    async def __call__(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        if self._active:
            for fault in self._active:
                result = await fault.intercept(ctx, call_next)
                if result is not None:
                    self._prune()
                    return result
            self._prune()
        if not self._armed or ctx.turn < self._next_turn:
            return await call_next(ctx)
        due = [f for turn, f in self._armed if turn <= ctx.turn and self._eligible(f, ctx) and f.ready()]
        if not due:
            return await call_next(ctx)
        before = next((f for f in due if not f.needs_result), None)
        if before is not None:
            result = await before.trigger(ctx, call_next)
            self._settle(before)
            return result
        return self._after(ctx, await call_next(ctx), due)

    def _eligible(self, fault: Fault, ctx: CallContext) -> bool:
        """`eligible` depends on the tool alone (see `Fault.eligible`), so it is asked once per tool."""
        key = (id(fault), ctx.tool.id)
        answer = self._eligibility.get(key)
        if answer is None:
            answer = self._eligibility[key] = fault.eligible(ctx)
        return answer

    def _after(self, ctx: CallContext, raw: ToolResult, due: list[Fault]) -> ToolResult:
        """The first due fault that finds something to act on in the result rewrites it."""
        if raw.is_infra_error:
            return raw
        for fault in due:
            result = fault.transform(ctx, raw)
            if result is not None:
                self._settle(fault)
                return result
        return raw

    def _settle(self, fault: Fault) -> None:
        if fault.fired:
            self._armed = [(t, f) for t, f in self._armed if f is not fault]
            self._next_turn = min((t for t, _ in self._armed), default=0)
            if not fault.finished:
                self._active.append(fault)

    def _prune(self) -> None:
        if any(f.finished for f in self._active):
            self._active = [f for f in self._active if not f.finished]

    def unfired(self) -> list[Fault]:
        return [f for _, f in self._armed]
