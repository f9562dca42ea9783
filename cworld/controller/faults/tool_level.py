"""Tool-level faults: the call itself fails the way real services fail.

timeout, rate_limit (429 with a retry-after window), unavailable (503), deprecated (404 for the rest of
the episode) and network_error (a transient transport failure). None of them reaches the backend unless
`reaches_server` says the request got through before the failure (the harder, realistic case).
"""

from __future__ import annotations

import asyncio
import random
from typing import Literal

from pydantic import Field

from cworld.controller.alternatives import similar_tools
from cworld.controller.faults.base import (
    SECONDS_PER_TURN,
    Fault,
    FaultParams,
    PlanInput,
    Targeting,
    register,
    tool_matches,
)
from cworld.controller.middleware import CallContext, CallNext
from cworld.data_model import ToolResult


class _OneShot(Fault):
    """A fault that spoils exactly the call it fires on. With `reaches_server` the request is let through
    first (it "got there", its answer was lost); an infrastructure failure then defers the fault."""

    level = "tool"
    params: TimeoutParams | NetworkErrorParams

    async def trigger(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        if self.params.reaches_server:
            raw = await call_next(ctx)
            if raw.is_infra_error:
                return raw
        return await self._spoil(ctx)

    async def _spoil(self, ctx: CallContext) -> ToolResult:
        """Fire: the error the agent sees instead of the answer."""
        raise NotImplementedError


class TimeoutParams(FaultParams):
    delay_s: float = Field(30.0, gt=0, description="how long the call seemed to hang (reported, virtual)")
    reaches_server: bool = Field(False, description="the request was executed before the answer was lost")
    sleep_scale: float = Field(0.0, ge=0, description="real seconds slept per reported second (0 = none)")


@register("timeout", TimeoutParams)
class TimeoutFault(_OneShot):
    params: TimeoutParams

    async def _spoil(self, ctx: CallContext) -> ToolResult:
        if self.params.sleep_scale:
            await asyncio.sleep(self.params.delay_s * self.params.sleep_scale)
        text = f"timeout: {ctx.tool.name} did not answer within {self.params.delay_s:g}s (ETIMEDOUT)"
        self.mark_fired(ctx, text)
        return self.error(ctx, "timeout", text, latency_ms=round(self.params.delay_s * 1000, 1))


class RateLimitParams(FaultParams):
    retry_after_turns: int = Field(2, ge=1, description="calls in scope fail until this many turns have passed")
    scope: Literal["server", "tool"] = Field("server", description="what the limit covers")


@register("rate_limit", RateLimitParams)
class RateLimitFault(Fault):
    level = "tool"
    params: RateLimitParams

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._scope_id = ""
        self._until = 0
        self._over = False

    async def trigger(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        self._scope_id = ctx.tool.server if self.params.scope == "server" else ctx.tool.id
        self._until = ctx.turn + self.params.retry_after_turns
        result = self._limited(ctx)
        self.mark_fired(ctx, result.text, until_turn=self._until)
        return result

    async def intercept(self, ctx: CallContext, call_next: CallNext) -> ToolResult | None:
        if self._in_scope(ctx) and ctx.turn >= self._until:
            self._over = True
        if self._over or not self._in_scope(ctx):
            return None
        result = self._limited(ctx)
        self.log(ctx, "persist", result.text, until_turn=self._until)
        return result

    @property
    def finished(self) -> bool:
        return self._over

    def _in_scope(self, ctx: CallContext) -> bool:
        return (ctx.tool.server if self.params.scope == "server" else ctx.tool.id) == self._scope_id

    def _limited(self, ctx: CallContext) -> ToolResult:
        turns = self._until - ctx.turn
        seconds = turns * SECONDS_PER_TURN
        text = f"429 Too Many Requests: rate limit exceeded for {self._scope_id}; retry after {seconds}s"
        return self.error(ctx, "rate_limit", text, retry_after_s=seconds, retry_after_turns=turns)


class UnavailableParams(FaultParams):
    calls: int = Field(1, ge=1, description="consecutive calls to the tool that get 503 (the first included)")


@register("unavailable", UnavailableParams)
class UnavailableFault(Fault):
    level = "tool"
    params: UnavailableParams

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._left = 0
        self._tool = ""

    async def trigger(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        self._tool, self._left = ctx.tool.id, self.params.calls - 1
        result = self._answer(ctx)
        self.mark_fired(ctx, result.text)
        return result

    async def intercept(self, ctx: CallContext, call_next: CallNext) -> ToolResult | None:
        if ctx.tool.id != self._tool or self._left <= 0:
            return None
        self._left -= 1
        result = self._answer(ctx)
        self.log(ctx, "persist", result.text, left=self._left)
        return result

    @property
    def finished(self) -> bool:
        return self.fired and self._left <= 0

    def _answer(self, ctx: CallContext) -> ToolResult:
        text = f"503 Service Unavailable: {ctx.tool.server} is temporarily unavailable; try again shortly"
        return self.error(ctx, "unavailable", text)


class DeprecatedParams(FaultParams):
    require_alternative: bool = Field(
        True, description="only deprecate tools that have an alternative among the environment's tools"
    )


@register("deprecated", DeprecatedParams)
class DeprecatedFault(Fault):
    """The target tool answers 404 from the firing call to the end of the episode."""

    level = "tool"
    params: DeprecatedParams

    @classmethod
    def plan_target(cls, plan: PlanInput, params: dict[str, object], rng: random.Random) -> Targeting | None:
        used = list(plan.task.tools)  # the public candidate tools: fault targets never come from the answer key
        need_alternative = bool(params.get("require_alternative")) and bool(plan.tools)
        candidates = [t for t in dict.fromkeys(used) if cls._replaceable(plan, t, need_alternative)]
        return Targeting(target=rng.choice(candidates)) if candidates else None

    @staticmethod
    def _replaceable(plan: PlanInput, tool_id: str, need_alternative: bool) -> bool:
        spec = plan.tools.get(tool_id)
        if spec is not None and not tool_matches(spec, plan.categories, plan.tool_globs):
            return False
        if not need_alternative:
            return True
        return spec is not None and bool(similar_tools(spec, plan.tools.values(), k=1))

    async def trigger(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        result = self._gone(ctx)
        self.mark_fired(ctx, result.text, target=ctx.tool.id)
        return result

    async def intercept(self, ctx: CallContext, call_next: CallNext) -> ToolResult | None:
        if ctx.tool.id != self.planned.target:
            return None
        result = self._gone(ctx)
        self.log(ctx, "persist", result.text, target=ctx.tool.id)
        return result

    @property
    def finished(self) -> bool:
        return False

    def _gone(self, ctx: CallContext) -> ToolResult:
        text = (f"404 Not Found: tool '{ctx.tool.name}' has been deprecated and removed from {ctx.tool.server}; "
                "use another tool")
        return self.error(ctx, "not_found", text, deprecated=True)


NETWORK_MESSAGES = (
    "ECONNRESET: connection reset by peer",
    "network error: socket hang up",
    "fetch failed: upstream connect error or disconnect/reset before headers",
)


class NetworkErrorParams(FaultParams):
    flavor: int = Field(0, ge=0, lt=len(NETWORK_MESSAGES), description="which transport message to show")
    reaches_server: bool = Field(False, description="the request was executed before the connection dropped")


@register("network_error", NetworkErrorParams)
class NetworkErrorFault(_OneShot):
    """A transient transport failure: retrying the same call works."""

    params: NetworkErrorParams

    async def _spoil(self, ctx: CallContext) -> ToolResult:
        text = NETWORK_MESSAGES[self.params.flavor]
        self.mark_fired(ctx, text)
        return self.error(ctx, "unavailable", text, transient=True)
