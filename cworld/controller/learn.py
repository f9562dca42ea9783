"""`cworld world learn` on a launched MCP server: the four offline real servers and a user's own.

`McpDriver` calls the tools through the live backend a run uses (`RealServerBackend`: the manifest entry
resolved against fresh scratch, one server per episode). The backend is async and exploration is a plain
loop, so the backend runs on an event loop of its own thread and each call waits for its answer there.

The driver shows the service as its world names it: a launch's scratch folder
(`<workspace>/scratch/episodes/<episode>`) is `/scratch` (`engine.world.real.WORLD_SCRATCH`) in the answers
and the state, and the explorer's arguments are turned back before the call. So traffic of two launches
(two seeds) names the same things, and learned rules run on the world the engine builds. The state is read
where it can be (`engine.world.real.read_state` for the real servers); for any other server it is None and
only checks, lists and answers are learned.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Coroutine, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from cworld.controller.backends.real import RealServerBackend
from cworld.data_model import ServerSpec, ToolResult, ToolSpec
from cworld.engine.cards.card import CategoryCard
from cworld.engine.learn.explorer import Explorer
from cworld.engine.learn.learner import Drafter
from cworld.engine.learn.session import Run, learned
from cworld.engine.learn.traffic import Driver, Traffic, explore
from cworld.engine.world.real import REAL_SERVERS, WORLD_SCRATCH, launch_paths, read_state
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.registry.launch import LaunchContext, resolve
from cworld.seeding import derive_rng
from cworld.values import iso, text_replaced

T = TypeVar("T")
#: What a task tells the agent about a real server's scratch: the argument that names each place.
TOLD = {"root": "path", "repo": "repo_path", "db": "db_path"}
#: (the driver, the explorer's rng) -> an explorer made for the server
MakeExplorer = Callable[["McpDriver", random.Random], Explorer]


class McpDriver(Driver):
    """One launch of an MCP server from its manifest entry (fresh scratch for `seed`); `close` ends it."""

    def __init__(self, spec: ServerSpec, workspace: Workspace, seed: int) -> None:
        self.spec, self.seed = spec, seed
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"learn-{spec.id}", daemon=True)
        self._thread.start()
        self.backend = RealServerBackend({spec.id: spec}, workspace, episode=f"learn-{spec.id}")
        self.paths: dict[str, Path] = {}
        try:
            self._run(self.backend.open(seed))
            assert self.backend.scratch_root is not None
            self.scratch = str(self.backend.scratch_root)
            if spec.id in REAL_SERVERS:  # where the state lives: the scratch the backend's own resolve keeps
                ctx = LaunchContext(workspace.root, workspace.servers, self.backend.scratch_root)
                self.paths = launch_paths(spec.id, resolve(spec, ctx))
        except BaseException:
            self.close()
            raise

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        live = text_replaced(arguments, WORLD_SCRATCH, self.scratch, keys=True)
        result = self._run(self.backend.call(tool, live))
        if result.is_infra_error:
            raise UsageError(f"{self.spec.id} failed: {result.error_class}: {result.text[:200]}")
        return ToolResult.model_validate(text_replaced(result.model_dump(), self.scratch, WORLD_SCRATCH, keys=True))

    def state(self) -> dict[str, Any] | None:
        if not self.paths:
            return None
        return read_state(self.spec.id, self.paths, shown={self.scratch: WORLD_SCRATCH})

    def now(self) -> str:
        return iso(datetime.now(UTC))

    def shown_paths(self) -> dict[str, str]:
        """Where the server keeps its state, as the world names it (`root` -> `/scratch/filesystem`)."""
        return {k: str(v).replace(self.scratch, WORLD_SCRATCH) for k, v in self.paths.items()}

    def told(self) -> dict[str, Any]:
        """What a task would tell the agent: the allowed folder, the repository, the database."""
        return {TOLD[k]: v for k, v in self.shown_paths().items() if k in TOLD}

    def close(self) -> None:
        try:
            self._run(self.backend.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()


def launchable(specs: Iterable[ServerSpec]) -> dict[str, ServerSpec]:
    """The manifest's servers a driver can launch: real servers (not sandbox apps, which learn in memory)."""
    return {s.id: s for s in specs if s.kind == "real"}


def explore_live(spec: ServerSpec, workspace: Workspace, tools: list[ToolSpec], seed: int, calls: int,
                 explorer_seed: str, make_explorer: MakeExplorer | None = None) -> Traffic:
    """The explorer on a fresh launch of the server for `seed` (rng `learn:explorer:<server>:<explorer_seed>`),
    told where the server's state lives as a task would tell it. `make_explorer(driver, rng)` gives another
    explorer (the benchmark's, which knows these servers' arguments)."""
    driver = McpDriver(spec, workspace, seed)
    try:
        rng = derive_rng(seed, f"learn:explorer:{spec.id}:{explorer_seed}")
        chosen = make_explorer(driver, rng) if make_explorer is not None else None
        observed = explore(driver, tools, calls, rng, told=driver.told(), origin=f"seed {seed} ", explorer=chosen)
    finally:
        driver.close()
    return Traffic(spec.id, tools, observed)


def learn_server_live(spec: ServerSpec, workspace: Workspace, tools: list[ToolSpec],
                      cards: dict[str, CategoryCard], *, calls: int = 600, seeds: Iterable[int] = (0, 1),
                      explorer: str = "0", drafter: Drafter | None = None, make_explorer: MakeExplorer | None = None) -> Run:
    """Explore a launched server live (`calls` per seed, a fresh scratch each) and learn its rules."""
    own = [t for t in tools if t.server == spec.id]
    if not own:
        raise UsageError(f"no recorded tools of server '{spec.id}': run `cworld registry build` first")
    seeds = list(seeds)
    parts = [explore_live(spec, workspace, own, seed, calls, explorer, make_explorer) for seed in seeds]
    how = (f"the explorer (rng learn:explorer:{spec.id}:{explorer}), {calls} live calls on a fresh launch for "
           f"seed(s) {', '.join(map(str, seeds))}")
    return learned(spec.id, parts, cards, how, drafter)
