"""The traffic rules are learned from: one `Observation` per call (the tool, its arguments, the answer, and
the server's state just before and after when the state can be read), collected by driving a service
live with the seeded explorer, or read from trajectories a run already recorded.

Learning sees a service only through this: its tool schemas, its answers and its state snapshots, never
its code. A sandbox app is driven through its MCP server's call cycle and its answers are normalized as
any MCP server's (`mcp.normalize.from_call_result`); its state is what the sandbox session holds. A launched
MCP server (the real servers, a user's) is driven by `controller.learn.McpDriver`.
"""

from __future__ import annotations

import copy
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cworld.data_model import ToolResult, ToolSpec, Trajectory
from cworld.engine.learn.explorer import Explorer, Rates, briefing
from cworld.schemas.validation import validation_error

#: How learning's explorer behaves: it reads the values an error lists, logs in again when its token is
#: refused, and pushes an accepted write again.
LEARNING = Rates(hints=True, relogin=True, again=0.15)


@dataclass
class Observation:
    """One call as the service answered it; `before`/`after` are its state (None when it cannot be read)."""

    tool: ToolSpec
    arguments: dict[str, Any]
    result: ToolResult
    now: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    ids: dict[str, int] = field(default_factory=dict)
    """the id counters just before the call (the next `ord_NNNN` a create takes)"""
    origin: str = ""
    """where the call came from (`seed 0 call 17`), for the calls a rule still gets wrong"""
    reference: dict[str, Any] = field(default_factory=dict)
    """the world's read-only reference data for the seed (travel's `NETWORK`: its hotels and their rooms),
    also under its names in `before`/`after` (one shared copy): the engine runs a rule with it as consts"""

    @property
    def args(self) -> dict[str, Any]:
        """Every schema property (None when not given), then the arguments: what a rule's `args` holds."""
        props = (self.tool.input_schema or {}).get("properties") or {}
        return {**dict.fromkeys(props), **self.arguments}

    @property
    def valid(self) -> bool:
        """The arguments pass the input schema: a rule decides the call (the engine refuses the rest itself)."""
        schema = self.tool.input_schema
        return not schema or validation_error(schema, self.arguments) is None

    @property
    def verdict(self) -> str:
        """`ok` or the error class the service answered."""
        return str(self.result.error_class or "business") if self.result.is_error else "ok"


@dataclass
class Traffic:
    """A server's recorded calls and its tools."""

    server: str
    tools: list[ToolSpec]
    calls: list[Observation] = field(default_factory=list)

    def of(self, tool: str) -> list[Observation]:
        return [o for o in self.calls if o.tool.name == tool]


class Driver(ABC):
    """A live service to explore: call a tool, read the state (None when it cannot), read the clock."""

    @abstractmethod
    def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult: ...

    def state(self) -> dict[str, Any] | None:
        return None

    @abstractmethod
    def now(self) -> str: ...

    def ids(self) -> dict[str, int]:
        return {}

    def reference(self) -> dict[str, Any]:
        """Read-only data the world holds beside the state (none unless the service publishes some)."""
        return {}


class SandboxDriver(Driver):
    """A sandbox app in a fresh session of a seed, called as the sandbox backend calls it."""

    def __init__(self, app: str, seed: int) -> None:
        from cworld.sandbox.catalog import all_apps
        from cworld.sandbox.framework.server import build_server
        from cworld.sandbox.framework.session import SandboxSession

        self.app, self.seed = app, seed
        self.session = SandboxSession(seed, all_apps())
        self.server = build_server(self.session, app)

    def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        from cworld.mcp.normalize import from_call_result

        started = time.perf_counter()
        raw = self.server.call_tool_sync(tool.name, copy.deepcopy(arguments))
        return from_call_result(raw, (time.perf_counter() - started) * 1000.0)

    def state(self) -> dict[str, Any]:
        from cworld.sandbox.framework.session import plain_copy

        return plain_copy(self.session.state[self.app])  # type: ignore[no-any-return]

    def now(self) -> str:
        from cworld.values import iso

        return iso(self.session.clock.now())

    def ids(self) -> dict[str, int]:
        return dict(self.session.id_counters())

    def start(self) -> datetime:
        return self.session.clock.now()

    def reference(self) -> dict[str, Any]:
        """The app's published reference data (`world_reference`), as the world engine is given it."""
        from cworld.sandbox.framework.session import plain_copy

        return plain_copy(self.session.app(self.app).world_reference())  # type: ignore[no-any-return]


def explore(driver: Driver, tools: list[ToolSpec], calls: int, rng: random.Random, *, start: datetime | None = None,
            told: dict[str, Any] | None = None, origin: str = "", progress: Callable[[int], None] | None = None,
            explorer: Explorer | None = None, again: random.Random | None = None) -> list[Observation]:
    """`calls` explorer calls on a live service, each with the state before and after (when readable);
    `explorer` one made for the service (else the seeded generic one, told `told`, reading the values an
    error lists). A service whose state
    cannot be read is seen as holding no records before each call and nothing known after (as a run's
    trajectory is): its checks on the arguments, lists and answers are learned, never effects."""
    explorer = explorer or Explorer(tools, rng, start, briefing=told, rates=LEARNING, again=again)
    out: list[Observation] = []
    reference = driver.reference()
    state = with_reference(driver.state(), reference)
    for i in range(calls):
        tool, arguments = explorer.next_call()
        ids = driver.ids()
        result = driver.call(tool, arguments)
        after = with_reference(driver.state(), reference)
        explorer.observe(tool, result)
        before = state if state is not None else {}
        out.append(Observation(tool, arguments, result, driver.now(), before, after, ids, f"{origin}call {i}",
                               reference))
        state = after
        if progress is not None:
            progress(i)
    return out


def with_reference(state: dict[str, Any] | None, reference: dict[str, Any]) -> dict[str, Any] | None:
    """The state as learning reads it: the service's own entries and the world's reference data beside
    them (shared, never copied per call: it does not change)."""
    return None if state is None else {**reference, **state}


def explore_sandbox(app: str, seed: int, calls: int, explorer_seed: str, *, brief: bool = True) -> Traffic:
    """The explorer on a sandbox app's fresh session of `seed` (its rng `learn:explorer:<app>:<explorer_seed>`),
    told the user's own credentials (as a task tells its agent) when `brief`."""
    from cworld.sandbox.catalog import app_by_name
    from cworld.sandbox.framework.server import tool_specs
    from cworld.seeding import derive_rng

    cls = app_by_name(app)
    driver = SandboxDriver(app, seed)
    tools = tool_specs(cls)
    told = briefing(driver.state()) if brief else None
    observed = explore(driver, tools, calls, derive_rng(seed, f"learn:explorer:{app}:{explorer_seed}"),
                       start=driver.start(), told=told, origin=f"seed {seed} ",
                       again=derive_rng(seed, f"learn:again:{app}:{explorer_seed}"))
    return Traffic(app, tools, observed)


def from_trajectories(trajectories: Iterable[Trajectory], server: str, tools: list[ToolSpec],
                      initial: Callable[[int], dict[str, Any] | None],
                      reference: Callable[[int], dict[str, Any]] | None = None) -> Traffic:
    """A run's calls on `server`, in order, with the world of the episode's seed (`initial`) as the state
    every call starts from: a trajectory keeps no state between calls, so only checks over records the world
    already held, lists and answers are learned from it, never effects."""
    by_name = {t.name: t for t in tools}
    out: list[Observation] = []
    for trajectory in trajectories:
        shared = reference(trajectory.seed) if reference is not None else {}
        state = with_reference(initial(trajectory.seed), shared)
        for step in trajectory.steps:
            call, result = step.tool_call, step.raw_result
            if call is None or result is None or result.meta.get("source") not in (None, "live"):
                continue
            server_id, _, name = call.tool.rpartition("/") if "/" in call.tool else (server, "", call.tool)
            if server_id != server or name not in by_name:
                continue
            out.append(Observation(by_name[name], dict(call.arguments), result, _step_now(trajectory, step.index),
                                   state, None, {}, f"{trajectory.episode_id} step {step.index}", shared))
    return Traffic(server, tools, out)


def _step_now(trajectory: Trajectory, index: int) -> str:
    """The service's clock at a step, as the sandbox keeps it: 20 s a call from the seed's start."""
    from datetime import timedelta

    from cworld.sandbox.framework.session import SECONDS_PER_CALL, seeded_start
    from cworld.values import iso

    return iso(seeded_start(trajectory.seed) + timedelta(seconds=SECONDS_PER_CALL * (index + 1)))


def split(calls: list[Observation], every: int) -> tuple[list[Observation], list[Observation]]:
    """(kept, held out): every `every`-th call is held out, so both halves span the whole exploration."""
    held = [o for i, o in enumerate(calls) if i % every == every - 1]
    kept = [o for i, o in enumerate(calls) if i % every != every - 1]
    return kept, held


def copied(value: Any) -> Any:
    return copy.deepcopy(value)
