"""State-level faults: the call runs, but what the agent is shown of the state is not the state.

delayed (a pending status; the real result comes on a repeat of the call after k calls), corrupted
(some fields garbled, nulled or of the wrong type), truncated (cut at N characters with an explicit
marker), stale (an earlier version of the same answer or of its entities) and session_expired (calls
fail with 401 until the agent logs in again). A state fault that finds nothing to act on (an error
result, a tiny payload, nothing older to show) does not fire and waits for the next eligible call.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any, Literal

from pydantic import Field

from cworld.controller.faults.base import (
    Fault,
    FaultParams,
    PlanInput,
    Targeting,
    register,
)
from cworld.controller.memory import call_key
from cworld.controller.middleware import CallContext, CallNext
from cworld.data_model import ToolResult, ToolSpec

TRUNCATION_MARKER = "[truncated:"
"""Every truncated observation ends with `[truncated: showing N of M characters]`."""

GARBLE = "\ufffd"
"""Corrupted strings carry the Unicode replacement character, as a broken encoding shows it."""


class _StateFault(Fault):
    """A fault on the observation: the backend runs the call, `transform` rewrites what it returned."""

    level = "state"
    needs_result = True

    def _acts_on(self, raw: ToolResult) -> bool:
        return not raw.is_error


def _with_structured(raw: ToolResult, structured: dict[str, Any]) -> ToolResult:
    text = json.dumps(structured, ensure_ascii=False, indent=2)
    return ToolResult(content=[{"type": "text", "text": text}], structured_content=structured, meta=dict(raw.meta))


class DelayedParams(FaultParams):
    calls: int = Field(2, ge=1, description="calls after the first one before the result is ready")


@register("delayed", DelayedParams)
class DelayedFault(_StateFault):
    """The request is accepted but its result shows up only when the same call is repeated, k calls later.

    The backend runs the request once; repeats are answered from the stored result, so a repeated
    write is never executed twice.
    """

    params: DelayedParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stored: ToolResult | None = None
        self._key = ""
        self._job = ""
        self._delivered = False

    def transform(self, ctx: CallContext, raw: ToolResult) -> ToolResult | None:
        if not self._acts_on(raw):
            return None
        self._stored, self._key = raw, call_key(ctx.tool.id, ctx.arguments)
        self._job = f"job_{self.rng.randrange(16**8):08x}"
        pending = self._pending(raw, ctx.index)
        self.mark_fired(ctx, pending.text, job_id=self._job)
        return pending

    async def intercept(self, ctx: CallContext, call_next: CallNext) -> ToolResult | None:
        if self._delivered or call_key(ctx.tool.id, ctx.arguments) != self._key:
            return None
        assert self._stored is not None and self.fired_index is not None
        if ctx.index - self.fired_index >= self.params.calls:
            self._delivered = True
            self.log(ctx, "deliver", "the pending result is ready", job_id=self._job)
            return self._stored.model_copy(deep=True)
        pending = self._pending(self._stored, ctx.index)
        self.log(ctx, "persist", pending.text, job_id=self._job)
        return pending

    @property
    def finished(self) -> bool:
        return self._delivered

    def _pending(self, raw: ToolResult, index: int) -> ToolResult:
        body = {
            "status": "pending",
            "job_id": self._job,
            "message": "The request was accepted and is still being processed. Call the same tool again "
                       "with the same arguments in a little while to get the result.",
        }
        return ToolResult.ok(body, **{k: v for k, v in raw.meta.items() if k in ("source", "server")})


class CorruptedParams(FaultParams):
    fields: int = Field(1, ge=1, le=20, description="how many leaf fields are spoiled")
    mode: Literal["garble", "null", "wrong_type", "mixed"] = "mixed"


@register("corrupted", CorruptedParams)
class CorruptedFault(_StateFault):
    """Some leaf fields of a structured result are spoiled; a fresh call returns them intact."""

    params: CorruptedParams

    def transform(self, ctx: CallContext, raw: ToolResult) -> ToolResult | None:
        if not self._acts_on(raw) or not raw.structured_content:
            return None
        structured = json.loads(json.dumps(raw.structured_content, default=str))
        leaves = sorted(_leaves(structured), key=lambda p: json.dumps(p))
        if not leaves:
            return None
        picked = self.rng.sample(leaves, min(self.params.fields, len(leaves)))
        spoiled = [self._spoil(structured, path) for path in picked]
        self.mark_fired(ctx, f"corrupted {len(spoiled)} field(s)", paths=[".".join(map(str, p)) for p in picked],
                        how=spoiled)
        return _with_structured(raw, structured)

    def _spoil(self, root: Any, path: list[Any]) -> str:
        parent = root
        for part in path[:-1]:
            parent = parent[part]
        mode = self.params.mode if self.params.mode != "mixed" else self.rng.choice(["garble", "null", "wrong_type"])
        parent[path[-1]] = corrupt_value(parent[path[-1]], mode, self.rng)
        return mode


def corrupt_value(value: Any, mode: str, rng: random.Random) -> Any:
    if mode == "null":
        return None
    if mode == "wrong_type":
        return GARBLE * 3 if not isinstance(value, str) else rng.randint(-99999, -1)
    text = str(value)
    keep = max(1, len(text) // 2)
    return text[:keep] + GARBLE * max(2, len(text) - keep)


def _leaves(value: Any, path: list[Any] | None = None) -> list[list[Any]]:
    path = path or []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, [*path, k])]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, [*path, i])]
    return [path] if path and value is not None else []


class TruncatedParams(FaultParams):
    max_chars: int = Field(2000, ge=20, description="never show more than this many characters")
    keep_fraction: float = Field(0.5, gt=0, le=1, description="show at most this share of the payload")
    min_chars: int = Field(200, ge=0, description="payloads shorter than this are never truncated")


@register("truncated", TruncatedParams)
class TruncatedFault(_StateFault):
    params: TruncatedParams

    def transform(self, ctx: CallContext, raw: ToolResult) -> ToolResult | None:
        text = raw.text
        cut = min(self.params.max_chars, max(20, math.floor(len(text) * self.params.keep_fraction)))
        if not self._acts_on(raw) or len(text) < self.params.min_chars or len(text) <= cut:
            return None
        marker = f"\n...{TRUNCATION_MARKER} showing {cut} of {len(text)} characters]"
        self.mark_fired(ctx, f"truncated {len(text)} -> {cut} characters", shown=cut, total=len(text))
        return ToolResult(content=[{"type": "text", "text": text[:cut] + marker}], meta=dict(raw.meta))


@register("stale")
class StaleFault(_StateFault):
    """A read answered with an older truth: the earlier answer to the same call, else older entity versions."""

    needs_memory = True

    def eligible(self, ctx: CallContext) -> bool:
        return is_read(ctx.tool) and super().eligible(ctx)

    def ready(self) -> bool:
        return self.env.memory.may_be_stale()

    def transform(self, ctx: CallContext, raw: ToolResult) -> ToolResult | None:
        memory = self.env.memory
        if not self._acts_on(raw) or raw.structured_content is None:
            return None
        earlier = memory.earlier_result(ctx.tool.id, ctx.arguments, raw)
        if earlier is not None:
            self.mark_fired(ctx, "served the previous answer to this call", view="call")
            return _with_structured(raw, dict(earlier.structured_content or {}))
        structured, replaced = memory.stale_entities(raw.structured_content, raw)
        if not replaced:
            return None
        self.mark_fired(ctx, f"served earlier versions of {replaced} entit(y/ies)", view="entity", entities=replaced)
        return _with_structured(raw, structured)


_READ_VERB = re.compile(r"^(get|list|search|find|read|fetch|show|view|query|lookup|describe|check)(_|$)")


def is_read(tool: ToolSpec) -> bool:
    if tool.annotations.read_only_hint is not None:
        return tool.annotations.read_only_hint
    return bool(_READ_VERB.match(tool.name.lower()))


_LOGIN = re.compile(r"(^|_)(login|log_in|signin|sign_in|authenticate|reauthenticate|confirm_identity)($|_)")
_AUTH_PARAM = re.compile(r"^(token|session|session_id|session_token|access_token|auth|auth_token|api_key)$")


def is_login(tool: ToolSpec) -> bool:
    return bool(_LOGIN.search(tool.name.lower()))


def takes_auth(tool: ToolSpec) -> bool:
    return any(_AUTH_PARAM.match(p) for p in (tool.input_schema or {}).get("properties", {}) or {})


@register("session_expired")
class SessionExpiredFault(Fault):
    """The server's session ends: its authenticated tools answer 401 until a login-like tool succeeds."""

    level = "state"

    @classmethod
    def plan_target(cls, plan: PlanInput, params: dict[str, Any], rng: random.Random) -> Targeting | None:
        used = list(plan.task.tools)  # the public candidate tools: fault targets never come from the answer key
        servers = list(dict.fromkeys(t.split("/", 1)[0] for t in used))
        # Only a server whose login the task itself offers: an expiry the agent cannot answer (a login
        # outside the task's tools, e.g. a step-up `confirm_identity` with no password given) is no test.
        logins = {server for server, _, name in (t.partition("/") for t in used) if _LOGIN.search(name.lower())}
        candidates = [s for s in servers if s in logins]
        return Targeting(target=rng.choice(candidates)) if candidates else None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._renewed = False

    def eligible(self, ctx: CallContext) -> bool:
        return ctx.tool.server == self.planned.target and self._affected(ctx.tool)

    async def trigger(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        result = self._denied(ctx)
        self.mark_fired(ctx, result.text, server=ctx.tool.server)
        return result

    async def intercept(self, ctx: CallContext, call_next: CallNext) -> ToolResult | None:
        if ctx.tool.server != self.planned.target:
            return None
        if is_login(ctx.tool):
            raw = await call_next(ctx)
            if not raw.is_error:
                self._renewed = True
                self.log(ctx, "resolve", "logged in again; the session is valid", server=ctx.tool.server)
            return raw
        if not self._affected(ctx.tool):
            return None
        result = self._denied(ctx)
        self.log(ctx, "persist", result.text, server=ctx.tool.server)
        return result

    @property
    def finished(self) -> bool:
        return self._renewed

    def _affected(self, tool: ToolSpec) -> bool:
        """Tools that take a token, when the server has any; otherwise every tool but the login."""
        if is_login(tool):
            return False
        server_tools = [t for t in self.env.tools.values() if t.server == tool.server]
        return takes_auth(tool) if any(takes_auth(t) for t in server_tools) else True

    def _denied(self, ctx: CallContext) -> ToolResult:
        text = "401 Unauthorized: the session has expired or the token was revoked; authenticate again"
        return self.error(ctx, "auth", text)
