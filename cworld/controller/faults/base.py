"""The fault template: a small class registered by its `kind` with a pydantic `Params` model.

A fault is planned (its parameters and target fixed per task, policy and seed), then armed in one
episode. When its turn has come, it is `ready` and a call is `eligible`, it fires on that call: `trigger`
for faults that act instead of the backend, `transform` for faults that rewrite the backend's result. A
fault whose effect lasts (a deprecated tool, a rate-limit window, an expired session, a pending result)
stays active and `intercept` sees every later call until it is `finished`. Faults never raise and never
draw from the sandbox's random streams: their own randomness comes from `self.rng`.
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from cworld.data_model import PublicTask, ToolResult, ToolSpec
from cworld.data_model.trajectory import FaultLevel
from cworld.seeding import derive_rng

if TYPE_CHECKING:
    from cworld.controller.memory import CallMemory
    from cworld.controller.middleware import CallContext, CallNext
    from cworld.controller.planning import PlannedFault

#: Seconds of virtual time one agent turn stands for (the sandbox charges 20 s per call).
SECONDS_PER_TURN = 20


class FaultParams(BaseModel):
    """Base of every fault's parameters; unknown keys are an error in a policy file."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class FaultEnv:
    """What a fault may know about the episode besides the call: the tools and the calls seen so far."""

    tools: Mapping[str, ToolSpec]
    memory: CallMemory
    seed: int = 0


@dataclass
class PlanInput:
    """What planning may look at: the public task (never the gold plan, hints or metadata), the environment's
    tools (may be empty) and the rule's filters."""

    task: PublicTask
    tools: Mapping[str, ToolSpec]
    categories: list[str] = field(default_factory=list)
    tool_globs: list[str] = field(default_factory=list)
    key: str = ""
    """The planned fault's key (stable per task, policy, seed and position), for ids made at plan time."""


@dataclass
class Targeting:
    target: str | None = None
    """A tool id (or, for session expiry, a server id) the fault is bound to; None = any eligible call."""
    content: dict[str, Any] = field(default_factory=dict)
    """Plan-time content, e.g. a constraint change's user message and constraint."""


class Fault:
    kind: ClassVar[str]
    level: ClassVar[FaultLevel]
    Params: ClassVar[type[FaultParams]] = FaultParams
    #: Faults that rewrite what the backend returned implement `transform`; the others `trigger`.
    needs_result: ClassVar[bool] = False
    #: Faults that keep a record of earlier results (stale data) ask the controller to remember calls.
    needs_memory: ClassVar[bool] = False

    def __init__(self, planned: PlannedFault, env: FaultEnv) -> None:
        self.planned = planned
        self.params = self.Params.model_validate(planned.params)
        self.env = env
        self.rng: random.Random = derive_rng(env.seed, f"fault-effect:{planned.key}")
        self.fired = False
        self.fired_turn: int | None = None
        self.fired_index: int | None = None

    # --- planning (class level: runs before any episode) ------------------------------------------
    @classmethod
    def plan_target(cls, plan: PlanInput, params: dict[str, Any], rng: random.Random) -> Targeting | None:
        """Where the fault goes and any content fixed at plan time. Untargeted faults fire on any eligible
        call; a fault that can never apply to this task returns None and is dropped for every agent alike."""
        return Targeting()

    # --- one episode ------------------------------------------------------------------------------
    def eligible(self, ctx: CallContext) -> bool:
        """May this call carry the fault? Decided from the tool alone (the injector caches the answer per
        tool), never from the arguments, the results or the world's state."""
        target = self.planned.target
        if target is not None and ctx.tool.id != target:
            return False
        return tool_matches(ctx.tool, self.planned.categories, self.planned.tools)

    def ready(self) -> bool:
        """Can the fault act at all at this point of the episode (e.g. a stale read needs an earlier write)?
        Cheap and call-independent; while no due fault is ready, calls skip the chain."""
        return True

    async def trigger(self, ctx: CallContext, call_next: CallNext) -> ToolResult:
        """Fire on this call (faults that act before the backend). Call `self.mark_fired` when it applied."""
        raise NotImplementedError

    def transform(self, ctx: CallContext, raw: ToolResult) -> ToolResult | None:
        """Rewrite what the backend returned (faults with `needs_result`); None = nothing to act on here."""
        raise NotImplementedError

    async def intercept(self, ctx: CallContext, call_next: CallNext) -> ToolResult | None:
        """After firing: the result for a later call this fault still affects, or None to pass it on."""
        return None

    @property
    def finished(self) -> bool:
        """True once the fault has fired and its effect has run out (the controller stops asking it)."""
        return self.fired

    # --- helpers ----------------------------------------------------------------------------------
    def mark_fired(self, ctx: CallContext, message: str, **extra: Any) -> None:
        self.fired, self.fired_turn, self.fired_index = True, ctx.turn, ctx.index
        self.log(ctx, "fire", message, **extra)

    def error(self, ctx: CallContext, error_class: Any, message: str, **meta: Any) -> ToolResult:
        """The injected error, as the server the call went to would have sent it (`fault_error`)."""
        return fault_error(error_class, message, source_of(ctx), **meta)

    def log(self, ctx: CallContext, phase: str, message: str, **extra: Any) -> None:
        params = {**self.planned.params, **extra, "fault": self.planned.key, "phase": phase}
        ctx.intervene(self.kind, self.level, message, params)


def tool_matches(tool: ToolSpec, categories: list[str], tool_globs: list[str]) -> bool:
    """The policy's "where may it fire" filters: tool categories and tool-id globs (empty = anywhere)."""
    in_category = not categories or (tool.category or "") in categories
    return in_category and (not tool_globs or any(fnmatch.fnmatchcase(tool.id, g) for g in tool_globs))


def fault_error(error_class: Any, message: str, source: str = "live", **meta: Any) -> ToolResult:
    """An error as the server would have sent it: nothing in it says a fault was injected."""
    return ToolResult.error(error_class, message, source=source, **meta)


def source_of(ctx: CallContext) -> str:
    """Injected errors look like they came from where a real answer would have come from."""
    return "engine" if ctx.tool.availability == "schema-only" else "live"


FAULT_TYPES: dict[str, type[Fault]] = {}
F = TypeVar("F", bound=Fault)


def register(kind: str, params: type[FaultParams] = FaultParams) -> Callable[[type[F]], type[F]]:
    """Class decorator: the fault type `kind`, its parameters' model `params`; a kind can be registered once."""

    def add(cls: type[F]) -> type[F]:
        if kind in FAULT_TYPES:
            raise TypeError(f"fault kind {kind!r} is registered twice ({FAULT_TYPES[kind].__name__}, {cls.__name__})")
        cls.kind, cls.Params = kind, params
        FAULT_TYPES[kind] = cls
        return cls

    return add
